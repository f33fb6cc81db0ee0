//! The transform value types [`Vmap`], [`Jacfwd`] and [`Jacrev`]: each
//! a function value that dereferences to a function pointer, so a
//! transformed function is called like the function itself.

use crate::transform::axes::{AllZero, Axis};
use crate::transform::diff_fn::{Caller, DiffFn};
use crate::transform::fixed::JacCall;
use crate::transform::outer::{ArrayTier, Tiered};
use crate::vocab::argnums::Argnum;
use std::marker::PhantomData;
use std::ops::Deref;

/// `vmap(f)`: `f` mapped over `in_axes` of its arguments; the batch axis of
/// the result is `out_axes` (`Axis<0>` by default).
///
/// ```
/// use nabla::{compose::{vmap, Vmap}, Array};
///
/// #[nabla::differentiable]
/// fn total(x: &Array) -> Array {
///     x.sum()
/// }
///
/// fn main() {
///     let v: Vmap<total::Function> = vmap(total);
///     let x = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]);
///     assert_eq!(v(&x).to_vec::<f64>(), vec![3.0, 7.0]);
/// }
/// ```
pub struct Vmap<F, I = AllZero, O = Axis<0>>(pub F, pub(crate) PhantomData<(I, O)>);
/// `jacfwd(f)`: the Jacobian w.r.t. argument `I` by forward mode, shape
/// `out ++ in`.
///
/// ```
/// use nabla::{compose::{jacfwd, Jacfwd}, Array};
///
/// #[nabla::differentiable]
/// fn sq(x: &Array) -> Array {
///     x * x
/// }
///
/// fn main() {
///     let j: Jacfwd<sq::Function> = jacfwd(sq);
///     let x = Array::from_vec(vec![1.0f64, 2.0], &[2]);
///     assert_eq!(j(&x).to_vec::<f64>(), vec![2.0, 0.0, 0.0, 4.0]);
/// }
/// ```
pub struct Jacfwd<F, I = Argnum<0>>(pub F, pub(crate) PhantomData<I>);
/// `jacrev(f)`: the Jacobian w.r.t. argument `I` by reverse mode, shape
/// `out ++ in`.
///
/// ```
/// use nabla::{compose::{jacrev, Jacrev}, Array};
///
/// #[nabla::differentiable]
/// fn sq(x: &Array) -> Array {
///     x * x
/// }
///
/// fn main() {
///     let j: Jacrev<sq::Function> = jacrev(sq);
///     let x = Array::from_vec(vec![1.0f64, 2.0], &[2]);
///     assert_eq!(j(&x).to_vec::<f64>(), vec![2.0, 0.0, 0.0, 4.0]);
/// }
/// ```
pub struct Jacrev<F, I = Argnum<0>>(pub F, pub(crate) PhantomData<I>);

macro_rules! value_type {
    ($t:ident<$($p:ident),*>) => {
        impl<F: Copy, $($p),*> Clone for $t<F, $($p),*> {
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<F: Copy, $($p),*> Copy for $t<F, $($p),*> {}
    };
}
value_type!(Vmap<I, O>);
value_type!(Jacfwd<I>);
value_type!(Jacrev<I>);

impl<F: Copy, I, O> Deref for Vmap<F, I, O>
where
    Self: DiffFn,
    <Self as DiffFn>::Arity: Caller<Self>,
{
    type Target = <<Self as DiffFn>::Arity as Caller<Self>>::Ptr;
    fn deref(&self) -> &Self::Target {
        <<Self as DiffFn>::Arity as Caller<Self>>::PTR
    }
}

/// `jacfwd(f)` and `jacrev(f)` are called through their function's tier
/// (`transform/fixed.rs`): functions of arrays through their composable
/// programs, functions of floats through the Jacobian entry points
/// `#[differentiable]` writes for them.
macro_rules! jacobian_deref {
    ($($t:ident),*) => {$(
        impl<F: Copy + Tiered, I> Deref for $t<F, I>
        where
            (F::Tier, Self): JacCall,
        {
            type Target = <(F::Tier, Self) as JacCall>::Ptr;
            fn deref(&self) -> &Self::Target {
                <(F::Tier, Self) as JacCall>::PTR
            }
        }
        impl<F: Copy, I> JacCall for (ArrayTier, $t<F, I>)
        where
            $t<F, I>: DiffFn,
            <$t<F, I> as DiffFn>::Arity: Caller<$t<F, I>>,
        {
            type Ptr = <<$t<F, I> as DiffFn>::Arity as Caller<$t<F, I>>>::Ptr;
            const PTR: &'static Self::Ptr = <<$t<F, I> as DiffFn>::Arity as Caller<$t<F, I>>>::PTR;
        }
    )*};
}
jacobian_deref!(Jacfwd, Jacrev);
