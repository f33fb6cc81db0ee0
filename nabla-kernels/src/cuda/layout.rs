//! How a kernel reads an input: the `Layout` struct shared with kernels.cu.

use cudarc::driver::DeviceRepr;

/// Most axes a device array may have (the kernels' fixed-size layouts).
pub const MAX_DIMS: usize = 8;

/// Mirror of `struct Layout` in kernels.cu: element `i` (row-major over
/// `shape`) of an operand lives at `offset + Σ coord_d · strides_d`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    ndim: i64,
    offset: i64,
    contiguous: i64,
    shape: [i64; MAX_DIMS],
    strides: [i64; MAX_DIMS],
    /// 1: element `i` lives at `offset + (i / inner) % period` (a
    /// contiguous block repeated along broadcast axes: a bias row, a mask,
    /// a column of row statistics); 2: at `offset + (i / inner) · period +
    /// i % inner` (contiguous rows of `inner` elements, `period` apart: a
    /// column slice). Indices in 32-bit arithmetic.
    periodic: i64,
    inner: i64,
    period: i64,
}

// SAFETY: plain `repr(C)` integers, matching the CUDA struct field by field.
unsafe impl DeviceRepr for Layout {}

impl Layout {
    /// An operand of shape `shape`/`strides`/`offset` read over `out` (its
    /// shape broadcast NumPy-style to `out`; broadcast axes get stride 0).
    #[track_caller]
    pub(crate) fn over(out: &[usize], shape: &[usize], strides: &[isize], offset: usize) -> Layout {
        assert!(
            out.len() <= MAX_DIMS,
            "cuda: arrays on a GPU have at most {MAX_DIMS} axes, got shape {out:?}; reshape to fewer axes"
        );
        let lead = out.len() - shape.len();
        let mut l = Layout {
            ndim: out.len() as i64,
            offset: offset as i64,
            contiguous: 0,
            shape: [1; MAX_DIMS],
            strides: [0; MAX_DIMS],
            periodic: 0,
            inner: 1,
            period: 1,
        };
        for (d, &n) in out.iter().enumerate() {
            l.shape[d] = n as i64;
            if d >= lead && shape[d - lead] == n {
                l.strides[d] = strides[d - lead] as i64;
            }
        }
        // Contiguous row-major over `out` (size-1 axes may have any stride).
        let mut expect = 1i64;
        let mut contiguous = true;
        for d in (0..out.len()).rev() {
            if out[d] != 1 {
                contiguous &= l.strides[d] == expect;
                expect *= out[d] as i64;
            }
        }
        l.contiguous = contiguous as i64;
        if !contiguous && let Some((inner, period)) = periodic(out, &l.strides[..out.len()]) {
            (l.periodic, l.inner, l.period) = (1, inner, period);
        } else if !contiguous
            && let Some((row, stride)) = strided_rows(out, &l.strides[..out.len()])
        {
            (l.periodic, l.inner, l.period) = (2, row, stride);
        }
        l
    }

    /// A contiguous buffer of shape `shape`.
    pub(crate) fn contiguous(shape: &[usize]) -> Layout {
        Layout::over(shape, shape, &row_major(shape), 0)
    }
}

/// `(inner, period)` when the element at flat index `i` of `out` sits at
/// `(i / inner) % period` from the offset: from the last axis, broadcast
/// axes (stride 0, `inner` elements), then row-major axes (`period`
/// elements), then broadcast axes only; `None` otherwise, or when the
/// indices do not fit 32 bits.
fn periodic(out: &[usize], strides: &[i64]) -> Option<(i64, i64)> {
    let axes = axes_from_last(out, strides)?;
    let mut k = 0;
    let mut inner = 1;
    while k < axes.len() && axes[k].1 == 0 {
        inner *= axes[k].0;
        k += 1;
    }
    let mut period = 1;
    while k < axes.len() && axes[k].1 == period {
        period *= axes[k].0;
        k += 1;
    }
    axes[k..]
        .iter()
        .all(|a| a.1 == 0)
        .then_some((inner, period))
}

