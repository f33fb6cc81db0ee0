//! Distributed execution over MPI (feature `mpi`): processes started by
//! `mpirun`, one rank each, and collectives on arrays that every
//! transform differentiates.
//!
//! ```standalone_crate
//! use nabla::{Array, dist::{self, Comm, Reduce}};
//! let _mpi = dist::init(); // keep until the end of main (MPI_Finalize)
//! let x = Array::from_vec(vec![dist::rank() as f64; 3], &[3]);
//! let mean = dist::all_reduce(&x, Reduce::Mean, Comm::world());
//! if dist::rank() == 0 {
//!     println!("{} ranks, mean {mean}", dist::world_size());
//! }
//! ```
//!
//! Run with `mpirun -n 2 target/release/examples/my_program`; without
//! `mpirun` the program is a world of one rank. docs/design.md §
//! "Distributed execution" describes the conventions.

mod collectives;
mod comm;
mod data_parallel;
mod flat;
#[cfg(feature = "cuda")]
mod nccl;
mod overlap;
mod tensor_parallel;
mod zero;

pub use collectives::{Reduce, all_gather, all_reduce, all_to_all, broadcast, reduce_scatter};
pub use comm::{Comm, Mpi, abort, init, rank, world_size};
pub use data_parallel::DataParallel;
pub use tensor_parallel::{
    ColumnParallelLinear, ParallelAttention, ParallelMlp, RowParallelLinear, copy_to_ranks,
    sum_partials,
};
pub use zero::Zero1;
