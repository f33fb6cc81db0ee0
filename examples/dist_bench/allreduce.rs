//! `nabla::dist::all_reduce` against a plain `MPI_Allreduce` on raw
//! buffers: 64 MB of f32, alternated.

use super::{median, time};
use mpi::collective::SystemOperation;
use mpi::traits::CommunicatorCollectives;
use nabla::dist::{self, Comm, Reduce};
use nabla::prelude::*;

pub fn run() {
    let (rank, n) = (dist::rank(), dist::world_size());
    let world = mpi::topology::SimpleCommunicator::world();
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
}
