//! The pullback pass: each operand's cotangent is added into its
//! argument's cotangent buffer at the operand's offset (cleared chunk by
//! chunk just ahead of the additions). Additions that land past a part's
//! piece (a slice offset reaching into the next part's elements) go to a
//! small halo added in once the parts are done.

use super::lanes::LANES;
use super::parts::{self, PartOut};
use super::reader::Reader;
use super::region::{Kernel, Region};
use super::simd::{Dest, Src, accumulate, dispatch, pairwise};
use std::ops::Range;

/// Where a pass writes: per buffer, its length and the smallest and
/// largest offset at which an operand's cotangent lands in it.
pub(crate) struct Layout<'a, const N: usize> {
    pub dests: &'a [Dest; N],
    pub lens: &'a [usize],
    pub lo: &'a [usize],
    pub hi: &'a [usize],
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
    parts::pullback(n, layout.lens, layout.lo, written, sum, &|r, _, o| {
        dispatch!(vjp_body::<R, N, T>(src, ct, r, layout, o))
    })
}

/// One part of the pullback pass: the region's VJP over `range`, each
/// operand's cotangent added into its buffer's piece.
#[inline(always)]
fn vjp_body<R: Region<N>, const N: usize, T: Kernel>(
    src: &[Src<'_, T>; N],
    ct: Src<'_, T>,
    range: Range<usize>,
    layout: &Layout<'_, N>,
    out: &mut PartOut<'_, T>,
) {
    let PartOut {
        pieces,
        starts,
        halos,
        sums,
    } = out;
    let Layout { dests, lo, hi, .. } = *layout;
    // What lands past a piece: at most the buffer's spread of offsets.
    for (b, halo) in halos.iter_mut().enumerate() {
        if pieces[b].is_some() {
            *halo = vec![T::ZERO; hi[b] - lo[b]];
        }
    }
    let rd = Reader::new(src, range.end);
    let cr = Reader::new(&[ct], range.end);
    let mut start = range.start;
    while start < range.end {
        let end = range.end.min(start + parts::CHUNK);
        // The pieces grow to cover this chunk's additions.
        for (b, piece) in pieces.iter_mut().enumerate() {
            if let Some(piece) = piece {
                piece.zero_to(hi[b] + end - starts[b], T::ZERO);
            }
        }
        let mut acc = [0.0f64; LANES];
        let mut t0 = start;
        while t0 < end {
            let len = LANES.min(end - t0);
            let (x, [c]) = if len == LANES {
                (rd.block(t0), cr.block(t0))
            } else {
                (rd.partial(t0, len), cr.partial(t0, len))
            };
            if sums.is_some() {
                accumulate(&mut acc, &R::scalar(&x), len);
            }
            let g = R::scalar_vjp(&x, &c);
            for (d, g) in dests.iter().zip(&g) {
                let piece = pieces[d.buf].as_mut().expect("a written buffer");
                let at = d.offset + t0 - starts[d.buf];
                if at + len <= piece.len() {
                    for (o, v) in piece.init_mut(at..at + len).iter_mut().zip(&g.0[..len]) {
                        *o += *v;
                    }
                } else {
                    // The part's last block: what lands past its piece goes
                    // to the halo.
                    for (q, v) in g.0[..len].iter().enumerate() {
                        let i = at + q;
                        if i < piece.len() {
                            piece.init_mut(i..i + 1)[0] += *v;
                        } else {
                            halos[d.buf][i - piece.len()] += *v;
                        }
                    }
                }
            }
            t0 += LANES;
        }
        if let Some(sums) = sums {
            sums.push(pairwise(&acc));
        }
        start = end;
    }
    for piece in pieces.iter_mut().flatten() {
        let len = piece.len();
        piece.zero_to(len, T::ZERO);
    }
}
