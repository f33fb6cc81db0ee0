//! `grad` of composable functions as a composable function, and
//! [`ScalarFn1`], the programs of functions of one float, so nested `grad`
//! works at every tier. Re-exported from [`crate::compose`].

use crate::transform::diff_fn::{ArgsOf, DiffFn, OutOf};
use crate::transform::grad::Argnum;
use crate::transform::jacobian::{jacobian_vjp, numel};
use crate::vocab::arity::{ArgIndex, Arity};
use crate::vocab::structure::{One, Structure};
use crate::{Array, ArrayValue, Dual, Value};

/// `grad(f)` of a scalar-valued function is composable too: it is the
/// Jacobian of a function with a scalar output, shaped like the argument
/// (an array, a list, or a tree of arrays).
impl<F: DiffFn<Out = One>, const I: usize> DiffFn
    for crate::transform::grad::Grad<F, Argnum<I>, crate::transform::grad::NoAux>
where
    Argnum<I>: ArgIndex<F::Arity>,
{
    type Arity = F::Arity;
    type Out = <Argnum<I> as ArgIndex<F::Arity>>::Slot;
    fn eval<V: ArrayValue>(x: &ArgsOf<Self, V>) -> OutOf<Self, V> {
        let want = crate::vocab::arity::want_only(<F::Arity as Arity>::ARGS, I);
        let (y, pullback) = F::vjp_masked_shapes::<V>(x, &want);
        if numel(&y.shape) != 1 {
            panic!(
                "grad: the function returns shape {:?}, but grad needs a scalar output; reduce it or use jacrev",
                y.shape
            );
        }
        if <F::Arity as Arity>::len(x) == 0 {
            panic!("grad: the function has no input arrays");
        }
        let like = <F::Arity as Arity>::get(x, 0);
        let cts = pullback(like.lift(&Array::ones(&y.shape, y.dtype)));
        <Argnum<I> as ArgIndex<F::Arity>>::pick(&cts).clone()
    }
    fn vjp<V: ArrayValue>(
        x: &ArgsOf<Self, V>,
    ) -> (
        OutOf<Self, V>,
        impl FnOnce(OutOf<Self, V>) -> ArgsOf<Self, V> + use<V, F, I>,
    ) {
        let g = Self::eval::<V>(x);
        let x = x.clone();
        (g, move |ct: OutOf<Self, V>| {
            let wanted = <F::Arity as Arity>::arg_leaves(&x, I);
            jacobian_vjp::<F, V>(&x, &wanted, <Self as DiffFn>::Out::leaves(ct))
        })
    }
}

/// A differentiable function of one float returning one float, as generic
/// programs (scalar-only `#[differentiable]` functions of one argument, and
/// their gradients). `grad` of such a function is again one, so
/// `grad(grad(grad(f)))` works.
///
/// ```
/// use nabla::compose::ScalarFn1;
///
/// #[nabla::differentiable]
/// fn cube(x: f64) -> f64 {
///     x * x * x
/// }
///
/// fn main() {
///     assert_eq!(<cube::Function as ScalarFn1>::eval::<f64>(&2.0), 8.0);
///     // `grad` of a `ScalarFn1` is one again, so it nests.
///     assert_eq!(nabla::grad(nabla::grad(nabla::grad(cube)))(2.0), 6.0);
/// }
/// ```
pub trait ScalarFn1: Copy + 'static {
    /// `f32` or `f64`.
    type S: Value + Copy + 'static;
    /// The function at value type `V`.
    ///
    /// ```
    /// use nabla::{compose::ScalarFn1, Dual};
    ///
    /// #[nabla::differentiable]
    /// fn cube(x: f64) -> f64 {
    ///     x * x * x
    /// }
    ///
    /// fn main() {
    ///     let y = <cube::Function as ScalarFn1>::eval::<Dual<f64>>(&Dual::new(2.0, Some(1.0)));
    ///     assert_eq!((y.primal, y.tangent_or_zero()), (8.0, 12.0));
    /// }
    /// ```
    fn eval<V: Value>(x: &V) -> V;
    /// The output and the pullback at value type `V`.
    ///
    /// ```
    /// use nabla::compose::ScalarFn1;
    ///
    /// #[nabla::differentiable]
    /// fn cube(x: f64) -> f64 {
    ///     x * x * x
    /// }
    ///
    /// fn main() {
    ///     let (y, pullback) = <cube::Function as ScalarFn1>::vjp::<f64>(&2.0);
    ///     assert_eq!((y, pullback(1.0)), (8.0, 12.0));
    /// }
    /// ```
    fn vjp<V: Value>(x: &V) -> (V, impl FnOnce(V) -> V + use<V, Self>);
}

use crate::transform::grad::{Grad, NoAux};

impl<F: ScalarFn1> ScalarFn1 for Grad<F, Argnum<0>, NoAux> {
    type S = F::S;
    fn eval<V: Value>(x: &V) -> V {
        let (y, pullback) = F::vjp::<V>(x);
        pullback(y.ones_like())
    }
    fn vjp<V: Value>(x: &V) -> (V, impl FnOnce(V) -> V + use<V, F>) {
        let g = Self::eval::<V>(x);
        let x = x.clone();
        // f'' is symmetric (1×1): vjp of f' is forward-over-reverse.
        (g, move |ct: V| {
            let (y, pullback) = F::vjp::<Dual<V>>(&Dual::new(x, Some(ct)));
            pullback(Dual::constant(y.primal.ones_like())).tangent_or_zero()
        })
    }
}
