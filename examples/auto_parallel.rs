//! A small GPT trained with `nabla::dist::auto` on several ranks: the
//! planner chooses how every parameter, input and intermediate of the
//! training step (forward and backward) is laid out over the mesh, and the
//! losses equal those of the same training in one process.
//!
//! Build and run on four ranks (a 2 × 2 mesh, "data" × "model"):
//!
//! ```sh
//! cargo build --release --features mpi --example auto_parallel
//! mpirun -n 4 target/release/examples/auto_parallel
//! ```
//!
//! With another number of ranks the mesh is one "data" axis. Each rank
//! also trains the same model alone, so the example prints both loss
//! curves and their largest difference.

use nabla::dist::{self, CostModel, Mesh};
use nabla::nn::models::{Gpt, GptConfig};
use nabla::optim::{AdamW, Optimizer};
use nabla::prelude::*;

/// The next-character loss of a GPT on one-hot inputs `x` `[B, T, V]` and
/// one-hot targets `y` `[B·T, V]` (the token embedding as a matrix
/// product, so every argument is an array and `auto` can lay it out).
#[differentiable]
fn gpt_loss(model: &Gpt, x: &Array, y: &Array) -> Array {
    let t = x.shape()[1];
    let mut h = x.matmul(&model.wte.weight) + model.wpe.weight.slice_axis(0, 0..t);
    for i in 0..model.blocks.len() {
        h = model.blocks[i].forward(&h);
    }
    let logits = model.lm_head.forward(&model.ln_f.forward(&h));
    let v = logits.shape()[2];
    let n = logits.numel() / v;
    let lp = nabla::log_softmax(&logits.reshape(&[n, v]), -1);
    (&lp * y).sum() * (-1.0 / n as f64)
}

/// One-hot rows of `ids` over `vocab` symbols.
fn one_hot(ids: &[usize], vocab: usize) -> Vec<f32> {
    ids.iter()
        .flat_map(|&i| (0..vocab).map(move |j| if i == j { 1.0 } else { 0.0 }))
        .collect()
}

fn main() {
    let _mpi = dist::init();
    let (rank, n) = (dist::rank(), dist::world_size());
    let mesh = if n == 4 {
        Mesh::new(&[("data", 2), ("model", 2)])
    } else {
        Mesh::new(&[("data", n)])
    };

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
        layers: 2,
    };
    let (batch, t) = (8, 16);

    // A batch of windows of the text, the same on every rank.
    let window = |step: usize| {
        let starts: Vec<usize> = (0..batch)
            .map(|b| (step * 37 + b * 11) % (ids.len() - t - 1))
            .collect();
        let x: Vec<usize> = starts
            .iter()
            .flat_map(|&s| ids[s..s + t].to_vec())
            .collect();
        let y: Vec<usize> = starts
            .iter()
            .flat_map(|&s| ids[s + 1..s + t + 1].to_vec())
            .collect();
        (
            Array::from_vec(one_hot(&x, cfg.vocab), &[batch, t, cfg.vocab]),
            Array::from_vec(one_hot(&y, cfg.vocab), &[batch * t, cfg.vocab]),
        )
    };

    // Ranks here are processes on one machine: arithmetic is slow next to
    // the links, so the planner splits the work (dist::calibrate measures
    // a real machine).
    let step_fn = dist::auto(gpt_loss, &mesh).cost_model(CostModel::uniform(2e9, 2e10, 2e-6));
    let model = Gpt::new(&cfg, Key::new(0));
    let (mut alone, mut shared) = (model.clone(), model);
    let opt = AdamW::new(3e-3);
    let (mut s_alone, mut s_shared) = (opt.init(&alone), opt.init(&shared));
    let mut worst: f64 = 0.0;
    for step in 0..30 {
        let (x, y) = window(step);
        let (l_auto, g) = nabla::value_and_grad(step_fn)(&shared, &x, &y);
        opt.update(&mut shared, &g, &mut s_shared);
        let (l_one, g) = nabla::value_and_grad(gpt_loss)(&alone, &x, &y);
        opt.update(&mut alone, &g, &mut s_alone);
        let (a, b) = (l_auto.item(), l_one.item());
        worst = worst.max((a - b).abs());
        if step == 0 && rank == 0 {
            println!("{}", step_fn.plan());
        }
        if rank == 0 && step % 5 == 0 {
            println!("step {step:2}: loss {a:.5} on {n} ranks, {b:.5} in one process");
        }
    }
    if rank == 0 {
        println!("largest loss difference over 30 steps: {worst:.2e}");
    }
    assert!(
        worst < 1e-4,
        "the distributed losses follow the one-process run"
    );
}
