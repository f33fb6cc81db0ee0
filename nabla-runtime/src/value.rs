//! The value traits that derivative rules and generated code are generic
//! over.
//!
//! * [`Value`] — the scalar tier: elementwise math. Implemented by `f32`,
//!   `f64` and [`Array`] (and, as the transforms land, by the
//!   interpretation types `Dual<V>` and `Batched<V>`).
//! * [`ArrayValue`] — the array tier: shape ops, reductions, indexing and
//!   matmul. Implemented by [`Array`].
//!
//! Every VJP and JVP rule in [`crate::ops`] is written against these traits,
//! so a rule is itself differentiable: instantiate it with a forward-mode
//! type and you differentiate the derivative.
//!
//! ```
//! use nabla_runtime::{ops, Array, Value};
//! // The VJP rule of sin, used on plain f64 and on arrays alike.
//! let g = ops::unary::sin::vjp(&1.0f64, &1.0f64.sin(), &1.0f64);
//! assert!((g - 1.0f64.cos()).abs() < 1e-15);
//! let x = Array::from_vec(vec![1.0f64], &[1]);
//! let ga = ops::unary::sin::vjp(&x, &x.sin(), &x.ones_like());
//! assert!((ga.item() - g).abs() < 1e-15);
//! ```

use crate::Array;
use nabla_kernels::elementwise::CompareOp;

/// Elementwise math shared by scalars, arrays and interpretation types.
///
/// Binary methods broadcast NumPy-style. `*_mask` methods return 1 where the
/// comparison holds and 0 elsewhere, in the value's own type, and carry no
/// derivative.
///
/// ```
/// use nabla_runtime::Value;
/// fn softsign<V: Value>(x: &V) -> V { x.div(&x.abs().add_scalar(1.0)) }
/// assert_eq!(softsign(&1.0f64), 0.5);
/// ```
#[allow(missing_docs)]
pub trait Value: Clone + Sized {
    /// The per-example shape (`[]` for scalars).
    fn shape_vec(&self) -> Vec<usize>;
    /// Same shape and dtype, every element `v`.
    fn full_like(&self, v: f64) -> Self;
    fn zeros_like(&self) -> Self {
        self.full_like(0.0)
    }
    fn ones_like(&self) -> Self {
        self.full_like(1.0)
    }
    fn add(&self, o: &Self) -> Self;
    fn sub(&self, o: &Self) -> Self;
    fn mul(&self, o: &Self) -> Self;
    fn div(&self, o: &Self) -> Self;
    fn neg(&self) -> Self;
    /// `self + c`, keeping the dtype (scalars are weakly typed).
    fn add_scalar(&self, c: f64) -> Self;
    /// `self * c`, keeping the dtype.
    fn mul_scalar(&self, c: f64) -> Self;
    fn exp(&self) -> Self;
    fn ln(&self) -> Self;
    fn sin(&self) -> Self;
    fn cos(&self) -> Self;
    fn tan(&self) -> Self;
    fn tanh(&self) -> Self;
    fn sigmoid(&self) -> Self;
    fn relu(&self) -> Self;
    fn sqrt(&self) -> Self;
    fn rsqrt(&self) -> Self;
    fn abs(&self) -> Self;
    fn square(&self) -> Self;
    fn recip(&self) -> Self;
    fn ln_1p(&self) -> Self;
    fn exp_m1(&self) -> Self;
    fn erf(&self) -> Self;
    fn signum(&self) -> Self;
    fn floor(&self) -> Self;
    fn ceil(&self) -> Self;
    fn round(&self) -> Self;
    fn powi(&self, n: i32) -> Self;
    fn powf(&self, p: f64) -> Self;
    fn clip(&self, lo: f64, hi: f64) -> Self;
    fn pow(&self, o: &Self) -> Self;
    fn maximum(&self, o: &Self) -> Self;
    fn minimum(&self, o: &Self) -> Self;
    fn atan2(&self, o: &Self) -> Self;
    /// 1 where `self op o`, else 0 (no derivative).
    fn cmp_mask(&self, o: &Self, op: CompareOp) -> Self;
    /// Sums a broadcast cotangent back to `shape` (identity for scalars).
    fn sum_to_shape(&self, shape: &[usize]) -> Self;
    /// Broadcasts to `shape` NumPy-style (identity for scalars).
    fn broadcast_to(&self, shape: &[usize]) -> Self;
    /// The same value, treated as a constant by every transform.
    fn stop_gradient(&self) -> Self;
}

