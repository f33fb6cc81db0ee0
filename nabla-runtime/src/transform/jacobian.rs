//! `jacrev` and `jacfwd` of any composable function, and the VJP of a
//! Jacobian (what makes `jacrev(jacrev f)`, `hessian` and deeper nests
//! work): Jacobian blocks `(output o, input i)` from block-one-hot bases on
//! a batch axis, and forward-over-reverse for their pullback. The types
//! `Jacrev`/`Jacfwd` and their constructors live in [`crate::compose`].

use crate::transform::diff_fn::{ArgsOf, DiffFn, OutOf};
use crate::transform::values::{Jacfwd, Jacrev};
use crate::vocab::arity::{ArgIndex, Arity};
use crate::vocab::structure::{ArgIndices, JacOf, Leaves, Structure};
use crate::{Array, ArrayValue, Batched, DType, Dual, Value};

pub(crate) fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// `n` one-hot rows shaped `[n, *shape]`, as a constant of `like`'s kind.
fn basis<V: ArrayValue>(like: &V, shape: &[usize]) -> V {
    like.lift(&identity_rows(shape, like.dtype()))
}

/// The `n × n` identity (`n = numel(shape)`) shaped `[n, *shape]`, in
/// `dtype`, kept per thread for the last few shapes built (newest first,
/// the oldest dropped; a hit moves nothing): a Jacobian called in a
/// loop builds its basis once, and [`ArrayValue::lift`] then neither casts
/// nor copies it. Arrays are immutable values (copy-on-write), so handing
/// out one buffer many times is safe.
fn identity_rows(shape: &[usize], dtype: DType) -> Array {
    use std::cell::RefCell;
    thread_local! {
        static KEPT: RefCell<Vec<(crate::Shape, DType, Array)>> = const { RefCell::new(Vec::new()) };
    }
    /// Bases kept, and the largest kept (1M elements).
    const KEEP: usize = 4;
    const MAX_ELEMENTS: usize = 1 << 20;
    KEPT.with(|kept| {
        let mut kept = kept.borrow_mut();
        if let Some(i) = kept
            .iter()
            .position(|(s, d, _)| s[..] == *shape && *d == dtype)
        {
            return kept[i].2.clone();
        }
        let n = numel(shape);
        let eye = Array::eye(n, DType::F64)
            .reshape(&cat(&[n], shape))
            .cast(dtype);
        if n * n <= MAX_ELEMENTS {
            kept.insert(0, (crate::Shape::from_slice(shape), dtype, eye.clone()));
            kept.truncate(KEEP);
        }
        eye
    })
}

/// The one-hot cotangent basis over several outputs at once: `total` rows
/// on a batch axis, output `o` (of `shape`) one-hot on rows
/// `offset .. offset + numel(shape)` and zero elsewhere. With one output
/// this is [`basis`].
fn block_basis<V: ArrayValue>(like: &V, total: usize, offset: usize, shape: &[usize]) -> V {
    let m = numel(shape);
    if offset == 0 && m == total {
        return basis(like, shape);
    }
    let mut data = vec![0.0f64; total * m];
    for r in 0..m {
        data[(offset + r) * m + r] = 1.0;
    }
    like.lift(&Array::from_vec(data, &cat(&[total], shape)))
}

/// `[*a, *b]`.
fn cat(a: &[usize], b: &[usize]) -> crate::Shape {
    let mut s = crate::Shape::with_capacity(a.len() + b.len());
    s.extend_from_slice(a);
    s.extend_from_slice(b);
    s
}

/// A short list kept inline (most functions have one or two outputs and
/// inputs): these are built on every Jacobian call.
type Small<T> = smallvec::SmallVec<[T; 2]>;

/// Shapes, sizes and row offsets of a function's outputs in a block basis.
struct OutRows {
    shapes: Small<crate::Shape>,
    offsets: Small<usize>,
    total: usize,
}

