//! Distributed benchmarks (feature `mpi`), every twin in the same run:
//!
//! - `allreduce`: `nabla::dist::all_reduce` (sum) of 64 MB of f32 against
//!   a plain `MPI_Allreduce` on raw buffers, alternated;
//! - `dp`: data-parallel `mlp_step` (784→512→512→10, tanh, MSE, batch
//!   256, f32, SGD 0.01): rank 0 alone on the whole batch while the others
//!   wait, then every rank on its shard with `DataParallel::mean`, and the
//!   tape step with and without overlapped buckets;
//! - `overhead`: the same step through `dist::spmd` on a mesh of one rank
//!   (replicated `DArray`s) against the plain step, on rank 0;
//! - `strategies`: the step under `dist::auto` against the hand-written
//!   `DataParallel`, `Zero1` and tensor-parallel (`spmd` with Megatron's
//!   layout) steps on every rank, alternated, with ratios.
//!
//! Run: `cargo build --release --features mpi --example dist_bench` then
//! `RAYON_NUM_THREADS=1 mpirun -n 2 target/release/examples/dist_bench`
//! (all sections) or `.. dist_bench overhead strategies` (some).

mod allreduce;
mod data_parallel;
mod overhead;
mod strategies;

use nabla::dist::{self, Comm};
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

/// The `mlp_step` model, the same on every rank (seeded), and a batch.
fn mlp_step_data() -> (Mlp, Array, Array) {
    nabla::manual_seed(0);
    let init = |i: usize, o: usize| nabla::randn(&[i, o], DType::F32) * (1.0 / (i as f64).sqrt());
    let p = Mlp {
        w1: init(784, 512),
        b1: Array::zeros(&[512], DType::F32),
        w2: init(512, 512),
        b2: Array::zeros(&[512], DType::F32),
        w3: init(512, 10),
        b3: Array::zeros(&[10], DType::F32),
    };
    let x = nabla::randn(&[256, 784], DType::F32);
    let y = nabla::randn(&[256, 10], DType::F32);
    (p, x, y)
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
    let args: Vec<String> = std::env::args().skip(1).collect();
    let want = |s: &str| args.is_empty() || args.iter().any(|a| a == s);
    if want("allreduce") {
        allreduce::run();
    }
    if want("dp") {
        data_parallel::run();
    }
    if want("overhead") {
        overhead::run();
    }
    if want("strategies") {
        strategies::run();
    }
}
