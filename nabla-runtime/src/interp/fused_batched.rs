//! Fused regions under `vmap`: a region called on `Batched<Array>`
//! operands runs as the same fused passes on the underlying arrays, each
//! operand with its batch axis first and its per-example axes padded to
//! one rank (so broadcasting between examples' operands is the region's
//! own broadcasting, and the batch axis lines up). A region ending in a
//! sum or a mean reduces each example's run of elements in the same pass
//! (`rows::reduce_rows`). The pullback pass gets every operand batched
//! (operands shared by the batch are broadcast along it as views) so that
//! each example's cotangents stay its own, as `vmap` of a VJP requires;
//! large examples pull back one at a time through the unbatched pass.
//! A region that does not reduce and whose result later operations read
//! runs op by op in a VJP (see [`vjp`]).

use crate::fused::pass;
use crate::fused::region::{Input, Region};
use crate::vocab::accumulate::OutSpec;
use crate::{Array, ArrayValue, Batched, Value};
use std::marker::PhantomData;

/// A region without its trailing reduction: the same programs. The
/// pullback of a reducing region under `vmap` runs as this one's, its
/// per-example cotangents broadcast over each example.
struct Elementwise<R>(PhantomData<R>);

impl<R: Region<N>, const N: usize> Region<N> for Elementwise<R> {
    const REDUCE: bool = false;
    const MEAN: bool = false;
    const RESULT: bool = false;
    #[inline(always)]
    fn scalar<T: Value + Copy>(x: &[T; N]) -> T {
        R::scalar(x)
    }
    #[inline(always)]
    fn scalar_vjp<T: Value + Copy>(x: &[T; N], ct: &T) -> [T; N] {
        R::scalar_vjp(x, ct)
    }
    fn ops<V: ArrayValue>(x: [&V; N]) -> V {
        R::ops(x)
    }
    #[allow(clippy::type_complexity)]
    fn ops_vjp<V: ArrayValue>(x: [&V; N]) -> (V, impl FnOnce(V) -> [V; N] + use<V, R, N>) {
        R::ops_vjp(x)
    }
    #[allow(clippy::type_complexity)]
    fn ops_vjp_shapes<V: ArrayValue>(
        x: [&V; N],
    ) -> (OutSpec, impl FnOnce(V) -> [V; N] + use<V, R, N>) {
        R::ops_vjp_shapes(x)
    }
}

/// The region's operands as arrays for a pass over the whole batch.
pub(crate) struct Aligned<const N: usize> {
    /// Batch axis first, per-example axes padded to `rank` with leading
    /// length-1 axes; operands shared by the batch as they are (forward)
    /// or broadcast along it (pullback).
    ops: [Array; N],
    /// Each operand's batched shape before padding (`[batch, *shape]`),
    /// to which its cotangent is reshaped.
    shapes: [crate::Shape; N],
    /// The operands' broadcast shape, `[batch, *example]`.
    shape: crate::Shape,
}

impl<const N: usize> Aligned<N> {
    fn batch(&self) -> usize {
        self.shape[0]
    }
    /// Per-example rank of the region's result.
    fn rank(&self) -> usize {
        self.shape.len() - 1
    }
    /// Elements per example.
    fn example_len(&self) -> usize {
        self.shape[1..].iter().product()
    }
}

