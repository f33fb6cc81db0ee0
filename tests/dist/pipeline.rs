//! `dist::Pipeline`: a GPT's blocks in stages over a mesh axis, run in
//! 1F1B order with micro-batches (alone, and with data parallelism on a
//! second axis), and a wide MLP whose messages exceed MPI's eager size.
//! The loss and every gradient equal one process's; each stage runs the
//! order the 1F1B simulator schedules.

use super::spmd::{close, data};
use super::spmd_models::gpt_loss;
use nabla::dist::{self, Mesh, Pipeline, pipeline_schedule};
use nabla::nn::models::{Gpt, GptConfig};
use nabla::nn::{LayerNorm, Linear, TransformerBlock};
use nabla::prelude::*;

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

#[derive(Clone, Tree)]
struct Head {
    ln_f: LayerNorm,
    lm_head: Linear,
}

#[differentiable]
fn head(q: &Head, h: &Array, y: &Array) -> Array {
    let logits = q.lm_head.forward(&q.ln_f.forward(h));
    let v = logits.shape()[2];
    let n = logits.numel() / v;
    let lp = nabla::log_softmax(&logits.reshape(&[n, v]), -1);
    (&lp * y).sum() * (-1.0 / n as f64)
}

/// Each stage's order against the simulator's for equal stages.
fn same_order(pipe: &Pipeline, order: &[(usize, bool)]) {
    let p = pipe.stages();
    let s = pipeline_schedule(&vec![1.0; p], &vec![2.0; p], pipe.micro_batches());
    let want: Vec<(usize, bool)> = s.ops[pipe.stage()].iter().map(|o| (o.2, o.3)).collect();
    assert_eq!(order, &want[..], "stage {}: the 1F1B order", pipe.stage());
}

#[test]
#[ignore = "run by launch.rs under mpirun"]
fn gpt_in_stages() {
    let _mpi = dist::init();
    let n = dist::world_size();
    let cfg = GptConfig {
        vocab: 12,
        context: 4,
        embd: 8,
        heads: 2,
        layers: 4,
    };
    let model = Gpt::new(&cfg, Key::new(7));
    let leaves: Vec<Array> = nabla::tree::leaves(&model)
        .iter()
        .map(|a| a.cast(DType::F64))
        .collect();
    let model: Gpt = nabla::tree::Tree::rebuild(&model, &mut leaves.into_iter());
    let (b, t) = (8, 4);
    let x = Key::new(9).normal(&[b, t, cfg.embd], DType::F64);
    let labels: Vec<f64> = (0..b * t)
        .flat_map(|i| {
            (0..cfg.vocab).map(move |j| f64::from(u8::from((i * 5 + 1) % cfg.vocab == j)))
        })
        .collect();
    let y = Array::from_vec(labels, &[b * t, cfg.vocab]);
    let (l1, g1) = nabla::value_and_grad(gpt_loss)(&model, &x, &y);
    let q = Head {
        ln_f: model.ln_f.clone(),
        lm_head: model.lm_head.clone(),
    };
    let mut meshes = vec![(Mesh::new(&[("pipe", n)]), 4)];
    if n == 4 {
        meshes.push((Mesh::new(&[("data", 2), ("pipe", 2)]), 2));
        meshes.push((Mesh::new(&[("pipe", 2), ("data", 2)]), 4));
    }
    for (mesh, m) in meshes {
        let pipe = Pipeline::new(&mesh, "pipe", m);
        let what = format!(
            "{} with {m} micro-batches, stage {}",
            mesh.shape(),
            pipe.stage()
        );
        let mine = Stage {
            blocks: model.blocks[pipe.layers(cfg.layers)].to_vec(),
        };
        let step = pipe.value_and_grad(*nabla::vjp(blocks), &mine, *nabla::vjp(head), &q, &x, &y);
        close(
            &Array::from_vec(vec![step.loss], &[]),
            &l1,
            &format!("{what}: loss"),
        );
        for (k, gk) in pipe.layers(cfg.layers).zip(&step.grad.blocks) {
            let (got, want) = (nabla::tree::leaves(gk), nabla::tree::leaves(&g1.blocks[k]));
            for (a, w) in got.iter().zip(&want) {
                close(a, w, &format!("{what}: block {k}"));
            }
        }
        match &step.head_grad {
            Some(h) => {
                assert_eq!(
                    pipe.stage() + 1,
                    pipe.stages(),
                    "{what}: only the last stage runs the head"
                );
                close(
                    &h.lm_head.weight,
                    &g1.lm_head.weight,
                    &format!("{what}: lm_head"),
                );
                close(&h.ln_f.weight, &g1.ln_f.weight, &format!("{what}: ln_f"));
            }
            None => assert!(
                pipe.stage() + 1 < pipe.stages(),
                "{what}: the last stage runs the head"
            ),
        }
        same_order(&pipe, &step.order);
    }
}

#[derive(Clone, Tree)]
struct Dense {
    ws: Vec<Array>,
}

#[differentiable]
fn dense(p: &Dense, h: &Array) -> Array {
    let mut h = h.clone();
    for k in 0..p.ws.len() {
        h = h.matmul(&p.ws[k]).tanh();
    }
    h
}

#[differentiable]
fn mse(q: &Array, h: &Array, y: &Array) -> Array {
    let d = h.matmul(q) - y;
    (&d * &d).mean()
}

#[differentiable]
fn whole(p: &Dense, q: &Array, x: &Array, y: &Array) -> Array {
    mse(q, &dense(p, x), y)
}

/// Activations of 16 × 512 f64 (64 KiB a message, past the eager size of
/// shared memory and TCP): neighbours that send to each other at once
/// must not block.
#[test]
#[ignore = "run by launch.rs under mpirun"]
fn wide_messages() {
    let _mpi = dist::init();
    let n = dist::world_size();
    let w = 512;
    let ws = Dense {
        ws: (0..n)
            .map(|k| (data(&[w, w], 0.1 * k as f64) - 1.0) * (1.0 / (w as f64).sqrt()))
            .collect(),
    };
    let q = data(&[w, 3], 2.0) - 1.0;
    let (x, y) = (data(&[6 * 16, w], 0.7) - 1.0, data(&[6 * 16, 3], 0.3));
    let (l1, (g1, gq)) = nabla::value_and_grad!(whole, argnums = (0, 1))(&ws, &q, &x, &y);
    let mesh = Mesh::new(&[("pipe", n)]);
    let pipe = Pipeline::new(&mesh, "pipe", 6);
    let mine = Dense {
        ws: ws.ws[pipe.layers(n)].to_vec(),
    };
    let step = pipe.value_and_grad(*nabla::vjp(dense), &mine, *nabla::vjp(mse), &q, &x, &y);
    close(&Array::from_vec(vec![step.loss], &[]), &l1, "wide: loss");
    for (k, gk) in pipe.layers(n).zip(&step.grad.ws) {
        close(gk, &g1.ws[k], &format!("wide: layer {k}"));
    }
    if let Some(h) = &step.head_grad {
        close(h, &gq, "wide: head");
    }
    same_order(&pipe, &step.order);
}
