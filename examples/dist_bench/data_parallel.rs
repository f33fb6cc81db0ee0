//! The data-parallel `mlp_step`: rank 0 alone on the whole batch while
//! the others wait, then every rank on its shard with
//! `DataParallel::mean`, and the tape step with the mean after the
//! backward pass against buckets reduced during it.

use super::{Mlp, loss, median, mlp_step_data, time};
use nabla::dist::{self, Comm, DataParallel};
use nabla::optim::{Optimizer, Sgd};
use nabla::prelude::*;

pub fn run() {
    let (rank, n) = (dist::rank(), dist::world_size());
    let (p, x, y) = mlp_step_data();
    let dp = DataParallel::new(Comm::world());
    let mut p = dp.sync(&p);
    let (xs, ys) = (dp.shard(&x), dp.shard(&y));
    let opt = Sgd::new(0.01);
    let mut state = opt.init(&p);
    let mut alone = p.clone();
    let mut alone_state = opt.init(&alone);
    let steps = 10;
    let single = time(steps + 2, || {
        if rank == 0 {
            let g = grad(loss)(&alone, &x, &y);
            opt.update(&mut alone, &g, &mut alone_state);
        }
    });
    let parallel = time(steps + 2, || {
        let g = dp.mean(&grad(loss)(&p, &xs, &ys));
        opt.update(&mut p, &g, &mut state);
    });
    // The same shard steps without the gradient mean: what communication costs.
    let mut q = p.clone();
    let mut q_state = opt.init(&q);
    let local = time(steps + 2, || {
        let g = grad(loss)(&q, &xs, &ys);
        opt.update(&mut q, &g, &mut q_state);
    });
    // The same step on the tape: the whole backward pass then the mean,
    // against the buckets reduced while the pass runs (`dp.backward`).
    let dp = DataParallel::new(Comm::world()).bucket_bytes(1 << 20);
    let tape_step = |p: &mut Mlp, state: &mut _, overlap: bool| {
        let leaves: Vec<Array> = nabla::tree::leaves(&*p)
            .into_iter()
            .map(Array::requires_grad)
            .collect();
        let tracked = Mlp {
            w1: leaves[0].clone(),
            b1: leaves[1].clone(),
            w2: leaves[2].clone(),
            b2: leaves[3].clone(),
            w3: leaves[4].clone(),
            b3: leaves[5].clone(),
        };
        let l = loss(&tracked, &xs, &ys);
        let g = if overlap {
            dp.overlap(true).backward(&l, &tracked)
        } else {
            l.backward();
            let local = Mlp {
                w1: tracked.w1.grad(),
                b1: tracked.b1.grad(),
                w2: tracked.w2.grad(),
                b2: tracked.b2.grad(),
                w3: tracked.w3.grad(),
                b3: tracked.b3.grad(),
            };
            dp.mean(&local)
        };
        opt.update(p, &g, state);
    };
    let (mut pa, mut pb) = (p.clone(), p.clone());
    let (mut sa, mut sb) = (opt.init(&pa), opt.init(&pb));
    let (mut after, mut during) = (Vec::new(), Vec::new());
    for _ in 0..steps + 2 {
        after.extend(time(1, || tape_step(&mut pa, &mut sa, false)));
        during.extend(time(1, || tape_step(&mut pb, &mut sb, true)));
    }
    let (after, during) = (median(after[2..].to_vec()), median(during[2..].to_vec()));
    let local = median(local[2..].to_vec());
    let (single, parallel) = (median(single[2..].to_vec()), median(parallel[2..].to_vec()));
    if rank == 0 {
        println!("mlp_step, batch 256 (median of {steps}; threads per rank: RAYON_NUM_THREADS)");
        println!("  1 rank, whole batch      {:7.2} ms", single * 1e3);
        println!("  {n} ranks, data-parallel  {:7.2} ms", parallel * 1e3);
        println!(
            "  {n} ranks, no mean        {:7.2} ms (each rank's shard alone)",
            local * 1e3
        );
        println!("  throughput {n} ranks / 1  {:.2}", single / parallel);
        println!("tape mlp_step on {n} ranks (alternated; buckets of 1 MiB)");
        println!("  backward(), then mean    {:7.2} ms", after * 1e3);
        println!("  dp.backward (overlapped) {:7.2} ms", during * 1e3);
        println!("  overlapped / after       {:.3}", during / after);
    }
}
