//! Strided slicing, one [`Slice`] per axis.

use crate::{Array, ArrayValue};
use ndarray::Slice;
use std::ops::Range;

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
    crate::array::on_gpu!(&*x.data, |g| g.slice(slices));
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

/// The slices of `x[.., range, ..]` on `axis` (negative counts from the
/// end) of an array of `shape`.
#[track_caller]
pub(crate) fn axis_slices(shape: &[usize], axis: isize, range: &Range<usize>) -> Vec<Slice> {
    let ax = crate::array::norm_axis("slice_axis", axis, shape.len());
    (0..shape.len())
        .map(|i| {
            if i == ax {
                Slice::new(range.start as isize, Some(range.end as isize), 1)
            } else {
                Slice::from(..)
            }
        })
        .collect()
}

/// `x.slice_axis(axis, range)` at any value type.
#[track_caller]
pub(crate) fn slice_axis<V: ArrayValue>(x: &V, axis: isize, range: Range<usize>) -> V {
    x.slice(&axis_slices(&x.shape_vec(), axis, &range))
}

/// The VJP of [`slice_axis`] accumulated into `slot`: the first
/// contribution is the zero-padded cotangent, later ones are added into
/// their region of it (`x[..n-1]` and `x[1..]` of one `x` cost one padded
/// array and one pass over a region, not two padded arrays and a full add).
pub(crate) fn acc_slice_axis<V: ArrayValue>(
    slot: &mut Option<V>,
    x: &[usize],
    axis: isize,
    range: Range<usize>,
    ct: &V,
) {
    let slices = axis_slices(x, axis, &range);
    *slot = Some(match slot.take() {
        None => vjp(x, &slices, ct),
        Some(old) => old.add_into_slice(&slices, ct),
    });
}
