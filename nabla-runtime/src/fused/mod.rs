//! Fused elementwise regions: `#[differentiable]` groups the elementwise
//! operations of a block (`tail - head.square()`, `x.softplus() *
//! y.tanh()`), the slices of its inputs they read (`x.slice_axis(0,
//! 1..n)`) and a trailing `sum` into one region, and calls it through
//! [`forward`] and [`vjp`].
//!
//! On CPU arrays of one float dtype that nothing records on the tape, the
//! region runs as **one pass** over its inputs (broadcast against each
//! other; a slice read in place at its offset), evaluating the region's
//! float-tier program on blocks of [`LANES`] elements at a time
//! ([`Lanes`]), and its pullback as one more pass that evaluates the
//! region's VJP on the same blocks (the forward recomputed in registers,
//! as XLA does) and adds each input's cotangent straight into the
//! cotangent of the array it was sliced from. A region ending in `sum`
//! never writes its elementwise result: the forward pass accumulates it,
//! and the pullback reads the scalar cotangent. On dual arrays (`jvp`)
//! the forward pass runs the same program on blocks of dual numbers,
//! writing primal and tangent together. Under `vmap` (`Batched<Array>`)
//! the passes run over the whole batch, a sum or mean per example.
//! On GPU arrays (feature `cuda`) the region runs as one generated CUDA
//! kernel each way (see `interp/gpu_sym.rs`): the forward (with its sum, if any) and
//! the pullback, which writes every operand's cotangent in the same kernel.
//! Any other value (a tracked array, nested `Batched`, the pullback at
//! `Dual`, `Dual` or `Batched` GPU arrays, mixed dtypes or devices) runs
//! the region op by op, exactly as without fusion.
//!
//! ```
//! use nabla::Array;
//!
//! #[nabla::differentiable]
//! fn rosenbrock(x: &Array) -> Array {
//!     let n = x.shape()[0];
//!     let (head, tail) = (x.slice_axis(0, 0..n - 1), x.slice_axis(0, 1..n));
//!     nabla::sum(&((tail - head.square()).square() * 100.0 + (1.0 - head).square()))
//! }
//!
//! fn main() {
//!     let x = Array::from_vec(vec![1.0f64, 1.0, 1.0], &[3]);
//!     // The minimum: value 0, gradient 0 (one fused pass each way).
//!     assert_eq!(rosenbrock(&x).item(), 0.0);
//!     assert_eq!(nabla::grad(rosenbrock)(&x).to_vec::<f64>(), vec![0.0; 3]);
//! }
//! ```

pub(crate) mod gather;
pub(crate) mod lanes;
pub(crate) mod parts;
pub(crate) mod pass;
pub(crate) mod reader;
pub(crate) mod region;
pub(crate) mod rows;
pub(crate) mod scatter;
pub(crate) mod simd;

#[cfg(feature = "cuda")]
use crate::interp::gpu_sym as gpu;
use crate::interp::{fused_batched as batched, fused_dual as dual};
pub use lanes::{LANES, Lanes};
pub use region::{Input, Kernel, Region};
use region::{reduce_scale, to_args};
pub use simd::limit_simd;

use crate::vocab::accumulate::OutSpec;
use crate::{Array, ArrayValue, Batched, Dual};
use std::any::{Any, TypeId};

pub use crate::array::passes;

/// [`Region::ops_vjp_shapes`] of a region without a shape-only program:
/// its VJP, the output's spec, and a pullback that broadcasts its
/// cotangent to the output's shape.
#[doc(hidden)]
#[allow(clippy::type_complexity)]
pub fn spec_of<V: ArrayValue, const N: usize>(
    (y, pullback): (V, impl FnOnce(V) -> [V; N]),
) -> (OutSpec, impl FnOnce(V) -> [V; N]) {
    let spec = OutSpec::of(&y);
    let shape = spec.shape.clone();
    (spec, move |ct: V| {
        pullback(crate::entry::tail::fit(ct, &shape))
    })
}

