//! Binary maps over two broadcast operands ([`zip_map`]): equal contiguous
//! shapes, a contiguous row repeated along the leading axes, small strided
//! broadcasts by merged strides, and the large or many-axis fallbacks.

use super::CHUNK;
use super::broadcast::{broadcast_shape, is_row_of};
use super::map::{map, par_outer};
use super::simd::{fill1_best, fill2, fill2_best};
use super::strided::{Extent, MAX_ROW_AXES, MIN_ROW, each_row2, merged_axes, stride_along};
use crate::parallel::chunks_mut;
use crate::{Float, PARALLEL_THRESHOLD};
use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn, Zip};
use std::mem::MaybeUninit;

/// What a binary map reads: two ndarray views broadcast together (the
/// result is an array of their broadcast shape), or two row-major slices
/// of one length (the result is their elements, in the same order), which
/// skips building and checking ndarray layouts.
///
/// ```
/// use nabla_kernels::elementwise::{binary, BinaryOp};
/// let v: Vec<f32> = binary(&[1.0f32, 2.0][..], &[3.0, 4.0][..], BinaryOp::Mul);
/// assert_eq!(v, vec![3.0, 8.0]);
/// ```
pub trait ZipSource<T: Float> {
    /// The mapped elements.
    type Out;
    /// `f` of every pair of elements.
    fn zip_with<F: Fn(T, T) -> T + Sync + Send>(self, b: Self, f: F) -> Self::Out;
}

impl<T: Float> ZipSource<T> for ArrayViewD<'_, T> {
    type Out = ArrayD<T>;
    #[inline]
    fn zip_with<F: Fn(T, T) -> T + Sync + Send>(self, b: Self, f: F) -> ArrayD<T> {
        zip_map(self, b, f)
    }
}

impl<T: Float> ZipSource<T> for &[T] {
    type Out = Vec<T>;
    /// # Panics
    /// When the slices' lengths differ.
    #[inline]
    fn zip_with<F: Fn(T, T) -> T + Sync + Send>(self, b: Self, f: F) -> Vec<T> {
        assert_eq!(self.len(), b.len(), "zip_with: slices of different lengths");
        zip_slices(self, b, &f)
    }
}

/// `f` of each pair of two equal-length slices' elements, vectorised,
/// parallel above [`PARALLEL_THRESHOLD`].
fn zip_slices<T: Float, F: Fn(T, T) -> T + Sync + Send>(sa: &[T], sb: &[T], f: &F) -> Vec<T> {
    let n = sa.len();
    let mut out: Vec<T> = Vec::with_capacity(n);
    {
        let dst = &mut out.spare_capacity_mut()[..n];
        if n >= PARALLEL_THRESHOLD {
            chunks_mut(dst, CHUNK, |c, d| {
                let r = c * CHUNK..c * CHUNK + d.len();
                fill2_best(d, &sa[r.clone()], &sb[r], f)
            });
        } else {
            fill2_best(dst, sa, sb, f);
        }
    }
    // SAFETY: all `n` slots were written above.
    unsafe { out.set_len(n) };
    out
}

/// `f` of each pair of two equal-length slices' elements written into
/// `out` (of that length), vectorised, on this thread.
///
/// # Panics
/// When the lengths differ.
pub(crate) fn zip_into<T: Float, F: Fn(T, T) -> T + Sync + Send>(
    sa: &[T],
    sb: &[T],
    out: &mut [MaybeUninit<T>],
    f: &F,
) {
    assert!(
        sa.len() == out.len() && sb.len() == out.len(),
        "binary_into: operands of {} and {} elements into an output of {}",
        sa.len(),
        sb.len(),
        out.len()
    );
    fill2_best(out, sa, sb, f);
}

