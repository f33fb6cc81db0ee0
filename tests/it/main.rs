//! The integration tests of `nabla`, in one binary (one link of the crate
//! instead of one per file), grouped by topic and oracle:
//!
//! - [`fixtures`]: every op and whole programs against JAX's outputs in
//!   `tests/fixtures/*.json` (through the rules, the tape, `Dual`,
//!   `Batched` and `#[differentiable]` code);
//! - [`finite_differences`]: every rule, first and second order, against
//!   central differences at new points and shapes;
//! - [`language`]: what `#[differentiable]` accepts (loops, jumps,
//!   branches, tree and list arguments) against the tape, finite
//!   differences, forward mode and loops of single-example calls;
//! - [`transforms`]: composed transforms, `argnums`/`in_axes`, output-only
//!   tails and checkpointing against JAX, each other and the plain code;
//! - [`fused`] (fused regions against their unfused twins),
//!   [`imperative`], [`custom_ops`], [`fused_ops`], [`errors`],
//!   [`properties`], [`random_programs`] and [`strided_views`] (host
//!   storage views of random layouts against row-major copies);
//! - [`bad_input`]: every public op with bad input (rejections name the
//!   op and the fix; empty arrays follow NumPy; corrupted safetensors
//!   files are error values).
//!
//! [`common`] holds the shared helpers. The compile-fail tests (trybuild)
//! are a binary of their own, `tests/compile_fail.rs`, and so are the CUDA
//! backend's tests, `tests/cuda/` (which skip without a GPU).

mod bad_input;
mod check_grads;
mod common;
mod custom_ops;
mod errors;
mod finite_differences;
mod fixtures;
mod fused;
mod fused_ops;
mod imperative;
mod io;
mod language;
mod linalg;
mod nn;
mod nn_layers;
mod optim;
mod properties;
mod random_programs;
mod resume;
mod row_ops;
mod strided_views;
mod transforms;