/// The region `R` on the operands `inputs` of `args`: one pass when the
/// kernel applies, op by op otherwise.
#[doc(hidden)]
#[track_caller]
pub fn forward<V: ArrayValue, R: Region<N>, const N: usize, const B: usize>(
    args: [&V; B],
    inputs: [Input; N],
) -> V {
    #[cfg(feature = "cuda")]
    if let Some(a) = arrays(&args)
        && gpu_fusion()
        && let Some(ops) = gpu::operands(&a, &inputs)
    {
        return from_array(gpu::forward::<R, N>(&ops));
    }
    // Checking for NaNs runs the region op by op, each op checked.
    if crate::array::nans::debug_nans_enabled() {
        let ops: [V; N] = Input::all(&inputs, &args);
        return reduce::<V, R, N>(R::ops(ops.each_ref()));
    }
    if let Some(a) = arrays(&args)
        && let Some(ops) = pass::operands(&a, &inputs)
        && let Some(y) = pass::forward::<R, N>(&ops)
    {
        return from_array(y);
    }
    if let Some(d) = refs_as::<V, Dual<Array>, B>(&args)
        && let Some(y) = dual::forward::<R, N, B>(d, &inputs)
    {
        return cast(y);
    }
    if let Some(b) = refs_as::<V, Batched<Array>, B>(&args)
        && let Some(y) = batched::forward::<R, N, B>(b, &inputs)
    {
        return cast(y);
    }
    let ops: [V; N] = Input::all(&inputs, &args);
    reduce::<V, R, N>(R::ops(ops.each_ref()))
}

/// The region's pullback: the saved operands of a fused pass, or the
/// op-by-op pullback.
enum Pullback<P, const N: usize, const B: usize> {
    Fused([Array; N]),
    /// The operands of a region run on the GPU.
    #[cfg(feature = "cuda")]
    Gpu([Array; N]),
    Unit(pass::Cotangents<B>),
    Batched(batched::Saved<N, B>),
    Ops(P, crate::Shape),
}

/// The region `R` on `inputs` of `args`, and its pullback to `args`.
#[doc(hidden)]
#[track_caller]
#[allow(clippy::type_complexity)]
pub fn vjp<V: ArrayValue, R: Region<N>, const N: usize, const B: usize>(
    args: [&V; B],
    inputs: [Input; N],
) -> (V, impl FnOnce(V) -> [V; B] + use<V, R, N, B>) {
    // Checking for NaNs runs the region and its pullback op by op.
    let debug = crate::array::nans::debug_nans_enabled();
    #[cfg(feature = "cuda")]
    let on_gpu = arrays(&args)
        .filter(|_| gpu_fusion() && !debug)
        .and_then(|a| gpu::operands(&a, &inputs));
    #[cfg(not(feature = "cuda"))]
    let on_gpu: Option<[Array; N]> = None;
    let ops = arrays(&args)
        .filter(|_| on_gpu.is_none() && !debug)
        .and_then(|a| Some((a, pass::operands(&a, &inputs)?)))
        .filter(|(_, ops)| !pass::spreads_rows(ops));
    let (y, pb) = match ops {
        #[cfg(feature = "cuda")]
        _ if on_gpu.is_some() => {
            let ops = on_gpu.expect("checked");
            (from_array(gpu::forward::<R, N>(&ops)), Pullback::Gpu(ops))
        }
        Some((a, ops)) if R::REDUCE && R::RESULT => {
            match pass::value_and_vjp::<R, N, B>(&ops, &a, &inputs) {
                Some((y, cts)) => (from_array(y), Pullback::Unit(cts)),
                None => ops_vjp::<V, R, N, B>(&args, &inputs),
            }
        }
        Some((_, ops)) => match pass::forward::<R, N>(&ops) {
            Some(y) => (from_array(y), Pullback::Fused(ops)),
            None => ops_vjp::<V, R, N, B>(&args, &inputs),
        },
        None => match refs_as::<V, Batched<Array>, B>(&args)
            .filter(|_| !debug)
            .and_then(|b| batched::vjp::<R, N, B>(b, &inputs))
        {
            Some((y, saved)) => (cast(y), Pullback::Batched(saved)),
            None => ops_vjp::<V, R, N, B>(&args, &inputs),
        },
    };
    let saved: [V; B] = args.map(V::clone);
    (y, move |ct: V| {
        // Cotangents already at their arguments (added in place by a
        // fused pass), and operands' cotangents still to add into theirs.
        let (direct, rest): ([Option<V>; B], Vec<(usize, V)>) = match pb {
            Pullback::Unit(c) => {
                let ct = to_array(ct);
                // The cotangents for 1, scaled by the one that came.
                let unit = !ct.is_tracked()
                    && ct.shape().iter().product::<usize>() == 1
                    && ct.item() == 1.0;
                let scale = |g: Array| from_array(if unit { g } else { g.mul(&ct.reshape(&[])) });
                (
                    c.direct.map(|d| d.map(scale)),
                    c.rest.into_iter().map(|(k, g)| (k, scale(g))).collect(),
                )
            }
            Pullback::Fused(ops) => {
                let a: [&Array; B] = arrays(&saved.each_ref()).expect("a fused pass ran on arrays");
                let ct = to_array(ct);
                match pass::vjp::<R, N, B>(&ops, &a, &inputs, &ct) {
                    Some(c) => (
                        c.direct.map(|d| d.map(from_array)),
                        c.rest
                            .into_iter()
                            .map(|(k, g)| (k, from_array(g)))
                            .collect(),
                    ),
                    // A cotangent the pass cannot take: op by op.
                    None => {
                        let (_, p) = R::ops_vjp(ops.each_ref());
                        let gs = p(unreduce::<Array, R, N>(ct, &broadcast_shape(&ops)));
                        (
                            region::nones(),
                            gs.into_iter().map(from_array).enumerate().collect(),
                        )
                    }
                }
            }
            #[cfg(feature = "cuda")]
            Pullback::Gpu(ops) => {
                let ct = to_array(ct);
                let gs = gpu::vjp::<R, N>(&ops, &ct).unwrap_or_else(|| {
                    // A cotangent the kernel cannot take: op by op.
                    let (_, p) = R::ops_vjp(ops.each_ref());
                    p(unreduce::<Array, R, N>(ct, &broadcast_shape(&ops))).to_vec()
                });
                (
                    region::nones(),
                    gs.into_iter().map(from_array).enumerate().collect(),
                )
            }
            Pullback::Batched(b) => pull_batched::<V, R, N, B>(b, ct, &inputs),
            Pullback::Ops(p, shape) => (
                region::nones(),
                p(unreduce::<V, R, N>(ct, &shape))
                    .into_iter()
                    .enumerate()
                    .collect(),
            ),
        };
        to_args(direct, rest, &inputs, &saved)
    })
}