/// Maps `f` over `a` and `b` broadcast together.
///
/// Fast paths: equal contiguous shapes; one operand a single element; one
/// contiguous operand whose shape is a suffix of the other's (a bias row).
pub fn zip_map<T: Float, F: Fn(T, T) -> T + Sync + Send>(
    a: ArrayViewD<'_, T>,
    b: ArrayViewD<'_, T>,
    f: F,
) -> ArrayD<T> {
    let same = a.shape() == b.shape();
    if same && let (Some(sa), Some(sb)) = (a.as_slice(), b.as_slice()) {
        // Equal contiguous shapes (the common case): no broadcast shape to build.
        return crate::owned(a.raw_dim(), zip_slices(sa, sb, &f));
    }
    let shape = broadcast_shape(a.shape(), b.shape());
    if shape.contains(&0) {
        // Nothing to compute (and no row length to divide by below).
        return ArrayD::from_shape_vec(IxDyn(&shape), Vec::new()).expect("an empty shape");
    }
    if !same && let (Some(sa), Some(sb)) = (a.as_slice(), b.as_slice()) {
        if a.shape() == shape.as_slice() && is_row_of(b.shape(), &shape) {
            return rows(sa, sb, &shape, &f);
        }
        if b.shape() == shape.as_slice() && is_row_of(a.shape(), &shape) {
            return rows(sb, sa, &shape, &|x, y| f(y, x));
        }
    }
    if shape.iter().product::<usize>() < PARALLEL_THRESHOLD
        && let Some(out) = zip_strided(&a, &b, &shape, &f)
    {
        return out;
    }
    if b.len() == 1 && a.shape() == shape.as_slice() {
        let y = *b.iter().next().expect("one element");
        return map(a, move |x| f(x, y));
    }
    if a.len() == 1 && b.shape() == shape.as_slice() {
        let x = *a.iter().next().expect("one element");
        return map(b, move |y| f(x, y));
    }
    let d = IxDyn(&shape);
    let av = a.broadcast(d.clone()).expect("shapes broadcast");
    let bv = b.broadcast(d).expect("shapes broadcast");
    if av.len() >= PARALLEL_THRESHOLD {
        // One piece per index of the first axis, each by strides.
        par_outer(&shape, |i, d| {
            let (ai, bi) = (av.index_axis(Axis(0), i), bv.index_axis(Axis(0), i));
            if shape.len() <= MAX_ROW_AXES + 1 {
                zip_strided_into(d, &ai, &bi, &shape[1..], &f);
            } else {
                for (d, (&x, &y)) in d.iter_mut().zip(ai.iter().zip(bi.iter())) {
                    d.write(f(x, y));
                }
            }
        })
    } else {
        // More axes than the odometer takes.
        Zip::from(&av).and(&bv).map_collect(|&x, &y| f(x, y))
    }
}

/// `f` over `a` and `b` broadcast to `shape`, by strides (every serial
/// case the contiguous fast paths leave): each operand gets a stride per
/// output axis (0 where it broadcasts), length-1 axes are dropped and
/// neighbouring axes merged wherever both operands step through them
/// evenly. Short merged rows (below `MIN_ROW`) over at most four merged
/// axes run as four plain nested loops ([`nested4`]); otherwise the
/// innermost axis is one loop per row of the odometer over the rest,
/// vectorised when both rows are contiguous and long enough. This skips
/// ndarray's broadcast views and iterators, whose set-up costs more than
/// the arithmetic on the few dozen elements nested transforms produce. `None` (nothing done) for more than `MAX_ROW_AXES`
/// axes.
pub(super) fn zip_strided<T: Float, F: Fn(T, T) -> T + ?Sized>(
    a: &ArrayViewD<'_, T>,
    b: &ArrayViewD<'_, T>,
    shape: &[usize],
    f: &F,
) -> Option<ArrayD<T>> {
    if shape.len() > MAX_ROW_AXES {
        return None;
    }
    let n: usize = shape.iter().product();
    let mut out: Vec<T> = Vec::with_capacity(n);
    zip_strided_into(&mut out.spare_capacity_mut()[..n], a, b, shape, f);
    // SAFETY: `zip_strided_into` wrote all `n` elements.
    unsafe { out.set_len(n) };
    Some(crate::owned(IxDyn(shape), out))
}

/// The body of [`zip_strided`], writing into `dst` (`shape`'s product of
/// slots, row-major); at most `MAX_ROW_AXES` axes.
fn zip_strided_into<T: Float, F: Fn(T, T) -> T + ?Sized>(
    dst: &mut [MaybeUninit<T>],
    a: &ArrayViewD<'_, T>,
    b: &ArrayViewD<'_, T>,
    shape: &[usize],
    f: &F,
) {
    let nd = shape.len();
    let ab = [a, b];
    let w = merged_axes::<2>(nd, |i| shape[i], |o, i| stride_along(ab[o], nd, i));
    let (dims, sa, sb, k) = (&w.dims, &w.strides[0], &w.strides[1], w.len);
    let n: usize = shape.iter().product();
    assert_eq!(dst.len(), n, "zip_strided_into: output length");
    {
        let out = dst;
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        if n == 0 {
            return;
        }
        // Broadcasting adds no reach: `a`'s own extent bounds every read.
        let (ea, eb) = (Extent::of_view(a), Extent::of_view(b));
        if k == 0 {
            // SAFETY: every axis has length 1: one element each.
            out[0].write(unsafe { f(*pa, *pb) });
        } else if dims[k - 1] < MIN_ROW && k <= NEST {
            // Short rows: four plain nested loops (length-1 axes in front
            // pad to four), no per-row odometer step or dispatch.
            let pad = NEST - k;
            let (mut d4, mut sa4, mut sb4) = ([1usize; NEST], [0isize; NEST], [0isize; NEST]);
            d4[pad..].copy_from_slice(&dims[..k]);
            sa4[pad..].copy_from_slice(&sa[..k]);
            sb4[pad..].copy_from_slice(&sb[..k]);
            nested4(out, (pa, ea), (pb, eb), d4, sa4, sb4, f);
        } else {
            let (w, la, lb) = (dims[k - 1], sa[k - 1], sb[k - 1]);
            let mut rows = out.chunks_exact_mut(w);
            each_row2(&dims[..k - 1], &sa[..k - 1], &sb[..k - 1], |oa, ob| {
                let dst = rows.next().expect("one chunk per row");
                debug_assert!(
                    ea.holds(oa, w, la) && eb.holds(ob, w, lb),
                    "zip_strided: rows at {oa}, {ob} of {w}"
                );
                // SAFETY: `oa`/`ob` are the offsets of one output row in `a`
                // and `b`; its `w` elements are `la`/`lb` apart (0 where the
                // operand broadcasts), all inside the views.
                unsafe {
                    match (la, lb) {
                        (1, 1) => {
                            let (x, y) = (
                                std::slice::from_raw_parts(pa.offset(oa), w),
                                std::slice::from_raw_parts(pb.offset(ob), w),
                            );
                            if w >= MIN_ROW {
                                fill2_best(dst, x, y, f)
                            } else {
                                fill2(dst, x, y, f)
                            }
                        }
                        (1, 0) => {
                            let (x, y) =
                                (std::slice::from_raw_parts(pa.offset(oa), w), *pb.offset(ob));
                            fill1_best(dst, x, &|x| f(x, y));
                        }
                        (0, 1) => {
                            let (x, y) =
                                (*pa.offset(oa), std::slice::from_raw_parts(pb.offset(ob), w));
                            fill1_best(dst, y, &|y| f(x, y));
                        }
                        _ => {
                            for (j, d) in dst.iter_mut().enumerate() {
                                let j = j as isize;
                                d.write(f(*pa.offset(oa + j * la), *pb.offset(ob + j * lb)));
                            }
                        }
                    }
                }
            });
        }
    }
}

