//! Gathers, scatters and slice placement (the VJPs of indexing ops).

use crate::Float;
use ndarray::{ArrayD, ArrayViewD, IxDyn, Slice};

/// `shape` as `[outer, shape[axis], inner]`.
fn split_at_axis(shape: &[usize], axis: usize) -> (usize, usize, usize) {
    let outer = shape[..axis].iter().product();
    let inner = shape[axis + 1..].iter().product();
    (outer, shape[axis], inner)
}

/// Runs `f` on each (output row, input row) pair, in parallel (the
/// crate's loop) when the output is large.
fn rows<T: Send, S: Sync>(
    out: &mut [T],
    out_row: usize,
    src: &[S],
    src_row: usize,
    f: impl Fn(&mut [T], &[S]) + Sync,
) {
    let row = |i: usize, o: &mut [T]| f(o, &src[i * src_row..(i + 1) * src_row]);
    if out.len() >= crate::PARALLEL_THRESHOLD && out.len() > out_row {
        crate::parallel::chunks_mut(out, out_row, row);
    } else {
        out.chunks_mut(out_row)
            .enumerate()
            .for_each(|(i, o)| row(i, o));
    }
}

/// Picks the entries `idx` along `axis` (indices may repeat).
///
/// ```
/// use nabla_kernels::index::index_select;
/// let x = ndarray::arr2(&[[1, 2], [3, 4]]).into_dyn();
/// assert_eq!(index_select(x.view(), 0, &[1, 1, 0]).shape(), &[3, 2]);
/// ```
pub fn index_select<T: Copy + Send + Sync>(
    x: ArrayViewD<'_, T>,
    axis: usize,
    idx: &[usize],
) -> ArrayD<T> {
    let x = x.as_standard_layout();
    let (outer, n, inner) = split_at_axis(x.shape(), axis);
    let mut shape = x.shape().to_vec();
    shape[axis] = idx.len();
    let src = x.as_slice().expect("standard layout");
    let total = outer * idx.len() * inner;
    if total == 0 {
        return ArrayD::from_shape_vec(IxDyn(&shape), Vec::new()).expect("empty");
    }
    // One row per outer index: slabs of `inner` contiguous elements copied
    // in the order of `idx` (single elements when `inner` is 1).
    let mut out = vec![src[0]; total];
    rows(&mut out, idx.len() * inner, src, n * inner, |o, s| {
        if inner == 1 {
            for (d, &i) in o.iter_mut().zip(idx) {
                *d = s[i];
            }
        } else {
            for (d, &i) in o.chunks_exact_mut(inner).zip(idx) {
                d.copy_from_slice(&s[i * inner..(i + 1) * inner]);
            }
        }
    });
    ArrayD::from_shape_vec(IxDyn(&shape), out).expect("shape")
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
    let src = src.as_standard_layout();
    let (outer, n, inner) = split_at_axis(shape, axis);
    let mut out = vec![T::ZERO; outer * n * inner];
    if out.is_empty() || idx.is_empty() {
        return ArrayD::from_shape_vec(IxDyn(shape), out).expect("shape");
    }
    let s = src.as_slice().expect("standard layout");
    // Each outer row of the output receives from its own row of `src`, so
    // rows run in parallel; within a row, slabs accumulate in order.
    rows(&mut out, n * inner, s, idx.len() * inner, |o, s| {
        if inner == 1 {
            for (&v, &i) in s.iter().zip(idx) {
                o[i] += v;
            }
        } else {
            for (v, &i) in s.chunks_exact(inner).zip(idx) {
                for (d, &x) in o[i * inner..(i + 1) * inner].iter_mut().zip(v) {
                    *d += x;
                }
            }
        }
    });
    ArrayD::from_shape_vec(IxDyn(shape), out).expect("shape")
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
    if let Some(out) = place_along_one_axis(shape, slices, &src) {
        return out;
    }
    let mut out = ArrayD::<T>::from_elem(IxDyn(shape), T::ZERO);
    let mut region = out.slice_each_axis_mut(|ax| slices[ax.axis.index()]);
    if !copy_rows(&mut region, &src) {
        region.assign(&src);
    }
    out
}