macro_rules! scalar_value {
    ($t:ty) => {
        impl Value for $t {
            fn shape_vec(&self) -> Vec<usize> {
                Vec::new()
            }
            fn full_like(&self, v: f64) -> Self {
                v as $t
            }
            fn add(&self, o: &Self) -> Self {
                self + o
            }
            fn sub(&self, o: &Self) -> Self {
                self - o
            }
            fn mul(&self, o: &Self) -> Self {
                self * o
            }
            fn div(&self, o: &Self) -> Self {
                self / o
            }
            fn neg(&self) -> Self {
                -self
            }
            fn add_scalar(&self, c: f64) -> Self {
                self + c as $t
            }
            fn mul_scalar(&self, c: f64) -> Self {
                self * c as $t
            }
            fn exp(&self) -> Self {
                <$t>::exp(*self)
            }
            fn ln(&self) -> Self {
                <$t>::ln(*self)
            }
            fn sin(&self) -> Self {
                <$t>::sin(*self)
            }
            fn cos(&self) -> Self {
                <$t>::cos(*self)
            }
            fn tan(&self) -> Self {
                <$t>::tan(*self)
            }
            fn tanh(&self) -> Self {
                <$t>::tanh(*self)
            }
            fn sigmoid(&self) -> Self {
                scalar(*self, nabla_kernels::elementwise::UnaryOp::Sigmoid)
            }
            fn relu(&self) -> Self {
                if *self > 0.0 { *self } else { 0.0 }
            }
            fn sqrt(&self) -> Self {
                <$t>::sqrt(*self)
            }
            fn rsqrt(&self) -> Self {
                1.0 / <$t>::sqrt(*self)
            }
            fn abs(&self) -> Self {
                <$t>::abs(*self)
            }
            fn square(&self) -> Self {
                self * self
            }
            fn recip(&self) -> Self {
                1.0 / self
            }
            fn ln_1p(&self) -> Self {
                <$t>::ln_1p(*self)
            }
            fn exp_m1(&self) -> Self {
                <$t>::exp_m1(*self)
            }
            fn erf(&self) -> Self {
                <$t as nabla_kernels::Float>::erf(*self)
            }
            fn signum(&self) -> Self {
                scalar(*self, nabla_kernels::elementwise::UnaryOp::Sign)
            }
            fn floor(&self) -> Self {
                <$t>::floor(*self)
            }
            fn ceil(&self) -> Self {
                <$t>::ceil(*self)
            }
            fn round(&self) -> Self {
                <$t>::round(*self)
            }
            fn powi(&self, n: i32) -> Self {
                <$t>::powi(*self, n)
            }
            fn powf(&self, p: f64) -> Self {
                <$t>::powf(*self, p as $t)
            }
            fn clip(&self, lo: f64, hi: f64) -> Self {
                scalar(*self, nabla_kernels::elementwise::UnaryOp::Clip(lo, hi))
            }
            fn pow(&self, o: &Self) -> Self {
                <$t>::powf(*self, *o)
            }
            fn maximum(&self, o: &Self) -> Self {
                scalar2(*self, *o, nabla_kernels::elementwise::BinaryOp::Maximum)
            }
            fn minimum(&self, o: &Self) -> Self {
                scalar2(*self, *o, nabla_kernels::elementwise::BinaryOp::Minimum)
            }
            fn atan2(&self, o: &Self) -> Self {
                <$t>::atan2(*self, *o)
            }
            fn cmp_mask(&self, o: &Self, op: CompareOp) -> Self {
                let r = match op {
                    CompareOp::Gt => self > o,
                    CompareOp::Ge => self >= o,
                    CompareOp::Lt => self < o,
                    CompareOp::Le => self <= o,
                    CompareOp::Eq => self == o,
                    CompareOp::Ne => self != o,
                };
                if r { 1.0 } else { 0.0 }
            }
            fn sum_to_shape(&self, _shape: &[usize]) -> Self {
                *self
            }
            fn broadcast_to(&self, _shape: &[usize]) -> Self {
                *self
            }
            fn stop_gradient(&self) -> Self {
                *self
            }
        }
    };
}

/// One element through the array kernel, so scalars and arrays agree bit
/// for bit on ops with several sensible formulas.
fn scalar<T: nabla_kernels::Float>(v: T, op: nabla_kernels::elementwise::UnaryOp) -> T {
    let a = ndarray::arr0(v).into_dyn();
    nabla_kernels::elementwise::unary(a.view(), op)[[]]
}

fn scalar2<T: nabla_kernels::Float>(a: T, b: T, op: nabla_kernels::elementwise::BinaryOp) -> T {
    let (a, b) = (ndarray::arr0(a).into_dyn(), ndarray::arr0(b).into_dyn());
    nabla_kernels::elementwise::binary(a.view(), b.view(), op)[[]]
}

scalar_value!(f32);
scalar_value!(f64);

/// Shape ops, reductions, indexing and matmul, on top of [`Value`].
///
/// Axes passed here are already normalised (non-negative, sorted); the
/// user-facing methods on [`Array`] accept negative axes and check them.
///
/// ```
/// use nabla_runtime::{Array, ArrayValue};
/// fn total<V: ArrayValue>(x: &V) -> V { x.sum_axes(&[0], false) }
/// assert_eq!(total(&Array::from_vec(vec![1.0f64, 2.0], &[2])).item(), 3.0);
/// ```
#[allow(missing_docs)]
pub trait ArrayValue: Value {
    fn reshape(&self, shape: &[usize]) -> Self;
    fn permute(&self, perm: &[usize]) -> Self;
    fn sum_axes(&self, axes: &[usize], keepdim: bool) -> Self;
    fn max_axes(&self, axes: &[usize], keepdim: bool) -> Self;
    fn min_axes(&self, axes: &[usize], keepdim: bool) -> Self;
    fn prod_axes(&self, axes: &[usize], keepdim: bool) -> Self;
    fn cumsum_axis(&self, axis: usize, reverse: bool) -> Self;
    /// `slices` has one entry per axis.
    fn slice(&self, slices: &[ndarray::Slice]) -> Self;
    /// Zeros of `shape` with `self` placed at `slices` (VJP of slice).
    fn slice_place(&self, shape: &[usize], slices: &[ndarray::Slice]) -> Self;
    fn index_select(&self, axis: usize, idx: &[usize]) -> Self;
    /// Zeros of `shape` plus `self`'s slabs scattered to `idx` along `axis`.
    fn index_add(&self, shape: &[usize], axis: usize, idx: &[usize]) -> Self;
    fn concat(parts: &[Self], axis: usize) -> Self;
    /// `mask ? a : b`; the mask is a static bool array.
    fn select(mask: &Array, a: &Self, b: &Self) -> Self;
    fn matmul(&self, o: &Self) -> Self;
}