/// [`batched::Saved::pull`] at `V` (which is `Batched<Array>`): the
/// cotangents already at their arguments, and operands' still to add.
#[allow(clippy::type_complexity)]
fn pull_batched<V: 'static, R: Region<N>, const N: usize, const B: usize>(
    b: batched::Saved<N, B>,
    ct: V,
    inputs: &[Input; N],
) -> ([Option<V>; B], Vec<(usize, V)>) {
    let (direct, rest) = b.pull::<R>(cast(ct), inputs);
    (
        direct.map(|d| d.map(cast)),
        rest.into_iter().map(|(k, g)| (k, cast(g))).collect(),
    )
}

/// [`vjp`] for callers that need only the output's shape and dtype (the
/// shape-only VJP of the enclosing function, see `DiffFn::vjp_masked_shapes`):
/// on arrays the same passes; at other value types (nested transforms,
/// where the region runs op by op) the region's shape-only program, so
/// the ops whose results only the output reads do not run. The pullback
/// takes a cotangent of the output's shape.
#[doc(hidden)]
#[track_caller]
#[allow(clippy::type_complexity)]
pub fn vjp_shapes<V: ArrayValue, R: Region<N>, const N: usize, const B: usize>(
    args: [&V; B],
    inputs: [Input; N],
) -> (OutSpec, impl FnOnce(V) -> [V; B] + use<V, R, N, B>) {
    enum Pb<F, S, const N: usize, const B: usize> {
        Full(F),
        Batched(batched::Saved<N, B>),
        Shapes(S, f64),
    }
    let batched = refs_as::<V, Batched<Array>, B>(&args)
        .and_then(|b| batched::vjp_shapes::<R, N, B>(b, &inputs));
    let (spec, pb) = if let Some((spec, saved)) = batched {
        // Under `vmap` only the pullback pass runs (a batch's value is a
        // pass of its own, which the caller does not want).
        (spec, Pb::Batched(saved))
    } else if arrays(&args).is_some() {
        let (y, pb) = vjp::<V, R, N, B>(args, inputs.clone());
        (OutSpec::of(&y), Pb::Full(pb))
    } else {
        let ops: [V; N] = Input::all(&inputs, &args);
        let (mut spec, p) = R::ops_vjp_shapes(ops.each_ref());
        // The shape-only program takes the sum's cotangent as it is (a sum
        // broadcasts it unchanged); a mean's is scaled by `1/n` first.
        let scale = reduce_scale::<R, N>(spec.shape.iter().product());
        if R::REDUCE {
            spec.shape = crate::Shape::new();
        }
        (spec, Pb::Shapes(p, scale))
    };
    let saved: Option<[V; B]> = (!matches!(pb, Pb::Full(..))).then(|| args.map(V::clone));
    (spec, move |ct: V| match pb {
        Pb::Full(pb) => pb(ct),
        Pb::Batched(b) => {
            let saved = saved.expect("saved with the batched pullback");
            let (direct, rest) = pull_batched::<V, R, N, B>(b, ct, &inputs);
            to_args(direct, rest, &inputs, &saved)
        }
        Pb::Shapes(p, scale) => {
            let saved = saved.expect("saved with the op-by-op pullback");
            let ct = if scale == 1.0 {
                ct
            } else {
                ct.mul_scalar(scale)
            };
            let rest = p(ct).into_iter().enumerate();
            to_args(region::nones(), rest, &inputs, &saved)
        }
    })
}

