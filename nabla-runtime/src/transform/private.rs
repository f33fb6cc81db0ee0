//! Support code for generated functions (`nabla::transforms::private`),
//! not part of the public API: owning loop variables for residual tapes,
//! seeding cotangents, promoting static numbers, accumulating cotangents.

use crate::{Array, Value};

/// A loop variable on its way onto a residual tape: `(&Own(v)).own()`
/// gives `(owned value, Borrowed)` when `v` is a reference (method
/// resolution finds [`OwnRef`] first) and `(clone, Owned)` otherwise
/// ([`OwnVal`]); the marker's `back` restores the original kind.
pub struct Own<T>(pub T);
/// The loop variable was a reference.
pub struct Borrowed;
/// The loop variable was a value.
pub struct Owned;
/// See [`Own`].
pub trait OwnRef {
    /// The owned value.
    type O;
    /// `(value, Borrowed)`.
    fn own(&self) -> (Self::O, Borrowed);
}
impl<T: Clone> OwnRef for Own<&T> {
    type O = T;
    fn own(&self) -> (T, Borrowed) {
        (self.0.clone(), Borrowed)
    }
}
/// See [`Own`].
pub trait OwnVal {
    /// The owned value.
    type O;
    /// `(value, Owned)`.
    fn own(&self) -> (Self::O, Owned);
}
impl<T: Clone> OwnVal for &Own<T> {
    type O = T;
    fn own(&self) -> (T, Owned) {
        (self.0.clone(), Owned)
    }
}
impl Borrowed {
    /// A reference to the taped value.
    ///
    /// ```
    /// use nabla::transforms::private::Borrowed;
    /// let taped = vec![1.0, 2.0];
    /// let r: &Vec<f64> = Borrowed.back(&taped);
    /// assert!(std::ptr::eq(r, &taped));
    /// ```
    pub fn back<'a, T>(&self, x: &'a T) -> &'a T {
        x
    }
}
impl Owned {
    /// A copy of the taped value.
    ///
    /// ```
    /// use nabla::transforms::private::Owned;
    /// let taped = vec![1.0, 2.0];
    /// let v: Vec<f64> = Owned.back(&taped);
    /// assert_eq!(v, taped);
    /// ```
    pub fn back<T: Clone>(&self, x: &T) -> T {
        x.clone()
    }
}

/// The cotangent that seeds `grad`: one, after checking the output is a
/// scalar.
pub trait Seed: Value {
    #[track_caller]
    fn seed(&self, op: &str) -> Self;
}
impl Seed for Array {
    #[track_caller]
    fn seed(&self, op: &str) -> Self {
        if self.numel() != 1 {
            panic!(
                "{op}: the function returns shape {:?}, but {op} needs a scalar output; reduce it (e.g. with \
                 nabla::sum) or use jacrev for the full Jacobian",
                self.shape()
            );
        }
        self.ones_like()
    }
}
impl Seed for f32 {
    fn seed(&self, _: &str) -> Self {
        1.0
    }
}
impl Seed for f64 {
    fn seed(&self, _: &str) -> Self {
        1.0
    }
}

/// A static that a loop or branch turns into a differentiable value,
/// as a constant of `like`'s value type (see [`promote`]).
pub trait Promote<V> {
    /// The constant.
    fn promote(&self, like: &V) -> V;
}
macro_rules! promote_numbers {
    ($($t:ty),*) => {
        $(impl<V: Value> Promote<V> for $t {
            fn promote(&self, like: &V) -> V {
                like.full_like(*self as f64)
            }
        })*
    };
}
promote_numbers!(f64, f32, i64, i32, usize, isize, u32, u64);
impl<V: crate::ArrayValue> Promote<V> for Array {
    fn promote(&self, like: &V) -> V {
        like.lift(self)
    }
}
impl<V, T: Promote<V> + ?Sized> Promote<V> for &T {
    fn promote(&self, like: &V) -> V {
        (**self).promote(like)
    }
}
/// `s` as a constant value with `like`'s type (dtype, device, batch,
/// tangents): a number is `full_like`, an array is lifted.
pub fn promote<V, S: Promote<V>>(like: &V, s: &S) -> V {
    s.promote(like)
}

pub use crate::transform::calls::{
    ArgCotangent, Differentiable, ValueParam, acc_arg, failed, value_arg, variants,
};
pub use crate::vocab::accumulate::{acc, or_zeros};
