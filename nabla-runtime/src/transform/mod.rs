//! L5 transforms: the transforms as values.
//!
//! * [`grad`]: `grad`, `value_and_grad`, `vjp`, `jvp`, `checkpoint` of any
//!   `#[differentiable]` function, with `argnums` (`select`: picking
//!   cotangents by argument) and `has_aux`; `private` is what generated
//!   code calls beside them (with `calls`: how one
//!   differentiable function calls another).
//! * [`compose`]: the composable transforms `vmap`, `jacfwd`, `jacrev`,
//!   `hessian` and `grad` of scalar functions, nested to any depth, over
//!   the [`DiffFn`](compose::DiffFn) trait (`diff_fn`); the transform
//!   value types (`values`) and `vmap`'s axes (`axes`); `vmap`'s programs
//!   (`vmap`), Jacobian assembly and pullbacks (`jacobian`), and Jacobians
//!   for several arguments (`many`); `grad`, `value_and_grad`, `jvp` and
//!   `vjp` of those transforms (`outer`, `aux`, `nested`); transformed
//!   functions called inside differentiable code (`inside`); Jacobians and
//!   Hessians of functions of floats (`fixed`). Argument and output
//!   structures are L2 vocabulary (`vocab/structure.rs`, `vocab/arity.rs`).

mod aux;
mod axes;
pub(crate) mod calls;
pub mod compose;
mod diff_fn;
mod fixed;
pub mod grad;
mod inside;
mod jacobian;
mod many;
mod nested;
pub(crate) mod outer;
#[doc(hidden)]
pub mod private;
mod select;
mod values;
mod vmap;
