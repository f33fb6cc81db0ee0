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
        l
    }

    /// A contiguous buffer of shape `shape`.
    pub(crate) fn contiguous(shape: &[usize]) -> Layout {
        Layout::over(shape, shape, &row_major(shape), 0)
    }
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
