//! `nabla::checkpoint(f)(..)` inside differentiable code: the same gradients
//! as the code without it (bit for bit), and `f`'s forward sweep really runs
//! again in the reverse sweep (a call counter).

use crate::common::*;
use nabla::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

static RUNS: AtomicUsize = AtomicUsize::new(0);

fn count_run() -> usize {
    RUNS.fetch_add(1, Ordering::SeqCst)
}

#[differentiable]
fn block(h: &Array, w: &Array) -> Array {
    let _ = crate::transforms::checkpoint::count_run();
    (h.matmul(w)).tanh()
}

#[differentiable]
fn plain(x: &Array, w: &Array) -> Array {
    let mut h = x.clone();
    for _ in 0..4 {
        h = block(&h, w);
    }
    nabla::sum(&h.square())
}

#[differentiable]
fn remat(x: &Array, w: &Array) -> Array {
    let mut h = x.clone();
    for _ in 0..4 {
        h = nabla::checkpoint(block)(&h, w);
    }
    nabla::sum(&h.square())
}

#[test]
fn checkpointed_calls_give_identical_gradients_and_recompute() {
    let _rng = seeded(21);
    let x = nabla::randn(&[3, 5], DType::F64);
    let w = nabla::randn(&[5, 5], DType::F64) * 0.4;
    RUNS.store(0, Ordering::SeqCst);
    let (gx, gw) = nabla::grad!(plain, argnums = (0, 1))(&x, &w);
    let plain_runs = RUNS.swap(0, Ordering::SeqCst);
    let (cx, cw) = nabla::grad!(remat, argnums = (0, 1))(&x, &w);
    let remat_runs = RUNS.swap(0, Ordering::SeqCst);
    assert_close(&cx, &gx, 0.0, "d/dx identical");
    assert_close(&cw, &gw, 0.0, "d/dw identical");
    assert_eq!(plain_runs, 4, "four forward runs of the block");
    assert_eq!(remat_runs, 8, "four forward runs plus four recomputations");
    // Outside differentiable code, checkpoint(f) is f.
    assert_close(
        &nabla::checkpoint(block)(&x, &w),
        &block(&x, &w),
        0.0,
        "plain call",
    );
}
