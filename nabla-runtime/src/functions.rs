//! Free functions with NumPy/JAX names (`nabla::log`, `nabla::maximum`,
//! `nabla::sum`, …); the elementwise ones come from the op registry. They are generic over the value traits, so the same
//! call works on [`Array`], on `f32`/`f64` where it makes
//! sense, and inside differentiable code on the interpretation types.
//!
//! ```
//! use nabla::{functions as nb, Array};
//! let x = Array::from_vec(vec![0.0f64, 1.0], &[2]);
//! assert_eq!(nb::sum(&nb::exp(&x)).item(), 1.0 + 1f64.exp());
//! assert_eq!(nb::sin(&0.0f64), 0.0); // scalars too
//! ```

use crate::array::{norm_axes, norm_axis};
use crate::composite;
use crate::registry::free_fns;
use crate::{Array, ArrayValue, Value};

nabla_ops::unary_ops!(free_fns unary);
nabla_ops::binary_ops!(free_fns binary);

/// The same value, treated as a constant by every derivative.
///
/// ```
/// assert_eq!(nabla::functions::stop_gradient(&2.0f64), 2.0);
/// ```
pub fn stop_gradient<V: Value>(x: &V) -> V {
    x.stop_gradient()
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
    /// # use nabla::{functions::sum, Array};
    /// assert_eq!(sum(&Array::from_vec(vec![1.0f32, 2.0], &[2])).item(), 3.0);
    /// ```
    sum,
    /// Sum over `axes` (negative axes count from the end).
    ///
    /// ```
    /// # use nabla::{functions::sum_axes, Array};
    /// let x = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2]);
    /// assert_eq!(sum_axes(&x, &[-1], false).to_vec::<f32>(), vec![3.0, 7.0]);
    /// ```
    sum_axes => |x, axes, keepdim| x.sum_axes(&axes, keepdim);
    /// Mean of all elements.
    ///
    /// ```
    /// # use nabla::{functions::mean, Array};
    /// assert_eq!(mean(&Array::from_vec(vec![1.0f32, 2.0], &[2])).item(), 1.5);
    /// ```
    mean,
    /// Mean over `axes`.
    ///
    /// ```
    /// # use nabla::{functions::mean_axes, Array};
    /// assert_eq!(mean_axes(&Array::from_vec(vec![1.0f32, 2.0], &[2]), &[0], true).shape(), &[1]);
    /// ```
    mean_axes => |x, axes, keepdim| composite::mean(x, &axes, keepdim);
    /// Largest element.
    ///
    /// ```
    /// # use nabla::{functions::max, Array};
    /// assert_eq!(max(&Array::from_vec(vec![1.0f32, 2.0], &[2])).item(), 2.0);
    /// ```
    max,
    /// Maximum over `axes`.
    ///
    /// ```
    /// # use nabla::{functions::max_axes, Array};
    /// assert_eq!(max_axes(&Array::from_vec(vec![1.0f32, 2.0], &[2]), &[0], false).item(), 2.0);
    /// ```
    max_axes => |x, axes, keepdim| x.max_axes(&axes, keepdim);
    /// Smallest element.
    ///
    /// ```
    /// # use nabla::{functions::min, Array};
    /// assert_eq!(min(&Array::from_vec(vec![1.0f32, 2.0], &[2])).item(), 1.0);
    /// ```
    min,
    /// Minimum over `axes`.
    ///
    /// ```
    /// # use nabla::{functions::min_axes, Array};
    /// assert_eq!(min_axes(&Array::from_vec(vec![1.0f32, 2.0], &[2]), &[0], false).item(), 1.0);
    /// ```
    min_axes => |x, axes, keepdim| x.min_axes(&axes, keepdim);
    /// Product of all elements.
    ///
    /// ```
    /// # use nabla::{functions::prod, Array};
    /// assert_eq!(prod(&Array::from_vec(vec![3.0f32, 2.0], &[2])).item(), 6.0);
    /// ```
    prod,
    /// Product over `axes`.
    ///
    /// ```
    /// # use nabla::{functions::prod_axes, Array};
    /// assert_eq!(prod_axes(&Array::from_vec(vec![3.0f32, 2.0], &[2]), &[0], false).item(), 6.0);
    /// ```
    prod_axes => |x, axes, keepdim| x.prod_axes(&axes, keepdim);
}

