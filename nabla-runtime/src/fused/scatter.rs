//! The pullback pass: each operand's cotangent is added into its
//! argument's cotangent buffer at the operand's offset (cleared chunk by
//! chunk just ahead of the additions). Additions that land past a part's
//! piece (a slice offset reaching into the next part's elements) go to a
//! small halo added in once the parts are done.

use super::lanes::LANES;
use super::parts;
use super::pass::{Dest, Src, accumulate, dispatch, pairwise};
use super::reader::Reader;
use super::{Kernel, Region};
use nabla_kernels::parallel::for_each;
use std::ops::Range;
use std::sync::Mutex;

/// Where a pass writes: per buffer, its length and the smallest and
/// largest offset at which an operand's cotangent lands in it.
pub(super) struct Layout<'a, const N: usize> {
    pub dests: &'a [Dest; N],
    pub lens: &'a [usize],
    pub lo: &'a [usize],
    pub hi: &'a [usize],
}

/// What one part of a pullback pass writes: per buffer its piece (if the
/// pass writes that buffer), where the piece starts in the buffer, and
/// the additions that land past the piece's end (in the next part's
/// piece; added in once the parts are done).
struct PartOut<'a, T> {
    pieces: Vec<Option<parts::Piece<'a, T>>>,
    starts: Vec<usize>,
    halos: Vec<Vec<T>>,
    /// Each chunk's sum of the region, when the pass also sums it.
    sums: Option<Vec<f64>>,
}

/// The pullback pass over the `n` elements: the filled buffers (`None`
/// for an argument that no operand writes in place) and, when `sum` is
/// asked, the per-chunk sums of the region in order.
pub(super) fn run<R: Region<N>, const N: usize, T: Kernel>(
    src: &[Src<'_, T>; N],
    c: Src<'_, T>,
    n: usize,
    layout: &Layout<'_, N>,
    written: &[bool],
    sum: bool,
) -> (Vec<Option<Vec<T>>>, Vec<f64>) {
    let Layout {
        dests,
        lens,
        lo,
        hi,
    } = *layout;
    let ranges = parts::split(n);
    let mut buffers: Vec<Option<parts::Buffer<T>>> = written
        .iter()
        .zip(lens)
        .map(|(&w, &len)| w.then(|| parts::Buffer::new(len)))
        .collect();
    let mut halos: Vec<(usize, usize, Vec<T>)> = Vec::new();
    let mut sums: Vec<f64> = Vec::new();
    let full = {
        let mut outs: Vec<PartOut<'_, T>> = ranges
            .iter()
            .map(|_| PartOut {
                pieces: Vec::new(),
                starts: Vec::new(),
                halos: Vec::new(),
                sums: sum.then(Vec::new),
            })
            .collect();
        for (b, buf) in buffers.iter_mut().enumerate() {
            // A piece per part, cut where the next part's first addition lands.
            let cuts: Vec<usize> = ranges[1..]
                .iter()
                .map(|r| r.start.saturating_add(lo[b]).min(lens[b]))
                .collect();
            let mut pieces: Vec<Option<parts::Piece<'_, T>>> = match buf {
                Some(buf) => buf.pieces(&cuts).into_iter().map(Some).collect(),
                None => ranges.iter().map(|_| None).collect(),
            };
            for (p, o) in outs.iter_mut().enumerate() {
                o.pieces.push(pieces[p].take());
                o.starts.push(if p == 0 { 0 } else { cuts[p - 1] });
                o.halos.push(vec![T::ZERO; hi[b].saturating_sub(lo[b])]);
            }
        }
        let outs: Vec<Mutex<PartOut<'_, T>>> = outs.into_iter().map(Mutex::new).collect();
        for_each(ranges.len(), |p| {
            let mut o = outs[p].lock().expect("one part per lock");
            dispatch!(vjp_body::<R, N, T>(
                src,
                c,
                ranges[p].clone(),
                dests,
                hi,
                &mut o
            ));
        });
        let mut full = vec![true; lens.len()];
        for (p, o) in outs.into_iter().enumerate() {
            let mut o = o.into_inner().expect("parts finished");
            sums.extend(o.sums.iter().flatten());
            for (b, piece) in o.pieces.iter().enumerate() {
                if let Some(piece) = piece {
                    full[b] &= piece.is_full();
                    if p + 1 < ranges.len() && !o.halos[b].is_empty() {
                        halos.push((
                            b,
                            o.starts[b] + piece.len(),
                            std::mem::take(&mut o.halos[b]),
                        ));
                    }
                }
            }
        }
        full
    };
    let mut done: Vec<Option<Vec<T>>> = buffers
        .into_iter()
        .zip(&full)
        .map(|(b, &f)| b.map(|b| b.finish(f)))
        .collect();
    for (b, at, halo) in halos {
        let buf = done[b].as_mut().expect("a written buffer");
        let end = buf.len().min(at + halo.len());
        for (o, v) in buf[at.min(end)..end].iter_mut().zip(&halo) {
            *o += *v;
        }
    }
    (done, sums)
}

/// One part of the pullback pass: the region's VJP over `range`, each
/// operand's cotangent added into its buffer's piece.
#[inline(always)]
fn vjp_body<R: Region<N>, const N: usize, T: Kernel>(
    src: &[Src<'_, T>; N],
    ct: Src<'_, T>,
    range: Range<usize>,
    dests: &[Dest; N],
    hi: &[usize],
    out: &mut PartOut<'_, T>,
) {
    let PartOut {
        pieces,
        starts,
        halos,
        sums,
    } = out;
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
