//! NumPy broadcast to a larger shape.

use crate::dtype::any_map;
use crate::{Array, ArrayValue};
use ndarray::IxDyn;

/// The output shape (`shape`), checking that `x` broadcasts to it.
#[track_caller]
pub fn out_shape(x: &[usize], shape: &[usize]) -> crate::Shape {
    if !nabla_kernels::elementwise::broadcasts_to(x, shape) {
        panic!(
            "broadcast_to: shape {x:?} cannot be broadcast to {shape:?}; each trailing dimension must match or be 1"
        );
    }
    crate::Shape::from_slice(shape)
}
/// Forward (materialises the result).
#[track_caller]
pub fn forward(x: &Array, shape: &[usize]) -> Array {
    out_shape(x.shape(), shape);
    crate::dtype::on_gpu!(&*x.data, |g| g.broadcast_to(shape));
    let d = IxDyn(shape);
    Array::from_data(any_map!(&*x.data, |a| match a.first() {
        // One element (a reduction's cotangent): a fill, not a copy
        // through ndarray's element iterator.
        Some(v) if a.len() == 1 => ndarray::ArcArray::from_elem(d.clone(), *v),
        _ => nabla_kernels::elementwise::contiguous(&a.broadcast(d.clone()).expect("checked"))
            .into_shared(),
    }))
}
/// JVP rule.
pub fn jvp<V: ArrayValue>(dx: &V, shape: &[usize]) -> V {
    dx.broadcast_to(shape)
}
/// VJP rule: sum back to the input shape.
pub fn vjp<V: ArrayValue>(x_shape: &[usize], ct: &V) -> V {
    ct.sum_to_shape(x_shape)
}
