//! The fused passes on CPU arrays: the region's float-tier program run on
//! blocks of [`LANES`] elements of its operands (broadcast together), for
//! the forward result, its sum, or the operands' cotangents.

use super::lanes::LANES;
use super::parts;
use super::reader::Reader;
use super::region::{Input, Kernel, Region};
use super::simd::{Dest, Operand, Src, accumulate, add_lanes, dispatch, pairwise};
use super::{gather, scatter};
use crate::array::count_pass;
use crate::storage::Data;
use crate::{Array, DType, Shape};
use nabla_kernels::parallel::for_each;
use std::ops::Range;
use std::sync::Mutex;

/// The operands of a fused pass, when the kernel can take the arguments:
/// CPU arrays of one float dtype that nothing records, slices in range,
/// operand shapes that broadcast (otherwise the op-by-op path runs and
/// reports any error).
pub(crate) fn operands<const N: usize, const B: usize>(
    args: &[&Array; B],
    inputs: &[Input; N],
) -> Option<[Array; N]> {
    let dtype = args.first()?.dtype();
    if !matches!(dtype, DType::F32 | DType::F64) {
        return None;
    }
    for a in args {
        if a.dtype() != dtype || a.is_tracked() || !matches!(&*a.data, Data::F32(_) | Data::F64(_))
        {
            return None;
        }
    }
    let mut ops: Vec<Array> = Vec::with_capacity(N);
    for input in inputs {
        ops.push(match input {
            Input::Arg(k) => args[*k].clone(),
            Input::Slice { arg, axis, range } => {
                let x = args[*arg];
                let nd = x.ndim() as isize;
                let ax = if *axis < 0 { axis + nd } else { *axis };
                if ax < 0
                    || ax >= nd
                    || range.start > range.end
                    || range.end > x.shape()[ax as usize]
                {
                    return None;
                }
                x.slice_axis(ax, range.clone())
            }
        });
    }
    broadcast(&ops)?;
    ops.try_into().ok()
}

/// The broadcast shape of the operands.
pub(crate) fn broadcast(ops: &[Array]) -> Option<Shape> {
    let mut shape = Shape::new();
    for x in ops {
        shape = nabla_kernels::elementwise::try_broadcast_shape(&shape, x.shape())?;
    }
    Some(shape)
}

/// Whether an operand holds one value per row spread along the rows (a
/// row's mean, maximum or sum kept with `keepdim`: last axis 1 under a
/// longer last axis) and has more than one element. The passes read such
/// an operand from a full-size broadcast copy and write its cotangent at
/// full size before reducing it, which makes the VJP of layer norm's and
/// softmax's regions about twice as slow as their ops one by one, whose
/// kernels read the operand by strides (docs/performance.md). Those
/// regions take the op-by-op VJP. (A weight row repeated over a batch is
/// cheaper to copy and stays fused.)
pub(crate) fn spreads_rows(ops: &[Array]) -> bool {
    let Some(shape) = broadcast(ops) else {
        return false;
    };
    let Some(&last) = shape.last() else {
        return false;
    };
    ops.iter().any(|x| {
        let m: usize = x.shape().iter().product();
        m > 1 && last > 1 && x.shape().last() == Some(&1)
    })
}

/// The fused forward pass: the region's result, or its sum when it ends
/// in one.
pub(crate) fn forward<R: Region<N>, const N: usize>(ops: &[Array; N]) -> Option<Array> {
    let shape = broadcast(ops)?;
    count_pass();
    Some(match ops[0].dtype() {
        DType::F64 => forward_typed::<R, N, f64>(ops, &shape),
        _ => forward_typed::<R, N, f32>(ops, &shape),
    })
}

fn forward_typed<R: Region<N>, const N: usize, T: Kernel>(
    ops: &[Array; N],
    shape: &[usize],
) -> Array {
    let ins = Operand::<T>::all(ops, shape);
    let src = Operand::srcs(&ins);
    let n: usize = shape.iter().product();
    let ranges = parts::split(n);
    if R::REDUCE {
        // One partial sum per chunk, summed pairwise: the same whatever the
        // number of threads.
        let sums: Vec<Mutex<Vec<f64>>> = parts::slots(ranges.len());
        for_each(ranges.len(), |p| {
            let mut out = sums[p].lock().expect("one part per lock");
            dispatch!(reduce_body::<R, N, T>(&src, ranges[p].clone(), &mut out));
        });
        let sums = parts::joined(sums);
        return Array::from_vec(
            vec![<T as nabla_kernels::Float>::from_f64(
                pairwise(&sums) * super::region::reduce_scale::<R, N>(n),
            )],
            &[],
        );
    }
    let mut out = parts::Buffer::<T>::new(n);
    let full = {
        let cuts: Vec<usize> = ranges[1..].iter().map(|r| r.start).collect();
        let pieces: Vec<Mutex<parts::Piece<'_, T>>> =
            out.pieces(&cuts).into_iter().map(Mutex::new).collect();
        for_each(ranges.len(), |p| {
            let mut piece = pieces[p].lock().expect("one part per lock");
            dispatch!(forward_body::<R, N, T>(&src, ranges[p].clone(), &mut piece));
        });
        pieces
            .iter()
            .all(|m| m.lock().expect("parts finished").is_full())
    };
    Array::from_vec(out.finish(full), shape)
}

