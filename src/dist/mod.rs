//! Distributed execution: processes started by `mpirun`, one rank each
//! (feature `mpi`), collectives on arrays that every transform
//! differentiates, and layouts of arrays over a mesh of ranks.
//!
//! With feature `mpi`:
//!
//! ```ignore
//! use nabla::{Array, dist::{self, Comm, Reduce}};
//! let _mpi = dist::init(); // keep until the end of main (MPI_Finalize)
//! let x = Array::from_vec(vec![dist::rank() as f64; 3], &[3]);
//! let mean = dist::all_reduce(&x, Reduce::Mean, Comm::world());
//! ```
//!
//! (each item's own example runs under `--features mpi`). Run with
//! `mpirun -n 2 target/release/examples/my_program`; without `mpirun` the
//! program is a world of one rank. The layouts and the planner need no
//! MPI:
//!
//! ```
//! use nabla::dist::{MeshShape, Spec};
//! let mesh = MeshShape::new(&[("data", 2), ("model", 2)]);
//! let w = Spec::new(&[None, Some("model")]);
//! assert_eq!((mesh.devices(), w.to_string()), (4, "[-, model]".to_string()));
//! ```
//!
//! docs/design.md § "Distributed execution" and § "Automatic
//! distribution" describe the conventions.

#[cfg(feature = "mpi")]
mod auto;
#[cfg(feature = "mpi")]
mod calibrate;
#[cfg(feature = "mpi")]
mod collectives;
#[cfg(feature = "mpi")]
mod comm;
#[cfg(feature = "mpi")]
mod darray;
#[cfg(feature = "mpi")]
mod darray_value;
#[cfg(feature = "mpi")]
mod data_parallel;
#[cfg(feature = "mpi")]
mod dtape;
#[cfg(feature = "mpi")]
mod dtree;
mod factors;
#[cfg(feature = "mpi")]
mod flat;
mod graph;
#[cfg(feature = "mpi")]
mod io;
mod layout;
#[cfg(feature = "mpi")]
mod mesh;
mod moves;
#[cfg(all(feature = "mpi", feature = "cuda"))]
mod nccl;
#[cfg(feature = "mpi")]
mod overlap;
mod pin;
#[cfg(feature = "mpi")]
mod pipeline;
mod plan;
#[cfg(feature = "mpi")]
mod propagate;
mod registry_methods;
#[cfg(feature = "mpi")]
mod reshard;
mod rules;
#[cfg(feature = "mpi")]
mod spmd;
#[cfg(feature = "mpi")]
mod tensor_parallel;
mod trace;
#[cfg(feature = "mpi")]
mod zero;

#[cfg(feature = "mpi")]
pub use auto::{
    Auto, AutoSharded, Global, Planned, PlannedPullback, PlannedVjp, Sharded, auto, spmd_with,
};
#[cfg(feature = "mpi")]
pub use calibrate::{calibrate, calibrate_on};
#[cfg(feature = "mpi")]
pub use collectives::{Reduce, all_gather, all_reduce, all_to_all, broadcast, reduce_scatter};
#[cfg(feature = "mpi")]
pub use comm::{Comm, Mpi, abort, init, rank, world_size};
#[cfg(feature = "mpi")]
pub use darray::{DArray, distribute};
#[cfg(feature = "mpi")]
pub use data_parallel::DataParallel;
#[cfg(feature = "mpi")]
pub use dtree::{DTree, distribute_tree};
#[cfg(feature = "mpi")]
pub use io::{CheckpointError, load, load_shards, save, save_shards};
pub use layout::{MeshShape, Spec};
#[cfg(feature = "mpi")]
pub use mesh::Mesh;
pub use moves::{bytes_sent, reshard_cost};
#[cfg(feature = "mpi")]
pub use pipeline::{HeadPullback, HeadVjp, Pipeline, PipelineStep, StagePullback, StageVjp};
pub use plan::{
    CostModel, GptPipeline, PipelinePlan, Plan, PlanError, Planner, Schedule, UserArgs,
    pipeline_schedule, split_stages,
};
#[cfg(feature = "mpi")]
pub use spmd::{Blocks, DEntries, DPullback, DSlot, DUser, OnMesh, Spmd, spmd};
#[cfg(feature = "mpi")]
pub use tensor_parallel::{
    ColumnParallelLinear, ParallelAttention, ParallelMlp, RowParallelLinear, copy_to_ranks,
    sum_partials,
};
#[cfg(feature = "mpi")]
pub use zero::Zero1;
