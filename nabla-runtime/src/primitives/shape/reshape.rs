//! Reshape (row-major order).

use crate::dtype::any_map;
use crate::{Array, ArrayValue};
use ndarray::IxDyn;

/// The output shape (`shape`), checking the element counts match.
///
/// ```
/// use nabla::primitives::shape::reshape;
/// assert_eq!(&reshape::out_shape(&[2, 3], &[3, 2])[..], &[3, 2]);
/// assert!(std::panic::catch_unwind(|| reshape::out_shape(&[2, 3], &[4])).is_err());
/// ```
#[track_caller]
pub fn out_shape(x: &[usize], shape: &[usize]) -> crate::Shape {
    let (m, n) = (x.iter().product::<usize>(), shape.iter().product::<usize>());
    if m != n {
        panic!(
            "reshape: cannot reshape {x:?} ({m} elements) into {shape:?} ({n} elements); the element counts must match"
        );
    }
    crate::Shape::from_slice(shape)
}
/// Forward: shares storage when the input is contiguous (or the
/// reshape only adds or removes length-1 axes), copies otherwise.
///
/// ```
/// use nabla::{primitives::shape::reshape, Array, DType};
/// let y = reshape::forward(&Array::arange(6, DType::F64), &[2, 3]);
/// assert_eq!(y.shape(), &[2, 3]);
/// assert_eq!(y.to_vec::<f64>(), vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
/// ```
#[track_caller]
pub fn forward(x: &Array, shape: &[usize]) -> Array {
    out_shape(x.shape(), shape);
    crate::dtype::on_gpu!(&*x.data, |g| g.reshape(shape));
    Array::from_data(any_map!(&*x.data, |a| reshaped(a, shape)))
}
/// `a` in `shape` (element counts already checked).
fn reshaped<T: Copy>(
    a: &ndarray::ArcArray<T, IxDyn>,
    shape: &[usize],
) -> ndarray::ArcArray<T, IxDyn> {
    if let Some(r) = with_unit_axes(a, shape) {
        return r;
    }
    if a.is_standard_layout() {
        return a
            .clone()
            .into_shape_with_order(IxDyn(shape))
            .expect("a row-major array of the same size reshapes");
    }
    if let Some(r) = unit_axes_only(a, shape) {
        return r;
    }
    nabla_kernels::elementwise::contiguous_as(&a.view(), shape).into_shared()
}
/// `a` with length-1 axes inserted to give `shape`, when that is all
/// the reshape does (batching pads an operand's per-example rank this
/// way before most binary ops): a view of any layout, without
/// recomputing strides. `None` for any other reshape.
fn with_unit_axes<T>(
    a: &ndarray::ArcArray<T, IxDyn>,
    shape: &[usize],
) -> Option<ndarray::ArcArray<T, IxDyn>> {
    let have = a.shape();
    if shape.len() <= have.len() {
        return None;
    }
    // Match `have` against `shape` in order; every unmatched axis of
    // `shape` must be a 1 (inserted there).
    let mut inserted = crate::Shape::new();
    let mut j = 0;
    for (k, &d) in shape.iter().enumerate() {
        if j < have.len() && have[j] == d {
            j += 1;
        } else if d == 1 {
            inserted.push(k);
        } else {
            return None;
        }
    }
    if j != have.len() {
        return None;
    }
    let mut r = a.clone();
    for &k in &inserted {
        r = r.insert_axis(ndarray::Axis(k));
    }
    Some(r)
}
/// A reshape that only inserts or removes length-1 axes, as a view of
/// any (strided) layout; `None` for any other reshape. Batching pads
/// operands this way, often on permuted or sliced values.
fn unit_axes_only<T>(
    a: &ndarray::ArcArray<T, IxDyn>,
    shape: &[usize],
) -> Option<ndarray::ArcArray<T, IxDyn>> {
    let non_unit = |s: &[usize]| {
        s.iter()
            .copied()
            .filter(|&d| d != 1)
            .collect::<crate::Shape>()
    };
    if non_unit(a.shape()) != non_unit(shape) {
        return None;
    }
    let mut a = a.clone();
    for ax in (0..a.ndim()).rev() {
        if a.shape()[ax] == 1 {
            a = a.index_axis_move(ndarray::Axis(ax), 0);
        }
    }
    for (ax, &d) in shape.iter().enumerate() {
        if d == 1 {
            a = a.insert_axis(ndarray::Axis(ax));
        }
    }
    Some(a)
}
/// JVP rule.
///
/// ```
/// use nabla::{primitives::shape::reshape, Array, DType};
/// let dx = Array::ones(&[6], DType::F64);
/// assert_eq!(reshape::jvp(&dx, &[3, 2]).shape(), &[3, 2]);
/// ```
pub fn jvp<V: ArrayValue>(dx: &V, shape: &[usize]) -> V {
    dx.reshape(shape)
}
/// VJP rule: reshape back.
///
/// ```
/// use nabla::{primitives::shape::reshape, Array, DType};
/// let ct = Array::arange(6, DType::F64).reshape(&[2, 3]);
/// let g = reshape::vjp(&[6], &ct);
/// assert_eq!((g.shape(), g.to_vec::<f64>()[5]), (&[6][..], 5.0));
/// ```
pub fn vjp<V: ArrayValue>(x_shape: &[usize], ct: &V) -> V {
    ct.reshape(x_shape)
}
