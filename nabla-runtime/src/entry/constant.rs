//! `x + c` and `x · c` for a static `c` whose type the macro cannot see:
//! a number (then the same as `add_scalar` / `mul_scalar`) or a constant
//! array, such as a `#[nondiff]` label array or `Array::eye(n, ..)`, which
//! is lifted to `x`'s kind (dtype, device, batch, tangents) and broadcast;
//! its cotangent is summed back to `x`'s shape. `negate` makes `x + c`
//! into `x − c`, `invert` makes `x · c` into `x / c`.

use crate::{Array, ArrayValue};

/// A static operand of arithmetic with a differentiable value.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be combined with a differentiable value",
    note = "a static operand of + − · / must be a number or an Array; convert it, or make it a differentiable argument"
)]
pub trait Constant {
    /// `x + c`, or `x − c` when `negate`.
    fn add_to<V: ArrayValue>(&self, x: &V, negate: bool) -> V;
    /// `x · c`, or `x / c` when `invert`.
    fn mul_to<V: ArrayValue>(&self, x: &V, invert: bool) -> V;
    /// The cotangent of `x` in `x ± c`.
    fn add_ct<V: ArrayValue>(&self, shape_x: &[usize], ct: &V) -> V;
    /// The cotangent of `x` in `x · c` (or `x / c`).
    fn mul_ct<V: ArrayValue>(&self, shape_x: &[usize], invert: bool, ct: &V) -> V;
}

macro_rules! numbers {
    ($($t:ty),*) => {$(
        impl Constant for $t {
            fn add_to<V: ArrayValue>(&self, x: &V, negate: bool) -> V {
                let c = *self as f64;
                x.add_scalar(if negate { -c } else { c })
            }
            fn mul_to<V: ArrayValue>(&self, x: &V, invert: bool) -> V {
                let c = *self as f64;
                x.mul_scalar(if invert { 1.0 / c } else { c })
            }
            fn add_ct<V: ArrayValue>(&self, _: &[usize], ct: &V) -> V {
                ct.clone()
            }
            fn mul_ct<V: ArrayValue>(&self, _: &[usize], invert: bool, ct: &V) -> V {
                let c = *self as f64;
                crate::primitives::unary::affine::vjp(if invert { 1.0 / c } else { c }, ct)
            }
        }
    )*};
}
numbers!(f64, f32, i64, i32, usize, isize, u32, u64);

impl Constant for Array {
    fn add_to<V: ArrayValue>(&self, x: &V, negate: bool) -> V {
        let c = x.lift(self);
        if negate { x.sub(&c) } else { x.add(&c) }
    }
    fn mul_to<V: ArrayValue>(&self, x: &V, invert: bool) -> V {
        let c = x.lift(self);
        if invert { x.div(&c) } else { x.mul(&c) }
    }
    fn add_ct<V: ArrayValue>(&self, shape_x: &[usize], ct: &V) -> V {
        ct.sum_to_shape(shape_x)
    }
    fn mul_ct<V: ArrayValue>(&self, shape_x: &[usize], invert: bool, ct: &V) -> V {
        let c = ct.lift(self);
        let g = if invert { ct.div(&c) } else { ct.mul(&c) };
        g.sum_to_shape(shape_x)
    }
}

impl<T: Constant + ?Sized> Constant for &T {
    fn add_to<V: ArrayValue>(&self, x: &V, negate: bool) -> V {
        (**self).add_to(x, negate)
    }
    fn mul_to<V: ArrayValue>(&self, x: &V, invert: bool) -> V {
        (**self).mul_to(x, invert)
    }
    fn add_ct<V: ArrayValue>(&self, shape_x: &[usize], ct: &V) -> V {
        (**self).add_ct(shape_x, ct)
    }
    fn mul_ct<V: ArrayValue>(&self, shape_x: &[usize], invert: bool, ct: &V) -> V {
        (**self).mul_ct(shape_x, invert, ct)
    }
}

/// `x + c` (`x − c` when `negate`) for a static `c`.
pub mod add_const {
    use super::Constant;
    use crate::ArrayValue;
    #[inline]
    #[track_caller]
    pub fn forward<V: ArrayValue, C: Constant + ?Sized>(x: &V, c: &C, negate: bool) -> V {
        c.add_to(x, negate)
    }
    #[inline]
    pub fn vjp_0<V: ArrayValue, C: Constant + ?Sized>(
        x: &[usize],
        c: &C,
        _negate: bool,
        ct: &V,
    ) -> V {
        c.add_ct(x, ct)
    }
}

/// `x · c` (`x / c` when `invert`) for a static `c`.
pub mod mul_const {
    use super::Constant;
    use crate::ArrayValue;
    #[inline]
    #[track_caller]
    pub fn forward<V: ArrayValue, C: Constant + ?Sized>(x: &V, c: &C, invert: bool) -> V {
        c.mul_to(x, invert)
    }
    #[inline]
    pub fn vjp_0<V: ArrayValue, C: Constant + ?Sized>(
        x: &[usize],
        c: &C,
        invert: bool,
        ct: &V,
    ) -> V {
        c.mul_ct(x, invert, ct)
    }
}
