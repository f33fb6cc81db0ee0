//! How `argnums` picks cotangents: [`Select`] (the requested ones out of
//! all of them), [`Scatter`] (its inverse) and [`Static`] (the slot of a
//! static argument).

use crate::vocab::argnums::{Argnum, TupleGet};
use crate::vocab::cotangent::Cotangent;

/// The cotangent slot of a non-differentiable (static) argument.
///
/// ```
/// use nabla::transforms::{Argnum, Select, Static};
/// // The cotangents of `fn power(x: f64, n: i32) -> f64` at `(2.0, 3)`,
/// // as its generated VJP program returns them: `n` is static.
/// let all = (12.0f64, Static);
/// assert_eq!(<Argnum<0> as Select<(f64, Static)>>::select(&all), 12.0);
/// assert_eq!(all.1, Static::default());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Static;

/// Picks the requested cotangents out of the tuple of all of them.
///
/// ```
/// use nabla::transforms::{Argnum, Select};
/// type Both = (Argnum<0>, Argnum<2>);
/// assert_eq!(<Both as Select<(f64, f64, f64)>>::INDICES, &[0, 2]);
/// assert_eq!(<Argnum<1> as Select<(f64, f32)>>::select(&(1.0, 2.0)), 2.0f32);
/// ```
#[diagnostic::on_unimplemented(
    message = "`argnums` does not fit this function's arguments",
    note = "argnums indexes the function's parameters from 0; every selected one must be differentiable"
)]
pub trait Select<T> {
    /// The selected cotangent(s): one value, or a tuple for tuple argnums.
    type Out;
    /// The selected argument indices (the others need no cotangent).
    const INDICES: &'static [usize];
    /// Selects from the tuple of all cotangents.
    ///
    /// ```
    /// use nabla::transforms::{Argnum, Select};
    /// let all = (1.0f64, 2.0f64, 3.0f64);
    /// assert_eq!(<(Argnum<0>, Argnum<2>) as Select<_>>::select(&all), (1.0, 3.0));
    /// ```
    fn select(all: &T) -> Self::Out;
}

impl<T: TupleGet<I>, const I: usize> Select<T> for Argnum<I>
where
    T::Out: Cotangent,
{
    type Out = T::Out;
    const INDICES: &'static [usize] = &[I];
    fn select(all: &T) -> T::Out {
        all.get()
    }
}

macro_rules! select_tuple {
    ($($i:ident),*) => {
        impl<T, $(const $i: usize),*> Select<T> for ($(Argnum<$i>,)*)
        where
            $(T: TupleGet<$i>, <T as TupleGet<$i>>::Out: Cotangent,)*
        {
            type Out = ($(<T as TupleGet<$i>>::Out,)*);
            const INDICES: &'static [usize] = &[$($i),*];
            fn select(all: &T) -> Self::Out {
                ($(<T as TupleGet<$i>>::get(all),)*)
            }
        }
    };
}
/// The inverse of [`Select`] when every selected argument has the value
/// type `C`: the selected values with their argument indices (what the
/// pullback of `vjp(grad(f))` puts on the tangents).
#[doc(hidden)]
pub trait Scatter<C> {
    /// The selected values: one, or a tuple for tuple argnums.
    type Out;
    /// Each selected value with its argument's index.
    fn scatter(out: &Self::Out) -> Vec<(usize, C)>;
}

impl<C: Clone, const I: usize> Scatter<C> for Argnum<I> {
    type Out = C;
    fn scatter(out: &C) -> Vec<(usize, C)> {
        vec![(I, out.clone())]
    }
}

macro_rules! scatter_tuple {
    ($($i:ident $a:ident),*) => {
        impl<C: Clone, $(const $i: usize),*> Scatter<C> for ($(Argnum<$i>,)*) {
            type Out = ($(scatter_tuple!(@ty $i C),)*);
            fn scatter(out: &Self::Out) -> Vec<(usize, C)> {
                let ($($a,)*) = out;
                vec![$(($i, $a.clone())),*]
            }
        }
    };
    (@ty $i:ident $c:ident) => {
        $c
    };
}
scatter_tuple!(I0 a0);
scatter_tuple!(I0 a0, I1 a1);
scatter_tuple!(I0 a0, I1 a1, I2 a2);
scatter_tuple!(I0 a0, I1 a1, I2 a2, I3 a3);
scatter_tuple!(I0 a0, I1 a1, I2 a2, I3 a3, I4 a4);
scatter_tuple!(I0 a0, I1 a1, I2 a2, I3 a3, I4 a4, I5 a5);

select_tuple!(I0);
select_tuple!(I0, I1);
select_tuple!(I0, I1, I2);
select_tuple!(I0, I1, I2, I3);
select_tuple!(I0, I1, I2, I3, I4);
select_tuple!(I0, I1, I2, I3, I4, I5);
