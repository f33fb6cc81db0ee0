//! The composable transforms (`grad`, `vjp`, `jvp`, `vmap`, `jacrev`,
//! `jacfwd`, `hessian`) and checkpointing, against JAX's
//! `jax_programs.json`, against each other (every order of a derivative,
//! reverse against forward mode, `vmap` against loops) and against the
//! code without the transform (checkpointed against plain loops).

mod argnums;
mod checkpoint;
mod compose;
mod every;
mod fixed_arrays;
mod inside;
mod matrix;
mod newcomer;
mod output_tails;
mod revolve;
