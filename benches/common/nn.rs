//! The `gpt_step` and `conv2d` workloads of `BENCHMARKS.md`, for
//! `benches/twin.rs`; `benches/compare/torch_nn_twin.py` and
//! `jax_nn_twin.py` build the same.

use nabla::nn::Conv2d;
use nabla::nn::models::{Gpt, GptConfig};
use nabla::optim::{AdamW, Optimizer, State};
use nabla::prelude::*;
use nabla::tree::Tree;

/// `gpt_step`: 4 layers, 4 heads, width 128, context 64, vocabulary 96.
pub const GPT: GptConfig = GptConfig {
    vocab: 96,
    context: 64,
    layers: 4,
    heads: 4,
    embd: 128,
};
/// Sequences per `gpt_step` batch.
pub const GPT_BATCH: usize = 16;

/// A GPT whose parameters require grad, its AdamW (lr 3e-4, torch's
/// defaults otherwise: betas (0.9, 0.999), eps 1e-8, weight decay 0.01) and
/// state, and a fixed batch of token ids and targets.
pub struct GptStep {
    pub gpt: Gpt,
    pub opt: AdamW,
    pub state: State,
    pub idx: Array,
    pub targets: Array,
}

impl GptStep {
    pub fn new() -> GptStep {
        let mut gpt = Gpt::new(&GPT, Key::new(0));
        gpt.for_each_leaf_mut(&mut |p| *p = p.clone().requires_grad());
        let opt = AdamW::new(3e-4).weight_decay(0.01);
        let state = opt.init(&gpt);
        let n = GPT_BATCH * GPT.context;
        let ids = |k: Key| {
            let u = k.uniform(&[n], DType::F64).to_vec::<f64>();
            let v: Vec<i64> = u.iter().map(|x| (x * GPT.vocab as f64) as i64).collect();
            Array::from_vec(v, &[GPT_BATCH, GPT.context])
        };
        let [ki, kt] = Key::new(1).split2();
        GptStep {
            gpt,
            opt,
            state,
            idx: ids(ki),
            targets: ids(kt),
        }
    }

    /// Forward, `backward()`, one AdamW step, gradients cleared; the loss.
    pub fn step(&mut self) -> f64 {
        let loss = self.gpt.loss(&self.idx, &self.targets);
        loss.backward();
        self.opt.step(&mut self.gpt, &mut self.state);
        self.gpt.for_each_leaf(&mut |p| p.zero_grad());
        loss.item()
    }
}

/// The GPT's loss as differentiable code (`gpt_step_fn`).
#[differentiable]
fn gpt_loss(model: &Gpt, #[nondiff] idx: &Array, #[nondiff] targets: &Array) -> Array {
    model.loss(idx, targets)
}

/// `gpt_step_fn`: the `gpt_step` model, optimizer and batch in the
/// functional mode: `value_and_grad` of a `#[differentiable]` loss over the
/// model, then `opt.update` (nothing on the tape).
pub struct GptStepFn {
    pub gpt: Gpt,
    pub opt: AdamW,
    pub state: State,
    pub idx: Array,
    pub targets: Array,
}

impl GptStepFn {
    pub fn new() -> GptStepFn {
        let GptStep {
            mut gpt,
            opt,
            state,
            idx,
            targets,
        } = GptStep::new();
        gpt.for_each_leaf_mut(&mut |p| *p = p.detach());
        GptStepFn {
            gpt,
            opt,
            state,
            idx,
            targets,
        }
    }

    /// Loss and gradient, one AdamW step; the loss.
    pub fn step(&mut self) -> f64 {
        let (loss, g): (Array, Gpt) = value_and_grad(gpt_loss)(&self.gpt, &self.idx, &self.targets);
        self.opt.update(&mut self.gpt, &g, &mut self.state);
        loss.item()
    }
}

/// `conv2d`: batch 32, 3 → 32 channels, 32×32, 3×3 kernel, padding 1, f32;
/// the layer's parameters require grad.
pub struct ConvStep {
    pub conv: Conv2d,
    pub x: Array,
}

impl ConvStep {
    pub fn new() -> ConvStep {
        let mut conv = Conv2d::new(3, 32, [3, 3], Key::new(2)).padding(1);
        conv.for_each_leaf_mut(&mut |p| *p = p.clone().requires_grad());
        let x = Key::new(3)
            .normal(&[32, 3, 32, 32], DType::F32)
            .requires_grad();
        ConvStep { conv, x }
    }

    /// Forward, `sum().backward()` (gradients of input, weight and bias),
    /// gradients cleared.
    pub fn step(&mut self) {
        self.conv.forward(&self.x).sum().backward();
        self.conv.for_each_leaf(&mut |p| p.zero_grad());
        self.x.zero_grad();
    }
}
