//! Calls between differentiable functions, as generated code writes them
//! (re-exported in `nabla::transforms::private`). A call of `g(x, k)` in a
//! differentiable body runs `variants(&g).forward::<V>(value_arg(x), k)`:
//! `variants` reaches `g`'s generic programs through its function value,
//! and `value_arg` passes a differentiable argument on. Each is the identity
//! on correct code; on a mistake each fails with one error that names it
//! (a function that is not `#[differentiable]`, a differentiable value
//! given to a static parameter) instead of an unresolved path or a type
//! mismatch between generated types.

use crate::Value;
use crate::transform::select::Static;
use crate::vocab::accumulate::acc;

/// A function differentiable code can call: the function value of a
/// `#[differentiable]` function or a `#[custom_op]`, whose hidden methods
/// `forward` and `vjp` are its generic programs. The macros implement it;
/// for anything else the compiler reports this trait's message at the call.
///
/// ```
/// use nabla::transforms::private::{Differentiable, variants};
/// use nabla::prelude::*;
///
/// #[differentiable]
/// fn double(x: &Array) -> Array {
///     x * 2.0
/// }
///
/// fn is_differentiable<F: Differentiable>(_: &F) -> bool {
///     true
/// }
///
/// fn main() {
///     assert!(is_differentiable(&double));
///     let y = variants(&double).forward::<Array>(&Array::scalar(1.5f64));
///     assert_eq!(y.item(), 3.0);
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "differentiable code calls a function that is not #[differentiable] with a differentiable argument",
    label = "not #[differentiable]",
    note = "mark the called function `#[nabla::differentiable]` (its body is then differentiable code too), or pass it only static values (numbers, shapes, `nabla::stop_gradient(x)`)"
)]
pub trait Differentiable {
    /// What the call's `.forward::<V>(..)` and `.vjp::<V>(..)` are
    /// methods of: the function value itself.
    type Variants;
    /// The function value.
    fn variants(&self) -> Self::Variants;
}

/// `f`'s generic programs, for a call in differentiable code. Its result
/// is an associated type, so when `f` is not differentiable the one error
/// of the bound is all the compiler reports about the call.
#[inline(always)]
pub fn variants<F: Differentiable>(f: &F) -> F::Variants {
    f.variants()
}

/// A differentiable argument of a call, as the called function's
/// parameter: the identity for a differentiable parameter (`&V` to `&V`).
/// A static parameter (`#[nondiff]`, or an integer, bool or other type)
/// cannot take it, and the compiler reports this trait's message at the
/// argument.
///
/// ```
/// use nabla::transforms::private::{ValueParam, value_arg};
///
/// let x = 2.0f64;
/// let p: &f64 = value_arg(&x);
/// assert_eq!(*p, 2.0);
/// ```
#[diagnostic::on_unimplemented(
    message = "a differentiable value is passed to a static parameter of type `{Self}` (a `#[nondiff]` parameter or a non-float type)",
    label = "differentiable here, but the called function takes this argument as static",
    note = "if it is static data (indices, labels, a mask), mark the parameter of the calling function that it comes from `#[nondiff]` too, e.g. `#[nondiff] idx: &Array`; otherwise pass `&nabla::stop_gradient(..)` of it, or make the called function's parameter differentiable"
)]
pub trait ValueParam<A> {
    /// The argument as the parameter.
    fn value_param(a: A) -> Self;
}

#[diagnostic::do_not_recommend]
impl<'a, V> ValueParam<&'a V> for &'a V {
    #[inline(always)]
    fn value_param(a: &'a V) -> Self {
        a
    }
}

/// `a` as the called function's parameter (see [`ValueParam`]).
#[inline(always)]
pub fn value_arg<A, P: ValueParam<A>>(a: A) -> P {
    P::value_param(a)
}

/// A cotangent a call's pullback returns for a differentiable argument:
/// a value, added into the argument's slot; or [`Static`], when the
/// parameter was static, which [`value_arg`] has already reported (no
/// second error follows).
///
/// ```
/// use nabla::transforms::private::acc_arg;
/// use nabla::transforms::Static;
///
/// let mut slot = Some(1.0f64);
/// acc_arg(&mut slot, 2.0);
/// acc_arg(&mut slot, Static);
/// assert_eq!(slot, Some(3.0));
/// ```
pub trait ArgCotangent<V> {
    /// Adds the cotangent into `slot`.
    fn add_to(self, slot: &mut Option<V>);
}

impl<V: Value> ArgCotangent<V> for V {
    #[inline(always)]
    fn add_to(self, slot: &mut Option<V>) {
        acc(slot, self)
    }
}

impl<V> ArgCotangent<V> for Static {
    #[inline(always)]
    fn add_to(self, _: &mut Option<V>) {}
}

/// Adds a call's cotangent for a differentiable argument into its slot
/// (see [`ArgCotangent`]).
#[inline(always)]
pub fn acc_arg<V, C: ArgCotangent<V>>(slot: &mut Option<V>, c: C) {
    c.add_to(slot)
}

/// What a `#[differentiable]` function that failed to compile computes:
/// the macro reports its errors and emits the function with this as every
/// output, so its callers type-check and report nothing more. The crate
/// never compiles with it, so it never runs.
///
/// ```should_panic
/// let _: f64 = nabla::transforms::private::failed();
/// ```
pub fn failed<T>() -> T {
    unreachable!("a #[differentiable] function that failed to compile")
}
