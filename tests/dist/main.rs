//! `nabla::dist` under `mpirun` (feature `mpi`). The launcher tests run
//! this binary's ignored worker tests under `mpirun -n 2` and `-n 3` and
//! check how the job ends; each worker compares, on every rank, the
//! collectives and their gradients with the same computation done in one
//! process from every rank's inputs (which each rank can build), and with
//! finite differences in f64.

#![cfg(feature = "mpi")]

mod auto;
mod auto_sharded;
mod bad_input;
#[cfg(feature = "cuda")]
mod gpu;
mod io;
mod launch;
mod parallel;
mod pipeline;
mod plans;
mod spmd;
mod spmd_models;
mod spmd_other;
mod spmd_training;
mod spmd_transforms;
mod worker;
