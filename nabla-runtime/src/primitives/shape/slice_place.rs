//! The VJP of slicing: zeros of a shape with a value placed at a slice. Its
//! own VJP is the slice.

use crate::{Array, ArrayValue};
use ndarray::Slice;

/// Forward.
///
/// ```
/// use nabla::{primitives::shape::slice_place, Array};
/// use ndarray::Slice;
/// let x = Array::from_vec(vec![10.0f64, 20.0], &[2]);
/// let y = slice_place::forward(&x, &[5], &[Slice::new(1, Some(4), 2)]);
/// assert_eq!(y.to_vec::<f64>(), vec![0.0, 10.0, 0.0, 20.0, 0.0]);
/// ```
#[track_caller]
pub fn forward(x: &Array, shape: &[usize], slices: &[Slice]) -> Array {
    if !x.dtype().is_float() {
        crate::primitives::unary::not_float("slice_place", x)
    }
    crate::array::on_gpu!(&*x.data, |g| nabla_kernels::cuda::slice_place(
        shape, slices, g
    ));
    Array::from_data(crate::storage::float_map!(
        &*x.data,
        |a| nabla_kernels::index::slice_place(shape, slices, a.view()),
        crate::primitives::unary::not_float("slice_place", x)
    ))
}
/// JVP rule.
///
/// ```
/// use nabla::{primitives::shape::slice_place, Array};
/// use ndarray::Slice;
/// let dx = Array::from_vec(vec![1.0f64], &[1]);
/// assert_eq!(slice_place::jvp(&dx, &[3], &[Slice::from(2..)]).to_vec::<f64>(), vec![0.0, 0.0, 1.0]);
/// ```
pub fn jvp<V: ArrayValue>(dx: &V, shape: &[usize], slices: &[Slice]) -> V {
    dx.slice_place(shape, slices)
}
/// VJP rule: the slice of the cotangent.
///
/// ```
/// use nabla::{primitives::shape::slice_place, Array, DType};
/// use ndarray::Slice;
/// let ct = Array::arange(5, DType::F64);
/// assert_eq!(slice_place::vjp(&[Slice::new(1, Some(4), 2)], &ct).to_vec::<f64>(), vec![1.0, 3.0]);
/// ```
pub fn vjp<V: ArrayValue>(slices: &[Slice], ct: &V) -> V {
    ct.slice(slices)
}
