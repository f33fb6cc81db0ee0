//! Workloads shared by the criterion bench (`benches/runtime.rs`) and the
//! PyTorch comparison (`benches/twin.rs`), built exactly as
//! `BENCHMARKS.md` defines them. `benches/compare/torch_twin.py` mirrors
//! every function here op for op.

#![allow(dead_code)] // each bench target uses a subset

use nabla::prelude::*;

/// Side of the square GEMM operands (`gemm`: 1024×1024 · 1024×1024).
pub const GEMM_N: usize = 1024;
/// Length of the `eltwise` operands (1M f32).
pub const ELTWISE_N: usize = 1_000_000;
/// Layer widths of the `mlp_step` network (784→512→512→10).
pub const MLP_SIZES: [usize; 4] = [784, 512, 512, 10];
/// Batch size of `mlp_step`.
pub const MLP_BATCH: usize = 256;
/// SGD learning rate of `mlp_step`.
pub const MLP_LR: f32 = 0.01;

/// Two `[GEMM_N, GEMM_N]` f32 operands.
pub fn gemm_inputs() -> (Array, Array) {
    nabla::manual_seed(0);
    (
        nabla::randn(&[GEMM_N, GEMM_N], DType::F32),
        nabla::randn(&[GEMM_N, GEMM_N], DType::F32),
    )
}

/// Two `[ELTWISE_N]` f32 operands.
pub fn eltwise_inputs() -> (Array, Array) {
    nabla::manual_seed(1);
    (
        nabla::randn(&[ELTWISE_N], DType::F32),
        nabla::randn(&[ELTWISE_N], DType::F32),
    )
}

/// The `mlp_step` state: parameters (w1, b1, w2, b2, w3, b3), a fixed
/// input batch and regression targets.
pub struct Mlp {
    pub params: Vec<Array>,
    pub x: Array,
    pub y: Array,
    /// SGD (lr `MLP_LR`), one in-place pass per parameter.
    pub opt: nabla::optim::Sgd,
    pub state: nabla::optim::State,
}

impl Mlp {
    /// Weights `randn / sqrt(fan_in)`, zero biases, `randn` data.
    pub fn new() -> Mlp {
        nabla::manual_seed(2);
        let mut params = Vec::new();
        for w in MLP_SIZES.windows(2) {
            let (fan_in, fan_out) = (w[0], w[1]);
            let scale = 1.0 / (fan_in as f32).sqrt();
            params.push((nabla::randn(&[fan_in, fan_out], DType::F32) * scale).requires_grad());
            params.push(Array::zeros(&[fan_out], DType::F32).requires_grad());
        }
        let x = nabla::randn(&[MLP_BATCH, MLP_SIZES[0]], DType::F32);
        let y = nabla::randn(&[MLP_BATCH, MLP_SIZES[3]], DType::F32);
        let opt = nabla::optim::Sgd::new(MLP_LR as f64);
        let state = nabla::optim::Optimizer::init(&opt, &params);
        Mlp {
            params,
            x,
            y,
            opt,
            state,
        }
    }

    /// One imperative training step: forward, `backward()`, SGD update,
    /// gradients cleared. Returns the loss (not read back, so no extra sync).
    pub fn step(&mut self) -> Array {
        let p = &self.params;
        let h1 = (self.x.matmul(&p[0]) + &p[1]).tanh();
        let h2 = (h1.matmul(&p[2]) + &p[3]).tanh();
        let pred = h2.matmul(&p[4]) + &p[5];
        let loss = nabla::mse_loss(&pred, &self.y);
        loss.backward();
        nabla::optim::Optimizer::step(&self.opt, &mut self.params, &mut self.state);
        for p in &self.params {
            p.zero_grad();
        }
        loss
    }
}
