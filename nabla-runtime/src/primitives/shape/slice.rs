//! Strided slicing, one [`Slice`] per axis.

use crate::{Array, ArrayValue};
use ndarray::Slice;

/// Forward: a view of the same storage.
///
/// ```
/// use nabla::{primitives::shape::slice, Array, DType};
/// use ndarray::Slice;
/// let x = Array::arange(5, DType::F64);
/// let y = slice::forward(&x, &[Slice::new(1, Some(4), 2)]); // x[1:4:2]
/// assert_eq!(y.to_vec::<f64>(), vec![1.0, 3.0]);
/// ```
#[track_caller]
pub fn forward(x: &Array, slices: &[Slice]) -> Array {
    crate::dtype::on_gpu!(&*x.data, |g| g.slice(slices));
    crate::array::view::host_view!(x, |r| {
        let mut r = r;
        r.slice_each_axis_inplace(|ax| slices[ax.axis.index()]);
        r
    })
}
/// JVP rule.
///
/// ```
/// use nabla::{primitives::shape::slice, Array, DType};
/// use ndarray::Slice;
/// let dx = Array::arange(5, DType::F64);
/// assert_eq!(slice::jvp(&dx, &[Slice::from(3..)]).to_vec::<f64>(), vec![3.0, 4.0]);
/// ```
pub fn jvp<V: ArrayValue>(dx: &V, slices: &[Slice]) -> V {
    dx.slice(slices)
}
/// VJP rule: zeros with the cotangent placed at the slice.
///
/// ```
/// use nabla::{primitives::shape::slice, Array};
/// use ndarray::Slice;
/// let ct = Array::from_vec(vec![10.0f64, 20.0], &[2]);
/// let g = slice::vjp(&[5], &[Slice::new(1, Some(4), 2)], &ct);
/// assert_eq!(g.to_vec::<f64>(), vec![0.0, 10.0, 0.0, 20.0, 0.0]);
/// ```
pub fn vjp<V: ArrayValue>(x_shape: &[usize], slices: &[Slice], ct: &V) -> V {
    ct.slice_place(x_shape, slices)
}
