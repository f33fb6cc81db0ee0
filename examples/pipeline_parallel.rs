//! A small GPT trained in pipeline stages with `nabla::dist::Pipeline`:
//! its transformer blocks are cut into stages along a mesh axis, each
//! stage's ranks hold only their blocks (and the last stage the final
//! LayerNorm and output layer), and micro-batches flow through in the
//! 1F1B order, activations forward and their cotangents backward. The
//! losses equal those of the same training in one process.
//!
//! Build and run on four ranks (a 2 × 2 mesh, "data" × "pipe": two
//! stages, each data-parallel over two ranks):
//!
//! ```sh
//! cargo build --release --features mpi --example pipeline_parallel
//! mpirun -n 4 target/release/examples/pipeline_parallel
//! ```
//!
//! With another number of ranks every rank is a stage. The characters are
//! embedded by a fixed random table (the pipeline trains the blocks and
//! the head: a stage keeps its activation's shape).

use nabla::dist::{self, Mesh, Pipeline, PipelinePlan};
use nabla::nn::models::{Gpt, GptConfig};
use nabla::nn::{LayerNorm, Linear, TransformerBlock};
use nabla::optim::{AdamW, Optimizer};
use nabla::prelude::*;

/// A stage's blocks.
#[derive(Clone, Tree)]
struct Stage {
    blocks: Vec<TransformerBlock>,
}

#[differentiable]
fn blocks(stage: &Stage, h: &Array) -> Array {
    let mut h = h.clone();
    for i in 0..stage.blocks.len() {
        h = stage.blocks[i].forward(&h);
    }
    h
}

/// What the last stage adds: the final LayerNorm and the output layer.
#[derive(Clone, Tree)]
struct Head {
    ln_f: LayerNorm,
    lm_head: Linear,
}

/// The next-character loss of `h` `[B, T, C]` against one-hot `y`.
#[differentiable]
fn head(q: &Head, h: &Array, y: &Array) -> Array {
    let logits = q.lm_head.forward(&q.ln_f.forward(h));
    let v = logits.shape()[2];
    let n = logits.numel() / v;
    let lp = nabla::log_softmax(&logits.reshape(&[n, v]), -1);
    (&lp * y).sum() * (-1.0 / n as f64)
}

/// The whole model in one process, for comparison.
#[differentiable]
fn gpt_loss(model: &Gpt, x: &Array, y: &Array) -> Array {
    let mut h = x.clone();
    for i in 0..model.blocks.len() {
        h = model.blocks[i].forward(&h);
    }
    let logits = model.lm_head.forward(&model.ln_f.forward(&h));
    let v = logits.shape()[2];
    let n = logits.numel() / v;
    let lp = nabla::log_softmax(&logits.reshape(&[n, v]), -1);
    (&lp * y).sum() * (-1.0 / n as f64)
}

fn main() {
    let _mpi = dist::init();
    let (rank, n) = (dist::rank(), dist::world_size());
    let mesh = if n == 4 {
        Mesh::new(&[("data", 2), ("pipe", 2)])
    } else {
        Mesh::new(&[("pipe", n)])
    };
    let micro_batches = 4;

    let text = "the quick brown fox jumps over the lazy dog. ".repeat(8);
    let mut chars: Vec<char> = text.chars().collect();
    chars.sort();
    chars.dedup();
    let ids: Vec<usize> = text
        .chars()
        .map(|c| chars.iter().position(|&d| d == c).unwrap())
        .collect();
    let cfg = GptConfig {
        vocab: chars.len(),
        context: 16,
        embd: 32,
        heads: 4,
        layers: 4.max(mesh.shape().size(mesh.shape().axis("pipe").unwrap())),
    };
    let (batch, t) = (16, 16);
    let table = Key::new(1).normal(&[cfg.vocab, cfg.embd], DType::F32);

    // A batch of windows of the text, the same on every rank.
    let window = |step: usize| {
        let starts: Vec<usize> = (0..batch)
            .map(|b| (step * 37 + b * 11) % (ids.len() - t - 1))
            .collect();
        let x: Vec<f32> = starts
            .iter()
            .flat_map(|&s| ids[s..s + t].to_vec())
            .flat_map(|i| table.slice_axis(0, i..i + 1).to_vec::<f32>())
            .collect();
        let y: Vec<f32> = starts
            .iter()
            .flat_map(|&s| ids[s + 1..s + t + 1].to_vec())
            .flat_map(|i| (0..cfg.vocab).map(move |j| f32::from(u8::from(i == j))))
            .collect();
        (
            Array::from_vec(x, &[batch, t, cfg.embd]),
            Array::from_vec(y, &[batch * t, cfg.vocab]),
        )
    };

    // Equal blocks: the stages are even, and 1F1B idles (p − 1)/(m + p − 1).
    let pipe = Pipeline::new(&mesh, "pipe", micro_batches);
    let plan = PipelinePlan::new(
        &vec![1.0; cfg.layers],
        &vec![2.0; cfg.layers],
        pipe.stages(),
        micro_batches,
    );
    let pipe = pipe.with_stages(&plan.stages);

    let model = Gpt::new(&cfg, Key::new(0));
    let mut alone = model.clone();
    let mut mine = Stage {
        blocks: model.blocks[pipe.layers(cfg.layers)].to_vec(),
    };
    let mut q = Head {
        ln_f: model.ln_f.clone(),
        lm_head: model.lm_head.clone(),
    };
    let opt = AdamW::new(3e-3);
    let (mut s_alone, mut s_mine, mut s_q) = (opt.init(&alone), opt.init(&mine), opt.init(&q));
    if rank == 0 {
        println!(
            "{} blocks in {} stages {:?}, {micro_batches} micro-batches: modelled bubble {:.3}",
            cfg.layers,
            pipe.stages(),
            plan.stages,
            plan.schedule.bubble
        );
    }
    let mut worst: f64 = 0.0;
    for step in 0..20 {
        let (x, y) = window(step);
        let out = pipe.value_and_grad(*nabla::vjp(blocks), &mine, *nabla::vjp(head), &q, &x, &y);
        opt.update(&mut mine, &out.grad, &mut s_mine);
        if let Some(g) = &out.head_grad {
            opt.update(&mut q, g, &mut s_q);
        }
        let (l_one, g) = nabla::value_and_grad(gpt_loss)(&alone, &x, &y);
        opt.update(&mut alone, &g, &mut s_alone);
        worst = worst.max((out.loss - l_one.item()).abs());
        if rank == 0 && step % 5 == 0 {
            println!(
                "step {step:2}: loss {:.5} in {} stages, {:.5} in one process",
                out.loss,
                pipe.stages(),
                l_one.item()
            );
        }
    }
    if rank == 0 {
        println!("largest loss difference over 20 steps: {worst:.2e}");
    }
    assert!(
        worst < 1e-4,
        "the pipelined losses follow the one-process run"
    );
}