/// Cumulative sum along `axis`.
///
/// ```
/// # use nabla::{functions::cumsum, Array};
/// assert_eq!(cumsum(&Array::from_vec(vec![1.0f64, 2.0], &[2]), 0).to_vec::<f64>(), vec![1.0, 3.0]);
/// ```
#[track_caller]
pub fn cumsum<V: ArrayValue>(x: &V, axis: isize) -> V {
    x.cumsum_axis(norm_axis("cumsum", axis, x.ndim()), false)
}

/// Matrix product with NumPy semantics.
///
/// ```
/// # use nabla::{functions::matmul, Array, DType};
/// assert_eq!(matmul(&Array::ones(&[2, 3], DType::F32), &Array::ones(&[3], DType::F32)).shape(), &[2]);
/// ```
#[track_caller]
pub fn matmul<V: ArrayValue>(a: &V, b: &V) -> V {
    a.matmul(b)
}

/// Inner product of two vectors.
///
/// ```
/// # use nabla::{functions::dot, Array, DType};
/// assert_eq!(dot(&Array::ones(&[3], DType::F32), &Array::ones(&[3], DType::F32)).item(), 3.0);
/// ```
#[track_caller]
pub fn dot<V: ArrayValue>(a: &V, b: &V) -> V {
    a.matmul(b)
}

/// Outer product of two vectors.
///
/// ```
/// # use nabla::{functions::outer, Array, DType};
/// assert_eq!(outer(&Array::ones(&[3], DType::F32), &Array::ones(&[4], DType::F32)).shape(), &[3, 4]);
/// ```
#[track_caller]
pub fn outer<V: ArrayValue>(a: &V, b: &V) -> V {
    crate::primitives::linalg::outer(a, b)
}

/// Reshape (row-major).
///
/// ```
/// # use nabla::{functions::reshape, Array, DType};
/// assert_eq!(reshape(&Array::zeros(&[6], DType::F32), &[2, 3]).shape(), &[2, 3]);
/// ```
#[track_caller]
pub fn reshape<V: ArrayValue>(x: &V, shape: &[usize]) -> V {
    x.reshape(shape)
}

/// Axis permutation.
///
/// ```
/// # use nabla::{functions::permute, Array, DType};
/// assert_eq!(permute(&Array::zeros(&[2, 3], DType::F32), &[1, 0]).shape(), &[3, 2]);
/// ```
#[track_caller]
pub fn permute<V: ArrayValue>(x: &V, perm: &[usize]) -> V {
    x.permute(perm)
}

/// Matrix transpose (2-D).
///
/// ```
/// # use nabla::{functions::transpose, Array, DType};
/// assert_eq!(transpose(&Array::zeros(&[2, 3], DType::F32)).shape(), &[3, 2]);
/// ```
#[track_caller]
pub fn transpose(x: &Array) -> Array {
    x.transpose()
}

/// Broadcast to a shape.
///
/// ```
/// # use nabla::{functions::broadcast_to, Array, DType};
/// assert_eq!(broadcast_to(&Array::zeros(&[3], DType::F32), &[2, 3]).shape(), &[2, 3]);
/// ```
#[track_caller]
pub fn broadcast_to<V: Value>(x: &V, shape: &[usize]) -> V {
    x.broadcast_to(shape)
}

/// Inserts a length-1 axis.
///
/// ```
/// # use nabla::{functions::expand_dims, Array, DType};
/// assert_eq!(expand_dims(&Array::zeros(&[3], DType::F32), 0).shape(), &[1, 3]);
/// ```
#[track_caller]
pub fn expand_dims(x: &Array, axis: isize) -> Array {
    x.expand_dims(axis)
}

/// Removes a length-1 axis.
///
/// ```
/// # use nabla::{functions::squeeze, Array, DType};
/// assert_eq!(squeeze(&Array::zeros(&[1, 3], DType::F32), 0).shape(), &[3]);
/// ```
#[track_caller]
pub fn squeeze(x: &Array, axis: isize) -> Array {
    x.squeeze(axis)
}

/// Casts to another dtype.
///
/// ```
/// # use nabla::{functions::cast, Array, DType};
/// assert_eq!(cast(&Array::scalar(1.0f32), DType::F64).dtype(), DType::F64);
/// ```
pub fn cast(x: &Array, dtype: crate::DType) -> Array {
    x.cast(dtype)
}
