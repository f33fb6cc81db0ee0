//! Unary maps ([`map`], [`MapSource`]): one vectorised loop per map (a
//! [`Fill`]) applied to contiguous runs by paths compiled once per element
//! type: the contiguous (parallel) path, memory order for transposes, row
//! by row for views with a contiguous last axis, and the parallel split
//! along the first axis shared with the broadcast maps.

use super::CHUNK;
use super::row_major::contiguous;
use super::simd::{Isa, fill1_best, fill1_best_on};
use super::strided::{Extent, MAX_ROW_AXES, MIN_ROW, each_row2};
use crate::{Float, PARALLEL_THRESHOLD};
use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn, ShapeBuilder};
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
    /// The elements, each run of contiguous ones mapped by `fill`.
    fn map_fill(self, fill: &Fill<'_, T>) -> Self::Out;
}

impl<T: Float> MapSource<T> for ArrayViewD<'_, T> {
    type Out = ArrayD<T>;
    fn map_fill(self, fill: &Fill<'_, T>) -> ArrayD<T> {
        if let Some(s) = self.as_slice() {
            return crate::owned(self.raw_dim(), fill_all(s, fill));
        }
        strided(&self, fill)
    }
}

impl<T: Float> MapSource<T> for &[T] {
    type Out = Vec<T>;
    fn map_fill(self, fill: &Fill<'_, T>) -> Vec<T> {
        fill_all(self, fill)
    }
}

/// A unary map's innermost loop: `f` of every element of a contiguous run
/// (the second argument) into the destination (the first), of one length.
/// Every path of a map calls it once per run (a `dyn` call, not one per
/// element), so each map compiles its vectorised loop once, whatever the
/// source's layout, and the paths around it once per element type.
pub type Fill<'a, T> = dyn Fn(&mut [MaybeUninit<T>], &[T]) + Sync + 'a;

/// The [`Fill`] of `f`: one vectorised loop (with AVX2 and AVX-512 copies
/// chosen at run time).
///
/// ```
/// use nabla_kernels::elementwise::{filler, MapSource};
/// let v: Vec<f32> = (&[1.0f32, 2.0][..]).map_fill(&filler(|v: f32| v * 10.0));
/// assert_eq!(v, vec![10.0, 20.0]);
/// ```
pub fn filler<T: Float, F: Fn(T) -> T + Sync>(f: F) -> impl Fn(&mut [MaybeUninit<T>], &[T]) + Sync {
    move |d, s| fill1_best(d, s, &f)
}

/// [`filler`] running `isa`'s copy of the loop.
pub(crate) fn filler_on<T: Float, F: Fn(T) -> T + Sync>(
    isa: Isa,
    f: F,
) -> impl Fn(&mut [MaybeUninit<T>], &[T]) + Sync {
    move |d, s| fill1_best_on(isa, d, s, &f)
}

/// Maps `f` over `x`, with a contiguous (vectorising, parallel) fast path.
pub fn map<T: Float, F: Fn(T) -> T + Sync + Send>(x: ArrayViewD<'_, T>, f: F) -> ArrayD<T> {
    x.map_fill(&filler(f))
}

/// [`map`] over a view that is not one row-major slice. A view whose
/// elements fill one block of memory in another order (a transpose) maps
/// that block and keeps its strides, as NumPy's ufuncs keep the memory
/// order; otherwise the map runs in parallel along the first axis when
/// large, row by row when the last axis is contiguous, else over a
/// row-major copy.
fn strided<T: Float>(x: &ArrayViewD<'_, T>, fill: &Fill<'_, T>) -> ArrayD<T> {
    if let Some(s) = x.as_slice_memory_order()
        && x.strides().iter().all(|&st| st >= 0)
    {
        let strides: Vec<usize> = x.strides().iter().map(|&st| st as usize).collect();
        return ArrayD::from_shape_vec(x.raw_dim().strides(IxDyn(&strides)), fill_all(s, fill))
            .expect("the view's own shape and strides");
    }
    if x.len() >= PARALLEL_THRESHOLD {
        return par_outer(x.shape(), |i, d| {
            let piece = x.index_axis(Axis(0), i);
            match piece.as_slice() {
                Some(s) => fill(d, s),
                None => fill(d, contiguous(&piece).as_slice().expect("contiguous")),
            }
        });
    }
    if let Some(out) = by_rows1(x, fill) {
        return out;
    }
    let c = contiguous(x);
    crate::owned(
        c.raw_dim(),
        fill_all(c.as_slice().expect("contiguous"), fill),
    )
}

/// `fill` over all of `s` into a new vector, in parallel chunks above
/// [`PARALLEL_THRESHOLD`].
fn fill_all<T: Float>(s: &[T], fill: &Fill<'_, T>) -> Vec<T> {
    let n = s.len();
    if n >= PARALLEL_THRESHOLD {
        return crate::parallel::filled(n, CHUNK, |c, d| {
            fill(d, &s[c * CHUNK..c * CHUNK + d.len()])
        });
    }
    let mut out: Vec<T> = Vec::with_capacity(n);
    fill(&mut out.spare_capacity_mut()[..n], s);
    // SAFETY: `fill` wrote all `n` slots.
    unsafe { out.set_len(n) };
    out
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
fn by_rows1<T: Float>(x: &ArrayViewD<'_, T>, fill: &Fill<'_, T>) -> Option<ArrayD<T>> {
    if !row_eligible(x) {
        return None;
    }
    let nd = x.ndim();
    let (n, w) = (x.len(), x.shape()[nd - 1]);
    let mut out: Vec<T> = Vec::with_capacity(n);
    {
        let mut rows = out.spare_capacity_mut()[..n].chunks_mut(w);
        let (p, st) = (x.as_ptr(), &x.strides()[..nd - 1]);
        let extent = Extent::of_view(x);
        each_row2(&x.shape()[..nd - 1], st, st, |o, _| {
            debug_assert!(extent.holds(o, w, 1), "by_rows1: row at {o} of {w}");
            // SAFETY: `o` is the offset of a row of `x`, whose `w` elements
            // are contiguous (last stride 1) and inside the view.
            let row = unsafe { std::slice::from_raw_parts(p.offset(o), w) };
            fill(rows.next().expect("one chunk per row"), row);
        });
    }
    // SAFETY: `each_row2` visited every row, so all `n` slots were written.
    unsafe { out.set_len(n) };
    Some(crate::owned(x.raw_dim(), out))
}
