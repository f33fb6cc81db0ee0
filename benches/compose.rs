//! Composable-transform workloads of the team's `BENCHMARKS.md`:
//! `seed_hessian` (per-call latency of `jacfwd(jacrev(vmap(foo)))` on a
//! (2, 3) f32 input) and `rosen_hessian` (Hessian of Rosenbrock, n = 100,
//! f64), and the fusion workloads (`rosenbrock` 1e6 f64 and `eltwise_loss`
//! on 4M f32, gradients, fused and `fuse = false`). Ratios against JAX come from running the JAX twin in the same
//! session (see docs/performance.md).
//!
//! Run: `cargo bench --bench compose`

use criterion::{Criterion, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

#[path = "common/compose.rs"]
mod workloads;
use workloads::{example_loss, foo, rosenbrock};

fn benches(c: &mut Criterion) {
    let x = workloads::seed_input();
    let h = nabla::jacfwd(nabla::jacrev(nabla::vmap(foo)));
    assert_eq!(h(&x).shape(), &[2, 2, 3, 2, 3]);
    c.bench_function("seed_hessian", |b| b.iter(|| h(black_box(&x))));

    let xr = workloads::rosen_input();
    let hr = nabla::hessian(rosenbrock);
    assert_eq!(hr(&xr).shape(), &[100, 100]);
    c.bench_function("rosen_hessian_n100", |b| b.iter(|| hr(black_box(&xr))));

    // per_example: one gradient of w1 per example, batch 256.
    let [w1, b1, w2, b2, xs, ys] = workloads::per_example_inputs();
    let pe = nabla::vmap!(
        nabla::grad!(example_loss),
        in_axes = (None, None, None, None, 0, 0)
    );
    assert_eq!(pe(&w1, &b1, &w2, &b2, &xs, &ys).shape(), &[256, 64, 128]);
    c.bench_function("per_example_grads_b256", |b| {
        b.iter(|| pe(black_box(&w1), &b1, &w2, &b2, black_box(&xs), &ys))
    });

    // Fusion: each elementwise region one pass per sweep, against its
    // op-by-op twin.
    let xb = workloads::rosen_big_input();
    let (gf, gu) = (
        nabla::grad(rosenbrock),
        nabla::grad(workloads::rosenbrock_unfused),
    );
    c.bench_function("rosen_grad_1e6_fused", |b| b.iter(|| gf(black_box(&xb))));
    c.bench_function("rosen_grad_1e6_unfused", |b| b.iter(|| gu(black_box(&xb))));
    let (xe, ye) = workloads::eltwise_inputs();
    let ef = nabla::grad!(workloads::eltwise_loss, argnums = (0, 1));
    let eu = nabla::grad!(workloads::eltwise_loss_unfused, argnums = (0, 1));
    c.bench_function("eltwise_loss_4m_fused", |b| {
        b.iter(|| ef(black_box(&xe), &ye))
    });
    c.bench_function("eltwise_loss_4m_unfused", |b| {
        b.iter(|| eu(black_box(&xe), &ye))
    });
    // A functional training step: value_and_grad over a parameter tree.
    let (mut p, xm, ym) = workloads::mlp_fn_state();
    let mut s = nabla::optim::Optimizer::init(&workloads::mlp_fn_opt(), &p);
    c.bench_function("mlp_fn_step_b256", |b| {
        b.iter(|| workloads::mlp_fn_step(&mut p, &mut s, black_box(&xm), &ym))
    });
}

criterion_group! {
    name = compose;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = benches
}
criterion_main!(compose);
