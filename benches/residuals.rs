//! How much memory a VJP's pullback holds: the bytes still allocated after
//! `nabla::vjp!(f)(..)` returns, while its pullback is alive (the
//! residuals, plus the small output), and the peak during the call, for
//! three workloads. A counting global allocator measures them, so the
//! figures are exact and repeatable; A/B them against a parent commit by
//! running this file there.
//!
//! Run: `cargo bench --bench residuals`

use nabla::prelude::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting live and peak bytes.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call forwards to `System` with the caller's arguments, so
// `System`'s guarantees hold; the counters only observe sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's layout, forwarded unchanged.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        // SAFETY: `p` came from `alloc` (so from `System`) with `layout`.
        unsafe { System.dealloc(p, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Two tanh layers and a squared-error loss, as in `docs/generated-code.md`.
#[differentiable]
fn mlp(x: &Array, w1: &Array, w2: &Array, w3: &Array) -> Array {
    let h1 = x.matmul(w1).tanh();
    let h2 = h1.matmul(w2).tanh();
    let out = h2.matmul(w3);
    nabla::sum(&(&out * &out))
}

/// A loop whose iterations each compute a product only its forward needs.
#[differentiable]
fn relax(x: &Array) -> Array {
    let mut y = x.clone();
    for _ in 0..20 {
        let s = (&y * 1.01).sin();
        y = &s + &(&s * x);
    }
    nabla::sum(&y)
}

/// `sum(h * h)` with `h = tanh(x w)`: the doc example.
#[differentiable]
fn doc_example(x: &Array, w: &Array) -> Array {
    let h = x.matmul(w).tanh();
    nabla::sum(&(&h * &h))
}

fn mib(b: usize) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

/// Held and peak bytes (above what was live before) of `run`, which
/// returns the pullback: held is measured while it is alive. A first,
/// unmeasured call sets up what the process keeps (thread pool, GEMM
/// workspace).
fn measure<P>(name: &str, run: impl Fn() -> P) {
    drop(run());
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let pullback = run();
    let held = LIVE.load(Ordering::Relaxed) - before;
    let peak = PEAK.load(Ordering::Relaxed) - before;
    drop(pullback);
    println!(
        "{name:<12} held {:>8.2} MiB   peak {:>8.2} MiB",
        mib(held),
        mib(peak)
    );
}

fn main() {
    nabla::manual_seed(0);
    let f = DType::F32;
    let x = nabla::randn(&[256, 512], f);
    let (w1, w2, w3) = (
        nabla::randn(&[512, 512], f) * 0.05,
        nabla::randn(&[512, 512], f) * 0.05,
        nabla::randn(&[512, 64], f) * 0.05,
    );
    measure("mlp", || nabla::vjp!(mlp)(&x, &w1, &w2, &w3));
    let xl = nabla::randn(&[100_000], DType::F64);
    measure("relax", || nabla::vjp!(relax)(&xl));
    measure("doc_example", || nabla::vjp!(doc_example)(&x, &w1));
}
