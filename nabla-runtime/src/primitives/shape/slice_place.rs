//! The VJP of slicing: zeros of a shape with a value placed at a slice. Its
//! own VJP is the slice.

use crate::{Array, ArrayValue};
use ndarray::Slice;

/// Forward.
#[track_caller]
pub fn forward(x: &Array, shape: &[usize], slices: &[Slice]) -> Array {
    if !x.dtype().is_float() {
        crate::primitives::unary::not_float("slice_place", x)
    }
    crate::dtype::on_gpu!(&*x.data, |g| nabla_kernels::cuda::slice_place(
        shape, slices, g
    ));
    Array::from_data(crate::dtype::float_map!(
        &*x.data,
        |a| nabla_kernels::index::slice_place(shape, slices, a.view()),
        crate::primitives::unary::not_float("slice_place", x)
    ))
}
/// JVP rule.
pub fn jvp<V: ArrayValue>(dx: &V, shape: &[usize], slices: &[Slice]) -> V {
    dx.slice_place(shape, slices)
}
/// VJP rule: the slice of the cotangent.
pub fn vjp<V: ArrayValue>(slices: &[Slice], ct: &V) -> V {
    ct.slice(slices)
}