/// `slice_place` when at most one axis is sliced, with step 1, and `src`
/// is contiguous: the output is written once, block by block (zeros, the
/// source block, zeros), instead of zero-filled and then overwritten.
fn place_along_one_axis<T: Float>(
    shape: &[usize],
    slices: &[Slice],
    src: &ArrayViewD<'_, T>,
) -> Option<ArrayD<T>> {
    if shape.is_empty() {
        return None;
    }
    let s = src.as_slice()?;
    let mut cut = None;
    for (ax, sl) in slices.iter().enumerate() {
        let len = shape[ax] as isize;
        let norm = |i: isize| if i < 0 { i + len } else { i };
        let (lo, hi) = (norm(sl.start), sl.end.map_or(len, norm));
        if sl.step != 1 || lo < 0 || hi > len || lo > hi {
            return None;
        }
        if (lo, hi) != (0, len) {
            if cut.is_some() {
                return None;
            }
            cut = Some((ax, lo as usize, hi as usize));
        }
    }
    let (ax, lo, hi) = cut.unwrap_or((0, 0, shape[0]));
    let inner: usize = shape[ax + 1..].iter().product();
    let len = shape[ax];
    let outer: usize = shape[..ax].iter().product();
    if s.len() != outer * (hi - lo) * inner {
        return None;
    }
    let mut out: Vec<T> = Vec::with_capacity(outer * len * inner);
    for block in s.chunks_exact(((hi - lo) * inner).max(1)).take(outer) {
        out.extend(std::iter::repeat_n(T::ZERO, lo * inner));
        out.extend_from_slice(&block[..(hi - lo) * inner]);
        out.extend(std::iter::repeat_n(T::ZERO, (len - hi) * inner));
    }
    if out.len() != outer * len * inner {
        return None;
    }
    ArrayD::from_shape_vec(IxDyn(shape), out).ok()
}

