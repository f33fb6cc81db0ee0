//! Gathers, scatters and slice placement (the VJPs of indexing ops).

use crate::Float;
use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn, Slice};

/// Picks the entries `idx` along `axis` (indices may repeat).
///
/// ```
/// use nabla_kernels::index::index_select;
/// let x = ndarray::arr2(&[[1, 2], [3, 4]]).into_dyn();
/// assert_eq!(index_select(x.view(), 0, &[1, 1, 0]).shape(), &[3, 2]);
/// ```
pub fn index_select<T: Copy>(x: ArrayViewD<'_, T>, axis: usize, idx: &[usize]) -> ArrayD<T> {
    x.select(Axis(axis), idx)
}

/// Scatter-add: a zero array of `shape` where slab `j` of `src` along `axis`
/// is added at position `idx[j]` (the VJP of [`index_select`]).
///
/// ```
/// use nabla_kernels::index::index_add;
/// let src = ndarray::arr1(&[1.0f64, 2.0, 3.0]).into_dyn();
/// assert_eq!(index_add(&[2], 0, &[1, 1, 0], src.view()).as_slice().unwrap(), &[3.0, 3.0]);
/// ```
pub fn index_add<T: Float>(
    shape: &[usize],
    axis: usize,
    idx: &[usize],
    src: ArrayViewD<'_, T>,
) -> ArrayD<T> {
    let mut out = ArrayD::<T>::from_elem(IxDyn(shape), T::ZERO);
    for (j, &i) in idx.iter().enumerate() {
        ndarray::Zip::from(out.index_axis_mut(Axis(axis), i))
            .and(src.index_axis(Axis(axis), j))
            .for_each(|d, &s| *d += s);
    }
    out
}

/// A zero array of `shape` with `src` written into the region selected by
/// `slices` (one per axis): the VJP of slicing.
///
/// ```
/// use nabla_kernels::index::slice_place;
/// use ndarray::Slice;
/// let src = ndarray::arr1(&[5.0f32, 6.0]).into_dyn();
/// let out = slice_place(&[4], &[Slice::new(1, Some(3), 1)], src.view());
/// assert_eq!(out.as_slice().unwrap(), &[0.0, 5.0, 6.0, 0.0]);
/// ```
pub fn slice_place<T: Float>(
    shape: &[usize],
    slices: &[Slice],
    src: ArrayViewD<'_, T>,
) -> ArrayD<T> {
    let mut out = ArrayD::<T>::from_elem(IxDyn(shape), T::ZERO);
    out.slice_each_axis_mut(|ax| slices[ax.axis.index()])
        .assign(&src);
    out
}
