//! The pullback pass that writes each cotangent element once: operands
//! that read one buffer at nearby offsets (`x[..n-1]` and `x[1..]` of
//! Rosenbrock) have their cotangents *gathered* per output element,
//! `x̄[i] = Σₖ gₖ[i − dₖ]`, instead of scattered into a cleared buffer
//! and read back. Each output buffer is written front to back, once, and
//! never read.
//!
//! Two phases per stretch of [`STRETCH`] elements: the region's VJP, block
//! by block, stores each operand's cotangents in a small staging buffer
//! (behind the last [`HISTORY`] of the stretch before); then each output
//! buffer's elements are summed from the staging buffers at their
//! operands' offsets. Nothing read was stored just before (an addition
//! into `x̄[i + 1]` right after one into `x̄[i]` stalls the CPU's
//! store-to-load forwarding), and the staging buffers stay in L1 cache.
//!
//! It applies when, for every buffer, the operands' offsets lie within
//! [`HISTORY`] of each other; the scatter pass in `pass.rs` takes the
//! other cases.

use super::lanes::{LANES, Lanes};
use super::parts;
use super::pass::{Dest, Src, accumulate, dispatch, load_all, pairwise};
use super::{Kernel, Region};
use nabla_kernels::parallel::for_each;

/// Elements per stretch: a multiple of [`LANES`] that divides
/// [`parts::CHUNK`], so stretches never straddle a chunk's partial sum.
const STRETCH: usize = 256;
/// Elements of the previous stretch kept in front of each staging buffer:
/// how far apart a buffer's operands' offsets may be.
pub(super) const HISTORY: usize = 2 * LANES;
const _: () = assert!(parts::CHUNK.is_multiple_of(STRETCH) && STRETCH.is_multiple_of(LANES));
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

impl<const N: usize> Layout<'_, N> {
    /// Whether every buffer's operands lie within [`HISTORY`] of each
    /// other.
    pub fn gathers(&self) -> bool {
        self.lo
            .iter()
            .zip(self.hi)
            .all(|(&lo, &hi)| lo == usize::MAX || hi - lo <= HISTORY)
    }
}

/// What one part of the pass writes: a piece per buffer it writes, and
/// each chunk's sum of the region when the pass sums it too.
struct PartOut<'a, T> {
    pieces: Vec<Option<parts::Piece<'a, T>>>,
    sums: Option<Vec<f64>>,
}

/// The pass over the `n` elements: the filled buffers (`None` for an
/// argument that no operand writes in place) and, when `sum` is asked,
/// the per-chunk sums of the region in order.
pub(super) fn run<R: Region<N>, const N: usize, T: Kernel>(
    src: &[Src<'_, T>; N],
    ct: Src<'_, T>,
    n: usize,
    layout: &Layout<'_, N>,
    written: &[bool],
    sum: bool,
) -> (Vec<Option<Vec<T>>>, Vec<f64>) {
    let ranges = parts::split(n);
    let mut buffers: Vec<Option<parts::Buffer<T>>> = written
        .iter()
        .zip(layout.lens)
        .map(|(&w, &len)| w.then(|| parts::Buffer::new(len)))
        .collect();
    let mut sums = Vec::new();
    let full = {
        let mut outs: Vec<PartOut<'_, T>> = ranges
            .iter()
            .map(|_| PartOut {
                pieces: Vec::new(),
                sums: sum.then(Vec::new),
            })
            .collect();
        for (b, buf) in buffers.iter_mut().enumerate() {
            // Part p writes the outputs of its elements: from its first
            // element plus the buffer's lowest offset on.
            let cuts: Vec<usize> = ranges[1..]
                .iter()
                .map(|r| (r.start + layout.lo[b].min(layout.lens[b])).min(layout.lens[b]))
                .collect();
            let mut pieces: Vec<Option<parts::Piece<'_, T>>> = match buf {
                Some(buf) => buf.pieces(&cuts).into_iter().map(Some).collect(),
                None => ranges.iter().map(|_| None).collect(),
            };
            for (p, o) in outs.iter_mut().enumerate() {
                o.pieces.push(pieces[p].take());
            }
        }
        let outs: Vec<Mutex<PartOut<'_, T>>> = outs.into_iter().map(Mutex::new).collect();
        let last = ranges.len() - 1;
        for_each(ranges.len(), |p| {
            let mut o = outs[p].lock().expect("one part per lock");
            let r = ranges[p].clone();
            dispatch!(body::<R, N, T>(src, ct, r, p == last, layout, &mut o));
        });
        let mut full = vec![true; written.len()];
        for o in outs {
            let o = o.into_inner().expect("parts finished");
            sums.extend(o.sums.iter().flatten());
            for (b, piece) in o.pieces.iter().enumerate() {
                if let Some(piece) = piece {
                    full[b] &= piece.is_full();
                }
            }
        }
        full
    };
    let done = buffers
        .into_iter()
        .zip(&full)
        .map(|(b, &f)| b.map(|b| b.finish(f)))
        .collect();
    (done, sums)
}