/// Copies `src` into `dst` (same shape) row by row when both last axes are
/// contiguous (a 1-D slice is one row; `x[:, 1:]` has one per row); false when not
/// eligible (the caller then assigns element by element).
fn copy_rows<T: Float>(dst: &mut ndarray::ArrayViewMutD<'_, T>, src: &ArrayViewD<'_, T>) -> bool {
    use crate::elementwise::{MAX_ROW_AXES, each_row2};
    let nd = dst.ndim();
    if dst.shape() != src.shape()
        || !(1..=MAX_ROW_AXES).contains(&nd)
        || dst.strides()[nd - 1] != 1
        || src.strides()[nd - 1] != 1
    {
        return false;
    }
    let w = dst.shape()[nd - 1];
    let (pd, ps) = (dst.as_mut_ptr(), src.as_ptr());
    let outer = dst.shape()[..nd - 1].to_vec();
    let sd = dst.strides()[..nd - 1].to_vec();
    let (ed, es) = (
        crate::elementwise::Extent::of(dst.shape(), dst.strides()),
        crate::elementwise::Extent::of_view(src),
    );
    each_row2(&outer, &sd, &src.strides()[..nd - 1], |od, os| {
        debug_assert!(
            ed.holds(od, w, 1) && es.holds(os, w, 1),
            "copy_rows: rows at {od}, {os} of {w}"
        );
        // SAFETY: `od`/`os` are row offsets inside `dst`/`src`, each row `w`
        // contiguous elements; `dst` is a mutable view of a fresh array, so
        // the two never overlap.
        unsafe { std::ptr::copy_nonoverlapping(ps.offset(os), pd.offset(od), w) };
    });
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `slice_place` (row copies when rows are contiguous, element-wise
    /// otherwise) puts every element where ndarray's slicing says.
    #[test]
    fn slice_place_fast_path_agrees_with_assign() {
        // One sliced axis (first, middle, last, negative bounds), none, two
        // (general path) and a strided source (general path).
        let shape = [3usize, 4, 5];
        let cases: Vec<Vec<Slice>> = vec![
            vec![Slice::new(1, Some(3), 1), Slice::from(..), Slice::from(..)],
            vec![Slice::from(..), Slice::new(1, Some(-1), 1), Slice::from(..)],
            vec![Slice::from(..), Slice::from(..), Slice::new(-4, None, 1)],
            vec![Slice::from(..), Slice::from(..), Slice::from(..)],
            vec![
                Slice::new(0, Some(2), 1),
                Slice::from(..),
                Slice::new(0, Some(1), 1),
            ],
            vec![Slice::from(..), Slice::new(0, Some(4), 2), Slice::from(..)],
        ];
        for sl in &cases {
            let mut want = ndarray::ArrayD::<f64>::zeros(IxDyn(&shape));
            let region_shape = want
                .slice_each_axis(|ax| sl[ax.axis.index()])
                .shape()
                .to_vec();
            let n: usize = region_shape.iter().product();
            let src = ndarray::ArrayD::from_shape_vec(
                IxDyn(&region_shape),
                (0..n).map(|v| v as f64 + 1.0).collect(),
            )
            .unwrap();
            want.slice_each_axis_mut(|ax| sl[ax.axis.index()])
                .assign(&src);
            assert_eq!(slice_place(&shape, sl, src.view()), want, "{sl:?}");
            let t = src.t().to_owned();
            assert_eq!(slice_place(&shape, sl, t.t()), want, "{sl:?} strided");
        }
    }

    #[test]
    fn slice_place_matches_ndarray_slicing() {
        for (shape, slices) in [
            (
                vec![4usize, 12],
                vec![Slice::from(1..3), Slice::from(2..11)],
            ),
            (
                vec![3, 5, 10],
                vec![Slice::from(..), Slice::from(1..4), Slice::from(1..10)],
            ),
            (
                vec![6, 3],
                vec![Slice::from(0..6).step_by(2), Slice::from(0..3)],
            ),
        ] {
            let mut sub = ArrayD::<f64>::zeros(IxDyn(&shape));
            let region_shape = sub
                .slice_each_axis_mut(|ax| slices[ax.axis.index()])
                .shape()
                .to_vec();
            let n: usize = region_shape.iter().product();
            let src =
                ArrayD::from_shape_vec(IxDyn(&region_shape), (1..=n).map(|v| v as f64).collect())
                    .unwrap();
            let got = slice_place(&shape, &slices, src.view());
            sub.slice_each_axis_mut(|ax| slices[ax.axis.index()])
                .iter_mut()
                .zip(src.iter())
                .for_each(|(d, s)| *d = *s);
            assert_eq!(got, sub, "shape {shape:?}");
        }
    }
}

#[cfg(test)]
mod gather_tests {
    use super::*;
    use ndarray::Axis;

    /// Gathers and scatter-adds of single elements and of slabs, serial and
    /// parallel, against ndarray's `select` and a plain loop.
    #[test]
    fn gathers_and_scatters_match_plain_loops() {
        for (shape, axis) in [
            (vec![3usize, 5, 4], 1usize),
            (vec![40, 1500], 1),
            (vec![6, 300, 30], 1),
            (vec![7, 3], 0),
        ] {
            let n: usize = shape.iter().product();
            let x =
                ArrayD::from_shape_vec(IxDyn(&shape), (0..n).map(|i| i as f64).collect()).unwrap();
            let len = shape[axis];
            let idx: Vec<usize> = (0..2 * len + 3).map(|j| (j * 7 + 3) % len).collect();
            let got = index_select(x.view(), axis, &idx);
            assert_eq!(got, x.select(Axis(axis), &idx), "select {shape:?}");
            let back = index_add(&shape, axis, &idx, got.view());
            let mut want = ArrayD::<f64>::zeros(IxDyn(&shape));
            for (j, &i) in idx.iter().enumerate() {
                let mut dst = want.index_axis_mut(Axis(axis), i);
                dst += &got.index_axis(Axis(axis), j);
            }
            assert_eq!(back, want, "index_add {shape:?}");
        }
    }
}
