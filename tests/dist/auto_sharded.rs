//! `dist::auto(f, &mesh).sharded()`: the planner lays out an MLP step
//! whose parameters and data arrive as `DTree` / `DArray`s in the layouts
//! they have (Megatron, data-parallel, and the planner's own choice for
//! global arrays). Values and gradients equal one process, gradients come
//! back laid out like their parameters, the bytes the collectives count
//! equal the plan's prediction, and AdamW steps on the blocks follow the
//! one-process run.

use super::spmd::{close, data, mlp_loss};
use nabla::dist::{self, CostModel, DArray, Mesh, Plan, Spec};
use nabla::optim::{AdamW, Optimizer};
use nabla::prelude::*;

#[derive(Clone, Tree)]
struct Mlp {
    w1: Array,
    w2: Array,
}

#[differentiable]
fn tree_loss(p: &Mlp, x: &Array, y: &Array) -> Array {
    mlp_loss(&p.w1, &p.w2, x, y)
}

/// Slow arithmetic and fast links: splitting the work pays.
fn model() -> CostModel {
    CostModel::uniform(1e6, 1e10, 1e-9)
}

#[test]
#[ignore = "run by launch.rs under mpirun"]
fn mlp_on_sharded_arguments() {
    let _mpi = dist::init();
    let n = dist::world_size();
    let p = Mlp {
        w1: data(&[6, 4 * n], 0.2) - 1.0,
        w2: data(&[4 * n, 3], 0.5) - 1.0,
    };
    let (x, y) = (data(&[8 * n, 6], 0.8), data(&[8 * n, 3], 1.1));
    let mut meshes = vec![Mesh::new(&[("x", n)])];
    if n == 4 {
        meshes.push(Mesh::new(&[("data", 2), ("model", 2)]));
    }
    let step = nabla::value_and_grad(tree_loss);
    let (l1, g1) = step(&p, &x, &y);
    for mesh in meshes {
        let shape = mesh.shape();
        let axes: Vec<(&str, usize)> = shape.axes().collect();
        let (d, m) = (axes[0].0, axes[axes.len() - 1].0);
        // The planner's layouts to keep, in leaf order: w1, w2, x, y.
        let planned = Plan::for_mesh(&axes)
            .cost_model(model())
            .training_step(tree_loss, (&p, &x, &y));
        let planned_bytes = planned.bytes_per_call();
        let planned = planned.input_specs();
        let layouts = [
            (
                "Megatron",
                vec![
                    Spec::new(&[None, Some(m)]),
                    Spec::new(&[Some(m), None]),
                    Spec::replicated(2),
                    Spec::replicated(2),
                ],
            ),
            (
                "data-parallel",
                vec![
                    Spec::replicated(2),
                    Spec::replicated(2),
                    Spec::new(&[Some(d), None]),
                    Spec::new(&[Some(d), None]),
                ],
            ),
            ("planned", planned),
        ];
        for (what, specs) in layouts {
            let what = format!("{what} on {shape}");
            let mut k = 0;
            let pd = dist::distribute_tree(&p, &mesh, |_, _| {
                k += 1;
                specs[k - 1].clone()
            });
            let xd = dist::distribute(&x, &mesh, &specs[2]);
            let yd = dist::distribute(&y, &mesh, &specs[3]);
            let a = dist::auto(tree_loss, &mesh).cost_model(model()).sharded();
            let before = dist::bytes_sent();
            let (l, g) = nabla::value_and_grad(a)(&pd, &xd, &yd);
            let first = dist::bytes_sent() - before;
            let solved = a.plan();
            assert_eq!(
                first,
                solved.bytes_per_call(),
                "{what}: the first call runs the solver's plan:\n{solved}"
            );
            close(&l.to_global(), &l1, &format!("{what}: loss"));
            let (gl, gl1) = (g.leaves(), nabla::tree::leaves(&g1));
            for (k, (gd, pk)) in gl.iter().zip(pd.leaves()).enumerate() {
                assert_eq!(gd.spec(), pk.spec(), "{what}: gradient {k}'s layout");
                close(&gd.to_global(), &gl1[k], &format!("{what}: gradient {k}"));
            }
            if what.starts_with("planned") {
                // `auto` plans what `Planner::training_step` planned.
                assert_eq!(first, planned_bytes, "{what}:\n{solved}");
            }
            // Later calls measure the solver's plan against `spmd`'s own
            // choices and keep the faster; each sends what its plan says,
            // every call gives the same values, and each plan keeps the
            // arguments' layouts.
            let want: Vec<Spec> = pd
                .leaves()
                .iter()
                .map(DArray::spec)
                .chain([xd.spec(), yd.spec()])
                .collect();
            for call in 0..10 {
                let before = dist::bytes_sent();
                let (l, _) = nabla::value_and_grad(a)(&pd, &xd, &yd);
                let sent = dist::bytes_sent() - before;
                let plan = a.plan();
                assert_eq!(
                    sent,
                    plan.bytes_per_call(),
                    "{what}, call {call}: bytes sent vs planned:\n{plan}"
                );
                close(&l.to_global(), &l1, &format!("{what}, call {call}: loss"));
                assert_eq!(
                    plan.input_specs(),
                    want,
                    "{what}: the plan keeps the arguments' layouts"
                );
            }
            // `grad` and a plain call of the same function.
            let g = nabla::grad(a)(&pd, &xd, &yd);
            close(
                &g.leaves()[1].to_global(),
                &gl1[1],
                &format!("{what}: grad"),
            );
            close(&a(&pd, &xd, &yd).to_global(), &l1, &format!("{what}: call"));
        }
    }
}

#[test]
#[ignore = "run by launch.rs under mpirun"]
fn adamw_on_sharded_parameters() {
    let _mpi = dist::init();
    let n = dist::world_size();
    let mut p1 = Mlp {
        w1: data(&[6, 4 * n], 0.3) - 1.0,
        w2: data(&[4 * n, 3], 0.7) - 1.0,
    };
    let (x, y) = (data(&[8 * n, 6], 0.9), data(&[8 * n, 3], 1.3));
    let mesh = Mesh::new(&[("x", n)]);
    let mut pd = dist::distribute_tree(&p1, &mesh, |name, _| match name {
        "w1" => Spec::new(&[None, Some("x")]),
        _ => Spec::new(&[Some("x"), None]),
    });
    let (xd, yd) = (
        dist::distribute(&x, &mesh, &Spec::new(&[Some("x"), None])),
        dist::distribute(&y, &mesh, &Spec::replicated(2)),
    );
    let a = dist::auto(tree_loss, &mesh).cost_model(model()).sharded();
    let opt = AdamW::new(0.01);
    let (mut s1, mut sd) = (opt.init(&p1), opt.init(&pd));
    for step in 0..20 {
        let (l1, g1) = nabla::value_and_grad(tree_loss)(&p1, &x, &y);
        opt.update(&mut p1, &g1, &mut s1);
        let (l, g) = nabla::value_and_grad(a)(&pd, &xd, &yd);
        opt.update(&mut pd, &g, &mut sd);
        close(&l.to_global(), &l1, &format!("step {step}: loss"));
    }
    let back: Mlp = pd.to_global();
    for ((name, w1), (_, wd)) in nabla::tree::named_leaves(&p1)
        .iter()
        .zip(nabla::tree::named_leaves(&back))
    {
        let diff = (w1 - &wd).abs().max().item();
        assert!(
            diff <= 1e-6,
            "after 20 AdamW steps, {name} differs by {diff}"
        );
    }
}
