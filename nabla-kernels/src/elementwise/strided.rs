//! Strided walks shared by the elementwise kernels: the axis merging of a
//! broadcast walk ([`Walk`], [`merged_axes`]), per-operand strides
//! ([`stride_along`]), the allocation-free row odometer ([`each_row2`])
//! and the bounds the raw walks assert in debug builds ([`Extent`]).

use ndarray::ArrayViewD;

/// The shortest rows worth a per-row loop (below, the generic iterator).
pub(super) const MIN_ROW: usize = 8;

/// The most axes [`each_row2`] handles (more fall back to ndarray).
pub(crate) const MAX_ROW_AXES: usize = 16;

/// The axes of a strided walk by `K` operands over a result of `nd` axes
/// (at most `MAX_ROW_AXES`), axis `i` of length `len(i)`: length-1 axes
/// dropped, and neighbouring axes merged wherever every operand steps
/// through them evenly. `stride(o, i)` is operand `o`'s element stride
/// along axis `i` (0 where it broadcasts). Shared by the broadcast maps of
/// two and three operands and the permuting copy.
pub(crate) struct Walk<const K: usize> {
    /// Merged lengths, `len` of them.
    pub(crate) dims: [usize; MAX_ROW_AXES],
    /// Each operand's stride along each merged axis.
    pub(crate) strides: [[isize; MAX_ROW_AXES]; K],
    /// The number of merged axes.
    pub(crate) len: usize,
}

/// See [`Walk`].
pub(crate) fn merged_axes<const K: usize>(
    nd: usize,
    len: impl Fn(usize) -> usize,
    stride: impl Fn(usize, usize) -> isize,
) -> Walk<K> {
    debug_assert!(nd <= MAX_ROW_AXES);
    let mut w = Walk {
        dims: [0; MAX_ROW_AXES],
        strides: [[0; MAX_ROW_AXES]; K],
        len: 0,
    };
    for i in 0..nd {
        let d = len(i);
        if d == 1 {
            continue;
        }
        let s: [isize; K] = std::array::from_fn(|o| stride(o, i));
        let k = w.len;
        if k > 0 && (0..K).all(|o| w.strides[o][k - 1] == s[o] * d as isize) {
            w.dims[k - 1] *= d;
            for (st, &so) in w.strides.iter_mut().zip(&s) {
                st[k - 1] = so;
            }
        } else {
            w.dims[k] = d;
            for (st, &so) in w.strides.iter_mut().zip(&s) {
                st[k] = so;
            }
            w.len += 1;
        }
    }
    w
}

/// `v`'s element stride along axis `i` of an `nd`-axis broadcast result
/// (0 where `v` broadcasts: a missing leading axis or a length-1 axis).
pub(crate) fn stride_along<T>(v: &ArrayViewD<'_, T>, nd: usize, i: usize) -> isize {
    let lead = nd - v.ndim();
    if i < lead || v.shape()[i - lead] == 1 {
        0
    } else {
        v.strides()[i - lead]
    }
}

/// Calls `f(offset_a, offset_b)` with the element offsets of every row of
/// two views of one shape whose outer axes (all but the last) are `outer`
/// with strides `sa` and `sb`, in row-major order, without allocating.
pub(crate) fn each_row2(
    outer: &[usize],
    sa: &[isize],
    sb: &[isize],
    mut f: impl FnMut(isize, isize),
) {
    let nd = outer.len();
    debug_assert!(nd < MAX_ROW_AXES && sa.len() == nd && sb.len() == nd);
    if outer.contains(&0) {
        return;
    }
    let mut idx = [0usize; MAX_ROW_AXES];
    let (mut oa, mut ob) = (0isize, 0isize);
    loop {
        f(oa, ob);
        // Odometer: bump the last outer axis, carrying into earlier ones.
        let mut k = nd;
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            idx[k] += 1;
            oa += sa[k];
            ob += sb[k];
            if idx[k] < outer[k] {
                break;
            }
            oa -= sa[k] * outer[k] as isize;
            ob -= sb[k] * outer[k] as isize;
            idx[k] = 0;
        }
    }
}

/// The element offsets, relative to its first element, that a view of
/// some shape and strides spans (`lo..=hi`; none for an empty view). The
/// raw pointer walks state their bounds against it in `debug_assert!`s:
/// an offset inside is inside the memory the view borrows.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Extent {
    lo: isize,
    hi: isize,
}

impl Extent {
    /// The extent of `shape` with `strides` (in elements).
    pub(crate) fn of(shape: &[usize], strides: &[isize]) -> Extent {
        let (mut lo, mut hi) = (0, 0);
        for (&d, &s) in shape.iter().zip(strides) {
            if d == 0 {
                return Extent { lo: 0, hi: -1 };
            }
            let reach = (d as isize - 1) * s;
            if reach < 0 {
                lo += reach;
            } else {
                hi += reach;
            }
        }
        Extent { lo, hi }
    }

    /// The extent of `v`.
    pub(crate) fn of_view<T>(v: &ArrayViewD<'_, T>) -> Extent {
        Extent::of(v.shape(), v.strides())
    }

    /// Whether the `w` elements at offsets `o + j·step`, `j < w`, all lie
    /// inside (true for `w = 0`).
    pub(crate) fn holds(self, o: isize, w: usize, step: isize) -> bool {
        if w == 0 {
            return true;
        }
        let last = o + (w as isize - 1) * step;
        self.lo <= o.min(last) && o.max(last) <= self.hi
    }
}
