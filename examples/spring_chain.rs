//! A longer simulation: a chain of 64 coupled, damped springs integrated
//! over 10 000 semi-implicit Euler steps in a differentiable loop. The
//! gradient of the final energy with respect to the initial displacement is
//! taken three ways — storing every step's residuals; with each step
//! checkpointed (`nabla::checkpoint(step)(..)`: only the state between steps
//! is kept, each step is recomputed in the reverse sweep); and with the
//! binomial schedule (`#[nabla::checkpoint(snapshots = 20)]` on the loop:
//! at most 20 states are kept, and steps are recomputed at most a few times
//! each) — and the peak heap memory of each is measured with a counting
//! allocator.
//!
//! Run: `cargo run --release --example spring_chain`

use nabla::prelude::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts live and peak heap bytes.
struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call forwards to `System` with the caller's arguments, so
// `System`'s guarantees hold; the counters only observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded to the system allocator with the same layout.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

const N: usize = 64;
const STEPS: usize = 10_000;
const DT: f64 = 0.002;

/// One step; the state is `[x; v]` of shape [2, N].
#[differentiable]
fn step(s: &Array) -> Array {
    let x = s.slice_axis(0, 0..1);
    let v = s.slice_axis(0, 1..2);
    let left = nabla::concat(&[x.slice_axis(1, 0..1), x.slice_axis(1, 0..N - 1)], 1);
    let right = nabla::concat(&[x.slice_axis(1, 1..N), x.slice_axis(1, N - 1..N)], 1);
    let force = (left + right - &x * 2.0) * 50.0 - &x * 4.0 - &v * 0.2;
    let v_next = &v + &(force * DT);
    let x_next = &x + &(&v_next * DT);
    nabla::concat(&[x_next, v_next], 0)
}

#[differentiable]
fn energy(x0: &Array) -> Array {
    let mut s = nabla::concat(&[x0.reshape(&[1, N]), x0.zeros_like().reshape(&[1, N])], 0);
    for _ in 0..STEPS {
        s = step(&s);
    }
    nabla::sum(&s.square())
}

#[differentiable]
fn energy_checkpointed(x0: &Array) -> Array {
    let mut s = nabla::concat(&[x0.reshape(&[1, N]), x0.zeros_like().reshape(&[1, N])], 0);
    for _ in 0..STEPS {
        s = nabla::checkpoint(step)(&s);
    }
    nabla::sum(&s.square())
}

#[differentiable]
fn energy_revolve(x0: &Array) -> Array {
    let mut s = nabla::concat(&[x0.reshape(&[1, N]), x0.zeros_like().reshape(&[1, N])], 0);
    #[nabla::checkpoint(snapshots = 20)]
    for _ in 0..STEPS {
        s = step(&s);
    }
    nabla::sum(&s.square())
}

/// The result, the peak heap growth and the wall time of `f`.
fn peak_during<R>(f: impl FnOnce() -> R) -> (R, usize, f64) {
    let base = LIVE.load(Ordering::Relaxed);
    PEAK.store(base, Ordering::Relaxed);
    let t = std::time::Instant::now();
    let r = f();
    let secs = t.elapsed().as_secs_f64();
    (r, PEAK.load(Ordering::Relaxed) - base, secs)
}

fn main() {
    let x0 = Array::from_vec((0..N).map(|i| (i as f64 * 0.3).sin() * 0.1).collect(), &[N]);
    let (g_plain, peak_plain, t_plain) = peak_during(|| nabla::grad(energy)(&x0));
    let (g_ckpt, peak_ckpt, t_ckpt) = peak_during(|| nabla::grad(energy_checkpointed)(&x0));
    let (g_rev, peak_rev, t_rev) = peak_during(|| nabla::grad(energy_revolve)(&x0));
    println!("final energy: {:.6}", energy(&x0).item());
    let mib = |b: usize| b as f64 / (1 << 20) as f64;
    let ratio = |b: usize| b as f64 / peak_plain as f64;
    println!(
        "peak heap during the gradient, all residuals kept:    {:8.2} MiB,                 {:6.3} s",
        mib(peak_plain),
        t_plain
    );
    println!(
        "peak heap during the gradient, steps checkpointed:     {:8.2} MiB ({:.4} of that), {:6.3} s",
        mib(peak_ckpt),
        ratio(peak_ckpt),
        t_ckpt
    );
    println!(
        "peak heap during the gradient, binomial, 20 snapshots: {:8.2} MiB ({:.4} of that), {:6.3} s",
        mib(peak_rev),
        ratio(peak_rev),
        t_rev
    );
    for (g, what) in [
        (&g_ckpt, "per-step checkpoints"),
        (&g_rev, "binomial schedule"),
    ] {
        let diff = (&g_plain - g).abs().max().item();
        println!("max |gradient difference|, {what}: {diff:e}");
        assert_eq!(diff, 0.0, "checkpointing must not change the gradient");
    }
    // Per-step checkpointing keeps the state between steps (STEPS states
    // of 2 × N f64) and one step's residuals at a time; the tape keeps
    // more than that.
    let states = STEPS * 2 * N * std::mem::size_of::<f64>();
    assert!(
        peak_ckpt < states + states / 4 && peak_ckpt < peak_plain,
        "checkpointed peak {peak_ckpt} B: states {states} B, tape {peak_plain} B"
    );
    assert!(peak_rev * 10 <= peak_plain, "binomial schedule within 10%");
    // Spot-check the gradient with a central difference.
    let h = 1e-6;
    let mut e = vec![0.0; N];
    e[10] = h;
    let d = Array::from_vec(e, &[N]);
    let fd = (energy(&(&x0 + &d)).item() - energy(&(&x0 - &d)).item()) / (2.0 * h);
    println!(
        "dE/dx0[10] = {:.6} (finite difference {fd:.6})",
        g_plain.to_vec::<f64>()[10]
    );
    assert!((g_plain.to_vec::<f64>()[10] - fd).abs() < 1e-5 * fd.abs().max(1.0));
}
