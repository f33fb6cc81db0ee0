//! Arithmetic operators between `Array`, `&Array`, `f32` and `f64`.
//!
//! Scalars are weakly typed (as in JAX): `0.01 * f32_array` stays `f32`.
//! `array op s` accepts `f32` and `f64`; `s op array` accepts `f64` (so that
//! float literals on the left infer without annotations).
//! Compound assignment on a leaf that requires grad updates its values in
//! place without recording, so `w -= lr * w.grad()` keeps `w` a leaf.

use crate::Array;
use crate::autograd::GradMeta;
use std::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Sub, SubAssign};

macro_rules! array_array {
    ($trait:ident, $method:ident, $f:ident) => {
        impl $trait<&Array> for &Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: &Array) -> Array {
                Array::$f(self, rhs)
            }
        }
        impl $trait<Array> for &Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: Array) -> Array {
                Array::$f(self, &rhs)
            }
        }
        impl $trait<&Array> for Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: &Array) -> Array {
                Array::$f(&self, rhs)
            }
        }
        impl $trait<Array> for Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, rhs: Array) -> Array {
                Array::$f(&self, &rhs)
            }
        }
    };
}

array_array!(Add, add, add);
array_array!(Sub, sub, sub);
array_array!(Mul, mul, mul);
array_array!(Div, div, div);

/// A Rust scalar usable as an operand next to an array: `f32` or `f64`.
/// Scalars are weakly typed: they take the array's dtype.
///
/// ```
/// use nabla::{Array, DType};
/// let x = Array::ones(&[2], DType::F32);
/// assert_eq!((&x * 0.5).dtype(), DType::F32);
/// assert_eq!((&x * 0.5f32).dtype(), DType::F32);
/// ```
pub trait Scalar: Copy {
    /// The value as `f64`.
    fn as_f64(self) -> f64;
}
impl Scalar for f32 {
    fn as_f64(self) -> f64 {
        self as f64
    }
}
impl Scalar for f64 {
    fn as_f64(self) -> f64 {
        self
    }
}

/// `array op scalar`, generic over the scalar type so that an untyped
/// literal (`x * 2.0`) infers without annotations.
macro_rules! array_scalar {
    ($trait:ident, $method:ident, |$x:ident, $c:ident| $body:expr) => {
        impl<S: Scalar> $trait<S> for &Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, c: S) -> Array {
                let ($x, $c) = (self, c.as_f64());
                $body
            }
        }
        impl<S: Scalar> $trait<S> for Array {
            type Output = Array;
            #[track_caller]
            fn $method(self, c: S) -> Array {
                $trait::$method(&self, c)
            }
        }
    };
}

array_scalar!(Add, add, |x, c| x.affine(1.0, c));
array_scalar!(Sub, sub, |x, c| x.affine(1.0, -c));
array_scalar!(Mul, mul, |x, c| x.affine(c, 0.0));
array_scalar!(Div, div, |x, c| x.affine(1.0 / c, 0.0));

/// `scalar op array`, for `f64` only: with a second impl for `f32`, an
/// untyped literal on the left (`0.5 * &x`) could not be inferred. The
/// scalar is still weakly typed (`0.5 * f32_array` is `f32`); an `f32`
/// variable goes on the right (`&x * lr`) or is widened (`lr as f64 * &x`).
macro_rules! scalar_array {
    ($s:ty) => {
        impl Add<&Array> for $s {
            type Output = Array;
            #[track_caller]
            fn add(self, x: &Array) -> Array {
                x.affine(1.0, self as f64)
            }
        }
        impl Sub<&Array> for $s {
            type Output = Array;
            #[track_caller]
            fn sub(self, x: &Array) -> Array {
                x.affine(-1.0, self as f64)
            }
        }
        impl Mul<&Array> for $s {
            type Output = Array;
            #[track_caller]
            fn mul(self, x: &Array) -> Array {
                x.affine(self as f64, 0.0)
            }
        }
        impl Div<&Array> for $s {
            type Output = Array;
            #[track_caller]
            fn div(self, x: &Array) -> Array {
                x.rdiv(self as f64)
            }
        }
        by_value!($s, Add, add);
        by_value!($s, Sub, sub);
        by_value!($s, Mul, mul);
        by_value!($s, Div, div);
    };
}

macro_rules! by_value {
    ($s:ty, $trait:ident, $method:ident) => {
        impl $trait<Array> for $s {
            type Output = Array;
            #[track_caller]
            fn $method(self, x: Array) -> Array {
                self.$method(&x)
            }
        }
    };
}

scalar_array!(f64);

impl Neg for &Array {
    type Output = Array;
    #[track_caller]
    fn neg(self) -> Array {
        Array::neg(self)
    }
}

impl Neg for Array {
    type Output = Array;
    #[track_caller]
    fn neg(self) -> Array {
        Array::neg(&self)
    }
}

impl Array {
    /// Replaces `self` by `f(self)`. On a leaf that requires grad the update
    /// is not recorded and the leaf (with its `.grad()`) is kept, like a
    /// PyTorch parameter update under `no_grad`. Elsewhere it is an ordinary
    /// recorded op.
    #[track_caller]
    fn assign_with(&mut self, f: impl FnOnce(&Array) -> Array) {
        if matches!(self.grad.as_deref(), Some(GradMeta::Leaf { .. })) {
            let new = crate::no_grad(|| f(&self.detach()));
            if new.shape() != self.shape() {
                panic!(
                    "in-place update: the result has shape {:?} but the array has shape {:?}; an in-place op cannot \
                     change the shape",
                    new.shape(),
                    self.shape()
                );
            }
            self.data = new.data;
        } else {
            *self = f(self);
        }
    }
}

macro_rules! assign_ops {
    ($trait:ident, $method:ident, $op:tt) => {
        impl $trait<&Array> for Array {
            #[track_caller]
            fn $method(&mut self, rhs: &Array) {
                self.assign_with(|x| x $op rhs)
            }
        }
        impl $trait<Array> for Array {
            #[track_caller]
            fn $method(&mut self, rhs: Array) {
                self.assign_with(|x| x $op &rhs)
            }
        }
        impl<S: Scalar> $trait<S> for Array {
            #[track_caller]
            fn $method(&mut self, c: S) {
                self.assign_with(|x| x $op c)
            }
        }
    };
}

assign_ops!(AddAssign, add_assign, +);
assign_ops!(SubAssign, sub_assign, -);
assign_ops!(MulAssign, mul_assign, *);
assign_ops!(DivAssign, div_assign, /);
