//! NumPy broadcast to a larger shape.

use crate::storage::any_map;
use crate::{Array, ArrayValue};
use ndarray::IxDyn;

/// The output shape (`shape`), checking that `x` broadcasts to it.
///
/// ```
/// use nabla::primitives::shape::broadcast_to;
/// assert_eq!(&broadcast_to::out_shape(&[3], &[2, 3])[..], &[2, 3]);
/// assert!(std::panic::catch_unwind(|| broadcast_to::out_shape(&[3], &[3, 2])).is_err());
/// ```
#[track_caller]
pub fn out_shape(x: &[usize], shape: &[usize]) -> crate::Shape {
    if !nabla_kernels::elementwise::broadcasts_to(x, shape) {
        panic!(
            "broadcast_to: shape {x:?} cannot be broadcast to {shape:?}; each trailing dimension must match or be 1"
        );
    }
    // The result is materialised: its bytes must be addressable.
    crate::array::create::checked_numel("broadcast_to", shape, 8);
    crate::Shape::from_slice(shape)
}
/// Forward (materialises the result).
///
/// ```
/// use nabla::{primitives::shape::broadcast_to, Array};
/// let x = Array::from_vec(vec![1.0f64, 2.0, 3.0], &[3]);
/// let y = broadcast_to::forward(&x, &[2, 3]);
/// assert_eq!(y.to_vec::<f64>(), vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0]);
/// ```
#[track_caller]
pub fn forward(x: &Array, shape: &[usize]) -> Array {
    out_shape(x.shape(), shape);
    crate::array::on_gpu!(&*x.data, |g| g.broadcast_to(shape));
    Array::from_data(any_map!(&*x.data, |a| match a.first() {
        // One element (a reduction's cotangent): a fill, not a copy
        // through ndarray's element iterator.
        Some(v) if a.len() == 1 => crate::storage::Host::from_elem(shape, *v),
        _ => crate::storage::Host::from_nd(nabla_kernels::elementwise::contiguous(
            &a.view().broadcast(IxDyn(shape)).expect("checked")
        )),
    }))
}
/// JVP rule.
///
/// ```
/// use nabla::{primitives::shape::broadcast_to, Array};
/// let dx = Array::from_vec(vec![1.0f64, 2.0], &[2, 1]);
/// assert_eq!(broadcast_to::jvp(&dx, &[2, 2]).to_vec::<f64>(), vec![1.0, 1.0, 2.0, 2.0]);
/// ```
pub fn jvp<V: ArrayValue>(dx: &V, shape: &[usize]) -> V {
    dx.broadcast_to(shape)
}
/// VJP rule: sum back to the input shape.
///
/// ```
/// use nabla::{primitives::shape::broadcast_to, Array, DType};
/// let g = broadcast_to::vjp(&[3], &Array::ones(&[2, 3], DType::F64));
/// assert_eq!(g.to_vec::<f64>(), vec![2.0, 2.0, 2.0]);
/// ```
pub fn vjp<V: ArrayValue>(x_shape: &[usize], ct: &V) -> V {
    ct.sum_to_shape(x_shape)
}
