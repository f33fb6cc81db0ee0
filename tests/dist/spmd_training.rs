//! Training on `DArray`s: the tape (`requires_grad`, `backward`, `grad`)
//! and 20 AdamW steps on a tree of `DArray`s, against one process.

use super::spmd::{close, data, mlp_loss};
use nabla::dist::{self, Mesh, Spec};
use nabla::optim::{AdamW, Optimizer};
use nabla::prelude::*;

/// Tensor-parallel weights and data-parallel inputs on the world's mesh.
fn layouts(n: usize) -> (Mesh, [Spec; 4]) {
    let mesh = Mesh::new(&[("x", n)]);
    let specs = [
        Spec::new(&[None, Some("x")]),
        Spec::new(&[Some("x"), None]),
        Spec::new(&[Some("x"), None]),
        Spec::new(&[Some("x"), None]),
    ];
    (mesh, specs)
}

#[test]
#[ignore = "run by launch.rs under mpirun"]
fn tape_and_adamw() {
    let _mpi = dist::init();
    let n = dist::world_size();
    let (w1, w2) = (data(&[6, 4 * n], 0.2) - 1.0, data(&[4 * n, 3], 0.5) - 1.0);
    let (x, y) = (data(&[2 * n, 6], 0.8), data(&[2 * n, 3], 1.1));
    let (mesh, [s1, s2, sx, sy]) = layouts(n);
    let d = |a: &Array, s: &Spec| dist::distribute(a, &mesh, s);

    // The tape: backward on every rank, gradients laid out like the leaves.
    let g = nabla::grad!(mlp_loss, argnums = (0, 1))(&w1, &w2, &x, &y);
    let (w1d, w2d) = (d(&w1, &s1).requires_grad(), d(&w2, &s2).requires_grad());
    let loss = dist::spmd(mlp_loss, &mesh)(&w1d, &w2d, &d(&x, &sx), &d(&y, &sy));
    loss.backward();
    assert_eq!(w1d.grad().spec(), s1);
    close(&w1d.grad().to_global(), &g.0, "tape: dw1");
    close(&w2d.grad().to_global(), &g.1, "tape: dw2");
    // From a replicated loss (the pending sum completed on the tape): every
    // rank holds a copy, each seeded with one over the copies.
    let (w1d, w2d) = (d(&w1, &s1).requires_grad(), d(&w2, &s2).requires_grad());
    let loss = dist::spmd(mlp_loss, &mesh)(&w1d, &w2d, &d(&x, &sx), &d(&y, &sy));
    let whole = loss.reshard(&Spec::replicated(0));
    assert!(whole.spec().is_replicated());
    whole.backward();
    close(
        &w1d.grad().to_global(),
        &g.0,
        "tape from a replicated loss: dw1",
    );

    // 20 AdamW steps, functional gradients of a tree of DArrays.
    let opt = AdamW::new(0.05);
    let mut p = vec![w1.clone(), w2.clone()];
    let mut state = opt.init(&p);
    let specs = [s1.clone(), s2.clone()];
    let mut pd = dist::distribute_tree(&p, &mesh, |name, _| {
        specs[name.parse::<usize>().unwrap()].clone()
    });
    let mut sd = opt.init(&pd);
    let (xd, yd) = (d(&x, &sx), d(&y, &sy));
    for step in 0..20 {
        let (l, gp) = nabla::value_and_grad(list_loss)(&p, &x, &y);
        opt.update(&mut p, &gp, &mut state);
        let (ld, gd) = nabla::value_and_grad(dist::spmd(list_loss, &mesh))(&pd, &xd, &yd);
        opt.update(&mut pd, &gd, &mut sd);
        close(&ld.to_global(), &l, &format!("step {step}: loss"));
    }
    let got = pd.to_global();
    for (k, (a, b)) in got.iter().zip(&p).enumerate() {
        let diff = (a - b).abs().max().item();
        assert!(
            diff <= 1e-6,
            "after 20 AdamW steps, weight {k} differs by {diff}"
        );
    }
}

/// `mlp_loss` with the weights as one list (a tree argument; a `Vec`, the
/// type the optimizer's tree has).
#[allow(clippy::ptr_arg)]
#[nabla::differentiable]
fn list_loss(w: &Vec<Array>, x: &Array, y: &Array) -> Array {
    mlp_loss(&w[0], &w[1], x, y)
}
