//! `vmap` of a composable function: the arguments batched per `in_axes`
//! (every leaf of a tree argument on its argument's axis), the inner
//! function run at `Batched<V>`, and its pullback unbatched. The types
//! (`Vmap`, `InAxes`, `Axis`) and constructors live in [`crate::compose`].

use crate::transform::axes::{AxisSpec, InAxes};
use crate::transform::diff_fn::{ArgsOf, DiffFn, OutOf, SpecsOf};
use crate::transform::values::Vmap;
use crate::vocab::accumulate::OutSpec;
use crate::vocab::arity::Arity;
use crate::vocab::structure::{ArgIndices, Structure};
use crate::{ArrayValue, Batched, Value};

#[track_caller]
fn norm_in_axis(op: &str, axis: isize, ndim: usize) -> usize {
    crate::array::norm_axis(op, axis, ndim)
}

/// Batches the arguments of `F` per `I`; returns them and the batch size.
#[track_caller]
fn batch_args<F: DiffFn, I: InAxes<F::Arity>, V: ArrayValue>(
    x: &ArgsOf<F, V>,
) -> (ArgsOf<F, Batched<V>>, usize) {
    let mut size: Option<(usize, usize)> = None;
    for i in 0..<F::Arity as Arity>::len(x) {
        let arg = <F::Arity as Arity>::arg_of(x, i);
        if let Some(a) = I::axis(arg) {
            let s = <F::Arity as Arity>::get(x, i).shape_vec();
            let ax = norm_in_axis("vmap", a, s.len());
            match size {
                None => size = Some((arg, s[ax])),
                Some((j, n)) if n != s[ax] => panic!(
                    "vmap: mapped axes have different sizes: argument {j} has {n}, argument {arg} has {}; every mapped argument needs the same batch size",
                    s[ax]
                ),
                _ => {}
            }
        }
    }
    let Some((_, n)) = size else {
        panic!("vmap: in_axes maps no argument; give at least one argument an axis");
    };
    let b = <F::Arity as Arity>::map(x, |i, v: &V| {
        let arg = <F::Arity as Arity>::arg_of(x, i);
        let ax = I::axis(arg).map(|a| norm_in_axis("vmap", a, v.ndim()));
        Batched::new(v.clone(), ax)
    });
    (b, n)
}

fn out_axis<O: AxisSpec, V: ArrayValue>(y: &Batched<V>) -> usize {
    out_axis_of::<O>(y.ndim())
}

/// The output axis of `vmap` for a per-example output of `rank` axes.
fn out_axis_of<O: AxisSpec>(rank: usize) -> usize {
    norm_in_axis("vmap (out_axes)", O::AXIS.unwrap_or(0), rank + 1)
}

impl<F: DiffFn, I: InAxes<F::Arity>, O: AxisSpec> DiffFn for Vmap<F, I, O> {
    type Arity = F::Arity;
    type Out = F::Out;
    fn eval<V: ArrayValue>(x: &ArgsOf<Self, V>) -> OutOf<Self, V> {
        let (b, n) = batch_args::<F, I, V>(x);
        F::Out::map(F::eval::<Batched<V>>(&b), |_, y| {
            y.materialize(n, out_axis::<O, V>(&y))
        })
    }
    fn vjp<V: ArrayValue>(
        x: &ArgsOf<Self, V>,
    ) -> (
        OutOf<Self, V>,
        impl FnOnce(OutOf<Self, V>) -> ArgsOf<Self, V> + use<V, F, I, O>,
    ) {
        Self::vjp_masked::<V>(x, &[])
    }
    fn vjp_masked<V: ArrayValue>(
        x: &ArgsOf<Self, V>,
        want: &[bool],
    ) -> (
        OutOf<Self, V>,
        impl FnOnce(OutOf<Self, V>) -> ArgsOf<Self, V> + use<V, F, I, O>,
    ) {
        let (b, n) = batch_args::<F, I, V>(x);
        let (y, pullback) = F::vjp_masked::<Batched<V>>(&b, want);
        // The output axis of every output (one entry for `One`).
        let mut oas = ArgIndices::new();
        let out = F::Out::map(y, |_, y| {
            let oa = out_axis::<O, V>(&y);
            oas.push(oa);
            y.materialize(n, oa)
        });
        (out, unbatched_pullback::<F, V, _>(pullback, &b, oas, n))
    }
    fn vjp_masked_shapes<V: ArrayValue>(
        x: &ArgsOf<Self, V>,
        want: &[bool],
    ) -> (
        SpecsOf<Self>,
        impl FnOnce(OutOf<Self, V>) -> ArgsOf<Self, V> + use<V, F, I, O>,
    ) {
        let (b, n) = batch_args::<F, I, V>(x);
        let (y, pullback) = F::vjp_masked_shapes::<Batched<V>>(&b, want);
        let mut oas = ArgIndices::new();
        let out = F::Out::map(y, |_, mut y: OutSpec| {
            let oa = out_axis_of::<O>(y.shape.len());
            oas.push(oa);
            y.shape.insert(oa, n);
            y
        });
        (out, unbatched_pullback::<F, V, _>(pullback, &b, oas, n))
    }
}

/// `vmap(f)`'s pullback from `f`'s pullback at `Batched<V>` (arguments
/// `b`, batch size `n`, output axes `oas`): the cotangents enter with the
/// batch on the output axes, and leave on each mapped argument's axis, or
/// summed over the batch for shared arguments.
fn unbatched_pullback<F: DiffFn, V: ArrayValue, P>(
    pullback: P,
    b: &ArgsOf<F, Batched<V>>,
    oas: ArgIndices,
    n: usize,
) -> impl FnOnce(OutOf<F, V>) -> ArgsOf<F, V> + use<F, V, P>
where
    P: FnOnce(OutOf<F, Batched<V>>) -> ArgsOf<F, Batched<V>>,
{
    let axes = <F::Arity as Arity>::map(b, |_, v: &Batched<V>| v.bdim);
    move |ct: OutOf<F, V>| {
        let cts = pullback(F::Out::map(ct, |o, c| Batched::new(c, Some(oas[o]))));
        <F::Arity as Arity>::map(&cts, |i, c: &Batched<V>| {
            match (<F::Arity as Arity>::get(&axes, i), c.bdim) {
                // A mapped argument: its cotangent carries the batch axis.
                (Some(a), _) => c.materialize(n, *a),
                // A shared argument: the batch's contributions add up.
                (None, Some(_)) => c.materialize(n, 0).sum_axes(&[0], false),
                (None, None) => c.value.clone(),
            }
        })
    }
}
