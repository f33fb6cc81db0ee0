//! Composable-transform workloads of `../shared/BENCHMARKS.md`:
//! `seed_hessian` (per-call latency of `jacfwd(jacrev(vmap(foo)))` on a
//! (2, 3) f32 input) and `rosen_hessian` (Hessian of Rosenbrock, n = 100,
//! f64). Ratios against JAX come from running the JAX twin in the same
//! session (see docs/performance.md).
//!
//! Run: `cargo bench --bench compose`

use criterion::{Criterion, criterion_group, criterion_main};
use nabla::prelude::*;
use std::hint::black_box;
use std::time::Duration;

#[differentiable]
fn foo(x: &Array) -> Array {
    nabla::sum(&nabla::sin(x))
}

#[differentiable]
fn rosenbrock(x: &Array) -> Array {
    let n = x.shape()[0];
    let head = x.slice_axis(0, 0..n - 1);
    let tail = x.slice_axis(0, 1..n);
    nabla::sum(&((tail - head.square()).square() * 100.0 + (1.0 - head).square()))
}

/// One example's loss for the `per_example` workload: MLP 64→128→10, tanh,
/// MSE.
#[differentiable]
fn example_loss(w1: &Array, b1: &Array, w2: &Array, b2: &Array, x: &Array, y: &Array) -> Array {
    let h = (x.matmul(w1) + b1).tanh();
    nabla::mean(&(h.matmul(w2) + b2 - y).square())
}

fn benches(c: &mut Criterion) {
    nabla::manual_seed(0);
    let x = nabla::randn(&[2, 3], DType::F32);
    let h = nabla::jacfwd(nabla::jacrev(nabla::vmap(foo)));
    assert_eq!(h(&x).shape(), &[2, 2, 3, 2, 3]);
    c.bench_function("seed_hessian", |b| b.iter(|| h(black_box(&x))));

    let xr = nabla::randn(&[100], DType::F64);
    let hr = nabla::hessian(rosenbrock);
    assert_eq!(hr(&xr).shape(), &[100, 100]);
    c.bench_function("rosen_hessian_n100", |b| b.iter(|| hr(black_box(&xr))));

    // per_example: one gradient of w1 per example, batch 256.
    let w1 = nabla::randn(&[64, 128], DType::F32) * 0.125;
    let b1 = Array::zeros(&[128], DType::F32);
    let w2 = nabla::randn(&[128, 10], DType::F32) * 0.088;
    let b2 = Array::zeros(&[10], DType::F32);
    let xs = nabla::randn(&[256, 64], DType::F32);
    let ys = nabla::randn(&[256, 10], DType::F32);
    let pe = nabla::vmap!(
        nabla::grad!(example_loss),
        in_axes = (None, None, None, None, 0, 0)
    );
    assert_eq!(pe(&w1, &b1, &w2, &b2, &xs, &ys).shape(), &[256, 64, 128]);
    c.bench_function("per_example_grads_b256", |b| {
        b.iter(|| pe(black_box(&w1), &b1, &w2, &b2, black_box(&xs), &ys))
    });
}

criterion_group! {
    name = compose;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = benches
}
criterion_main!(compose);
