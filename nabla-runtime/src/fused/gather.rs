//! The pullback pass for operands that lie close together in one buffer
//! (Rosenbrock's `x[..n-1]` and `x[1..]`): each element of a cotangent
//! buffer is written once, as the sum of the operands' cotangents that
//! land on it, instead of being cleared and then added to operand by
//! operand.
//!
//! A part of the pass works through its elements [`STAGE`] at a time.
//! For each stage it first evaluates the region's VJP block by block into
//! one staging row per operand (a few KiB, in L1 cache), then writes each
//! buffer's window of the stage: element `j` is the sum of operand `k`'s
//! cotangent at `j - offset_k` over the operands that land there. The row
//! keeps the previous stage's last [`SPREAD`] elements in front of the
//! current ones, so an operand up to `SPREAD` elements further into the
//! buffer than its neighbour reads them from there. What a part's last
//! elements add past its window lands in the next part's piece: it goes
//! to a small halo, added in once every part is done.

use super::lanes::{LANES, Lanes};
use super::parts::{self, PartOut};
use super::reader::Reader;
use super::region::{Kernel, Region};
use super::scatter::Layout;
use super::simd::{Dest, Src, accumulate, add_lanes, dispatch, pairwise};
use std::ops::Range;

/// Elements per stage (a whole number of blocks).
const STAGE: usize = 256;

/// How far apart (in elements) the operands written into one buffer may
/// start for this pass; wider layouts take the scatter pass.
pub(crate) const SPREAD: usize = 64;

/// Blocks per staging row: the carried `SPREAD` elements and a stage.
const ROW: usize = (SPREAD + STAGE) / LANES;

/// Whether every written buffer's operands start within [`SPREAD`]
/// elements of each other.
pub(crate) fn applies<const N: usize>(layout: &Layout<'_, N>, written: &[bool]) -> bool {
    (0..layout.lens.len()).all(|b| !written[b] || layout.hi[b] - layout.lo[b] <= SPREAD)
}