/// Whether regions on GPU arrays run as generated kernels: yes, unless
/// the environment sets `NABLA_GPU_FUSION=0` (op by op, for A/B
/// measurements and debugging).
#[cfg(feature = "cuda")]
fn gpu_fusion() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("NABLA_GPU_FUSION").map_or(true, |v| v != "0"))
}

/// The region's result from its elementwise result: itself, its sum or
/// its mean.
#[track_caller]
fn reduce<V: ArrayValue, R: Region<N>, const N: usize>(y: V) -> V {
    match (R::REDUCE, R::MEAN) {
        (true, true) => crate::entry::mean::forward(&y),
        (true, false) => crate::entry::sum::forward(&y),
        _ => y,
    }
}

/// The elementwise result's cotangent from the region's (broadcast from
/// the sum's or the mean's, at `shape`).
fn unreduce<V: ArrayValue, R: Region<N>, const N: usize>(ct: V, shape: &[usize]) -> V {
    match (R::REDUCE, R::MEAN) {
        (true, true) => crate::entry::mean::vjp_0(shape, &ct),
        (true, false) => crate::entry::sum::vjp_0(shape, &ct),
        _ => ct,
    }
}

/// The region op by op and its pullback.
#[track_caller]
#[allow(clippy::type_complexity)]
fn ops_vjp<V: ArrayValue, R: Region<N>, const N: usize, const B: usize>(
    args: &[&V; B],
    inputs: &[Input; N],
) -> (
    V,
    Pullback<impl FnOnce(V) -> [V; N] + use<V, R, N, B>, N, B>,
) {
    let ops: [V; N] = Input::all(inputs, args);
    let (y, p) = R::ops_vjp(ops.each_ref());
    let shape = y.shape_vec();
    (reduce::<V, R, N>(y), Pullback::Ops(p, shape))
}

/// The operands' broadcast shape.
fn broadcast_shape(ops: &[Array]) -> crate::Shape {
    ops.iter().fold(crate::Shape::new(), |s, x| {
        nabla_kernels::elementwise::broadcast_shape(&s, x.shape())
    })
}

/// `x` as `W`s when `V` is `W` (`Array` for the plain passes,
/// `Dual<Array>` for forward mode).
fn refs_as<'a, V: 'static, W: 'static, const N: usize>(x: &[&'a V; N]) -> Option<[&'a W; N]> {
    if TypeId::of::<V>() != TypeId::of::<W>() {
        return None;
    }
    Some(x.map(|v| (v as &dyn Any).downcast_ref::<W>().expect("V is W")))
}

/// `x` as arrays when `V` is `Array`.
fn arrays<'a, V: 'static, const N: usize>(x: &[&'a V; N]) -> Option<[&'a Array; N]> {
    refs_as(x)
}

/// A `V` as a `W`, where the two are one type (checked by `TypeId`
/// before the pass that made `v` ran).
fn cast<V: 'static, W: 'static>(v: V) -> W {
    let mut slot = Some(v);
    (&mut slot as &mut dyn Any)
        .downcast_mut::<Option<W>>()
        .expect("V is W")
        .take()
        .expect("set")
}

/// An array as `V` (which is `Array`).
fn from_array<V: 'static>(y: Array) -> V {
    cast(y)
}

/// A `V` (which is `Array`) as an array.
fn to_array<V: 'static>(v: V) -> Array {
    cast(v)
}
