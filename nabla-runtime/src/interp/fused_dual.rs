//! Fused regions in forward mode: a region called on `Dual<Array>`
//! operands (`jvp`, `jacfwd`) runs as one pass that evaluates the
//! region's float-tier program on blocks of dual numbers,
//! `Dual<Lanes<T>>`, and writes the primal and the tangent together (or,
//! for a region ending in `sum`, sums both). A region's JVP is elementwise
//! like the region, so the same program gives it: each operation's
//! forward-mode rule runs per block, as it would on whole arrays op by
//! op.

use crate::array::count_pass;
use crate::fused::lanes::{LANES, Lanes};
use crate::fused::parts;
use crate::fused::pass::operands;
use crate::fused::reader::Reader;
use crate::fused::region::{Input, Kernel, Region};
use crate::fused::simd::{Operand, Src, accumulate, add_lanes, dispatch, pairwise};
use crate::{Array, DType, Dual};
use nabla_kernels::parallel::for_each;
use std::ops::Range;
use std::sync::Mutex;

/// The region on the dual operands `inputs` of `args` in one pass, when
/// the primals are arrays the fused pass takes and every tangent is a CPU
/// array of its primal's dtype and shape that nothing records; `None`
/// otherwise (the caller runs the region op by op).
pub(crate) fn forward<R: Region<N>, const N: usize, const B: usize>(
    args: [&Dual<Array>; B],
    inputs: &[Input; N],
) -> Option<Dual<Array>> {
    let primals: [&Array; B] = args.map(|d| &d.primal);
    let ops = operands(&primals, inputs)?;
    let dtype = ops[0].dtype();
    let mut tangents: [Option<&Array>; B] = [None; B];
    for (t, d) in tangents.iter_mut().zip(&args) {
        if let Some(dx) = &d.tangent {
            if dx.dtype() != dtype
                || dx.shape() != d.primal.shape()
                || dx.is_tracked()
                || !matches!(
                    &*dx.data,
                    crate::storage::Data::F32(_) | crate::storage::Data::F64(_)
                )
            {
                return None;
            }
            *t = Some(dx);
        }
    }
    // Each operand's tangent: the same argument or slice of its argument's
    // tangent.
    let tops: [Option<Array>; N] = std::array::from_fn(|k| {
        let j = inputs[k].arg();
        tangents[j].map(|dx| match &inputs[k] {
            Input::Arg(_) => dx.clone(),
            Input::Slice { axis, range, .. } => {
                crate::primitives::shape::slice::slice_axis(dx, *axis, range.clone())
            }
        })
    });
    let shape = crate::fused::pass::broadcast(&ops)?;
    Some(match dtype {
        DType::F64 => typed::<R, N, f64>(&ops, &tops, &shape),
        _ => typed::<R, N, f32>(&ops, &tops, &shape),
    })
}

fn typed<R: Region<N>, const N: usize, T: Kernel>(
    ops: &[Array; N],
    tops: &[Option<Array>; N],
    shape: &[usize],
) -> Dual<Array> {
    let n: usize = shape.iter().product();
    let ins = Operand::<T>::all(ops, shape);
    let tins: [Option<Operand<T>>; N] = tangent_operands(tops, shape);
    let src = Operand::srcs(&ins);
    let tsrc: [Option<Src<'_, T>>; N] = tangent_srcs(&tins);
    if tsrc.iter().all(Option::is_none) {
        // No tangent reaches the region: its primal alone.
        let y = crate::fused::pass::forward::<R, N>(ops).expect("operands checked");
        return Dual::constant(y);
    }
    count_pass();
    let ranges = parts::split(n);
    if R::REDUCE {
        // Per chunk, the partial sums of the primal and of the tangent.
        let sums: Vec<Mutex<Vec<(f64, f64)>>> = parts::slots(ranges.len());
        for_each(ranges.len(), |p| {
            let mut out = sums[p].lock().expect("one part per lock");
            dispatch!(reduce_body::<R, N, T>(
                &src,
                &tsrc,
                ranges[p].clone(),
                &mut out
            ));
        });
        let (ys, ts): (Vec<f64>, Vec<f64>) = parts::joined(sums).into_iter().unzip();
        let scale = crate::fused::region::reduce_scale::<R, N>(n);
        let scalar = |s: &[f64]| {
            Array::from_vec(
                vec![<T as nabla_kernels::Float>::from_f64(pairwise(s) * scale)],
                &[],
            )
        };
        return Dual::new(scalar(&ys), Some(scalar(&ts)));
    }
    let mut out = parts::Buffer::<T>::new(n);
    let mut tout = parts::Buffer::<T>::new(n);
    let full = {
        let cuts: Vec<usize> = ranges[1..].iter().map(|r| r.start).collect();
        let pieces: Vec<Mutex<(parts::Piece<'_, T>, parts::Piece<'_, T>)>> = out
            .pieces(&cuts)
            .into_iter()
            .zip(tout.pieces(&cuts))
            .map(Mutex::new)
            .collect();
        for_each(ranges.len(), |p| {
            let mut piece = pieces[p].lock().expect("one part per lock");
            let (y, t) = &mut *piece;
            dispatch!(forward_body::<R, N, T>(
                &src,
                &tsrc,
                ranges[p].clone(),
                y,
                t
            ));
        });
        pieces.iter().all(|m| {
            let piece = m.lock().expect("parts finished");
            piece.0.is_full() && piece.1.is_full()
        })
    };
    Dual::new(
        Array::from_vec(out.finish(full), shape),
        Some(Array::from_vec(tout.finish(full), shape)),
    )
}

/// Each operand's tangent read at the broadcast `shape`, where it has one.
fn tangent_operands<T: Kernel, const N: usize>(
    tops: &[Option<Array>; N],
    shape: &[usize],
) -> [Option<Operand<T>>; N] {
    std::array::from_fn(|k| tops[k].as_ref().map(|t| Operand::of(t, shape)))
}

/// The elements of each tangent operand, where there is one.
fn tangent_srcs<T: Kernel, const N: usize>(
    tins: &[Option<Operand<T>>; N],
) -> [Option<Src<'_, T>>; N] {
    std::array::from_fn(|k| tins[k].as_ref().map(|o| o.src()))
}

/// The operands read as dual blocks: a tangent where the operand has one
/// (a symbolic zero elsewhere).
struct DualReader<'a, T, const N: usize> {
    primal: Reader<'a, T, N>,
    tangent: Reader<'a, T, N>,
    has: [bool; N],
}