impl OutRows {
    fn new(shapes: Small<crate::Shape>) -> OutRows {
        let mut offsets = Small::with_capacity(shapes.len());
        let mut total = 0;
        for s in &shapes {
            offsets.push(total);
            total += numel(s);
        }
        OutRows {
            shapes,
            offsets,
            total,
        }
    }
    /// Rows of output `o` taken from `[total, ..]`.
    fn rows_of<V: ArrayValue>(&self, x: &V, o: usize) -> V {
        if self.shapes.len() == 1 {
            return x.clone();
        }
        let (a, m) = (self.offsets[o], numel(&self.shapes[o]));
        let mut slices = vec![ndarray::Slice::from(..); x.ndim()];
        slices[0] = ndarray::Slice::from(a..a + m);
        x.slice(&slices)
    }
    /// The block-one-hot cotangents of every output, batched.
    /// The cotangents a reverse pass over all rows starts from: the basis,
    /// or for a scalar output its one cotangent without a batch axis (so
    /// the pass runs on unbatched values: a Hessian's inner gradient costs
    /// a gradient, not a batch of one).
    fn seeds<V: ArrayValue>(&self, like: &V) -> Leaves<Batched<V>> {
        if self.total != 1 {
            return self.basis(like);
        }
        self.shapes
            .iter()
            .map(|s| Batched::unbatched(like.lift(&identity_rows(s, like.dtype()).reshape(s))))
            .collect()
    }

    fn basis<V: ArrayValue>(&self, like: &V) -> Leaves<Batched<V>> {
        (0..self.shapes.len())
            .map(|o| {
                let b = block_basis(like, self.total, self.offsets[o], &self.shapes[o]);
                Batched::new(b, Some(0))
            })
            .collect()
    }
}

/// `vjp` of `x ↦ J` (the Jacobian blocks `(output o, input i)` for the
/// arrays `wanted`, output-major) at the cotangent blocks `cts`: for every
/// argument `j`, `Σ_{o,i} Σ_r ∂²f_o[r]/∂x_j∂x_i · ct_{o,i}[r, :]`, by one
/// forward-over-reverse pass: block-one-hot cotangents over all outputs on a
/// batch axis, and as tangent of each `x_i` the rows of its `ct_{o,i}`
/// stacked over `o`.
pub(crate) fn jacobian_vjp<F: DiffFn, V: ArrayValue>(
    x: &ArgsOf<F, V>,
    wanted: &[usize],
    cts: Leaves<V>,
) -> ArgsOf<F, V> {
    let nw = wanted.len();
    if nw == 0 {
        return <F::Arity as Arity>::map(x, |_, v: &V| v.zeros_like());
    }
    let in_shapes: Vec<crate::Shape> = wanted
        .iter()
        .map(|&i| <F::Arity as Arity>::get(x, i).shape_vec())
        .collect();
    let outs = OutRows::new(
        (0..cts.len() / nw)
            .map(|o| {
                let s = cts[o * nw].shape_vec();
                crate::Shape::from_slice(&s[..s.len() - in_shapes[0].len()])
            })
            .collect(),
    );
    // A scalar output: one row, given without a batch axis (`OutRows::seeds`).
    let scalar = outs.total == 1;
    let rows: Vec<V> = (0..nw)
        .map(|w| {
            if scalar {
                return cts[w].reshape(&in_shapes[w]);
            }
            let parts: Vec<V> = (0..outs.shapes.len())
                .map(|o| cts[o * nw + w].reshape(&cat(&[numel(&outs.shapes[o])], &in_shapes[w])))
                .collect();
            if parts.len() == 1 {
                parts.into_iter().next().expect("one part")
            } else {
                V::concat(&parts, 0)
            }
        })
        .collect();
    let xd = <F::Arity as Arity>::map(x, |i, v: &V| {
        let t = wanted
            .iter()
            .position(|&w| w == i)
            .map(|w| Batched::new(rows[w].clone(), (!scalar).then_some(0)));
        Dual::new(Batched::unbatched(v.clone()), t)
    });
    let (specs, pullback) = F::vjp_masked_shapes::<Dual<Batched<V>>>(&xd, &[]);
    let like = <F::Arity as Arity>::get(x, wanted[0]);
    let onehot = outs.seeds(like).into_iter().map(Dual::constant);
    let g = pullback(F::Out::rebuild(&F::Out::skel(&specs), onehot));
    let m = outs.total;
    <F::Arity as Arity>::map(&g, |i, d: &Dual<Batched<V>>| {
        let shape = <F::Arity as Arity>::get(x, i).shape_vec();
        let t = d.tangent_or_zero();
        if t.bdim.is_some() {
            t.materialize(m, 0).sum_axes(&[0], false).reshape(&shape)
        } else {
            t.value.clone()
        }
    })
}

