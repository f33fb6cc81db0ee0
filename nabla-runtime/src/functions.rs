//! Free functions with NumPy/JAX names (`nabla::log`, `nabla::maximum`,
//! `nabla::sum`, …). They are generic over the value traits, so the same
//! call works on [`Array`], on `f32`/`f64` where it makes
//! sense, and inside differentiable code on the interpretation types.
//!
//! ```
//! use nabla_runtime::{functions as nb, Array};
//! let x = Array::from_vec(vec![0.0f64, 1.0], &[2]);
//! assert_eq!(nb::sum(&nb::exp(&x)).item(), 1.0 + 1f64.exp());
//! assert_eq!(nb::sin(&0.0f64), 0.0); // scalars too
//! ```

use crate::array::{norm_axes, norm_axis};
use crate::composite;
use crate::{Array, ArrayValue, Value};

macro_rules! unary_fns {
    ($($(#[$doc:meta])* $name:ident => $method:ident;)*) => {
        $(
            $(#[$doc])*
            #[track_caller]
            pub fn $name<V: Value>(x: &V) -> V {
                x.$method()
            }
        )*
    };
}

unary_fns! {
    /// `-x` (`jnp.negative`).
    ///
    /// ```
    /// assert_eq!(nabla_runtime::functions::negative(&2.0f64), -2.0);
    /// ```
    negative => neg;
    /// `e^x`.
    ///
    /// ```
    /// assert_eq!(nabla_runtime::functions::exp(&0.0f64), 1.0);
    /// ```
    exp => exp;
    /// Natural logarithm.
    ///
    /// ```
    /// assert_eq!(nabla_runtime::functions::log(&1.0f64), 0.0);
    /// ```
    log => ln;
    /// Sine.
    ///
    /// ```
    /// assert_eq!(nabla_runtime::functions::sin(&0.0f64), 0.0);
    /// ```
    sin => sin;
    /// Cosine.
    ///
    /// ```
    /// assert_eq!(nabla_runtime::functions::cos(&0.0f64), 1.0);
    /// ```
    cos => cos;
    /// Tangent.
    ///
    /// ```
    /// assert_eq!(nabla_runtime::functions::tan(&0.0f64), 0.0);
    /// ```
    tan => tan;
    /// Hyperbolic tangent.
    ///
    /// ```
    /// assert_eq!(nabla_runtime::functions::tanh(&0.0f64), 0.0);
    /// ```
    tanh => tanh;
    /// Logistic sigmoid.
    ///
    /// ```
    /// assert_eq!(nabla_runtime::functions::sigmoid(&0.0f64), 0.5);
    /// ```
    sigmoid => sigmoid;
    /// `max(x, 0)`.
    ///
    /// ```
    /// assert_eq!(nabla_runtime::functions::relu(&-1.0f64), 0.0);
    /// ```
    relu => relu;
    /// Square root.
    ///
    /// ```
    /// assert_eq!(nabla_runtime::functions::sqrt(&4.0f64), 2.0);
    /// ```
    sqrt => sqrt;
    /// `1 / sqrt(x)`.
    ///
    /// ```
    /// assert_eq!(nabla_runtime::functions::rsqrt(&4.0f64), 0.5);
    /// ```
    rsqrt => rsqrt;
    /// Absolute value.
    ///
    /// ```
    /// assert_eq!(nabla_runtime::functions::abs(&-4.0f64), 4.0);
    /// ```
    abs => abs;
    /// `x²`.
    ///
    /// ```
    /// assert_eq!(nabla_runtime::functions::square(&3.0f64), 9.0);
    /// ```
    square => square;
    /// `1 / x`.
    ///
    /// ```
    /// assert_eq!(nabla_runtime::functions::reciprocal(&4.0f64), 0.25);
    /// ```
    reciprocal => recip;
    /// `ln(1 + x)`.
    ///
    /// ```
    /// assert_eq!(nabla_runtime::functions::log1p(&0.0f64), 0.0);
    /// ```
    log1p => ln_1p;
    /// `e^x - 1`.
    ///
    /// ```
    /// assert_eq!(nabla_runtime::functions::expm1(&0.0f64), 0.0);
    /// ```
    expm1 => exp_m1;
    /// Error function.
    ///
    /// ```
    /// assert_eq!(nabla_runtime::functions::erf(&0.0f64), 0.0);
    /// ```
    erf => erf;
    /// Sign: -1, 0 or 1.
    ///
    /// ```
    /// assert_eq!(nabla_runtime::functions::sign(&-3.0f64), -1.0);
    /// ```
    sign => signum;
    /// Round down.
    ///
    /// ```
    /// assert_eq!(nabla_runtime::functions::floor(&1.5f64), 1.0);
    /// ```
    floor => floor;
    /// Round up.
    ///
    /// ```
    /// assert_eq!(nabla_runtime::functions::ceil(&1.5f64), 2.0);
    /// ```
    ceil => ceil;
    /// Round half away from zero.
    ///
    /// ```
    /// assert_eq!(nabla_runtime::functions::round(&2.5f64), 3.0);
    /// ```
    round => round;
    /// The same value, treated as a constant by every derivative.
    ///
    /// ```
    /// assert_eq!(nabla_runtime::functions::stop_gradient(&2.0f64), 2.0);
    /// ```
    stop_gradient => stop_gradient;
}

/// `x^n`, integer exponent.
///
/// ```
/// assert_eq!(nabla_runtime::functions::powi(&2.0f64, 3), 8.0);
/// ```
pub fn powi<V: Value>(x: &V, n: i32) -> V {
    x.powi(n)
}

/// `x^p`, float exponent.
///
/// ```
/// assert_eq!(nabla_runtime::functions::powf(&4.0f64, 0.5), 2.0);
/// ```
pub fn powf<V: Value>(x: &V, p: f64) -> V {
    x.powf(p)
}

/// `a^b` elementwise (`jnp.power`).
///
/// ```
/// assert_eq!(nabla_runtime::functions::pow(&2.0f64, &3.0), 8.0);
/// ```
pub fn pow<V: Value>(a: &V, b: &V) -> V {
    a.pow(b)
}

/// Elementwise maximum.
///
/// ```
/// assert_eq!(nabla_runtime::functions::maximum(&2.0f64, &3.0), 3.0);
/// ```
pub fn maximum<V: Value>(a: &V, b: &V) -> V {
    a.maximum(b)
}

/// Elementwise minimum.
///
/// ```
/// assert_eq!(nabla_runtime::functions::minimum(&2.0f64, &3.0), 2.0);
/// ```
pub fn minimum<V: Value>(a: &V, b: &V) -> V {
    a.minimum(b)
}

/// Four-quadrant arctangent of `a / b`.
///
/// ```
/// assert_eq!(nabla_runtime::functions::atan2(&0.0f64, &1.0), 0.0);
/// ```
pub fn atan2<V: Value>(a: &V, b: &V) -> V {
    a.atan2(b)
}

/// Clamps into `[lo, hi]`.
///
/// ```
/// assert_eq!(nabla_runtime::functions::clip(&3.0f64, 0.0, 1.0), 1.0);
/// ```
pub fn clip<V: Value>(x: &V, lo: f64, hi: f64) -> V {
    x.clip(lo, hi)
}

fn all_axes<V: ArrayValue>(x: &V) -> Vec<usize> {
    (0..x.ndim()).collect()
}

#[track_caller]
fn axes_of<V: ArrayValue>(op: &str, x: &V, axes: &[isize]) -> Vec<usize> {
    norm_axes(op, axes, x.ndim())
}

macro_rules! reductions {
    ($($(#[$doc:meta])* $all:ident, $(#[$doc2:meta])* $some:ident => |$x:ident, $ax:ident, $kd:ident| $body:expr;)*) => {
        $(
            $(#[$doc])*
            #[track_caller]
            pub fn $all<V: ArrayValue>($x: &V) -> V {
                let $ax = all_axes($x);
                let $kd = false;
                $body
            }
            $(#[$doc2])*
            #[track_caller]
            pub fn $some<V: ArrayValue>($x: &V, axes: &[isize], keepdim: bool) -> V {
                let $ax = axes_of(stringify!($all), $x, axes);
                let $kd = keepdim;
                $body
            }
        )*
    };
}

reductions! {
    /// Sum of all elements.
    ///
    /// ```
    /// # use nabla_runtime::{functions::sum, Array};
    /// assert_eq!(sum(&Array::from_vec(vec![1.0f32, 2.0], &[2])).item(), 3.0);
    /// ```
    sum,
    /// Sum over `axes` (negative axes count from the end).
    ///
    /// ```
    /// # use nabla_runtime::{functions::sum_axes, Array};
    /// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]);
    /// assert_eq!(sum_axes(&x, &[-1], false).to_vec::<f32>(), vec![3.0, 7.0]);
    /// ```
    sum_axes => |x, axes, keepdim| x.sum_axes(&axes, keepdim);
    /// Mean of all elements.
    ///
    /// ```
    /// # use nabla_runtime::{functions::mean, Array};
    /// assert_eq!(mean(&Array::from_vec(vec![1.0f32, 2.0], &[2])).item(), 1.5);
    /// ```
    mean,
    /// Mean over `axes`.
    ///
    /// ```
    /// # use nabla_runtime::{functions::mean_axes, Array};
    /// assert_eq!(mean_axes(&Array::from_vec(vec![1.0f32, 2.0], &[2]), &[0], true).shape(), &[1]);
    /// ```
    mean_axes => |x, axes, keepdim| composite::mean(x, &axes, keepdim);
    /// Largest element.
    ///
    /// ```
    /// # use nabla_runtime::{functions::max, Array};
    /// assert_eq!(max(&Array::from_vec(vec![1.0f32, 2.0], &[2])).item(), 2.0);
    /// ```
    max,
    /// Maximum over `axes`.
    ///
    /// ```
    /// # use nabla_runtime::{functions::max_axes, Array};
    /// assert_eq!(max_axes(&Array::from_vec(vec![1.0f32, 2.0], &[2]), &[0], false).item(), 2.0);
    /// ```
    max_axes => |x, axes, keepdim| x.max_axes(&axes, keepdim);
    /// Smallest element.
    ///
    /// ```
    /// # use nabla_runtime::{functions::min, Array};
    /// assert_eq!(min(&Array::from_vec(vec![1.0f32, 2.0], &[2])).item(), 1.0);
    /// ```
    min,
    /// Minimum over `axes`.
    ///
    /// ```
    /// # use nabla_runtime::{functions::min_axes, Array};
    /// assert_eq!(min_axes(&Array::from_vec(vec![1.0f32, 2.0], &[2]), &[0], false).item(), 1.0);
    /// ```
    min_axes => |x, axes, keepdim| x.min_axes(&axes, keepdim);
    /// Product of all elements.
    ///
    /// ```
    /// # use nabla_runtime::{functions::prod, Array};
    /// assert_eq!(prod(&Array::from_vec(vec![3.0f32, 2.0], &[2])).item(), 6.0);
    /// ```
    prod,
    /// Product over `axes`.
    ///
    /// ```
    /// # use nabla_runtime::{functions::prod_axes, Array};
    /// assert_eq!(prod_axes(&Array::from_vec(vec![3.0f32, 2.0], &[2]), &[0], false).item(), 6.0);
    /// ```
    prod_axes => |x, axes, keepdim| x.prod_axes(&axes, keepdim);
}

/// Cumulative sum along `axis`.
///
/// ```
/// # use nabla_runtime::{functions::cumsum, Array};
/// assert_eq!(cumsum(&Array::from_vec(vec![1.0f64, 2.0], &[2]), 0).to_vec::<f64>(), vec![1.0, 3.0]);
/// ```
#[track_caller]
pub fn cumsum<V: ArrayValue>(x: &V, axis: isize) -> V {
    x.cumsum_axis(norm_axis("cumsum", axis, x.ndim()), false)
}

/// Matrix product with NumPy semantics.
///
/// ```
/// # use nabla_runtime::{functions::matmul, Array, DType};
/// assert_eq!(matmul(&Array::ones(&[2, 3], DType::F32), &Array::ones(&[3], DType::F32)).shape(), &[2]);
/// ```
#[track_caller]
pub fn matmul<V: ArrayValue>(a: &V, b: &V) -> V {
    a.matmul(b)
}

/// Inner product of two vectors.
///
/// ```
/// # use nabla_runtime::{functions::dot, Array, DType};
/// assert_eq!(dot(&Array::ones(&[3], DType::F32), &Array::ones(&[3], DType::F32)).item(), 3.0);
/// ```
#[track_caller]
pub fn dot<V: ArrayValue>(a: &V, b: &V) -> V {
    a.matmul(b)
}

/// Outer product of two vectors.
///
/// ```
/// # use nabla_runtime::{functions::outer, Array, DType};
/// assert_eq!(outer(&Array::ones(&[3], DType::F32), &Array::ones(&[4], DType::F32)).shape(), &[3, 4]);
/// ```
#[track_caller]
pub fn outer<V: ArrayValue>(a: &V, b: &V) -> V {
    crate::ops::linalg::outer(a, b)
}

/// Reshape (row-major).
///
/// ```
/// # use nabla_runtime::{functions::reshape, Array, DType};
/// assert_eq!(reshape(&Array::zeros(&[6], DType::F32), &[2, 3]).shape(), &[2, 3]);
/// ```
#[track_caller]
pub fn reshape<V: ArrayValue>(x: &V, shape: &[usize]) -> V {
    x.reshape(shape)
}

/// Axis permutation.
///
/// ```
/// # use nabla_runtime::{functions::permute, Array, DType};
/// assert_eq!(permute(&Array::zeros(&[2, 3], DType::F32), &[1, 0]).shape(), &[3, 2]);
/// ```
#[track_caller]
pub fn permute<V: ArrayValue>(x: &V, perm: &[usize]) -> V {
    x.permute(perm)
}

/// Matrix transpose (2-D).
///
/// ```
/// # use nabla_runtime::{functions::transpose, Array, DType};
/// assert_eq!(transpose(&Array::zeros(&[2, 3], DType::F32)).shape(), &[3, 2]);
/// ```
#[track_caller]
pub fn transpose(x: &Array) -> Array {
    x.transpose()
}

/// Broadcast to a shape.
///
/// ```
/// # use nabla_runtime::{functions::broadcast_to, Array, DType};
/// assert_eq!(broadcast_to(&Array::zeros(&[3], DType::F32), &[2, 3]).shape(), &[2, 3]);
/// ```
#[track_caller]
pub fn broadcast_to<V: Value>(x: &V, shape: &[usize]) -> V {
    x.broadcast_to(shape)
}

/// Inserts a length-1 axis.
///
/// ```
/// # use nabla_runtime::{functions::expand_dims, Array, DType};
/// assert_eq!(expand_dims(&Array::zeros(&[3], DType::F32), 0).shape(), &[1, 3]);
/// ```
#[track_caller]
pub fn expand_dims(x: &Array, axis: isize) -> Array {
    x.expand_dims(axis)
}

/// Removes a length-1 axis.
///
/// ```
/// # use nabla_runtime::{functions::squeeze, Array, DType};
/// assert_eq!(squeeze(&Array::zeros(&[1, 3], DType::F32), 0).shape(), &[3]);
/// ```
#[track_caller]
pub fn squeeze(x: &Array, axis: isize) -> Array {
    x.squeeze(axis)
}

/// Casts to another dtype.
///
/// ```
/// # use nabla_runtime::{functions::cast, Array, DType};
/// assert_eq!(cast(&Array::scalar(1.0f32), DType::F64).dtype(), DType::F64);
/// ```
pub fn cast(x: &Array, dtype: crate::DType) -> Array {
    x.cast(dtype)
}
