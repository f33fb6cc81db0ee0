//! `F` evaluated where [`super::compare`] needs it: values at perturbed
//! arguments, JVPs along one element, VJPs of one output element, and
//! their forward derivatives; every result as flat `f64` values per array.

use crate::compose::{ArgsOf, DiffFn, OutOf};
use crate::vocab::arity::Arity;
use crate::vocab::structure::Structure;
use crate::{Array, DType, Dual};

/// A direction: array `leaf`'s element `elem`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Dir {
    pub leaf: usize,
    pub elem: usize,
}

/// Whether an array takes part in differentiation.
pub(super) fn is_float(a: &Array) -> bool {
    matches!(a.dtype(), DType::F32 | DType::F64)
}

/// Zeros shaped and typed like `a`, with `v` at flat element `e`.
pub(super) fn one_hot(a: &Array, e: usize, v: f64) -> Array {
    let mut z = vec![0.0f64; a.numel()];
    z[e] = v;
    Array::from_vec(z, a.shape()).cast(a.dtype())
}

/// `a` with `h` added to flat element `e`.
fn nudged(a: &Array, e: usize, h: f64) -> Array {
    let mut v = a.to_vec::<f64>();
    v[e] += h;
    Array::from_vec(v, a.shape()).cast(a.dtype())
}

/// The step from `a - h` to `a + h` at element `e` as `a`'s dtype rounds
/// it (exactly `2h` in f64).
pub(super) fn span(a: &Array, e: usize, h: f64) -> f64 {
    nudged(a, e, h).to_vec::<f64>()[e] - nudged(a, e, -h).to_vec::<f64>()[e]
}

/// Each output's shape, or `None` for an integer or boolean output.
pub(super) fn output_shapes<F: DiffFn>(args: &ArgsOf<F, Array>) -> Vec<Option<Vec<usize>>> {
    outputs::<F, _>(F::eval::<Array>(args))
        .iter()
        .map(|y| is_float(y).then(|| y.shape().to_vec()))
        .collect()
}

fn flat(a: &Array) -> Vec<f64> {
    a.to_vec::<f64>()
}

/// The output arrays of `y`, in order.
fn outputs<F: DiffFn, W: Clone>(y: OutOf<F, W>) -> Vec<W> {
    <F::Out as Structure>::leaves(y).into_vec()
}

/// `args` with every float array cast to `dtype`.
pub(super) fn cast_args<F: DiffFn>(args: &ArgsOf<F, Array>, dtype: DType) -> ArgsOf<F, Array> {
    <F::Arity as Arity>::map(args, |_, a| {
        if is_float(a) {
            a.cast(dtype)
        } else {
            a.clone()
        }
    })
}

/// `f(args)`, every output flattened.
pub(super) fn value<F: DiffFn>(args: &ArgsOf<F, Array>) -> Vec<Vec<f64>> {
    outputs::<F, _>(F::eval::<Array>(args))
        .iter()
        .map(flat)
        .collect()
}

/// `f` at `args` with `h` added along `d`.
pub(super) fn value_at<F: DiffFn>(args: &ArgsOf<F, Array>, d: Dir, h: f64) -> Vec<Vec<f64>> {
    value::<F>(&moved::<F>(args, d, h))
}

/// `args` as duals with a unit tangent along `d` (zero elsewhere).
fn along<F: DiffFn>(args: &ArgsOf<F, Array>, d: Dir) -> ArgsOf<F, Dual<Array>> {
    <F::Arity as Arity>::map(args, |j, a| {
        Dual::new(a.clone(), (j == d.leaf).then(|| one_hot(a, d.elem, 1.0)))
    })
}

/// A cotangent for an output like `y`: 1 at `elem` when `hit`, else zeros.
fn unit_cotangent(y: &Array, hit: bool, elem: usize) -> Array {
    if hit {
        one_hot(y, elem, 1.0)
    } else {
        y.zeros_like()
    }
}

