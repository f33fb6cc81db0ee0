//! The transforms as values.
//!
//! * [`grad`]: `grad`, `value_and_grad`, `vjp`, `jvp`, `checkpoint` of any
//!   `#[differentiable]` function, with `argnums` (`argnums.rs`: picking
//!   arguments out of the argument tuple) and `has_aux`.
//! * [`compose`]: the composable transforms `vmap`, `jacfwd`, `jacrev`,
//!   `hessian` and `grad` of scalar functions, nested to any depth, over
//!   the [`DiffFn`](compose::DiffFn) trait; argument and output structure
//!   (`structure`), Jacobian assembly and pullbacks (`jacobian`), and
//!   Jacobians for several arguments (`many`); `grad`, `value_and_grad`,
//!   `jvp` and `vjp` of those transforms (`outer`); transformed functions
//!   called inside differentiable code (`inside`); Jacobians and Hessians
//!   of functions of floats (`fixed`).

mod aux;
mod axes;
pub mod compose;
mod diff_fn;
mod fixed;
pub mod grad;
mod inside;
mod jacobian;
mod many;
mod nested;
pub(crate) mod outer;
mod values;
mod vmap;
