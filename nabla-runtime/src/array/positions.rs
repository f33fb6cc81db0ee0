//! Index arithmetic of the gathers: integer indices checked against an
//! axis, row-major strides, and the flat positions `take_along_axis`
//! reads. It runs on concrete arrays only, so the composites and the
//! run-time gathers of `nabla::dynamic` share it.

use crate::Array;
use crate::array::norm_axis;

/// The integer indices of `indices` (an `I64` array), checked against
/// `len` (negative indices count from the end, as in NumPy).
#[track_caller]
pub(crate) fn checked_indices(op: &str, indices: &Array, len: usize) -> Vec<usize> {
    assert!(
        indices.dtype() == crate::DType::I64,
        "{op}: indices must be an I64 array, found {:?}; build them with Array::from_vec(vec![..i64], shape) or .cast(DType::I64)",
        indices.dtype()
    );
    indices
        .to_vec::<i64>()
        .into_iter()
        .map(|i| {
            let j = if i < 0 { i + len as i64 } else { i };
            assert!(
                (0..len as i64).contains(&j),
                "{op}: index {i} is out of range for an axis of length {len}; use indices in -{len}..{len}"
            );
            j as usize
        })
        .collect()
}

/// Row-major strides of `shape`.
pub(crate) fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// The flat (row-major) positions in an array of `shape` that
/// `take_along_axis(x, indices, axis)` reads, in the order of `indices`.
///
/// ```
/// use nabla::{composite::gather::along_axis_flat, Array};
/// let idx = Array::from_vec(vec![1i64, 0], &[2, 1]);
/// assert_eq!(along_axis_flat(&[2, 3], &idx, 1), vec![1, 3]);
/// ```
#[track_caller]
pub fn along_axis_flat(shape: impl AsRef<[usize]>, indices: &Array, axis: isize) -> Vec<usize> {
    let shape = shape.as_ref();
    let op = "take_along_axis";
    let ax = norm_axis(op, axis, shape.len());
    let ish = indices.shape();
    let same_rank = ish.len() == shape.len();
    assert!(
        same_rank && (0..shape.len()).all(|i| i == ax || ish[i] == shape[i]),
        "take_along_axis: indices of shape {ish:?} do not fit an array of shape {shape:?} along axis {ax}; \
         they need the array's rank and its length on every other axis"
    );
    let vals = checked_indices(op, indices, shape[ax]);
    let (xs, is) = (strides(shape), strides(ish));
    vals.iter()
        .enumerate()
        .map(|(flat, &v)| {
            (0..shape.len())
                .map(|d| {
                    let coord = if d == ax { v } else { flat / is[d] % ish[d] };
                    coord * xs[d]
                })
                .sum()
        })
        .collect()
}
