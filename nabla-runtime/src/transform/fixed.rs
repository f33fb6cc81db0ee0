//! `jacfwd`, `jacrev` and `hessian` of functions of floats (`f64`
//! arguments, fixed-size arrays `[f64; N]`, results `f64` or `[f64; M]`).
//! Their Jacobians are arrays of floats of the user's shapes (the
//! Jacobian of `[f64; N] -> [f64; M]` is `[[f64; N]; M]`, output-major
//! like JAX's `out_shape ++ in_shape`), so `#[differentiable]` writes
//! their entry points itself ([`FixedJac`], [`FixedHessian`]): one
//! forward run per input leaf for `jacfwd`, one reverse run per output
//! for `jacrev`, one forward-over-reverse run per input leaf for
//! `hessian`, all on floats.
//!
//! `jacfwd(f)`, `jacrev(f)` and `hessian(f)` dispatch on the tier of the
//! function they transform ([`JacCall`]): functions of arrays use their
//! composable programs, functions of floats these entry points. A Jacobian
//! of a function of floats has the tier [`ScalarJacTier`], so
//! `jacfwd(jacrev(f))` (`hessian`) finds the Hessian entry point.
//!
//! ```
//! use nabla::prelude::*;
//!
//! #[differentiable]
//! fn f(p: &[f64; 2]) -> f64 {
//!     p[0] * p[0] * p[1]
//! }
//!
//! fn main() {
//!     let p = [3.0, 2.0];
//!     assert_eq!(jacrev(f)(&p), [12.0, 9.0]);
//!     assert_eq!(hessian(f)(&p), [[4.0, 6.0], [6.0, 0.0]]);
//! }
//! ```

use crate::transform::outer::{ArrayTier, ScalarTier};

/// The tier of a Jacobian of a function of tier `Self`.
#[doc(hidden)]
pub trait JacTier {
    /// [`ArrayTier`] for functions of arrays, [`ScalarJacTier`] for
    /// functions of floats.
    type Of;
}
impl JacTier for ArrayTier {
    type Of = ArrayTier;
}
impl JacTier for ScalarTier {
    type Of = ScalarJacTier;
}

/// The tier of `jacfwd(f)` / `jacrev(f)` for a function of floats `f`.
#[doc(hidden)]
pub struct ScalarJacTier;

/// How `(tier, transform)` is called: the function pointer a Jacobian
/// transform dereferences to.
#[doc(hidden)]
#[diagnostic::on_unimplemented(
    message = "this Jacobian is not available for `{Self}`",
    note = "jacfwd/jacrev/hessian take functions of one to six arrays, of a list of arrays, or of floats and fixed-size arrays of floats (hessian: of f64 or [f64; N] arguments with one f64 result); `argnums` must index a differentiable parameter"
)]
pub trait JacCall {
    /// The function pointer type.
    type Ptr: 'static;
    /// The entry point.
    const PTR: &'static Self::Ptr;
}

/// `jacfwd` and `jacrev` of a function of floats w.r.t. argument `A`
/// (written by `#[differentiable]`).
#[doc(hidden)]
pub trait FixedJac<A>: Copy {
    /// `jacfwd`'s entry point type.
    type Fwd: Copy + 'static;
    /// `jacfwd`'s entry point.
    const FWD: &'static Self::Fwd;
    /// `jacrev`'s entry point type.
    type Rev: Copy + 'static;
    /// `jacrev`'s entry point.
    const REV: &'static Self::Rev;
}

/// `hessian` of a function of floats w.r.t. argument `A` (written by
/// `#[differentiable]`).
#[doc(hidden)]
pub trait FixedHessian<A>: Copy {
    /// The entry point type.
    type Ptr: Copy + 'static;
    /// The entry point.
    const PTR: &'static Self::Ptr;
}

/// `argnums = I` fits a Jacobian of this function (checked where
/// `jacfwd!`/`jacrev!`/`hessian!` take their options, by the function's
/// tier).
#[doc(hidden)]
pub trait JacArgnum<I> {}
impl<F: crate::transform::outer::Tiered, I> JacArgnum<I> for F where (F::Tier, F, I): TierArgnum {}

/// [`JacArgnum`] by tier.
#[doc(hidden)]
pub trait TierArgnum {}
impl<F: crate::transform::diff_fn::DiffFn, I: crate::vocab::arity::ArgIndex<F::Arity>> TierArgnum
    for (ArrayTier, F, I)
{
}
impl<F: FixedJac<I>, I> TierArgnum for (ScalarTier, F, I) {}
impl<F, I> TierArgnum for (ScalarJacTier, F, I) {}

impl<F: FixedJac<I>, I> JacCall for (ScalarTier, crate::transform::values::Jacfwd<F, I>) {
    type Ptr = F::Fwd;
    const PTR: &'static Self::Ptr = F::FWD;
}
impl<F: FixedJac<I>, I> JacCall for (ScalarTier, crate::transform::values::Jacrev<F, I>) {
    type Ptr = F::Rev;
    const PTR: &'static Self::Ptr = F::REV;
}
impl<F: FixedHessian<I>, I> JacCall
    for (
        ScalarJacTier,
        crate::transform::values::Jacfwd<crate::transform::values::Jacrev<F, I>, I>,
    )
{
    type Ptr = F::Ptr;
    const PTR: &'static Self::Ptr = F::PTR;
}