/// The skeleton of `F`'s outputs.
pub(crate) type OutSkel<F> = <<F as DiffFn>::Out as Structure>::Skel;

/// The Jacobian blocks of `f` w.r.t. the arrays `wanted`, each shaped
/// `out_o ++ in_i`, output-major (`blocks[o * wanted.len() + w]`), all
/// from one reverse pass over a block-one-hot cotangent basis; and the
/// outputs' skeleton.
pub(crate) fn jacrev_blocks<F: DiffFn, V: ArrayValue>(
    x: &ArgsOf<F, V>,
    wanted: &[usize],
) -> (Leaves<V>, OutSkel<F>) {
    let Some(&first) = wanted.first() else {
        panic!("jacrev: no input arrays to differentiate with respect to (an empty list?)");
    };
    let b = <F::Arity as Arity>::map(x, |_, v: &V| Batched::unbatched(v.clone()));
    // The arguments holding a wanted array.
    let mut want: smallvec::SmallVec<[bool; 6]> =
        smallvec::smallvec![false; <F::Arity as Arity>::ARGS];
    for &i in wanted {
        want[<F::Arity as Arity>::arg_of(x, i)] = true;
    }
    // Only the outputs' shapes are needed: the output-only tail is skipped.
    let (y, pullback) = F::vjp_masked_shapes::<Batched<V>>(&b, &want);
    let skel = F::Out::skel(&y);
    let outs = OutRows::new(F::Out::leaves(y).into_iter().map(|y| y.shape).collect());
    let like = <F::Arity as Arity>::get(x, first);
    // A scalar output's one cotangent row comes without a batch axis
    // (`OutRows::seeds`); the row axis is added afterwards.
    let scalar = outs.total == 1;
    let cts = pullback(F::Out::rebuild(&skel, outs.seeds(like)));
    let per_input: Leaves<V> = wanted
        .iter()
        .map(|&i| {
            let c = <F::Arity as Arity>::get(&cts, i);
            match c.bdim {
                None if scalar => c.value.reshape(&cat(&[1], &c.value.shape_vec())),
                _ => c.materialize(outs.total, 0),
            }
        })
        .collect();
    if outs.shapes.len() == 1 {
        // One output: every input's cotangent rows are its block.
        let blocks = per_input
            .into_iter()
            .zip(wanted)
            .map(|(p, &i)| {
                let xs = <F::Arity as Arity>::get(x, i).shape_vec();
                p.reshape(&cat(&outs.shapes[0], &xs))
            })
            .collect();
        return (blocks, skel);
    }
    let mut blocks = Leaves::with_capacity(outs.shapes.len() * wanted.len());
    for o in 0..outs.shapes.len() {
        for (w, &i) in wanted.iter().enumerate() {
            let xs = <F::Arity as Arity>::get(x, i).shape_vec();
            blocks.push(
                outs.rows_of(&per_input[w], o)
                    .reshape(&cat(&outs.shapes[o], &xs)),
            );
        }
    }
    (blocks, skel)
}

