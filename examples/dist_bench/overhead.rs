//! What `dist::spmd` adds on one rank: the `mlp_step` (value and
//! gradient, SGD update) on replicated `DArray`s over a mesh of this rank
//! alone, against the same step on plain arrays, alternated, on rank 0
//! while the other ranks wait.

use super::{loss, median, mlp_step_data, time};
use nabla::dist::{self, Comm, Mesh, Spec};
use nabla::optim::{Optimizer, Sgd};
use nabla::prelude::*;

pub fn run() {
    let rank = dist::rank();
    // Every rank a mesh of its own (the split is collective).
    let alone = Comm::world().split(rank, 0);
    let mesh = Mesh::on(alone, &[("x", 1)]);
    let (mut p, x, y) = mlp_step_data();
    let replicated = |a: &Array| dist::distribute(a, &mesh, &Spec::replicated(a.ndim()));
    let mut pd = dist::distribute_tree(&p, &mesh, |_, s| Spec::replicated(s.len()));
    let (xd, yd) = (replicated(&x), replicated(&y));
    let opt = Sgd::new(0.01);
    let (mut s, mut sd) = (opt.init(&p), opt.init(&pd));
    let f = dist::spmd(loss, &mesh);
    let rounds = 40;
    let (mut plain, mut spmd) = (Vec::new(), Vec::new());
    let (mut l_plain, mut l_spmd) = (0.0, 0.0);
    for round in 0..rounds + 3 {
        let a = time(1, || {
            if rank == 0 {
                let (l, g) = value_and_grad(loss)(&p, &x, &y);
                opt.update(&mut p, &g, &mut s);
                l_plain = l.item();
            }
        });
        let b = time(1, || {
            if rank == 0 {
                let (l, g) = value_and_grad(f)(&pd, &xd, &yd);
                opt.update(&mut pd, &g, &mut sd);
                l_spmd = l.to_global().item();
            }
        });
        if round >= 3 {
            plain.extend(a);
            spmd.extend(b);
        }
    }
    if rank == 0 {
        // The two runs take the same steps: their losses agree.
        assert!(
            (l_plain - l_spmd).abs() <= 1e-5 * l_plain.abs().max(1.0),
            "spmd's loss {l_spmd} vs {l_plain}"
        );
        let (plain, spmd) = (median(plain), median(spmd));
        println!("spmd overhead: mlp_step on one rank (median of {rounds}, alternated)");
        println!("  plain arrays             {:7.2} ms", plain * 1e3);
        println!("  spmd, mesh of one rank   {:7.2} ms", spmd * 1e3);
        println!("  spmd / plain             {:.3}", spmd / plain);
    }
}