/// Axes of [`nested4`].
const NEST: usize = 4;

/// Writes `f(a, b)` over a 4-axis index space (`dims`, row-major) into
/// `dst`, reading `a` and `b` at element strides `sa` and `sb` from `pa`
/// and `pb`: the loop for small broadcasts whose merged rows are short.
/// The extents `ea`, `eb` bound the reads (checked in debug builds).
fn nested4<T: Copy, F: Fn(T, T) -> T + ?Sized>(
    dst: &mut [MaybeUninit<T>],
    (pa, ea): (*const T, Extent),
    (pb, eb): (*const T, Extent),
    dims: [usize; NEST],
    sa: [isize; NEST],
    sb: [isize; NEST],
    f: &F,
) {
    assert_eq!(
        dst.len(),
        dims.iter().product::<usize>(),
        "nested4: output length"
    );
    let mut out = dst.iter_mut();
    // Pointers move with `wrapping_offset` (a step past the last index may
    // leave the view) and are read only at visited indices, which the
    // caller's views contain.
    let (mut a0, mut b0) = (pa, pb);
    for _ in 0..dims[0] {
        let (mut a1, mut b1) = (a0, b0);
        for _ in 0..dims[1] {
            let (mut a2, mut b2) = (a1, b1);
            for _ in 0..dims[2] {
                let (mut a3, mut b3) = (a2, b2);
                for _ in 0..dims[3] {
                    debug_assert!(
                        ea.holds(offset(pa, a3), 1, 0) && eb.holds(offset(pb, b3), 1, 0),
                        "nested4: a read outside its view"
                    );
                    // SAFETY: an index inside `dims`, so inside both views.
                    let v = unsafe { f(*a3, *b3) };
                    out.next().expect("one slot per index").write(v);
                    (a3, b3) = (a3.wrapping_offset(sa[3]), b3.wrapping_offset(sb[3]));
                }
                (a2, b2) = (a2.wrapping_offset(sa[2]), b2.wrapping_offset(sb[2]));
            }
            (a1, b1) = (a1.wrapping_offset(sa[1]), b1.wrapping_offset(sb[1]));
        }
        (a0, b0) = (a0.wrapping_offset(sa[0]), b0.wrapping_offset(sb[0]));
    }
}

fn rows<T: Float, F: Fn(T, T) -> T + Sync + Send + ?Sized>(
    big: &[T],
    row: &[T],
    shape: &[usize],
    f: &F,
) -> ArrayD<T> {
    let n = big.len();
    let w = row.len();
    let mut out: Vec<T> = Vec::with_capacity(n);
    {
        let dst = &mut out.spare_capacity_mut()[..n];
        let per = (CHUNK / w).max(1) * w;
        let run = |d: &mut [MaybeUninit<T>], s: &[T]| {
            for (d, s) in d.chunks_mut(w).zip(s.chunks(w)) {
                fill2_best(d, s, row, f);
            }
        };
        if n >= PARALLEL_THRESHOLD {
            chunks_mut(dst, per, |c, d| run(d, &big[c * per..c * per + d.len()]));
        } else {
            run(dst, big);
        }
    }
    // SAFETY: every row of `w` elements was written above.
    unsafe { out.set_len(n) };
    crate::owned(IxDyn(shape), out)
}

/// The element offset of `q` from `p` (debug checks of pointer walks; the
/// pointers need not be in bounds).
fn offset<T>(p: *const T, q: *const T) -> isize {
    (q as isize).wrapping_sub(p as isize) / std::mem::size_of::<T>().max(1) as isize
}
