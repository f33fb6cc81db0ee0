//! How a fused pass splits its work between threads: contiguous ranges of
//! whole [`CHUNK`]s of elements, one per thread, each writing its own
//! pieces of the pass's output buffers, initialised front to back as the
//! pass reaches them (so no buffer is cleared in a pass of its own).

use nabla_kernels::parallel::for_each;
use std::mem::MaybeUninit;
use std::ops::Range;
use std::sync::Mutex;

/// Elements per chunk: the unit of a sum's partial results (fixed, so a
/// fused sum does not depend on the number of threads) and of buffer
/// growth.
pub const CHUNK: usize = 4096;

/// Below this many elements a pass runs on the calling thread only.
const PARALLEL_MIN: usize = 1 << 16;

/// The element ranges of a pass over `n` elements: one per thread (at
/// least [`PARALLEL_MIN`] / 2 elements each), in whole chunks.
pub fn split(n: usize) -> Vec<Range<usize>> {
    let parts = if n < PARALLEL_MIN {
        1
    } else {
        (4 * rayon::current_num_threads())
            .max(1)
            .min(n.div_ceil(PARALLEL_MIN / 2))
    };
    let per = n.div_ceil(CHUNK).div_ceil(parts) * CHUNK;
    let ranges: Vec<Range<usize>> = (0..parts)
        .map(|p| (p * per).min(n)..((p + 1) * per).min(n))
        .filter(|r| !r.is_empty())
        .collect();
    if ranges.is_empty() {
        // An empty pass still has one (empty) part.
        std::iter::once(0..0).collect()
    } else {
        ranges
    }
}

/// One empty result list per part of a pass, each behind its own lock.
/// (This and [`joined`] keep the collecting out of the region-generic
/// passes: compiled once per result type, not once per region.)
pub fn slots<X>(parts: usize) -> Vec<Mutex<Vec<X>>> {
    (0..parts).map(|_| Mutex::new(Vec::new())).collect()
}

/// The parts' results in order, once every part is done.
pub fn joined<X>(slots: Vec<Mutex<Vec<X>>>) -> Vec<X> {
    let mut all = Vec::new();
    for m in slots {
        all.extend(m.into_inner().expect("parts finished"));
    }
    all
}

/// A piece of a buffer that one part of a pass writes front to back:
/// elements below `init` are initialised.
pub struct Piece<'a, T> {
    mem: &'a mut [MaybeUninit<T>],
    init: usize,
}

impl<T: Copy> Piece<'_, T> {
    /// The piece's length.
    pub fn len(&self) -> usize {
        self.mem.len()
    }

    /// Writes `zero` up to element `end` (at most the piece's length).
    #[inline(always)]
    pub fn zero_to(&mut self, end: usize, zero: T) {
        let end = end.min(self.mem.len());
        if self.init < end {
            for s in &mut self.mem[self.init..end] {
                s.write(zero);
            }
            self.init = end;
        }
    }

    /// How many elements (from the front) are initialised.
    pub fn filled(&self) -> usize {
        self.init
    }

    /// Appends `vals` after the initialised front.
    #[inline(always)]
    pub fn push(&mut self, vals: &[T]) {
        let end = self.init + vals.len();
        for (s, v) in self.mem[self.init..end].iter_mut().zip(vals) {
            s.write(*v);
        }
        self.init = end;
    }

    /// Appends a whole block.
    #[inline(always)]
    pub fn push_block<const L: usize>(&mut self, vals: &[T; L]) {
        let end = self.init + L;
        let dst: &mut [MaybeUninit<T>; L] = (&mut self.mem[self.init..end])
            .try_into()
            .expect("a block inside the piece");
        for (s, v) in dst.iter_mut().zip(vals) {
            s.write(*v);
        }
        self.init = end;
    }

    /// Appends `f(v)` for each of `vals`.
    #[inline(always)]
    pub fn push_with(&mut self, vals: &[T], f: impl Fn(T) -> T) {
        let end = self.init + vals.len();
        for (s, v) in self.mem[self.init..end].iter_mut().zip(vals) {
            s.write(f(*v));
        }
        self.init = end;
    }

    /// Appends `f(a, b)` for each pair of `a` and `b` (of one length).
    #[inline(always)]
    pub fn push_zip(&mut self, a: &[T], b: &[T], f: impl Fn(T, T) -> T) {
        let end = self.init + a.len();
        for ((s, x), y) in self.mem[self.init..end]
            .iter_mut()
            .zip(a)
            .zip(&b[..a.len()])
        {
            s.write(f(*x, *y));
        }
        self.init = end;
    }

    /// The initialised elements `r`.
    #[inline(always)]
    pub fn init_mut(&mut self, r: Range<usize>) -> &mut [T] {
        assert!(
            r.end <= self.init,
            "a fused pass read an element it had not written"
        );
        let s = &mut self.mem[r];
        // SAFETY: every element below `init` has been written (`zero_to`,
        // `push`), and `MaybeUninit<T>` has the layout of `T`.
        unsafe { &mut *(s as *mut [MaybeUninit<T>] as *mut [T]) }
    }

    /// Whether every element is initialised.
    pub fn is_full(&self) -> bool {
        self.init == self.mem.len()
    }
}

/// An output buffer of a pass, of `len` elements, that the parts fill
/// piece by piece.
pub struct Buffer<T> {
    vec: Vec<T>,
    len: usize,
}

impl<T: Copy> Buffer<T> {
    /// An unwritten buffer of `len` elements.
    pub fn new(len: usize) -> Self {
        Buffer {
            vec: Vec::with_capacity(len),
            len,
        }
    }