#[inline(always)]
fn forward_body<R: Region<N>, const N: usize, T: Kernel>(
    src: &[Src<'_, T>; N],
    range: Range<usize>,
    out: &mut parts::Piece<'_, T>,
) {
    let rd = Reader::new(src, range.end);
    let mut t0 = range.start;
    while t0 + LANES <= range.end {
        out.push_block(&R::scalar(&rd.block(t0)).0);
        t0 += LANES;
    }
    if t0 < range.end {
        let len = range.end - t0;
        out.push(&R::scalar(&rd.partial(t0, len)).0[..len]);
    }
}

/// Each chunk's sum of the region over `range`.
#[inline(always)]
pub(crate) fn reduce_body<R: Region<N>, const N: usize, T: Kernel>(
    src: &[Src<'_, T>; N],
    range: Range<usize>,
    sums: &mut Vec<f64>,
) {
    let rd = Reader::new(src, range.end);
    let mut start = range.start;
    while start < range.end {
        let end = range.end.min(start + parts::CHUNK);
        let mut acc = [0.0f64; LANES];
        let mut t0 = start;
        while t0 + LANES <= end {
            acc = add_lanes(acc, &R::scalar(&rd.block(t0)));
            t0 += LANES;
        }
        if t0 < end {
            let len = end - t0;
            accumulate(&mut acc, &R::scalar(&rd.partial(t0, len)), len);
        }
        sums.push(pairwise(&acc));
        start = end;
    }
}

/// The operands' cotangents from a fused pullback pass: for each argument,
/// the cotangents of its operands read in place (added straight into an
/// argument-shaped buffer), and the other operands' cotangents, each at
/// its operand's shape, for the caller to add in.
pub(crate) struct Cotangents<const B: usize> {
    pub direct: [Option<Array>; B],
    pub rest: Vec<(usize, Array)>,
}

/// The fused pullback pass, when it applies (`ct` a CPU array of the
/// operands' dtype).
pub(crate) fn vjp<R: Region<N>, const N: usize, const B: usize>(
    ops: &[Array; N],
    args: &[&Array; B],
    inputs: &[Input; N],
    ct: &Array,
) -> Option<Cotangents<B>> {
    let shape = broadcast(ops)?;
    let dtype = ops[0].dtype();
    if ct.dtype() != dtype || ct.is_tracked() || !matches!(&*ct.data, Data::F32(_) | Data::F64(_)) {
        return None;
    }
    let ct_ok = if R::REDUCE {
        ct.shape().iter().product::<usize>() == 1
    } else {
        nabla_kernels::elementwise::broadcasts_to(ct.shape(), &shape)
    };
    if !ct_ok {
        return None;
    }
    count_pass();
    Some(match dtype {
        DType::F64 => vjp_typed::<R, N, B, f64>(ops, args, inputs, Some(ct), &shape).0,
        _ => vjp_typed::<R, N, B, f32>(ops, args, inputs, Some(ct), &shape).0,
    })
}

/// The value of a map-reduce region and its operands' cotangents for a
/// unit cotangent, in one pass.
pub(crate) fn value_and_vjp<R: Region<N>, const N: usize, const B: usize>(
    ops: &[Array; N],
    args: &[&Array; B],
    inputs: &[Input; N],
) -> Option<(Array, Cotangents<B>)> {
    let shape = broadcast(ops)?;
    count_pass();
    let (c, sum) = match ops[0].dtype() {
        DType::F64 => vjp_typed::<R, N, B, f64>(ops, args, inputs, None, &shape),
        _ => vjp_typed::<R, N, B, f32>(ops, args, inputs, None, &shape),
    };
    Some((sum.expect("the pass summed the region"), c))
}

fn vjp_typed<R: Region<N>, const N: usize, const B: usize, T: Kernel>(
    ops: &[Array; N],
    args: &[&Array; B],
    inputs: &[Input; N],
    ct: Option<&Array>,
    shape: &[usize],
) -> (Cotangents<B>, Option<Array>) {
    let n: usize = shape.iter().product();
    let ins = Operand::<T>::all(ops, shape);
    let src = Operand::srcs(&ins);
    // Without a cotangent: a unit one, and the region summed too. A mean
    // scales the cotangent of its sum by `1/n`.
    let scale = super::region::reduce_scale::<R, N>(n);
    let c = match ct {
        Some(ct) => match Operand::<T>::of(ct, shape) {
            Operand::Scalar(v) if R::MEAN => {
                Operand::Scalar(v * <T as nabla_kernels::Float>::from_f64(scale))
            }
            c => c,
        },
        None => Operand::Scalar(<T as nabla_kernels::Float>::from_f64(scale)),
    };
    let c = c.src();
    let plan = Plan::<N>::of::<T, B>(ops, args, inputs, shape);
    let layout = plan.layout();
    let written = &plan.written;
    let (done, sums) = if gather::applies(&layout, written) {
        gather::run::<R, N, T>(&src, c, n, &layout, written, ct.is_none())
    } else {
        scatter::run::<R, N, T>(&src, c, n, &layout, written, ct.is_none())
    };
    let (direct, rest) = plan.cotangents(done, ops, args, shape);
    let sum = ct.is_none().then(|| {
        Array::from_vec(
            vec![<T as nabla_kernels::Float>::from_f64(
                pairwise(&sums) * scale,
            )],
            &[],
        )
    });
    (Cotangents { direct, rest }, sum)
}

/// Where a pullback pass adds each operand's cotangent: per operand its
/// buffer and offset (an argument's own buffer when the operand is a
/// contiguous run of it, else a buffer of its own at the broadcast shape),
/// the buffers' lengths, the smallest and largest offset added at in each,
/// and which buffers the pass writes. Built outside the region-generic
/// pass, so it is compiled once per element type and operand count.
struct Plan<const N: usize> {
    dests: [Dest; N],
    lens: Vec<usize>,
    lo: Vec<usize>,
    hi: Vec<usize>,
    written: Vec<bool>,
}

impl<const N: usize> Plan<N> {
    fn of<T: Kernel, const B: usize>(
        ops: &[Array; N],
        args: &[&Array; B],
        inputs: &[Input; N],
        shape: &[usize],
    ) -> Self {
        let n: usize = shape.iter().product();
        let mut lens: Vec<usize> = args.iter().map(|a| a.shape().iter().product()).collect();
        let mut used = [false; B];
        let mut dests = [Dest {
            buf: 0,
            offset: 0,
            own: true,
        }; N];
        for (k, d) in dests.iter_mut().enumerate() {
            let j = inputs[k].arg();
            *d = match in_place_offset::<T>(&ops[k], args[j], shape) {
                Some(offset) => {
                    used[j] = true;
                    Dest {
                        buf: j,
                        offset,
                        own: false,
                    }
                }
                None => {
                    lens.push(n);
                    Dest {
                        buf: lens.len() - 1,
                        offset: 0,
                        own: true,
                    }
                }
            };
        }
        let mut lo = vec![usize::MAX; lens.len()];
        let mut hi = vec![0; lens.len()];
        for d in &dests {
            lo[d.buf] = lo[d.buf].min(d.offset);
            hi[d.buf] = hi[d.buf].max(d.offset);
        }
        let written: Vec<bool> = (0..lens.len()).map(|b| b >= B || used[b]).collect();
        Plan {
            dests,
            lens,
            lo,
            hi,
            written,
        }
    }

    /// The plan as the passes read it.
    fn layout(&self) -> scatter::Layout<'_, N> {
        scatter::Layout {
            dests: &self.dests,
            lens: &self.lens,
            lo: &self.lo,
            hi: &self.hi,
        }
    }

    /// The filled buffers as cotangents: an argument's own buffer as its
    /// cotangent, every other operand's summed to its shape.
    fn cotangents<T: Kernel, const B: usize>(
        &self,
        mut done: Vec<Option<Vec<T>>>,
        ops: &[Array; N],
        args: &[&Array; B],
        shape: &[usize],
    ) -> ([Option<Array>; B], Vec<(usize, Array)>) {
        let mut direct: [Option<Array>; B] = super::region::nones();
        let mut rest = Vec::new();
        for (k, d) in self.dests.iter().enumerate() {
            let Some(b) = done[d.buf].take() else {
                continue;
            };
            if !d.own {
                direct[d.buf] = Some(Array::from_vec(b, args[d.buf].shape()));
            } else {
                let g = Array::from_vec(b, shape);
                let g = if ops[k].shape() == shape {
                    g
                } else {
                    g.sum_to_shape(ops[k].shape())
                };
                rest.push((k, g));
            }
        }
        (direct, rest)
    }
}

/// Where operand `op`'s elements start in `arg`'s buffer, when `op` is a
/// contiguous run of them at the broadcast shape and `arg` is in standard
/// layout: then its cotangent can be added into `arg`'s in place.
fn in_place_offset<T: Kernel>(op: &Array, arg: &Array, shape: &[usize]) -> Option<usize> {
    let (o, a) = (T::typed(op)?, T::typed(arg)?);
    if o.shape() != shape || !o.is_standard_layout() || !a.is_standard_layout() {
        return None;
    }
    let size = std::mem::size_of::<T>();
    let delta = (o.as_ptr() as usize).checked_sub(a.as_ptr() as usize)?;
    let offset = delta / size;
    (delta % size == 0 && offset + o.len() <= a.len()).then_some(offset)
}