/// The Jacobian blocks of `f` w.r.t. the arrays `wanted` (as
/// [`jacrev_blocks`]), by one forward pass per wanted array over a tangent
/// basis on a batch axis; and the outputs' skeleton.
pub(crate) fn jacfwd_blocks<F: DiffFn, V: ArrayValue>(
    x: &ArgsOf<F, V>,
    wanted: &[usize],
) -> (Leaves<V>, OutSkel<F>) {
    if wanted.is_empty() {
        panic!("jacfwd: no input arrays to differentiate with respect to (an empty list?)");
    }
    let mut skel = None;
    let per_input: Small<Leaves<V>> = wanted
        .iter()
        .map(|&k| {
            let xk = <F::Arity as Arity>::get(x, k);
            let xs = xk.shape_vec();
            let n = numel(&xs);
            let tangent = Batched::new(basis(xk, &xs), Some(0));
            let xd = <F::Arity as Arity>::map(x, |i, v: &V| {
                Dual::new(
                    Batched::unbatched(v.clone()),
                    (i == k).then(|| tangent.clone()),
                )
            });
            let y = F::eval::<Dual<Batched<V>>>(&xd);
            skel.get_or_insert_with(|| F::Out::skel(&y));
            F::Out::leaves(y)
                .iter()
                .map(|y| {
                    let t = y.tangent_or_zero();
                    let ys = t.shape_vec();
                    t.materialize_as(n, ys.len(), &cat(&ys, &xs))
                })
                .collect()
        })
        .collect();
    let skel = skel.expect("one pass per wanted array");
    let n_out = per_input.first().map_or(0, |p| p.len());
    if n_out == 1 {
        return (per_input.into_iter().flatten().collect(), skel);
    }
    let mut blocks = Leaves::with_capacity(n_out * wanted.len());
    for o in 0..n_out {
        for p in &per_input {
            blocks.push(p[o].clone());
        }
    }
    (blocks, skel)
}

/// The slot of argument `I` of `F`.
type SlotOf<F, I> = <I as ArgIndex<<F as DiffFn>::Arity>>::Slot;
/// The structure of `jacfwd(f)` / `jacrev(f)`'s output w.r.t. argument `I`.
type JacOut<F, I> = <SlotOf<F, I> as JacOf<<F as DiffFn>::Out>>::Jac;

/// The Jacobian w.r.t. argument `I` from its blocks and the outputs'
/// skeleton.
fn assemble<F: DiffFn, I: ArgIndex<F::Arity>, V: ArrayValue>(
    x: &ArgsOf<F, V>,
    blocks: Leaves<V>,
    out: &OutSkel<F>,
) -> <JacOut<F, I> as Structure>::Of<V>
where
    SlotOf<F, I>: JacOf<F::Out>,
{
    let arg = <SlotOf<F, I> as Structure>::skel(I::pick(x));
    let sk = <SlotOf<F, I> as JacOf<F::Out>>::jac_skel(out, &arg);
    JacOut::<F, I>::rebuild(&sk, blocks)
}

/// `Jacrev` and `Jacfwd` differ only in how the blocks are computed; the
/// VJP of either is [`jacobian_vjp`] at the blocks' cotangents.
macro_rules! jacobian_transform {
    ($t:ident, $blocks:ident) => {
        impl<F: DiffFn, I: ArgIndex<F::Arity>> DiffFn for $t<F, I>
        where
            SlotOf<F, I>: JacOf<F::Out>,
        {
            type Arity = F::Arity;
            type Out = JacOut<F, I>;
            fn eval<V: ArrayValue>(x: &ArgsOf<Self, V>) -> OutOf<Self, V> {
                let wanted = <F::Arity as Arity>::arg_leaves(x, I::I);
                let (blocks, out) = $blocks::<F, V>(x, &wanted);
                assemble::<F, I, V>(x, blocks, &out)
            }
            fn vjp<V: ArrayValue>(
                x: &ArgsOf<Self, V>,
            ) -> (
                OutOf<Self, V>,
                impl FnOnce(OutOf<Self, V>) -> ArgsOf<Self, V> + use<V, F, I>,
            ) {
                let wanted: ArgIndices = <F::Arity as Arity>::arg_leaves(x, I::I);
                let (blocks, out) = $blocks::<F, V>(x, &wanted);
                let j = assemble::<F, I, V>(x, blocks, &out);
                let x = x.clone();
                (j, move |ct| {
                    jacobian_vjp::<F, V>(&x, &wanted, JacOut::<F, I>::leaves(ct))
                })
            }
        }
    };
}
jacobian_transform!(Jacrev, jacrev_blocks);
jacobian_transform!(Jacfwd, jacfwd_blocks);