/// One part: stretch by stretch, the region's VJP into the staging
/// buffers, then each buffer's outputs gathered from them.
#[inline(always)]
fn body<R: Region<N>, const N: usize, T: Kernel>(
    src: &[Src<'_, T>; N],
    ct: Src<'_, T>,
    range: Range<usize>,
    last: bool,
    layout: &Layout<'_, N>,
    out: &mut PartOut<'_, T>,
) {
    let PartOut { pieces, sums } = out;
    let mut x = [Lanes::splat(T::ZERO); N];
    let mut c = Lanes::splat(T::ZERO);
    // Operand k's cotangents at elements s − HISTORY .. s + STRETCH, s the
    // stretch's first element.
    let mut stage = vec![[T::ZERO; HISTORY + STRETCH]; N];
    // Where buffer b's output s + lo + j reads operand k's staging buffer:
    // at `from[k] + j`.
    let from: [usize; N] =
        std::array::from_fn(|k| HISTORY + layout.lo[layout.dests[k].buf] - layout.dests[k].offset);
    if range.start == 0 {
        // Below every operand's offset nothing lands.
        for (b, piece) in pieces.iter_mut().enumerate() {
            if let Some(piece) = piece {
                piece.zero_to(layout.lo[b], T::ZERO);
            }
        }
    } else if range.start < range.end {
        // The previous part's last elements, for the outputs this part
        // shares with it.
        for q in 0..HISTORY / LANES {
            let t0 = range.start - HISTORY + q * LANES;
            load_all(src, t0, LANES, &mut x);
            ct.load_into(t0, LANES, &mut c);
            let g = R::scalar_vjp(&x, &c);
            for (st, g) in stage.iter_mut().zip(&g) {
                st[STRETCH + q * LANES..][..LANES].copy_from_slice(&g.0);
            }
        }
    }
    let mut acc = [0.0f64; LANES];
    let mut s = range.start;
    while s < range.end {
        let len = STRETCH.min(range.end - s);
        for st in stage.iter_mut() {
            st.copy_within(STRETCH.., 0);
        }
        let mut t0 = s;
        while t0 < s + len {
            let l = LANES.min(s + len - t0);
            load_all(src, t0, l, &mut x);
            if sums.is_some() {
                accumulate(&mut acc, &R::scalar(&x), l);
            }
            ct.load_into(t0, l, &mut c);
            let g = R::scalar_vjp(&x, &c);
            let at = HISTORY + t0 - s;
            for (st, g) in stage.iter_mut().zip(&g) {
                if l == LANES {
                    st[at..at + LANES].copy_from_slice(&g.0);
                } else {
                    st[at..at + l].copy_from_slice(&g.0[..l]);
                }
            }
            t0 += LANES;
        }
        if len < STRETCH {
            // Past the last element nothing lands.
            for st in stage.iter_mut() {
                st[HISTORY + len..].fill(T::ZERO);
            }
        }
        gather(&stage, &from, layout.dests, STRETCH, pieces);
        s += len;
        if let Some(sums) = sums
            && ((s - range.start).is_multiple_of(parts::CHUNK) || s == range.end)
        {
            sums.push(pairwise(&acc));
            acc = [0.0; LANES];
        }
    }
    if last {
        // The outputs past the last element's stretch, then zeros.
        for st in stage.iter_mut() {
            st.copy_within(STRETCH.., 0);
            st[HISTORY..].fill(T::ZERO);
        }
        gather(&stage, &from, layout.dests, HISTORY, pieces);
        for piece in pieces.iter_mut().flatten() {
            let len = piece.len();
            piece.zero_to(len, T::ZERO);
        }
    }
}

/// Each written buffer's next `len` outputs (at most as many as its piece
/// has room for): the sum over its operands of their staged cotangents,
/// each read from its own offset.
#[inline(always)]
fn gather<T: Kernel, const N: usize>(
    stage: &[[T; HISTORY + STRETCH]],
    from: &[usize; N],
    dests: &[Dest; N],
    len: usize,
    pieces: &mut [Option<parts::Piece<'_, T>>],
) {
    for (b, piece) in pieces.iter_mut().enumerate() {
        let Some(piece) = piece else { continue };
        let mut o = [T::ZERO; STRETCH];
        for k in 0..N {
            if dests[k].buf == b {
                let w: &[T; STRETCH] = stage[k][from[k]..from[k] + STRETCH]
                    .try_into()
                    .expect("a stretch");
                for (o, v) in o.iter_mut().zip(w) {
                    *o += *v;
                }
            }
        }
        if len == STRETCH && piece.len() - piece.filled() >= STRETCH {
            piece.push_block(&o);
        } else {
            piece.push_upto(&o[..len]);
        }
    }
}