/// `(row, stride)` when `out` is rows of `row` contiguous elements, one
/// row every `stride` elements (the last axes row-major from stride 1,
/// the leading ones merging into one uniform stride); `None` otherwise,
/// or when the indices do not fit 32 bits.
fn strided_rows(out: &[usize], strides: &[i64]) -> Option<(i64, i64)> {
    let axes = axes_from_last(out, strides)?;
    let mut k = 0;
    let mut row = 1;
    while k < axes.len() && axes[k].1 == row {
        row *= axes[k].0;
        k += 1;
    }
    let &(n0, stride) = axes.get(k)?;
    if row == 1 || stride <= 0 {
        return None;
    }
    let mut expect = stride * n0;
    for &(n, s) in &axes[k + 1..] {
        if s != expect {
            return None;
        }
        expect *= n;
    }
    Some((row, stride))
}

/// `(length, stride)` of the axes of `out` longer than 1, last axis
/// first; `None` when the indices do not fit 32 bits.
fn axes_from_last(out: &[usize], strides: &[i64]) -> Option<Vec<(i64, i64)>> {
    if out.iter().product::<usize>() > u32::MAX as usize {
        return None;
    }
    Some(
        out.iter()
            .zip(strides)
            .filter(|(n, _)| **n != 1)
            .map(|(&n, &s)| (n as i64, s))
            .rev()
            .collect(),
    )
}

/// Row-major strides of `shape`.
pub(crate) fn row_major(shape: &[usize]) -> Vec<isize> {
    let mut s = vec![0isize; shape.len()];
    let mut acc = 1isize;
    for d in (0..shape.len()).rev() {
        s[d] = acc;
        acc *= shape[d].max(1) as isize;
    }
    s
}

