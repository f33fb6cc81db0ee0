//! The composable-transform workloads of `BENCHMARKS.md`, shared by the
//! criterion bench (`benches/compose.rs`) and the JAX comparison
//! (`benches/twin.rs` with `benches/compare/jax_compose_twin.py`, which
//! mirrors each function here op for op).

use nabla::prelude::*;

/// The seed's `foo`: `sum(sin(x))`.
#[differentiable]
pub fn foo(x: &Array) -> Array {
    nabla::sum(&nabla::sin(x))
}

/// Rosenbrock, `sum(100 (x[1:] − x[:-1]²)² + (1 − x[:-1])²)`.
#[differentiable]
pub fn rosenbrock(x: &Array) -> Array {
    let n = x.shape()[0];
    let head = x.slice_axis(0, 0..n - 1);
    let tail = x.slice_axis(0, 1..n);
    nabla::sum(&((tail - head.square()).square() * 100.0 + (1.0 - head).square()))
}

/// `rosenbrock` without fusion: every elementwise operation its own pass
/// (the A/B of the fusion workloads).
#[differentiable(fuse = false)]
pub fn rosenbrock_unfused(x: &Array) -> Array {
    let n = x.shape()[0];
    let head = x.slice_axis(0, 0..n - 1);
    let tail = x.slice_axis(0, 1..n);
    nabla::sum(&((tail - head.square()).square() * 100.0 + (1.0 - head).square()))
}

/// The `eltwise_loss` workload: `sum(softplus(x) * tanh(y) + exp(-x²) * sin(y))`.
#[differentiable]
pub fn eltwise_loss(x: &Array, y: &Array) -> Array {
    nabla::sum(&(x.softplus() * y.tanh() + (-x.square()).exp() * y.sin()))
}

/// `eltwise_loss` without fusion.
#[differentiable(fuse = false)]
pub fn eltwise_loss_unfused(x: &Array, y: &Array) -> Array {
    nabla::sum(&(x.softplus() * y.tanh() + (-x.square()).exp() * y.sin()))
}

/// The 1e6 f64 input of the fusion workloads' Rosenbrock.
pub fn rosen_big_input() -> Array {
    nabla::manual_seed(3);
    nabla::randn(&[1_000_000], DType::F64)
}

/// `eltwise_loss`'s two 4M f32 inputs.
pub fn eltwise_inputs() -> (Array, Array) {
    nabla::manual_seed(4);
    (
        nabla::randn(&[4 << 20], DType::F32),
        nabla::randn(&[4 << 20], DType::F32),
    )
}

/// One example's loss for the `per_example` workload: MLP 64→128→10, tanh,
/// MSE.
#[differentiable]
pub fn example_loss(w1: &Array, b1: &Array, w2: &Array, b2: &Array, x: &Array, y: &Array) -> Array {
    let h = (x.matmul(w1) + b1).tanh();
    nabla::mean(&(h.matmul(w2) + b2 - y).square())
}

/// `seed_hessian`'s input: a (2, 3) f32 array.
pub fn seed_input() -> Array {
    nabla::manual_seed(0);
    nabla::randn(&[2, 3], DType::F32)
}

/// `rosen_hessian`'s input: 100 f64 values.
pub fn rosen_input() -> Array {
    nabla::manual_seed(1);
    nabla::randn(&[100], DType::F64)
}

/// `per_example`'s parameters and batch: `(w1, b1, w2, b2, xs, ys)`, batch 256.
pub fn per_example_inputs() -> [Array; 6] {
    nabla::manual_seed(2);
    [
        nabla::randn(&[64, 128], DType::F32) * 0.125,
        Array::zeros(&[128], DType::F32),
        nabla::randn(&[128, 10], DType::F32) * 0.088,
        Array::zeros(&[10], DType::F32),
        nabla::randn(&[256, 64], DType::F32),
        nabla::randn(&[256, 10], DType::F32),
    ]
}
