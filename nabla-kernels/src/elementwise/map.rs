//! Unary maps ([`map`]): the contiguous (vectorised, parallel) path, the
//! row-by-row path for views with a contiguous last axis, and the parallel
//! split along the first axis shared with the broadcast maps.

use super::CHUNK;
use super::row_major::contiguous;
use super::simd::fill1_best;
use super::strided::{MAX_ROW_AXES, MIN_ROW, each_row2};
use crate::parallel::chunks_mut;
use crate::{Float, PARALLEL_THRESHOLD};
use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn};
use std::mem::MaybeUninit;

/// What a unary map reads: an ndarray view in any layout (the result is
/// an array of its shape) or row-major elements (the result is theirs, in
/// the same order), which skips building and checking an ndarray layout.
///
/// ```
/// use nabla_kernels::elementwise::{unary, UnaryOp};
/// let v: Vec<f64> = unary(&[-1.0f64, 2.0][..], UnaryOp::Relu());
/// assert_eq!(v, vec![0.0, 2.0]);
/// ```
pub trait MapSource<T: Float> {
    /// The mapped elements.
    type Out;
    /// `f` of every element.
    fn map_with<F: Fn(T) -> T + Sync + Send>(self, f: F) -> Self::Out;
}

impl<T: Float> MapSource<T> for ArrayViewD<'_, T> {
    type Out = ArrayD<T>;
    #[inline]
    fn map_with<F: Fn(T) -> T + Sync + Send>(self, f: F) -> ArrayD<T> {
        map(self, f)
    }
}

impl<T: Float> MapSource<T> for &[T] {
    type Out = Vec<T>;
    #[inline]
    fn map_with<F: Fn(T) -> T + Sync + Send>(self, f: F) -> Vec<T> {
        map_slice(self, &f)
    }
}

/// Maps `f` over `x`, with a contiguous (vectorising, parallel) fast path.
pub fn map<T: Float, F: Fn(T) -> T + Sync + Send>(x: ArrayViewD<'_, T>, f: F) -> ArrayD<T> {
    if let Some(s) = x.as_slice() {
        let out = map_slice(s, &f);
        return crate::owned(x.raw_dim(), out);
    }
    if x.len() >= PARALLEL_THRESHOLD {
        par_outer(x.shape(), |i, d| {
            for (d, &v) in d.iter_mut().zip(x.index_axis(Axis(0), i).iter()) {
                d.write(f(v));
            }
        })
    } else if let Some(out) = by_rows1(&x, &f) {
        out
    } else if x.len() <= SMALL {
        // Small and strided: gather, then the contiguous loop.
        let c = contiguous(&x);
        let out = map_slice(c.as_slice().expect("contiguous"), &f);
        crate::owned(c.raw_dim(), out)
    } else {
        x.mapv(f)
    }
}

/// A large strided result computed in parallel, one piece per index of
/// the first axis; `fill(i, piece)` writes entry `i` in logical order.
pub(crate) fn par_outer<T: Float>(
    shape: &[usize],
    fill: impl Fn(usize, &mut [MaybeUninit<T>]) + Sync,
) -> ArrayD<T> {
    let n: usize = shape.iter().product();
    let inner = n / shape[0].max(1);
    crate::owned(IxDyn(shape), crate::parallel::filled(n, inner, fill))
}

/// Whether a view of `ndim ≥ 2` axes is worth a per-row loop: a contiguous
/// last axis of at least [`MIN_ROW`] elements and few enough axes for
/// [`each_row2`].
fn row_eligible<T>(v: &ArrayViewD<'_, T>) -> bool {
    let nd = v.ndim();
    (2..=MAX_ROW_AXES).contains(&nd) && v.shape()[nd - 1] >= MIN_ROW && v.strides()[nd - 1] == 1
}

/// `f` over `x` row by row, when its last axis is contiguous (a slice or a
/// transpose of the outer axes, e.g. `x[:, 1:]`): one vectorised loop per
/// row instead of ndarray's element-by-element iterator.
fn by_rows1<T: Float, F: Fn(T) -> T>(x: &ArrayViewD<'_, T>, f: &F) -> Option<ArrayD<T>> {
    if !row_eligible(x) {
        return None;
    }
    let nd = x.ndim();
    let (n, w) = (x.len(), x.shape()[nd - 1]);
    let mut out: Vec<T> = Vec::with_capacity(n);
    {
        let mut rows = out.spare_capacity_mut()[..n].chunks_mut(w);
        let (p, st) = (x.as_ptr(), &x.strides()[..nd - 1]);
        each_row2(&x.shape()[..nd - 1], st, st, |o, _| {
            // SAFETY: `o` is the offset of a row of `x`, whose `w` elements
            // are contiguous (last stride 1) and inside the view.
            let row = unsafe { std::slice::from_raw_parts(p.offset(o), w) };
            fill1_best(rows.next().expect("one chunk per row"), row, f);
        });
    }
    // SAFETY: `each_row2` visited every row, so all `n` slots were written.
    unsafe { out.set_len(n) };
    Some(crate::owned(x.raw_dim(), out))
}

/// The most elements a strided unary map gathers into a contiguous copy
/// first; larger ones go through ndarray's `mapv`.
const SMALL: usize = 4096;

fn map_slice<T: Float, F: Fn(T) -> T + Sync + Send>(s: &[T], f: &F) -> Vec<T> {
    let n = s.len();
    let mut out: Vec<T> = Vec::with_capacity(n);
    {
        let dst = &mut out.spare_capacity_mut()[..n];
        if n >= PARALLEL_THRESHOLD {
            chunks_mut(dst, CHUNK, |c, d| {
                let lo = c * CHUNK;
                fill1_best(d, &s[lo..lo + d.len()], f)
            });
        } else {
            fill1_best(dst, s, f);
        }
    }
    // SAFETY: every one of the first `n` slots was written by `fill1`.
    unsafe { out.set_len(n) };
    out
}