/// The operands `inputs` of `args` aligned for one pass (see [`Aligned`]);
/// `None` when no operand is batched or the pass cannot take them.
fn align<const N: usize, const B: usize>(
    args: [&Batched<Array>; B],
    inputs: &[Input; N],
    all_batched: bool,
) -> Option<Aligned<N>> {
    let ops: [Batched<Array>; N] = std::array::from_fn(|k| inputs[k].of(&args));
    let batch = ops.iter().find_map(Batched::batch_size)?;
    let rank = ops.iter().map(Value::ndim).max().unwrap_or(0);
    let shapes: [crate::Shape; N] = std::array::from_fn(|k| {
        let mut s = crate::Shape::from_slice(&[batch]);
        s.extend_from_slice(&ops[k].shape_vec());
        s
    });
    let arrays: [Array; N] = std::array::from_fn(|k| {
        let x = &ops[k];
        if x.bdim.is_some() {
            x.padded_ref(rank).into_owned()
        } else if all_batched {
            // `[1, 1.., *shape]` broadcast to `[batch, 1.., *shape]` (views).
            let s = x.value.shape();
            let mut one = crate::Shape::from_elem(1, rank + 1 - s.len());
            one.extend_from_slice(s);
            let mut full = one.clone();
            full[0] = batch;
            x.value.reshape(&one).broadcast_to(&full)
        } else {
            x.value.clone()
        }
    });
    let refs: [&Array; N] = std::array::from_fn(|k| &arrays[k]);
    let identity: [Input; N] = std::array::from_fn(Input::Arg);
    let ops = pass::operands(&refs, &identity)?;
    // Some operand is batched and none has more per-example axes than
    // `rank`: the broadcast shape is `[batch, ..]` of `rank + 1` axes.
    let shape = pass::broadcast(&ops)?;
    Some(Aligned { ops, shapes, shape })
}

/// The region on batched arrays in one pass (and, for a reducing region,
/// a per-example sum), or `None` (run it op by op).
pub(crate) fn forward<R: Region<N>, const N: usize, const B: usize>(
    args: [&Batched<Array>; B],
    inputs: &[Input; N],
) -> Option<Batched<Array>> {
    let a = align(args, inputs, false)?;
    Some(Batched::new(forward_aligned::<R, N>(&a)?, Some(0)))
}

/// The pass on aligned operands: `[batch, ..]` elementwise, `[batch]`
/// reduced.
fn forward_aligned<R: Region<N>, const N: usize>(a: &Aligned<N>) -> Option<Array> {
    if R::REDUCE {
        crate::fused::rows::reduce_rows::<R, N>(&a.ops, a.batch())
    } else {
        pass::forward::<R, N>(&a.ops)
    }
}

/// Examples of at least this many elements pull back one at a time, each
/// by the unbatched pass (slices of an example read and their cotangents
/// added in place), instead of one pass over the batch, which copies
/// operands it cannot read in place (a slice of every example).
const PER_EXAMPLE_MIN: usize = 1 << 15;

/// What the pullback of a region under `vmap` keeps: the aligned
/// operands (every one batched) and, for large examples, the arguments.
pub(crate) struct Saved<const N: usize, const B: usize> {
    aligned: Aligned<N>,
    args: Option<[Batched<Array>; B]>,
}

/// The region on batched arrays and what its pullback needs, or `None`.
pub(crate) fn vjp<R: Region<N>, const N: usize, const B: usize>(
    args: [&Batched<Array>; B],
    inputs: &[Input; N],
) -> Option<(Batched<Array>, Saved<N, B>)> {
    // A region whose elementwise result later operations read pulls back
    // faster op by op under `vmap`: the saved result serves the
    // derivatives there, where the pass would recompute the region and
    // copy each shared operand out to the batch (`per_example`: 0.45 vs
    // 0.34 ms, performance.md).
    if !R::REDUCE {
        return None;
    }
    let saved = Saved::new(args, inputs)?;
    let y = forward_aligned::<R, N>(&saved.aligned)?;
    Some((Batched::new(y, Some(0)), saved))
}

/// What the pullback of the region on batched arrays needs, and the
/// output's per-example spec, without running the forward pass (for
/// callers that need only the output's shape: `grad` under `vmap`).
pub(crate) fn vjp_shapes<R: Region<N>, const N: usize, const B: usize>(
    args: [&Batched<Array>; B],
    inputs: &[Input; N],
) -> Option<(OutSpec, Saved<N, B>)> {
    let saved = Saved::new(args, inputs)?;
    let a = &saved.aligned;
    let spec = OutSpec {
        shape: if R::REDUCE {
            crate::Shape::new()
        } else {
            crate::Shape::from_slice(&a.shape[1..])
        },
        dtype: a.ops[0].dtype(),
    };
    Some((spec, saved))
}

/// Arguments' cotangents already summed into each argument, and operand
/// cotangents still to add into theirs (as `super::to_args` takes them).
type Pulled<const B: usize> = ([Option<Batched<Array>>; B], Vec<(usize, Batched<Array>)>);