    /// The buffer's pieces, cut at `cuts` (ascending, at most `len`).
    pub fn pieces(&mut self, cuts: &[usize]) -> Vec<Piece<'_, T>> {
        let mut rest = &mut self.vec.spare_capacity_mut()[..self.len];
        let mut out = Vec::with_capacity(cuts.len() + 1);
        let mut at = 0;
        for &c in cuts {
            let c = c.clamp(at, self.len);
            let (piece, tail) = rest.split_at_mut(c - at);
            out.push(Piece {
                mem: piece,
                init: 0,
            });
            rest = tail;
            at = c;
        }
        out.push(Piece { mem: rest, init: 0 });
        out
    }

    /// The written buffer. `full` says that every piece was full when the
    /// pieces were dropped; it is checked, not trusted.
    pub fn finish(mut self, full: bool) -> Vec<T> {
        assert!(full, "a fused pass left part of its output unwritten");
        // SAFETY: the pieces cover `0..len` without gaps, and every piece
        // was fully initialised (checked just above).
        unsafe { self.vec.set_len(self.len) };
        self.vec
    }
}

/// What one part of a pullback pass writes: per buffer its piece (if the
/// pass writes that buffer), where the piece starts in the buffer, and
/// the additions that land past the piece's end, in the next part's piece
/// (added in once the parts are done; the last part's are dropped, as
/// nothing lands past a buffer's end).
pub struct PartOut<'a, T> {
    pub pieces: Vec<Option<Piece<'a, T>>>,
    pub starts: Vec<usize>,
    pub halos: Vec<Vec<T>>,
    /// Each chunk's sum of the region, when the pass also sums it.
    pub sums: Option<Vec<f64>>,
}

/// The body of a [`pullback`] pass: fills one part's pieces, given the
/// part's element range and whether it is the last part.
pub type PartBody<'a, T> = dyn Fn(Range<usize>, bool, &mut PartOut<'_, T>) + Sync + 'a;

/// Runs a pullback pass over `n` elements that writes buffers of lengths
/// `lens` (those `written`), in parts: `body(range, last, out)` fills one
/// part's pieces, each buffer's piece starting where the part's first
/// element lands in it (`range.start + lo[b]`, 0 for the first part).
/// Returns the filled buffers (`None` where not written) and, when `sum`
/// is asked, the per-chunk sums in order.
///
/// `body` is called once per part (thousands of elements), behind one
/// indirect call: the set-up here is compiled once per element type, not
/// once per region.
pub fn pullback<T>(
    n: usize,
    lens: &[usize],
    lo: &[usize],
    written: &[bool],
    sum: bool,
    body: &PartBody<'_, T>,
) -> (Vec<Option<Vec<T>>>, Vec<f64>)
where
    T: Copy + Send + std::ops::AddAssign,
{
    let ranges = split(n);
    let last = ranges.len() - 1;
    let mut buffers: Vec<Option<Buffer<T>>> = written
        .iter()
        .zip(lens)
        .map(|(&w, &len)| w.then(|| Buffer::new(len)))
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
            let cuts: Vec<usize> = ranges[1..]
                .iter()
                .map(|r| r.start.saturating_add(lo[b]).min(lens[b]))
                .collect();
            let mut pieces: Vec<Option<Piece<'_, T>>> = match buf {
                Some(buf) => buf.pieces(&cuts).into_iter().map(Some).collect(),
                None => ranges.iter().map(|_| None).collect(),
            };
            for (p, o) in outs.iter_mut().enumerate() {
                o.pieces.push(pieces[p].take());
                o.starts.push(if p == 0 { 0 } else { cuts[p - 1] });
                o.halos.push(Vec::new());
            }
        }
        let outs: Vec<Mutex<PartOut<'_, T>>> = outs.into_iter().map(Mutex::new).collect();
        for_each(ranges.len(), |p| {
            let mut o = outs[p].lock().expect("one part per lock");
            body(ranges[p].clone(), p == last, &mut o);
        });
        let mut full = vec![true; lens.len()];
        for (p, o) in outs.into_iter().enumerate() {
            let o = o.into_inner().expect("parts finished");
            sums.extend(o.sums.iter().flatten());
            for (b, (piece, halo)) in o.pieces.iter().zip(o.halos).enumerate() {
                if let Some(piece) = piece {
                    full[b] &= piece.is_full();
                    if p < last && !halo.is_empty() {
                        halos.push((b, o.starts[b] + piece.len(), halo));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_cover_the_range_in_whole_chunks() {
        for n in [0, 1, 5000, 1 << 16, 1_000_003] {
            let r = split(n);
            assert_eq!(r.first().unwrap().start, 0);
            assert_eq!(r.last().unwrap().end, n);
            for w in r.windows(2) {
                assert_eq!(w[0].end, w[1].start);
                assert_eq!(w[0].end % CHUNK, 0);
            }
        }
    }

    #[test]
    fn pieces_fill_a_buffer() {
        let mut b = Buffer::<f64>::new(10);
        let full = {
            let mut p = b.pieces(&[4, 7]);
            p[0].push(&[1.0, 2.0]);
            p[0].zero_to(4, 0.0);
            p[1].zero_to(10, 0.0);
            p[1].init_mut(0..3)[2] = 5.0;
            p[2].push(&[9.0, 9.0, 9.0]);
            p.iter().all(Piece::is_full)
        };
        assert_eq!(
            b.finish(full),
            vec![1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 5.0, 9.0, 9.0, 9.0]
        );
    }
}
