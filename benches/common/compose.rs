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

/// One layer of the `mlp_fn` workload.
#[derive(Clone, Tree)]
pub struct Dense {
    pub w: Array,
    pub b: Array,
}

/// The `mlp_fn` workload's parameters: MLP 784→512→512→10, tanh.
#[derive(Clone, Tree)]
pub struct MlpParams {
    pub l1: Dense,
    pub l2: Dense,
    pub l3: Dense,
}

/// The `mlp_fn` loss: MSE of the MLP's prediction.
#[differentiable]
pub fn mlp_loss(p: &MlpParams, x: &Array, y: &Array) -> Array {
    let h1 = (x.matmul(&p.l1.w) + &p.l1.b).tanh();
    let h2 = (h1.matmul(&p.l2.w) + &p.l2.b).tanh();
    nabla::mse_loss(&(h2.matmul(&p.l3.w) + &p.l3.b), y)
}

/// The `mlp_fn` state: parameters (`randn / sqrt(fan_in)` weights, zero
/// biases), a batch of 256 inputs and regression targets (`randn`).
pub fn mlp_fn_state() -> (MlpParams, Array, Array) {
    nabla::manual_seed(2);
    let layer = |fan_in: usize, fan_out: usize| Dense {
        w: nabla::randn(&[fan_in, fan_out], DType::F32) * (1.0 / (fan_in as f32).sqrt()),
        b: Array::zeros(&[fan_out], DType::F32),
    };
    let p = MlpParams {
        l1: layer(784, 512),
        l2: layer(512, 512),
        l3: layer(512, 10),
    };
    let x = nabla::randn(&[256, 784], DType::F32);
    let y = nabla::randn(&[256, 10], DType::F32);
    (p, x, y)
}

/// The `mlp_fn` optimizer: SGD, lr 0.01.
pub fn mlp_fn_opt() -> nabla::optim::Sgd {
    nabla::optim::Sgd::new(0.01)
}

/// One functional training step: `value_and_grad` over the parameter tree,
/// then SGD (lr 0.01) in place, one pass per parameter. Returns the loss.
pub fn mlp_fn_step(p: &mut MlpParams, s: &mut nabla::optim::State, x: &Array, y: &Array) -> Array {
    use nabla::optim::Optimizer;
    let (l, g) = nabla::value_and_grad(mlp_loss)(p, x, y);
    mlp_fn_opt().update(p, &g, s);
    l
}
