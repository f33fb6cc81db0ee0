//! `vmap`'s axes as types: [`Axis`], [`NoAxis`] (`None` in `in_axes`),
//! [`AllZero`], [`All`], and the traits that read them ([`InAxes`],
//! [`AxisSpec`]).

use crate::vocab::arity::Arity;
use crate::vocab::structure::Slot;
use std::marker::PhantomData;

/// An axis for `vmap`'s `in_axes`/`out_axes` (negative counts from the end).
///
/// ```
/// use nabla::{compose::{vmap_with, Axis}, Array};
///
/// #[nabla::differentiable]
/// fn total(x: &Array) -> Array {
///     x.sum()
/// }
///
/// fn main() {
///     let x = Array::from_vec(vec![0.0f64, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3]);
///     // What `vmap!(total, in_axes = 1)` expands to: one sum per column.
///     let sums = vmap_with::<(Axis<1>,), Axis<0>, _>(total)(&x);
///     assert_eq!(sums.to_vec::<f64>(), vec![3.0, 5.0, 7.0]);
/// }
/// ```
pub struct Axis<const A: isize>;
/// `None` in `in_axes`: the argument is shared by the whole batch.
///
/// ```
/// use nabla::{compose::{vmap_with, Axis, NoAxis}, Array};
///
/// #[nabla::differentiable]
/// fn score(w: &Array, x: &Array) -> Array {
///     (w * x).sum()
/// }
///
/// fn main() {
///     let w = Array::from_vec(vec![1.0f64, 2.0], &[2]); // shared by the batch
///     let xs = Array::from_vec(vec![1.0f64, 1.0, 2.0, 2.0, 3.0, 3.0], &[3, 2]);
///     // What `vmap!(score, in_axes = (None, 0))` expands to.
///     let s = vmap_with::<(NoAxis, Axis<0>), Axis<0>, _>(score)(&w, &xs);
///     assert_eq!(s.to_vec::<f64>(), vec![3.0, 6.0, 9.0]);
/// }
/// ```
pub struct NoAxis;
/// `in_axes = 0` for every argument (the default).
///
/// ```
/// use nabla::{compose::{vmap_with, AllZero, Axis}, Array};
///
/// #[nabla::differentiable]
/// fn total(x: &Array) -> Array {
///     x.sum()
/// }
///
/// fn main() {
///     let x = Array::from_vec(vec![0.0f64, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3]);
///     // `vmap(total)`: every argument mapped over axis 0.
///     let sums = vmap_with::<AllZero, Axis<0>, _>(total)(&x);
///     assert_eq!(sums.to_vec::<f64>(), vec![3.0, 12.0]);
/// }
/// ```
pub struct AllZero;

/// The `in_axes` of a `vmap` for a function of arity `A`, as a type.
///
/// ```
/// use nabla::compose::{AllZero, Axis, InAxes, NoAxis, A2};
/// type Spec = (NoAxis, Axis<-1>); // `in_axes = (None, -1)`
/// assert_eq!((<Spec as InAxes<A2>>::axis(0), <Spec as InAxes<A2>>::axis(1)), (None, Some(-1)));
/// assert_eq!(<AllZero as InAxes<A2>>::axis(1), Some(0));
/// ```
#[diagnostic::on_unimplemented(
    message = "`in_axes` {Self} does not match the function's number of arguments",
    note = "give one entry per argument (an axis or None), or a single axis for all"
)]
pub trait InAxes<A>: 'static {
    /// The (unnormalised) axis of argument `i`, or `None`.
    ///
    /// ```
    /// use nabla::compose::{All, Axis, InAxes, A3};
    /// assert_eq!(<All<Axis<1>> as InAxes<A3>>::axis(2), Some(1)); // `in_axes = 1`
    /// ```
    fn axis(i: usize) -> Option<isize>;
}
impl<A: Arity> InAxes<A> for AllZero {
    fn axis(_: usize) -> Option<isize> {
        Some(0)
    }
}
/// One entry of `in_axes`.
///
/// ```
/// use nabla::compose::{Axis, AxisSpec, NoAxis};
/// assert_eq!(<Axis<-1> as AxisSpec>::AXIS, Some(-1));
/// assert_eq!(<NoAxis as AxisSpec>::AXIS, None);
/// ```
pub trait AxisSpec: 'static {
    /// The axis, or `None`.
    const AXIS: Option<isize>;
}
impl<const A: isize> AxisSpec for Axis<A> {
    const AXIS: Option<isize> = Some(A);
}
impl AxisSpec for NoAxis {
    const AXIS: Option<isize> = None;
}
macro_rules! in_axes_tuple {
    ($($t:ident $s:ident $i:tt),*) => {
        impl<$($t: AxisSpec, $s: Slot),*> InAxes<($($s,)*)> for ($($t,)*) {
            fn axis(i: usize) -> Option<isize> {
                match i {
                    $($i => $t::AXIS,)*
                    _ => panic!("vmap: in_axes has fewer entries than the function has arguments"),
                }
            }
        }
    };
}
in_axes_tuple!(T0 S0 0);
in_axes_tuple!(T0 S0 0, T1 S1 1);
in_axes_tuple!(T0 S0 0, T1 S1 1, T2 S2 2);
in_axes_tuple!(T0 S0 0, T1 S1 1, T2 S2 2, T3 S3 3);
in_axes_tuple!(T0 S0 0, T1 S1 1, T2 S2 2, T3 S3 3, T4 S4 4);
in_axes_tuple!(T0 S0 0, T1 S1 1, T2 S2 2, T3 S3 3, T4 S4 4, T5 S5 5);

/// A single axis for every argument (`in_axes = 1`).
///
/// ```
/// use nabla::{compose::{vmap_with, All, Axis}, Array};
///
/// #[nabla::differentiable]
/// fn dot(a: &Array, b: &Array) -> Array {
///     (a * b).sum()
/// }
///
/// fn main() {
///     let a = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]);
///     // What `vmap!(dot, in_axes = 1)` expands to: both mapped over their columns.
///     let d = vmap_with::<All<Axis<1>>, Axis<0>, _>(dot)(&a, &a);
///     assert_eq!(d.to_vec::<f64>(), vec![10.0, 20.0]);
/// }
/// ```
pub struct All<T>(PhantomData<T>);
impl<A: Arity, T: AxisSpec> InAxes<A> for All<T> {
    fn axis(_: usize) -> Option<isize> {
        T::AXIS
    }
}