/// `args` with `h` added along `d`.
fn moved<F: DiffFn>(args: &ArgsOf<F, Array>, d: Dir, h: f64) -> ArgsOf<F, Array> {
    <F::Arity as Arity>::map(args, |j, a| {
        if j == d.leaf {
            nudged(a, d.elem, h)
        } else {
            a.clone()
        }
    })
}

/// The JVP of `f` at `args` along `d`: every output's tangent.
pub(super) fn jvp<F: DiffFn>(args: &ArgsOf<F, Array>, d: Dir) -> Vec<Vec<f64>> {
    outputs::<F, _>(F::eval::<Dual<Array>>(&along::<F>(args, d)))
        .iter()
        .map(|y| flat(&y.tangent_or_zero()))
        .collect()
}

/// The cotangent of every argument array for a cotangent of 1 on output
/// `out`'s element `elem` (zero elsewhere); `None` for integer arrays.
pub(super) fn vjp<F: DiffFn>(
    args: &ArgsOf<F, Array>,
    out: usize,
    elem: usize,
) -> Vec<Option<Vec<f64>>> {
    let (y, pullback) = F::vjp::<Array>(args);
    let ct = <F::Out as Structure>::map(y, |o, y| unit_cotangent(&y, o == out, elem));
    let g = pullback(ct);
    (0..<F::Arity as Arity>::len(args))
        .map(|i| {
            let a = <F::Arity as Arity>::get(args, i);
            is_float(a).then(|| flat(<F::Arity as Arity>::get(&g, i)))
        })
        .collect()
}

/// The second directional derivative along `u` then `v` (forward over
/// forward): every output's.
pub(super) fn jvp_jvp<F: DiffFn>(args: &ArgsOf<F, Array>, u: Dir, v: Dir) -> Vec<Vec<f64>> {
    let duals = <F::Arity as Arity>::map(args, |j, a| {
        let inner = Dual::new(a.clone(), (j == u.leaf).then(|| one_hot(a, u.elem, 1.0)));
        let outer = (j == v.leaf).then(|| Dual::constant(one_hot(a, v.elem, 1.0)));
        Dual::new(inner, outer)
    });
    outputs::<F, _>(F::eval::<Dual<Dual<Array>>>(&duals))
        .iter()
        .map(|y| flat(&y.tangent_or_zero().tangent_or_zero()))
        .collect()
}

/// The derivative along `v` of the VJP for output `out`'s element `elem`
/// (forward over reverse): every argument's, `None` for integer arrays.
pub(super) fn vjp_jvp<F: DiffFn>(
    args: &ArgsOf<F, Array>,
    out: usize,
    elem: usize,
    v: Dir,
) -> Vec<Option<Vec<f64>>> {
    let (y, pullback) = F::vjp::<Dual<Array>>(&along::<F>(args, v));
    let ct = <F::Out as Structure>::map(y, |o, y| {
        Dual::constant(unit_cotangent(&y.primal, o == out, elem))
    });
    let g = pullback(ct);
    (0..<F::Arity as Arity>::len(args))
        .map(|i| {
            let a = <F::Arity as Arity>::get(args, i);
            is_float(a).then(|| flat(&<F::Arity as Arity>::get(&g, i).tangent_or_zero()))
        })
        .collect()
}

/// The VJP (as [`vjp`]) at `args` moved by `h` along `d`.
pub(super) fn vjp_at<F: DiffFn>(
    args: &ArgsOf<F, Array>,
    d: Dir,
    h: f64,
    out: usize,
    elem: usize,
) -> Vec<Option<Vec<f64>>> {
    vjp::<F>(&moved::<F>(args, d, h), out, elem)
}

/// The JVP (as [`jvp`]) along `u` at `args` moved by `h` along `d`.
pub(super) fn jvp_at<F: DiffFn>(args: &ArgsOf<F, Array>, u: Dir, d: Dir, h: f64) -> Vec<Vec<f64>> {
    jvp::<F>(&moved::<F>(args, d, h), u)
}
