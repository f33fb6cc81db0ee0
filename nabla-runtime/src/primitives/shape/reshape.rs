//! Reshape (row-major order).

use crate::array::view::host_view;
use crate::storage::any_map;
use crate::{Array, ArrayValue};
use ndarray::Axis;

/// The output shape (`shape`), checking the element counts match.
///
/// ```
/// use nabla::primitives::shape::reshape;
/// assert_eq!(&reshape::out_shape(&[2, 3], &[3, 2])[..], &[3, 2]);
/// assert!(std::panic::catch_unwind(|| reshape::out_shape(&[2, 3], &[4])).is_err());
/// ```
#[track_caller]
pub fn out_shape(x: &[usize], shape: &[usize]) -> crate::Shape {
    check(x, shape);
    crate::Shape::from_slice(shape)
}
/// Panics unless `x` and `shape` have the same number of elements (the
/// check of [`out_shape`], without building the shape).
#[track_caller]
pub(super) fn check(x: &[usize], shape: &[usize]) {
    let m = x.iter().product::<usize>();
    let n = crate::array::create::checked_numel("reshape", shape, 1);
    if m != n {
        panic!(
            "reshape: cannot reshape {x:?} ({m} elements) into {shape:?} ({n} elements); the element counts must match"
        );
    }
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
    check(x.shape(), shape);
    crate::array::on_gpu!(&*x.data, |g| g.reshape(shape));
    if let Some(v) = with_unit_axes(x, shape) {
        return v;
    }
    if is_row_major(x.shape(), x.strides()) {
        return host_view!(x, |r| crate::storage::row_major_view(&r, shape));
    }
    if let Some(v) = unit_axes_only(x, shape) {
        return v;
    }
    Array::from_data(any_map!(&*x.data, |a| {
        nabla_kernels::elementwise::contiguous_as(&a.view(), shape)
    }))
}
/// Whether `(shape, strides)` is row-major contiguous (length-1 axes aside).
fn is_row_major(shape: &[usize], strides: &[isize]) -> bool {
    let mut want = 1isize;
    shape.iter().zip(strides).rev().all(|(&d, &s)| {
        let ok = d == 1 || s == want;
        want *= d as isize;
        ok
    }) || shape.contains(&0)
}
/// `x` with length-1 axes inserted to give `shape`, when that is all
/// the reshape does (batching pads an operand's per-example rank this
/// way before most binary ops): a view of any layout, without
/// recomputing strides. `None` for any other reshape.
fn with_unit_axes(x: &Array, shape: &[usize]) -> Option<Array> {
    let have = x.shape();
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
    Some(host_view!(x, |r| {
        let mut r = r;
        for &k in &inserted {
            r = r.insert_axis(Axis(k));
        }
        r
    }))
}
/// A reshape that only inserts or removes length-1 axes, as a view of
/// any (strided) layout; `None` for any other reshape. Batching pads
/// operands this way, often on permuted or sliced values.
fn unit_axes_only(x: &Array, shape: &[usize]) -> Option<Array> {
    let non_unit = |s: &[usize]| {
        s.iter()
            .copied()
            .filter(|&d| d != 1)
            .collect::<crate::Shape>()
    };
    if non_unit(x.shape()) != non_unit(shape) {
        return None;
    }
    Some(host_view!(x, |r| {
        let mut r = r;
        for ax in (0..r.ndim()).rev() {
            if r.shape()[ax] == 1 {
                r = r.index_axis_move(Axis(ax), 0);
            }
        }
        for (ax, &d) in shape.iter().enumerate() {
            if d == 1 {
                r = r.insert_axis(Axis(ax));
            }
        }
        r
    }))
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