impl<'a, T: Kernel, const N: usize> DualReader<'a, T, N> {
    fn new(src: &[Src<'a, T>; N], tsrc: &[Option<Src<'a, T>>; N], n: usize) -> Self {
        let t: [Src<'a, T>; N] = std::array::from_fn(|k| tsrc[k].unwrap_or(Src::Scalar(T::ZERO)));
        DualReader {
            primal: Reader::new(src, n),
            tangent: Reader::new(&t, n),
            has: std::array::from_fn(|k| tsrc[k].is_some()),
        }
    }

    #[inline(always)]
    fn duals(&self, p: [Lanes<T>; N], t: [Lanes<T>; N]) -> [Dual<Lanes<T>>; N] {
        std::array::from_fn(|k| Dual::new(p[k], self.has[k].then_some(t[k])))
    }

    /// The whole block from `t0` on.
    #[inline(always)]
    fn block(&self, t0: usize) -> [Dual<Lanes<T>>; N] {
        self.duals(self.primal.block(t0), self.tangent.block(t0))
    }

    /// The `len < LANES` elements from `t0` on.
    #[inline(always)]
    fn partial(&self, t0: usize, len: usize) -> [Dual<Lanes<T>>; N] {
        self.duals(self.primal.partial(t0, len), self.tangent.partial(t0, len))
    }
}

#[inline(always)]
fn forward_body<R: Region<N>, const N: usize, T: Kernel>(
    src: &[Src<'_, T>; N],
    tsrc: &[Option<Src<'_, T>>; N],
    range: Range<usize>,
    out: &mut parts::Piece<'_, T>,
    tout: &mut parts::Piece<'_, T>,
) {
    let rd = DualReader::new(src, tsrc, range.end);
    let zero = Lanes::splat(T::ZERO);
    let mut t0 = range.start;
    while t0 + LANES <= range.end {
        let y = R::scalar(&rd.block(t0));
        out.push_block(&y.primal.0);
        tout.push_block(&y.tangent.unwrap_or(zero).0);
        t0 += LANES;
    }
    if t0 < range.end {
        let len = range.end - t0;
        let y = R::scalar(&rd.partial(t0, len));
        out.push(&y.primal.0[..len]);
        tout.push(&y.tangent.unwrap_or(zero).0[..len]);
    }
}

/// Each chunk's sums of the region's primal and tangent over `range`.
#[inline(always)]
fn reduce_body<R: Region<N>, const N: usize, T: Kernel>(
    src: &[Src<'_, T>; N],
    tsrc: &[Option<Src<'_, T>>; N],
    range: Range<usize>,
    sums: &mut Vec<(f64, f64)>,
) {
    let rd = DualReader::new(src, tsrc, range.end);
    let mut start = range.start;
    while start < range.end {
        let end = range.end.min(start + parts::CHUNK);
        let (mut acc, mut tacc) = ([0.0f64; LANES], [0.0f64; LANES]);
        let mut t0 = start;
        while t0 + LANES <= end {
            let y = R::scalar(&rd.block(t0));
            acc = add_lanes(acc, &y.primal);
            if let Some(t) = &y.tangent {
                tacc = add_lanes(tacc, t);
            }
            t0 += LANES;
        }
        if t0 < end {
            let len = end - t0;
            let y = R::scalar(&rd.partial(t0, len));
            accumulate(&mut acc, &y.primal, len);
            if let Some(t) = &y.tangent {
                accumulate(&mut tacc, t, len);
            }
        }
        sums.push((pairwise(&acc), pairwise(&tacc)));
        start = end;
    }
}
