//! Distributed benchmarks (feature `mpi`), both twins in the same run:
//!
//! - `allreduce`: `nabla::dist::all_reduce` (sum) of 64 MB of f32 against
//!   a plain `MPI_Allreduce` on raw buffers, alternated;
//! - data-parallel `mlp_step` (784→512→512→10, tanh, MSE, batch 256, f32,
//!   SGD 0.01): rank 0 alone on the whole batch while the others wait,
//!   then every rank on its shard with `DataParallel::mean`.
//!
//! Run: `cargo build --release --features mpi --example dist_bench` then
//! `RAYON_NUM_THREADS=1 mpirun -n 2 target/release/examples/dist_bench`.

use mpi::collective::SystemOperation;
use mpi::traits::CommunicatorCollectives;
use nabla::dist::{self, Comm, DataParallel, Reduce};
use nabla::optim::{Optimizer, Sgd};
use nabla::prelude::*;
use std::time::Instant;

#[derive(Clone, Tree)]
struct Mlp {
    w1: Array,
    b1: Array,
    w2: Array,
    b2: Array,
    w3: Array,
    b3: Array,
}

#[differentiable]
fn loss(p: &Mlp, x: &Array, y: &Array) -> Array {
    let h = (x.matmul(&p.w1) + &p.b1).tanh();
    let h = (h.matmul(&p.w2) + &p.b2).tanh();
    nabla::mse_loss(&(h.matmul(&p.w3) + &p.b3), y)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Seconds per call of `f`, the same count on every rank, timed between
/// barriers.
fn time(reps: usize, mut f: impl FnMut()) -> Vec<f64> {
    (0..reps)
        .map(|_| {
            Comm::world().barrier();
            let t = Instant::now();
            f();
            Comm::world().barrier();
            t.elapsed().as_secs_f64()
        })
        .collect()
}

fn main() {
    let _mpi = dist::init();
    let (rank, n) = (dist::rank(), dist::world_size());
    let world = mpi::topology::SimpleCommunicator::world();

    // allreduce: 64 MB of f32.
    let len = 16 << 20;
    let x = Array::full(&[len], rank as f64 + 1.0, DType::F32);
    let raw_in = vec![rank as f32 + 1.0; len];
    let mut raw_out = vec![0.0f32; len];
    let (mut ours, mut plain) = (Vec::new(), Vec::new());
    for round in 0..6 {
        let a = time(1, || {
            let y = dist::all_reduce(&x, Reduce::Sum, Comm::world());
            assert_eq!(y.shape(), &[len]);
        });
        let b = time(1, || {
            world.all_reduce_into(&raw_in[..], &mut raw_out[..], SystemOperation::sum())
        });
        if round > 0 {
            ours.extend(a);
            plain.extend(b);
        }
    }
    let (ours, plain) = (median(ours), median(plain));
    let gbs = |t: f64| (len * 4) as f64 / t / 1e9;
    if rank == 0 {
        println!("allreduce 64 MB f32, {n} ranks (median of 5, alternated)");
        println!(
            "  nabla::dist::all_reduce  {:7.2} ms  {:5.2} GB/s",
            ours * 1e3,
            gbs(ours)
        );
        println!(
            "  MPI_Allreduce raw        {:7.2} ms  {:5.2} GB/s",
            plain * 1e3,
            gbs(plain)
        );
        println!("  bandwidth ours / raw     {:.3}", plain / ours);
    }

    // Data-parallel mlp_step.
    nabla::manual_seed(0);
    let init = |i: usize, o: usize| nabla::randn(&[i, o], DType::F32) * (1.0 / (i as f64).sqrt());
    let dp = DataParallel::new(Comm::world());
    let mut p = dp.sync(&Mlp {
        w1: init(784, 512),
        b1: Array::zeros(&[512], DType::F32),
        w2: init(512, 512),
        b2: Array::zeros(&[512], DType::F32),
        w3: init(512, 10),
        b3: Array::zeros(&[10], DType::F32),
    });
    let x = nabla::randn(&[256, 784], DType::F32);
    let y = nabla::randn(&[256, 10], DType::F32);
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
