//! Strided slicing, one [`Slice`] per axis.

use crate::dtype::any_map;
use crate::{Array, ArrayValue};
use ndarray::Slice;

/// Forward: a view of the same storage.
#[track_caller]
pub fn forward(x: &Array, slices: &[Slice]) -> Array {
    crate::dtype::on_gpu!(&*x.data, |g| g.slice(slices));
    Array::from_data(any_map!(&*x.data, |a| {
        let mut v = a.clone();
        v.slice_each_axis_inplace(|ax| slices[ax.axis.index()]);
        v
    }))
}
/// JVP rule.
pub fn jvp<V: ArrayValue>(dx: &V, slices: &[Slice]) -> V {
    dx.slice(slices)
}
/// VJP rule: zeros with the cotangent placed at the slice.
pub fn vjp<V: ArrayValue>(x_shape: &[usize], slices: &[Slice], ct: &V) -> V {
    ct.slice_place(x_shape, slices)
}
