//! Argument indices as types: [`Argnum`] and [`TupleGet`] (implemented
//! for tuples of 1 to 8 elements), how `argnums` picks an argument out of
//! a function's argument tuple.

/// Type-level argument index for `argnums`: `Argnum<1>` selects the second
/// argument, `(Argnum<0>, Argnum<2>)` the first and third.
///
/// ```
/// use nabla::transforms::{grad_with, Argnum, NoAux};
///
/// #[nabla::differentiable]
/// fn f(x: f64, y: f64) -> f64 {
///     x * x * y
/// }
///
/// fn main() {
///     // What `grad!(f, argnums = 1)` expands to.
///     assert_eq!(grad_with::<Argnum<1>, NoAux, _>(f)(3.0, 2.0), 9.0); // ∂f/∂y = x²
///     let both = grad_with::<(Argnum<0>, Argnum<1>), NoAux, _>(f)(3.0, 2.0);
///     assert_eq!(both, (12.0, 9.0));
/// }
/// ```
pub struct Argnum<const I: usize>;

/// Element `I` of a tuple (implemented for tuples of up to 8 elements).
///
/// ```
/// use nabla::transforms::TupleGet;
/// assert_eq!(<(f64, &str) as TupleGet<1>>::get(&(1.0, "two")), "two");
/// ```
#[diagnostic::on_unimplemented(
    message = "`argnums` index {I} is out of range for this function",
    note = "argnums indexes the function's parameters from 0"
)]
pub trait TupleGet<const I: usize> {
    /// The element's type.
    type Out;
    /// A clone of the element.
    ///
    /// ```
    /// use nabla::transforms::TupleGet;
    /// let t = (1.0f64, 2.5f32, 3i32);
    /// assert_eq!(TupleGet::<0>::get(&t), 1.0);
    /// assert_eq!(TupleGet::<2>::get(&t), 3);
    /// ```
    fn get(&self) -> Self::Out;
}

/// One `impl TupleGet<i>` per listed index of the tuple type.
macro_rules! tuple_get {
    ($tuple:tt: $($i:tt => $ti:ident),+) => {
        $(tuple_get!(@one $tuple $i $ti);)+
    };
    (@one ($($t:ident),+) $i:tt $ti:ident) => {
        impl<$($t: Clone),+> TupleGet<$i> for ($($t,)+) {
            type Out = $ti;
            fn get(&self) -> $ti {
                self.$i.clone()
            }
        }
    };
}

tuple_get!((T0): 0 => T0);
tuple_get!((T0, T1): 0 => T0, 1 => T1);
tuple_get!((T0, T1, T2): 0 => T0, 1 => T1, 2 => T2);
tuple_get!((T0, T1, T2, T3): 0 => T0, 1 => T1, 2 => T2, 3 => T3);
tuple_get!((T0, T1, T2, T3, T4): 0 => T0, 1 => T1, 2 => T2, 3 => T3, 4 => T4);
tuple_get!((T0, T1, T2, T3, T4, T5): 0 => T0, 1 => T1, 2 => T2, 3 => T3, 4 => T4, 5 => T5);
tuple_get!((T0, T1, T2, T3, T4, T5, T6): 0 => T0, 1 => T1, 2 => T2, 3 => T3, 4 => T4, 5 => T5, 6 => T6);
tuple_get!((T0, T1, T2, T3, T4, T5, T6, T7): 0 => T0, 1 => T1, 2 => T2, 3 => T3, 4 => T4, 5 => T5, 6 => T6, 7 => T7);
