//! `dist::auto`: the planner lays out an MLP and a GPT step; values and
//! gradients equal one process, the bytes the collectives count equal the
//! plan's prediction, and 20 AdamW steps follow the one-process run.

use super::spmd::{close, data, mlp_loss};
use super::spmd_models::gpt_loss;
use nabla::dist::{self, CostModel, Mesh};
use nabla::nn::models::{Gpt, GptConfig};
use nabla::optim::{AdamW, Optimizer};
use nabla::prelude::*;

#[test]
#[ignore = "run by launch.rs under mpirun"]
fn mlp_under_auto() {
    let _mpi = dist::init();
    let n = dist::world_size();
    let (w1, w2) = (data(&[6, 4 * n], 0.2) - 1.0, data(&[4 * n, 3], 0.5) - 1.0);
    let (x, y) = (data(&[8 * n, 6], 0.8), data(&[8 * n, 3], 1.1));
    let mut meshes = vec![Mesh::new(&[("x", n)])];
    if n == 4 {
        meshes.push(Mesh::new(&[("data", 2), ("model", 2)]));
    }
    for mesh in meshes {
        // Slow arithmetic and fast links: splitting the work pays.
        let a = dist::auto(mlp_loss, &mesh).cost_model(CostModel::uniform(1e6, 1e10, 1e-9));
        let (l, g) = nabla::value_and_grad(a)(&w1, &w2, &x, &y);
        let (l1, g1) = nabla::value_and_grad(mlp_loss)(&w1, &w2, &x, &y);
        close(&l, &l1, "auto: loss");
        close(&g, &g1, "auto: gradient");
        // A second call reuses the plan; what it sends is what it predicts.
        let before = dist::bytes_sent();
        let (l, _) = nabla::value_and_grad(a)(&w1, &w2, &x, &y);
        let sent = dist::bytes_sent() - before;
        close(&l, &l1, "auto: loss again");
        let plan = a.plan();
        assert_eq!(
            sent,
            plan.bytes_per_call(),
            "bytes sent vs planned:\n{plan}"
        );
        assert!(sent > 0, "the plan distributes the work:\n{plan}");
        assert!(
            plan.input_specs().iter().any(|s| !s.is_replicated()),
            "{plan}"
        );
        if dist::rank() == 0 {
            println!("{plan}");
        }
        // Other transforms of the same function.
        close(&nabla::grad(a)(&w1, &w2, &x, &y), &g1, "auto: grad");
        close(&a(&w1, &w2, &x, &y), &l1, "auto: call");
    }
}

#[test]
#[ignore = "run by launch.rs under mpirun"]
fn gpt_adamw_under_auto() {
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
    let to64 = |g: &Gpt| {
        let leaves: Vec<Array> = nabla::tree::leaves(g)
            .iter()
            .map(|a| a.cast(DType::F64))
            .collect();
        nabla::tree::Tree::rebuild(g, &mut leaves.into_iter())
    };
    let mut p1 = to64(&model);
    let mut pa = p1.clone();
    let (b, t) = (2 * n, 4);
    let x = Key::new(5).normal(&[b, t, cfg.embd], DType::F64);
    let labels: Vec<f64> = (0..b * t)
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
    let mesh = Mesh::new(&[("x", n)]);
    let a = dist::auto(gpt_loss, &mesh).cost_model(CostModel::uniform(1e6, 1e10, 1e-9));
    let opt = AdamW::new(0.01);
    let (mut s1, mut sa) = (opt.init(&p1), opt.init(&pa));
    for step in 0..20 {
        let (l1, g1) = nabla::value_and_grad(gpt_loss)(&p1, &x, &y);
        opt.update(&mut p1, &g1, &mut s1);
        let (la, ga) = nabla::value_and_grad(a)(&pa, &x, &y);
        opt.update(&mut pa, &ga, &mut sa);
        close(&la, &l1, &format!("step {step}: loss"));
    }
    for ((name, w1), (_, wa)) in nabla::tree::named_leaves(&p1)
        .iter()
        .zip(nabla::tree::named_leaves(&pa))
    {
        let diff = (w1 - &wa).abs().max().item();
        assert!(
            diff <= 1e-6,
            "after 20 AdamW steps, {name} differs by {diff}"
        );
    }
    let plan = a.plan();
    assert!(
        plan.bytes_per_call() > 0,
        "the plan distributes the work:\n{plan}"
    );
    if dist::rank() == 0 {
        println!("{plan}");
    }
}