/// Shape, strides and offset of a strided view after one `ndarray::Slice`
/// per axis (ndarray's semantics: negative indices count from the end; a
/// negative step walks the range backwards from its last element).
pub(crate) fn sliced(
    shape: &[usize],
    strides: &[isize],
    offset: usize,
    slices: &[ndarray::Slice],
) -> (Vec<usize>, Vec<isize>, usize) {
    let (mut shape, mut strides, mut offset) = (shape.to_vec(), strides.to_vec(), offset as isize);
    for (d, s) in slices.iter().enumerate() {
        let len = shape[d] as isize;
        let abs = |i: isize| if i < 0 { (len + i).max(0) } else { i.min(len) };
        let start = abs(s.start);
        let end = s.end.map_or(len, abs).max(start);
        let m = end - start;
        let step = s.step.unsigned_abs() as isize;
        if m > 0 {
            offset += strides[d] * if s.step < 0 { end - 1 } else { start };
        }
        shape[d] = ((m + step - 1) / step) as usize;
        strides[d] *= s.step;
    }
    (shape, strides, offset as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Periodic layouts give every element the offset its strides give.
    #[test]
    fn periodic_layouts_agree_with_strides() {
        let cases: [(&[usize], &[usize]); 6] = [
            (&[4, 3, 5], &[5]),
            (&[2, 3, 4, 4], &[4, 4]),
            (&[6, 3], &[6, 1]),
            (&[2, 6, 3], &[6, 1]),
            (&[3, 1, 4], &[1]),
            (&[2, 3], &[]),
        ];
        for (out, shape) in cases {
            let l = Layout::over(out, shape, &row_major(shape), 7);
            assert_eq!(l.periodic, 1, "{out:?} from {shape:?}");
            let n: usize = out.iter().product();
            for i in 0..n as i64 {
                let (mut r, mut off) = (i, l.offset);
                for d in (0..out.len()).rev() {
                    off += (r % l.shape[d]) * l.strides[d];
                    r /= l.shape[d];
                }
                assert_eq!(
                    off,
                    l.offset + (i / l.inner) % l.period,
                    "{out:?} from {shape:?}, i = {i}"
                );
            }
        }
        // A broadcast between two repeated axes is not periodic.
        let l = Layout::over(&[2, 3, 4], &[2, 1, 4], &[4, 4, 1], 0);
        assert_eq!(l.periodic, 0);
    }

    /// Strided-row layouts (column slices) give every element the offset
    /// its strides give.
    #[test]
    fn strided_row_layouts_agree_with_strides() {
        let cases: [(&[usize], &[isize]); 4] = [
            (&[4, 3, 5], &[45, 15, 1]),
            (&[2, 3, 4, 2], &[96, 32, 2, 1]),
            (&[6, 1, 3], &[10, 7, 1]),
            (&[5, 4], &[9, 1]),
        ];
        for (shape, strides) in cases {
            let l = Layout::over(shape, shape, strides, 3);
            assert_eq!(l.periodic, 2, "{shape:?} {strides:?}");
            let n: usize = shape.iter().product();
            for i in 0..n as i64 {
                let (mut r, mut off) = (i, l.offset);
                for d in (0..shape.len()).rev() {
                    off += (r % l.shape[d]) * l.strides[d];
                    r /= l.shape[d];
                }
                let got = l.offset + (i / l.inner) * l.period + i % l.inner;
                assert_eq!(off, got, "{shape:?} {strides:?}, i = {i}");
            }
        }
        // Rows whose leading axes do not merge, and transposes, are neither.
        for (shape, strides) in [(&[2, 3, 4][..], &[40isize, 12, 1][..]), (&[3, 4], &[1, 3])] {
            assert_eq!(Layout::over(shape, shape, strides, 0).periodic, 0);
        }
    }
    use ndarray::{ArrayD, IxDyn, Slice};

    /// Reads the elements of a strided view of `data`, row-major.
    fn gather(data: &[i64], shape: &[usize], strides: &[isize], offset: usize) -> Vec<i64> {
        let n: usize = shape.iter().product();
        (0..n)
            .map(|mut i| {
                let mut off = offset as isize;
                for d in (0..shape.len()).rev() {
                    off += (i % shape[d]) as isize * strides[d];
                    i /= shape[d];
                }
                data[off as usize]
            })
            .collect()
    }

    #[test]
    fn slicing_matches_ndarray() {
        let data: Vec<i64> = (0..60).collect();
        let a = ArrayD::from_shape_vec(IxDyn(&[3, 4, 5]), data.clone()).unwrap();
        let cases = [
            vec![
                Slice::new(1, Some(3), 1),
                Slice::new(0, None, 2),
                Slice::new(-3, None, 1),
            ],
            vec![
                Slice::new(0, None, -1),
                Slice::new(1, Some(4), -2),
                Slice::new(0, Some(5), 3),
            ],
            vec![
                Slice::new(2, Some(2), 1),
                Slice::new(0, None, 1),
                Slice::new(0, None, 1),
            ],
            vec![
                Slice::new(0, Some(-1), 1),
                Slice::new(-1, None, -1),
                Slice::new(4, Some(5), 1),
            ],
        ];
        for slices in cases {
            let want: Vec<i64> = a
                .slice_each_axis(|ax| slices[ax.axis.index()])
                .iter()
                .copied()
                .collect();
            let (shape, strides, offset) = sliced(&[3, 4, 5], &[20, 5, 1], 0, &slices);
            assert_eq!(gather(&data, &shape, &strides, offset), want, "{slices:?}");
        }
    }

    #[test]
    fn broadcast_axes_get_stride_zero_and_contiguity_is_detected() {
        let l = Layout::over(&[2, 3], &[3], &[1], 0);
        assert_eq!(l.strides[..2], [0, 1]);
        assert_eq!(l.contiguous, 0);
        let c = Layout::contiguous(&[2, 3]);
        assert_eq!((c.contiguous, c.strides[0], c.strides[1]), (1, 3, 1));
        let t = Layout::over(&[3, 2], &[3, 2], &[1, 3], 0);
        assert_eq!(t.contiguous, 0);
        let ones = Layout::over(&[1, 4], &[1, 4], &[99, 1], 5);
        assert_eq!((ones.contiguous, ones.offset), (1, 5));
    }
}