impl<const N: usize, const B: usize> Saved<N, B> {
    /// The operands aligned with every one batched, and the arguments
    /// when the examples are large.
    fn new(args: [&Batched<Array>; B], inputs: &[Input; N]) -> Option<Self> {
        let aligned = align(args, inputs, true)?;
        let args = (aligned.example_len() >= PER_EXAMPLE_MIN).then(|| args.map(Batched::clone));
        Some(Saved { aligned, args })
    }

    /// The cotangents for the region's `ct`: per example for large
    /// examples, else by one pullback pass over the batch; op by op when
    /// the passes cannot take `ct`.
    pub(crate) fn pull<R: Region<N>>(self, ct: Batched<Array>, inputs: &[Input; N]) -> Pulled<B> {
        if let Some(args) = &self.args
            && let Some(g) = per_example::<R, N, B>(args, inputs, &ct, self.aligned.batch())
        {
            return (g.map(Some), Vec::new());
        }
        let a = self.aligned;
        let ct = elementwise_ct::<R, N>(&a, ct);
        let refs: [&Array; N] = a.ops.each_ref();
        let identity: [Input; N] = std::array::from_fn(Input::Arg);
        let gs: [Array; N] = match pass::vjp::<Elementwise<R>, N, N>(&a.ops, &refs, &identity, &ct)
        {
            Some(c) => {
                let mut direct = c.direct;
                for (k, g) in c.rest {
                    crate::vocab::accumulate::acc(&mut direct[k], g);
                }
                std::array::from_fn(|k| direct[k].take().unwrap_or_else(|| a.ops[k].zeros_like()))
            }
            None => {
                let (y, p) = R::ops_vjp(refs);
                p(ct.broadcast_to(y.shape()))
            }
        };
        // Each cotangent has its operand's shape, `[batch, 1.., *shape]`.
        let rest = gs
            .into_iter()
            .enumerate()
            .map(|(k, g)| (k, Batched::new(g.reshape(&a.shapes[k]), Some(0))))
            .collect();
        (crate::fused::region::nones(), rest)
    }
}

/// Example `i` of a batched value (a view), or the value shared by all.
fn example(x: &Batched<Array>, i: usize) -> Array {
    match x.bdim {
        Some(d) => x.value.slice_axis(d as isize, i..i + 1).squeeze(d as isize),
        None => x.value.clone(),
    }
}

/// Each argument's cotangents, one unbatched pullback pass per example,
/// stacked along a leading batch axis; `None` when a pass cannot run.
fn per_example<R: Region<N>, const N: usize, const B: usize>(
    args: &[Batched<Array>; B],
    inputs: &[Input; N],
    ct: &Batched<Array>,
    batch: usize,
) -> Option<[Batched<Array>; B]> {
    let mut grads: [Vec<Array>; B] = std::array::from_fn(|_| Vec::with_capacity(batch));
    for i in 0..batch {
        let xs: [Array; B] = std::array::from_fn(|j| example(&args[j], i));
        let refs: [&Array; B] = xs.each_ref();
        let ops = pass::operands(&refs, inputs)?;
        let c = pass::vjp::<R, N, B>(&ops, &refs, inputs, &example(ct, i))?;
        let g = crate::fused::region::to_args::<Array, N, B>(c.direct, c.rest, inputs, &xs);
        for (acc, g) in grads.iter_mut().zip(g) {
            acc.push(g);
        }
    }
    Some(grads.map(|g| Batched::new(crate::primitives::shape::stack(&g, 0), Some(0))))
}

/// The elementwise result's cotangent, `[batch, 1.., *shape]` or shared
/// by the batch: a reducing region's per-example cotangent broadcast over
/// the example (scaled by `1/n` for a mean).
fn elementwise_ct<R: Region<N>, const N: usize>(a: &Aligned<N>, ct: Batched<Array>) -> Array {
    let ct = if ct.bdim.is_some() {
        ct.padded_ref(a.rank()).into_owned()
    } else {
        ct.value
    };
    if !R::MEAN {
        return ct;
    }
    ct.mul_scalar(1.0 / a.example_len() as f64)
}
