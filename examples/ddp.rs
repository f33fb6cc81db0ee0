//! Data-parallel training over MPI (feature `mpi`): every rank takes a
//! shard of the batch, the ranks average their gradients before each Adam
//! step (`DataParallel::mean`), and rank 0 prints the full batch's loss.
//! At the end the ranks check that they hold the same parameters, bit for
//! bit.
//!
//! Run: `cargo build --release --features mpi --example ddp` then
//! `mpirun -n 2 target/release/examples/ddp` (as root, add
//! `--allow-run-as-root`). Without `mpirun` it trains on one rank.

use nabla::dist::{self, Comm, DataParallel, Reduce};
use nabla::optim::{Adam, Optimizer};
use nabla::prelude::*;

#[derive(Clone, Tree)]
struct Mlp {
    w1: Array,
    b1: Array,
    w2: Array,
    b2: Array,
}

#[differentiable]
fn predict(p: &Mlp, x: &Array) -> Array {
    let h = (x.matmul(&p.w1) + &p.b1).tanh();
    h.matmul(&p.w2) + &p.b2
}

#[differentiable]
fn loss(p: &Mlp, x: &Array, y: &Array) -> Array {
    nabla::mse_loss(&predict(p, x), y)
}

fn main() {
    let _mpi = dist::init();
    let (rank, size) = (dist::rank(), dist::world_size());
    let dp = DataParallel::new(Comm::world());
    // y = sin(3x) on 240 points; each rank trains on its block of rows.
    let x = Array::linspace(-1.0, 1.0, 240, DType::F32).reshape(&[240, 1]);
    let y = (&x * 3.0).sin();
    let (xs, ys) = (dp.shard(&x), dp.shard(&y));
    // Each rank draws its own initial parameters; `sync` keeps rank 0's.
    nabla::manual_seed(rank as u64);
    let mut p = dp.sync(&Mlp {
        w1: nabla::randn(&[1, 64], DType::F32),
        b1: Array::zeros(&[64], DType::F32),
        w2: nabla::randn(&[64, 1], DType::F32) * 0.1,
        b2: Array::zeros(&[1], DType::F32),
    });
    if rank == 0 {
        println!("{size} rank(s), {} rows each", xs.shape()[0]);
    }
    let opt = Adam::new(0.01);
    let mut state = opt.init(&p);
    let first = loss(&p, &x, &y).item();
    for step in 1..=600 {
        let g = dp.mean(&grad(loss)(&p, &xs, &ys));
        opt.update(&mut p, &g, &mut state);
        if rank == 0 && step % 100 == 0 {
            println!("step {step:3}  loss {:.6}", loss(&p, &x, &y).item());
        }
    }
    let last = loss(&p, &x, &y).item();
    // The same parameters on every rank: each leaf's largest difference
    // from rank 0's copy is zero.
    let mut differ = 0.0f64;
    for leaf in nabla::tree::leaves(&p) {
        let root = dist::broadcast(&leaf, 0, Comm::world());
        let d = (&leaf - &root).abs().reshape(&[leaf.numel()]);
        let d = dist::all_reduce(&d, Reduce::Max, Comm::world());
        differ = differ.max(d.to_vec::<f32>().into_iter().fold(0.0, f32::max) as f64);
    }
    if rank == 0 {
        println!("loss fell from {first:.5} to {last:.5}");
        println!("largest parameter difference between ranks: {differ}");
    }
    assert!(last < first * 0.05, "training did not converge");
    assert_eq!(differ, 0.0, "ranks disagree");
}
