//! What a fused region is, for the passes that run it: the [`Region`]
//! trait `#[differentiable]` implements for each region, where its
//! operands come from ([`Input`]), and the float types the passes run on
//! ([`Kernel`]). The dispatch that chooses a pass is `fused/mod.rs`.

use crate::primitives::shape::slice::{acc_slice_axis, slice_axis};
use crate::vocab::accumulate::OutSpec;
use crate::{ArrayValue, Value};
use std::ops::Range;

/// Where a region's operand comes from: one of the arrays the region is
/// called with, or a slice of one (`x.slice_axis(axis, range)`).
#[doc(hidden)]
#[derive(Clone, Debug)]
pub enum Input {
    /// Argument `k` itself.
    Arg(usize),
    /// `args[arg].slice_axis(axis, range)`.
    Slice {
        arg: usize,
        axis: isize,
        range: Range<usize>,
    },
}

impl Input {
    pub(crate) fn arg(&self) -> usize {
        match self {
            Input::Arg(k) | Input::Slice { arg: k, .. } => *k,
        }
    }

    /// The operand, op by op.
    #[track_caller]
    pub(crate) fn of<V: ArrayValue>(&self, args: &[&V]) -> V {
        match self {
            Input::Arg(k) => args[*k].clone(),
            Input::Slice { arg, axis, range } => slice_axis(args[*arg], *axis, range.clone()),
        }
    }

    /// Every input's operand, op by op. (The helpers here and in
    /// `simd.rs` build a region's arrays outside the region-generic
    /// functions, so each is compiled once per operand count rather than
    /// once per region: docs/performance.md, "Build times".)
    #[track_caller]
    pub(crate) fn all<V: ArrayValue, const N: usize>(inputs: &[Input; N], args: &[&V]) -> [V; N] {
        std::array::from_fn(|k| inputs[k].of(args))
    }

    /// Adds the operand's cotangent `g` into its argument's.
    pub(crate) fn acc<V: ArrayValue>(&self, slot: &mut Option<V>, arg_shape: &[usize], g: V) {
        match self {
            Input::Arg(_) => crate::vocab::accumulate::acc(slot, g),
            Input::Slice { axis, range, .. } => {
                acc_slice_axis(slot, arg_shape, *axis, range.clone(), &g)
            }
        }
    }
}

/// A fused region of `N` operands and one output, written by
/// `#[differentiable]` from the region's own generated programs.
#[doc(hidden)]
pub trait Region<const N: usize>: 'static {
    /// Whether the region ends in the sum (or the mean) of all its elements.
    const REDUCE: bool;
    /// Whether that reduction is the mean (the sum scaled by `1/n`).
    const MEAN: bool;
    /// Whether that sum is what the enclosing function returns, so `grad`
    /// pulls it back with a unit cotangent: then the VJP computes the
    /// value and the unit cotangents in one pass, and the pullback scales
    /// them by the cotangent it gets (nothing to do for 1).
    const RESULT: bool;
    /// The region at one element (or one block of them).
    fn scalar<T: Value + Copy>(x: &[T; N]) -> T;
    /// The operands' cotangents at one element, for the output's `ct`.
    fn scalar_vjp<T: Value + Copy>(x: &[T; N], ct: &T) -> [T; N];
    /// The elementwise part op by op, at any value type.
    fn ops<V: ArrayValue>(x: [&V; N]) -> V;
    /// The elementwise part's VJP op by op, at any value type.
    #[allow(clippy::type_complexity)]
    fn ops_vjp<V: ArrayValue>(x: [&V; N]) -> (V, impl FnOnce(V) -> [V; N] + use<V, Self, N>);
    /// [`Region::ops_vjp`] for callers that need only the output's shape
    /// and dtype: the region's shape-only program, which skips the ops
    /// whose results only the output reads (`sin` in `sum(sin(x))`). Its
    /// pullback also takes a cotangent the elementwise output's shape
    /// broadcasts from (the sum's).
    #[allow(clippy::type_complexity)]
    fn ops_vjp_shapes<V: ArrayValue>(
        x: [&V; N],
    ) -> (OutSpec, impl FnOnce(V) -> [V; N] + use<V, Self, N>);
}

/// The arguments' cotangents: those already at their arguments (`direct`),
/// plus each operand's in `rest` added into its argument's (into the
/// slice for a sliced operand), zeros where none came.
pub(crate) fn to_args<V: ArrayValue, const N: usize, const B: usize>(
    mut direct: [Option<V>; B],
    rest: impl IntoIterator<Item = (usize, V)>,
    inputs: &[Input; N],
    saved: &[V; B],
) -> [V; B] {
    for (k, g) in rest {
        let j = inputs[k].arg();
        inputs[k].acc(&mut direct[j], &saved[j].shape_vec(), g);
    }
    std::array::from_fn(|j| direct[j].take().unwrap_or_else(|| saved[j].zeros_like()))
}

/// What a fused pass multiplies the sum of the region's `n` elements by:
/// `1/n` for a mean, else 1.
pub(crate) fn reduce_scale<R: Region<N>, const N: usize>(n: usize) -> f64 {
    if R::MEAN { 1.0 / n as f64 } else { 1.0 }
}

/// The float element types the fused passes run on (`f32`, `f64`).
#[doc(hidden)]
pub trait Kernel: Value + Copy + nabla_kernels::Float + crate::array::Typed {}
impl Kernel for f64 {}
impl Kernel for f32 {}

/// `B` empty slots.
pub(crate) fn nones<X, const B: usize>() -> [Option<X>; B] {
    std::array::from_fn(|_| None)
}