/// The pullback pass over the `n` elements: the filled buffers (`None`
/// for an argument that no operand writes in place) and, when `sum` is
/// asked, the per-chunk sums of the region in order.
pub(crate) fn run<R: Region<N>, const N: usize, T: Kernel>(
    src: &[Src<'_, T>; N],
    ct: Src<'_, T>,
    n: usize,
    layout: &Layout<'_, N>,
    written: &[bool],
    sum: bool,
) -> (Vec<Option<Vec<T>>>, Vec<f64>) {
    parts::pullback(n, layout.lens, layout.lo, written, sum, &|r, last, o| {
        dispatch!(body::<R, N, T>(src, ct, r, last, layout, o))
    })
}

/// One part of the pass: the region's VJP over `range`, stage by stage.
#[inline(always)]
fn body<R: Region<N>, const N: usize, T: Kernel>(
    src: &[Src<'_, T>; N],
    ct: Src<'_, T>,
    range: Range<usize>,
    last: bool,
    layout: &Layout<'_, N>,
    out: &mut PartOut<'_, T>,
) {
    let PartOut {
        pieces,
        halos,
        sums,
        ..
    } = out;
    let Layout { dests, lo, hi, .. } = *layout;
    let rd = Reader::new(src, range.end);
    let cr = Reader::new(&[ct], range.end);
    // Per operand: the previous stage's last SPREAD cotangents, then this
    // stage's, block by block.
    let mut rows = [[[T::ZERO; LANES]; ROW]; N];
    // Where a window's first element reads each operand's row.
    let from: [usize; N] = std::array::from_fn(|k| SPREAD + lo[dests[k].buf] - dests[k].offset);
    // How many of a stage's last elements a later window reads.
    let keep = (0..lo.len())
        .filter(|&b| pieces[b].is_some())
        .map(|b| hi[b] - lo[b])
        .max()
        .unwrap_or(0);
    if range.start == 0 {
        // No operand lands below its buffer's lowest offset.
        for (b, piece) in pieces.iter_mut().enumerate() {
            if let Some(piece) = piece {
                piece.zero_to(lo[b], T::ZERO);
            }
        }
    }
    let mut start = range.start;
    while start < range.end {
        let end = range.end.min(start + parts::CHUNK);
        let mut acc = [0.0f64; LANES];
        let mut s0 = start;
        while s0 < end {
            let s1 = end.min(s0 + STAGE);
            let mut t0 = s0;
            while t0 + LANES <= s1 {
                let x = rd.block(t0);
                let [c] = cr.block(t0);
                stage::<R, N, T>(&x, &c, &mut rows, (t0 - s0) / LANES);
                if sums.is_some() {
                    acc = add_lanes(acc, &R::scalar(&x));
                }
                t0 += LANES;
            }
            if t0 < s1 {
                let len = s1 - t0;
                let x = rd.partial(t0, len);
                let [c] = cr.partial(t0, len);
                stage::<R, N, T>(&x, &c, &mut rows, (t0 - s0) / LANES);
                if sums.is_some() {
                    accumulate(&mut acc, &R::scalar(&x), len);
                }
            }
            let len = s1 - s0;
            for (b, piece) in pieces.iter_mut().enumerate() {
                if let Some(piece) = piece {
                    emit(piece, &rows, &from, dests, b, len);
                }
            }
            // Carry the elements the next windows read from this stage.
            for row in rows.iter_mut() {
                row.as_flattened_mut()
                    .copy_within(len + SPREAD - keep..len + SPREAD, SPREAD - keep);
            }
            s0 = s1;
        }
        if let Some(sums) = sums {
            sums.push(pairwise(&acc));
        }
        start = end;
    }
    // Past the last window: what the part's last elements add further
    // into each buffer (nothing comes from beyond the part).
    for row in rows.iter_mut() {
        row.as_flattened_mut()[SPREAD..2 * SPREAD].fill(T::ZERO);
    }
    for (b, piece) in pieces.iter_mut().enumerate() {
        let Some(piece) = piece else { continue };
        let len = hi[b] - lo[b];
        let mut tail = vec![T::ZERO; len];
        for_each_operand(&rows, &from, dests, b, len, |v| {
            for (o, v) in tail.iter_mut().zip(v) {
                *o += *v;
            }
        });
        if last {
            piece.push(&tail);
            let end = piece.len();
            piece.zero_to(end, T::ZERO);
        } else if range.start < range.end {
            halos[b] = tail;
        }
    }
}

/// The region's VJP on one block of operands `x` and cotangents `c`, into
/// each operand's row at block `at` of the stage.
#[inline(always)]
fn stage<R: Region<N>, const N: usize, T: Kernel>(
    x: &[Lanes<T>; N],
    c: &Lanes<T>,
    rows: &mut [[[T; LANES]; ROW]; N],
    at: usize,
) {
    let g = R::scalar_vjp(x, c);
    for (row, g) in rows.iter_mut().zip(&g) {
        row[SPREAD / LANES + at] = g.0;
    }
}

/// Writes buffer `b`'s window of `len` elements at the end of its piece:
/// the sum of the cotangents of the operands written into it.
#[inline(always)]
fn emit<T: Kernel, const N: usize>(
    piece: &mut parts::Piece<'_, T>,
    rows: &[[[T; LANES]; ROW]; N],
    from: &[usize; N],
    dests: &[Dest; N],
    b: usize,
    len: usize,
) {
    let mut ks = [0; N];
    let mut m = 0;
    for (k, d) in dests.iter().enumerate() {
        if d.buf == b {
            ks[m] = k;
            m += 1;
        }
    }
    let row = |i: usize| &rows[ks[i]].as_flattened()[from[ks[i]]..from[ks[i]] + len];
    let at = piece.filled();
    if m == 1 {
        piece.push_with(row(0), |v| v);
        return;
    }
    let first = row(0);
    piece.push_zip(first, row(1), |a, b| a + b);
    for i in 2..m {
        for (o, v) in piece.init_mut(at..at + len).iter_mut().zip(row(i)) {
            *o += *v;
        }
    }
}

/// Calls `f` with the `len` cotangents that buffer `b`'s window gets from
/// each operand written into it, in operand order.
#[inline(always)]
fn for_each_operand<T, const N: usize>(
    rows: &[[[T; LANES]; ROW]; N],
    from: &[usize; N],
    dests: &[Dest; N],
    b: usize,
    len: usize,
    mut f: impl FnMut(&[T]),
) {
    for k in 0..N {
        if dests[k].buf == b {
            f(&rows[k].as_flattened()[from[k]..from[k] + len]);
        }
    }
}
