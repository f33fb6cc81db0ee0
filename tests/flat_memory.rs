//! Long runs stay flat in memory: training loops (imperative and
//! functional; an MLP and the GPT example's model) hold no more live heap
//! after 10⁴ steps than after their warm-up, and a loss dropped without
//! `backward()` frees its tape. Its own test binary: it counts every
//! allocation of the process with a global allocator, so its tests run one
//! at a time.

use nabla::nn::models::{Gpt, GptConfig};
use nabla::optim::{AdamW, Optimizer, Sgd};
use nabla::prelude::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting the bytes live.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call forwards to `System` with the same arguments; the
// counter only observes sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's arguments, forwarded unchanged to `System`.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's arguments, forwarded unchanged to `System`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's arguments, forwarded unchanged to `System`.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's arguments, forwarded unchanged to `System`.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            LIVE.fetch_add(new_size, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// The tests share the counter: one at a time.
static ONE: Mutex<()> = Mutex::new(());

/// Steps per loop (`NABLA_FLAT_STEPS` overrides, e.g. for a longer run).
fn steps() -> usize {
    std::env::var("NABLA_FLAT_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000)
}

/// Runs `step` `steps()` times and checks the live heap between steps,
/// after the warm-up (the first tenth, at least 50 steps), never exceeds
/// its size at the end of the warm-up by more than `slack` bytes.
fn flat(name: &str, slack: usize, mut step: impl FnMut(usize)) {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let n = steps();
    let warm_up = (n / 10).max(50).min(n);
    let mut warm = 0;
    let mut most = 0;
    for i in 0..n {
        step(i);
        let live = LIVE.load(Ordering::Relaxed);
        if i + 1 == warm_up {
            warm = live;
        }
        if i + 1 > warm_up {
            most = most.max(live);
        }
    }
    let last = LIVE.load(Ordering::Relaxed);
    eprintln!(
        "{name}: live heap {warm} B after {warm_up} steps, {last} B after {n}, at most {most} B"
    );
    assert!(
        last <= warm + slack,
        "{name}: the live heap grew from {warm} B after {warm_up} steps to {last} B after {n} steps"
    );
    assert!(
        most <= warm + slack,
        "{name}: between steps the live heap reached {most} B after warm-up ({warm} B)"
    );
}

/// Fixed inputs for the MLP loops.
fn regression() -> (Array, Array) {
    let x = Key::new(1).uniform(&[32, 4], DType::F32) * 2.0 - 1.0;
    let y = x.sum_axes(&[1], true).sin();
    (x, y)
}

fn mlp_params() -> Vec<Array> {
    let keys = Key::new(2).split(2);
    vec![
        keys[0].normal(&[4, 16], DType::F32) * 0.5,
        Array::zeros(&[16], DType::F32),
        keys[1].normal(&[16, 1], DType::F32) * 0.25,
        Array::zeros(&[1], DType::F32),
    ]
}

#[allow(clippy::ptr_arg)] // the parameters are a `Vec` tree, as optimizers update them
#[differentiable]
fn mlp_loss(p: &Vec<Array>, x: &Array, y: &Array) -> Array {
    let h = (x.matmul(&p[0]) + &p[1]).tanh();
    nabla::mse_loss(&(h.matmul(&p[2]) + &p[3]), y)
}

#[test]
fn an_imperative_mlp_loop_stays_flat() {
    let (x, y) = regression();
    let mut params: Vec<Array> = mlp_params()
        .into_iter()
        .map(|p| p.requires_grad())
        .collect();
    let opt = Sgd::new(0.05).momentum(0.9);
    let mut state = opt.init(&params);
    let mut losses = Vec::with_capacity(steps());
    flat("imperative MLP", 4096, |_| {
        let h = (x.matmul(&params[0]) + &params[1]).tanh();
        let loss = nabla::mse_loss(&(h.matmul(&params[2]) + &params[3]), &y);
        loss.backward();
        opt.step(&mut params, &mut state);
        for p in &params {
            p.zero_grad();
        }
        losses.push(loss.item());
    });
    assert!(losses[losses.len() - 1] < losses[0] * 0.5, "it trains");
}

#[test]
fn a_functional_mlp_loop_stays_flat() {
    let (x, y) = regression();
    let mut params = mlp_params();
    let opt = AdamW::new(0.01);
    let mut state = opt.init(&params);
    let mut losses = Vec::with_capacity(steps());
    flat("functional MLP", 4096, |_| {
        let (l, g) = nabla::value_and_grad(mlp_loss)(&params, &x, &y);
        opt.update(&mut params, &g, &mut state);
        losses.push(l.item());
    });
    assert!(losses[losses.len() - 1] < losses[0] * 0.5, "it trains");
}

/// The GPT example's model, small: its step is the same code at any size.
fn small_gpt() -> (Gpt, Vec<(Array, Array)>) {
    let cfg = GptConfig {
        vocab: 12,
        context: 8,
        layers: 1,
        heads: 2,
        embd: 8,
    };
    let gpt = Gpt::new(&cfg, Key::new(0));
    let text: Vec<i64> = (0..200).map(|i| (i * 7 % 12) as i64).collect();
    let batches = (0..4)
        .map(|b| {
            let at = |o: usize| -> Vec<i64> {
                (0..2)
                    .flat_map(|r| text[b * 20 + r * 9 + o..][..8].to_vec())
                    .collect()
            };
            (
                Array::from_vec(at(0), &[2, 8]),
                Array::from_vec(at(1), &[2, 8]),
            )
        })
        .collect();
    (gpt, batches)
}

#[differentiable]
fn gpt_loss(gpt: &Gpt, #[nondiff] x: &Array, #[nondiff] y: &Array) -> Array {
    gpt.loss(x, y)
}

#[test]
fn an_imperative_gpt_loop_stays_flat() {
    let (mut gpt, batches) = small_gpt();
    gpt.for_each_leaf_mut(&mut |p| *p = p.detach().requires_grad());
    let opt = AdamW::new(3e-3);
    let mut state = opt.init(&gpt);
    flat("imperative GPT", 8192, |i| {
        let (x, y) = &batches[i % batches.len()];
        let loss = gpt.loss(x, y);
        loss.backward();
        opt.step(&mut gpt, &mut state);
        gpt.for_each_leaf(&mut |p| p.zero_grad());
    });
}

#[test]
fn a_functional_gpt_loop_stays_flat() {
    let (mut gpt, batches) = small_gpt();
    let opt = AdamW::new(3e-3);
    let mut state = opt.init(&gpt);
    flat("functional GPT", 8192, |i| {
        let (x, y) = &batches[i % batches.len()];
        let (_, g) = nabla::value_and_grad(gpt_loss)(&gpt, x, y);
        opt.update(&mut gpt, &g, &mut state);
    });
}

#[test]
fn a_loss_dropped_without_backward_frees_its_tape() {
    let (x, y) = regression();
    let params: Vec<Array> = mlp_params()
        .into_iter()
        .map(|p| p.requires_grad())
        .collect();
    flat("dropped losses", 4096, |i| {
        let h = (x.matmul(&params[0]) + &params[1]).tanh();
        let loss = nabla::mse_loss(&(h.matmul(&params[2]) + &params[3]), &y);
        if i % 2 == 0 {
            // An evaluation that forgot `no_grad`: recorded, never run back.
            drop(loss);
        } else {
            loss.backward();
            for p in &params {
                p.zero_grad();
            }
        }
    });
}
