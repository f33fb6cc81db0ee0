//! A GPT (`nn::models::Gpt`'s blocks, final norm and head) under `spmd`:
//! loss and every parameter's gradient data-parallel, tensor-parallel
//! (Megatron's split of attention and MLP weights) and mixed on (2, 2),
//! against one process.

use nabla::dist::{self, Mesh, Spec};
use nabla::nn::models::{Gpt, GptConfig};
use nabla::prelude::*;

/// The GPT from embedded inputs `x` `[B, T, C]` to the mean cross-entropy
/// against one-hot targets `y` `[B·T, vocab]` (a composable function:
/// token ids would be static arguments).
#[nabla::differentiable]
pub(crate) fn gpt_loss(model: &Gpt, x: &Array, y: &Array) -> Array {
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

/// Megatron's layout over mesh axis `m`: the first linear of attention
/// and of the MLP split by output features, the second by input features.
fn megatron(name: &str, shape: &[usize], m: &'static str) -> Spec {
    let col = name.contains("attn.qkv") || name.contains("mlp.fc");
    let row = name.contains("attn.proj.weight") || name.contains("mlp.proj.weight");
    match (col, row, shape.len()) {
        (true, _, 2) => Spec::new(&[Some(m), None]),
        (true, _, 1) => Spec::new(&[Some(m)]),
        (_, true, 2) => Spec::new(&[None, Some(m)]),
        _ => Spec::replicated(shape.len()),
    }
}

fn close(got: &Array, want: &Array, what: &str) {
    let (g, w) = (got.to_vec::<f32>(), want.to_vec::<f32>());
    assert_eq!(got.shape(), want.shape(), "{what}");
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        assert!(
            (a - b).abs() <= 1e-5 * b.abs().max(1.0),
            "{what}: element {i}: {a} vs {b}"
        );
    }
}

#[test]
#[ignore = "run by launch.rs under mpirun"]
fn gpt_gradients() {
    let _mpi = dist::init();
    let n = dist::world_size();
    let cfg = GptConfig {
        vocab: 12,
        context: 8,
        embd: 8,
        heads: 4,
        layers: 2,
    };
    let model = Gpt::new(&cfg, Key::new(3));
    let (b, t) = (2 * n, 4);
    let x = Key::new(5).normal(&[b, t, cfg.embd], DType::F32);
    let labels: Vec<f32> = (0..b * t)
        .flat_map(|i| {
            (0..cfg.vocab).map(move |j| {
                if (i * 7 + 3) % cfg.vocab == j {
                    1.0
                } else {
                    0.0
                }
            })
        })
        .collect();
    let y = Array::from_vec(labels, &[b * t, cfg.vocab]);
    let (l, g) = nabla::value_and_grad(gpt_loss)(&model, &x, &y);
    let want = nabla::tree::named_leaves(&g);

    type Layouts = Box<dyn Fn(&str, &[usize]) -> Spec>;
    let mut cases: Vec<(Mesh, &str, Layouts, Spec)> = Vec::new();
    let m1 = Mesh::new(&[("x", n)]);
    cases.push((
        m1,
        "data-parallel",
        Box::new(|_, s| Spec::replicated(s.len())),
        Spec::new(&[Some("x"), None, None]),
    ));
    cases.push((
        m1,
        "tensor-parallel",
        Box::new(|name, s| megatron(name, s, "x")),
        Spec::replicated(3),
    ));
    if n == 4 {
        let m2 = Mesh::new(&[("data", 2), ("model", 2)]);
        cases.push((
            m2,
            "data × tensor",
            Box::new(|name, s| megatron(name, s, "model")),
            Spec::new(&[Some("data"), None, None]),
        ));
    }
    for (mesh, what, spec, xs) in cases {
        let md = dist::distribute_tree(&model, &mesh, |name, s| spec(name, s));
        let xd = dist::distribute(&x, &mesh, &xs);
        let ys = if xs.dim(0).is_empty() {
            Spec::replicated(2)
        } else {
            Spec::split(&[&[xs.dim(0)[0].as_str()], &[]])
        };
        let yd = dist::distribute(&y, &mesh, &ys);
        let (ld, gd) = nabla::value_and_grad(dist::spmd(gpt_loss, &mesh))(&md, &xd, &yd);
        close(&ld.to_global(), &l, &format!("{what}: loss"));
        for ((name, w), (gname, gspec)) in want.iter().zip(gd.specs()) {
            assert_eq!(name, &gname);
            assert_eq!(
                gspec,
                spec(name, w.shape()),
                "{what}: {name} is laid out like its parameter"
            );
        }
        let got = nabla::tree::named_leaves(&gd.to_global());
        for ((name, w), (_, gv)) in want.iter().zip(&got) {
            close(gv, w, &format!("{what}: d{name}"));
        }
    }
}
