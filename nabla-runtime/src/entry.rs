//! Uniform entry points for generated code (named `nabla::rules` in
//! what the macro writes).
//!
//! `#[differentiable]` lowers every known operation to a call of
//! `rules::<op>::forward(inputs.., params..)` in the forward sweep and
//! `rules::<op>::vjp_<k>(reads.., params.., &ct)` (one per value input `k`)
//! in the reverse sweep, or, for `slice_axis` and `square`,
//! `rules::<op>::acc_<k>(&mut slot, ..)`, which adds into an existing
//! cotangent without a separate pass. `reads..` are exactly what the rule
//! reads, as the op registry declares it (`reads` in `nabla-ops`): values
//! as `&V`, inputs needed only for their shape as `&[usize]`, in the order
//! inputs then output, so the VJP keeps nothing else for its reverse
//! sweep. These adapters only normalise user-facing
//! parameters (negative axes, ranges) and forward to the primitives' rules
//! in [`crate::primitives`] (or to composites); they contain no derivative of their
//! own beyond that plumbing. Not meant to be called by hand.

#![allow(missing_docs)]

use crate::array::{norm_axes, norm_axis};
use crate::primitives;
use crate::registry::entries;
use crate::{ArrayValue, Value};
use std::ops::Range;

mod constant;
pub mod tail;
pub use constant::{Constant, add_const, mul_const};

nabla_ops::unary_ops!(entries unary);
nabla_ops::binary_ops!(entries binary);

/// `-x`: its rule module is hand-written (`(custom)` in the registry).
pub mod neg {
    use super::*;
    #[inline]
    #[track_caller]
    pub fn forward<V: Value>(x: &V) -> V {
        x.neg()
    }
    #[inline]
    pub fn vjp_0<V: Value>(ct: &V) -> V {
        ct.neg()
    }
}

/// `square` has its own entry: its cotangent is accumulated in one fused
/// pass (`slot + 2·x·ȳ`) instead of `2·x·ȳ` then an add.
pub mod square {
    use super::*;
    #[inline]
    #[track_caller]
    pub fn forward<V: Value>(x: &V) -> V {
        x.square()
    }
    #[inline]
    pub fn vjp_0<V: Value>(x: &V, ct: &V) -> V {
        primitives::unary::square::vjp(x, x, ct)
    }
    /// The VJP accumulated into `slot` (what generated code calls).
    #[inline]
    pub fn acc_0<V: Value>(slot: &mut Option<V>, x: &V, ct: &V) {
        tail::square::acc_0(slot, x, ct)
    }
}

/// `a + b`: `ȳ` summed to each operand's shape (`reads: shapes`).
pub mod add {
    use super::*;
    #[inline]
    #[track_caller]
    pub fn forward<V: Value>(a: &V, b: &V) -> V {
        a.add(b)
    }
    #[inline]
    pub fn vjp_0<V: Value>(a: &[usize], ct: &V) -> V {
        ct.sum_to_shape(a)
    }
    #[inline]
    pub fn vjp_1<V: Value>(b: &[usize], ct: &V) -> V {
        ct.sum_to_shape(b)
    }
}

/// `a - b`: `ȳ` and `−ȳ` summed to each operand's shape.
pub mod sub {
    use super::*;
    #[inline]
    #[track_caller]
    pub fn forward<V: Value>(a: &V, b: &V) -> V {
        a.sub(b)
    }
    #[inline]
    pub fn vjp_0<V: Value>(a: &[usize], ct: &V) -> V {
        ct.sum_to_shape(a)
    }
    #[inline]
    pub fn vjp_1<V: Value>(b: &[usize], ct: &V) -> V {
        ct.neg().sum_to_shape(b)
    }
}

/// `a * b`: `ȳ · b` summed to `a`'s shape, `a · ȳ` to `b`'s (`reads:
/// cross`: each step reads the other operand and its own shape).
pub mod mul {
    use super::*;
    #[inline]
    #[track_caller]
    pub fn forward<V: Value>(a: &V, b: &V) -> V {
        a.mul(b)
    }
    #[inline]
    pub fn vjp_0<V: Value>(a: &[usize], b: &V, ct: &V) -> V {
        ct.mul(b).sum_to_shape(a)
    }
    #[inline]
    pub fn vjp_1<V: Value>(a: &V, b: &[usize], ct: &V) -> V {
        ct.mul(a).sum_to_shape(b)
    }
}

/// `x + c` for a constant `c`.
pub mod add_scalar {
    use super::*;
    #[inline]
    #[track_caller]
    pub fn forward<V: Value>(x: &V, c: f64) -> V {
        x.add_scalar(c)
    }
    #[inline]
    pub fn vjp_0<V: Value>(_c: f64, ct: &V) -> V {
        ct.clone()
    }
}

/// `x · c` for a constant `c`.
pub mod mul_scalar {
    use super::*;
    #[inline]
    #[track_caller]
    pub fn forward<V: Value>(x: &V, c: f64) -> V {
        x.mul_scalar(c)
    }
    #[inline]
    pub fn vjp_0<V: Value>(c: f64, ct: &V) -> V {
        primitives::unary::affine::vjp(c, ct)
    }
}

fn all<V: ArrayValue>(x: &V) -> Vec<usize> {
    all_axes(x.ndim())
}

/// Every axis of an array of `ndim` axes.
fn all_axes(ndim: usize) -> Vec<usize> {
    (0..ndim).collect()
}

/// A reduction's entries: `sum` reads only its input's shape (`[S _]` in
/// the registry), `max`, `min` and `prod` read the input and the output
/// (`[V V]`).
macro_rules! reduce_rules {
    ($($all:ident, $axes:ident => $method:ident, |$x:ident $(, $y:ident)?; $ax:ident, $kd:ident, $ct:ident| $vjp:expr;)*) => {
        $(
            pub mod $all {
                use super::*;
                #[inline]
                #[track_caller]
                pub fn forward<V: ArrayValue>(x: &V) -> V {
                    x.$method(&all(x), false)
                }
                reduce_rules!(@vjp0 |$x $(, $y)?; $ax, $kd, $ct| $vjp);
            }
            pub mod $axes {
                use super::*;
                #[track_caller]
                #[inline]
                pub fn forward<V: ArrayValue>(x: &V, axes: &[isize], keepdim: bool) -> V {
                    x.$method(&norm_axes(stringify!($all), axes, x.ndim()), keepdim)
                }
                reduce_rules!(@vjp_axes $all |$x $(, $y)?; $ax, $kd, $ct| $vjp);
            }
        )*
    };
    (@vjp0 |$x:ident; $ax:ident, $kd:ident, $ct:ident| $vjp:expr) => {
        #[inline]
        pub fn vjp_0<V: ArrayValue>($x: &[usize], $ct: &V) -> V {
            let $ax = all_axes($x.len());
            let $kd = false;
            $vjp
        }
    };
    (@vjp0 |$x:ident, $y:ident; $ax:ident, $kd:ident, $ct:ident| $vjp:expr) => {
        #[inline]
        pub fn vjp_0<V: ArrayValue>($x: &V, $y: &V, $ct: &V) -> V {
            let $ax = all($x);
            let $kd = false;
            $vjp
        }
    };
    (@vjp_axes $all:ident |$x:ident; $ax:ident, $kd:ident, $ct:ident| $vjp:expr) => {
        #[inline]
        pub fn vjp_0<V: ArrayValue>($x: &[usize], axes: &[isize], keepdim: bool, $ct: &V) -> V {
            let $ax = norm_axes(stringify!($all), axes, $x.len());
            let $kd = keepdim;
            $vjp
        }
    };
    (@vjp_axes $all:ident |$x:ident, $y:ident; $ax:ident, $kd:ident, $ct:ident| $vjp:expr) => {
        #[inline]
        pub fn vjp_0<V: ArrayValue>($x: &V, $y: &V, axes: &[isize], keepdim: bool, $ct: &V) -> V {
            let $ax = norm_axes(stringify!($all), axes, $x.ndim());
            let $kd = keepdim;
            $vjp
        }
    };
}

reduce_rules! {
    sum, sum_axes => sum_axes, |x; ax, kd, ct| primitives::reduce::sum::vjp(x, &ax, kd, ct);
    max, max_axes => max_axes, |x, y; ax, kd, ct| primitives::reduce::max::vjp(x, y, &ax, kd, ct);
    min, min_axes => min_axes, |x, y; ax, kd, ct| primitives::reduce::min::vjp(x, y, &ax, kd, ct);
    prod, prod_axes => prod_axes, |x, y; ax, kd, ct| primitives::reduce::prod::vjp(x, y, &ax, kd, ct);
}

pub mod cumsum {
    use super::*;
    #[track_caller]
    #[inline]
    pub fn forward<V: ArrayValue>(x: &V, axis: isize) -> V {
        x.cumsum_axis(norm_axis("cumsum", axis, x.ndim()), false)
    }
    #[inline]
    pub fn vjp_0<V: ArrayValue>(x: &[usize], axis: isize, ct: &V) -> V {
        primitives::reduce::cumsum::vjp(norm_axis("cumsum", axis, x.len()), false, ct)
    }
}

pub mod matmul {
    use super::*;
    #[inline]
    #[track_caller]
    pub fn forward<V: ArrayValue>(a: &V, b: &V) -> V {
        a.matmul(b)
    }
    /// Cotangent of `a`, including NumPy's 1-D promotions.
    #[inline]
    pub fn vjp_0<V: ArrayValue>(a: &V, b: &V, ct: &V) -> V {
        let nd = &primitives::linalg::matmul::vjp_0;
        primitives::linalg::matmul::promoted_vjp(a, b, ct, a, nd)
    }
    /// Cotangent of `b`.
    #[inline]
    pub fn vjp_1<V: ArrayValue>(a: &V, b: &V, ct: &V) -> V {
        let nd = &primitives::linalg::matmul::vjp_1;
        primitives::linalg::matmul::promoted_vjp(a, b, ct, b, nd)
    }
}

pub mod dot {
    pub use super::matmul::*;
}

pub mod reshape {
    use super::*;
    #[inline]
    #[track_caller]
    pub fn forward<V: ArrayValue>(x: &V, shape: &[usize]) -> V {
        x.reshape(shape)
    }
    #[inline]
    pub fn vjp_0<V: ArrayValue>(x: &[usize], _shape: &[usize], ct: &V) -> V {
        primitives::shape::reshape::vjp(x, ct)
    }
}

pub mod flatten {
    use super::*;
    #[inline]
    #[track_caller]
    pub fn forward<V: ArrayValue>(x: &V) -> V {
        x.reshape(&[x.shape_vec().iter().product()])
    }
    #[inline]
    pub fn vjp_0<V: ArrayValue>(x: &[usize], ct: &V) -> V {
        primitives::shape::reshape::vjp(x, ct)
    }
}

pub mod permute {
    use super::*;
    #[inline]
    #[track_caller]
    pub fn forward<V: ArrayValue>(x: &V, perm: &[usize]) -> V {
        x.permute(perm)
    }
    #[inline]
    pub fn vjp_0<V: ArrayValue>(perm: &[usize], ct: &V) -> V {
        primitives::shape::permute::vjp(perm, ct)
    }
}

pub mod transpose {
    use super::*;
    #[inline]
    #[track_caller]
    pub fn forward<V: ArrayValue>(x: &V) -> V {
        x.permute(&[1, 0])
    }
    #[inline]
    pub fn vjp_0<V: ArrayValue>(ct: &V) -> V {
        ct.permute(&[1, 0])
    }
}

pub mod broadcast_to {
    use super::*;
    #[inline]
    #[track_caller]
    pub fn forward<V: Value>(x: &V, shape: &[usize]) -> V {
        x.broadcast_to(shape)
    }
    #[inline]
    pub fn vjp_0<V: Value>(x: &[usize], _shape: &[usize], ct: &V) -> V {
        ct.sum_to_shape(x)
    }
}

#[track_caller]
fn expanded(shape: &[usize], axis: isize) -> crate::Shape {
    let mut s = crate::Shape::from_slice(shape);
    s.insert(norm_axis("expand_dims", axis, shape.len() + 1), 1);
    s
}

/// `shape` without its length-1 axis `axis`.
#[track_caller]
fn squeezed(shape: &[usize], axis: isize) -> crate::Shape {
    let ax = norm_axis("squeeze", axis, shape.len());
    if shape[ax] != 1 {
        panic!(
            "squeeze: axis {axis} of shape {shape:?} has length {}, not 1; only length-1 axes can be removed",
            shape[ax]
        );
    }
    let mut s = crate::Shape::from_slice(shape);
    s.remove(ax);
    s
}

pub mod expand_dims {
    use super::*;
    #[track_caller]
    #[inline]
    pub fn forward<V: ArrayValue>(x: &V, axis: isize) -> V {
        x.reshape(&expanded(&x.shape_vec(), axis))
    }
    #[inline]
    pub fn vjp_0<V: ArrayValue>(x: &[usize], _axis: isize, ct: &V) -> V {
        ct.reshape(x)
    }
}

pub mod squeeze {
    use super::*;
    #[track_caller]
    #[inline]
    pub fn forward<V: ArrayValue>(x: &V, axis: isize) -> V {
        x.reshape(&squeezed(&x.shape_vec(), axis))
    }
    #[inline]
    pub fn vjp_0<V: ArrayValue>(x: &[usize], _axis: isize, ct: &V) -> V {
        ct.reshape(x)
    }
}

pub mod slice_axis {
    use super::*;
    use primitives::shape::slice;
    #[track_caller]
    #[inline]
    pub fn forward<V: ArrayValue>(x: &V, axis: isize, range: Range<usize>) -> V {
        slice::slice_axis(x, axis, range)
    }
    #[inline]
    pub fn vjp_0<V: ArrayValue>(x: &[usize], axis: isize, range: Range<usize>, ct: &V) -> V {
        slice::vjp(x, &slice::axis_slices(x, axis, &range), ct)
    }
    /// The VJP accumulated into `slot` (what generated code calls).
    #[inline]
    pub fn acc_0<V: ArrayValue>(
        slot: &mut Option<V>,
        x: &[usize],
        axis: isize,
        range: Range<usize>,
        ct: &V,
    ) {
        slice::acc_slice_axis(slot, x, axis, range, ct)
    }
}

pub mod index_select {
    use super::*;
    #[track_caller]
    #[inline]
    pub fn forward<V: ArrayValue>(x: &V, axis: isize, idx: &[usize]) -> V {
        x.index_select(norm_axis("index_select", axis, x.ndim()), idx)
    }
    #[inline]
    pub fn vjp_0<V: ArrayValue>(x: &[usize], axis: isize, idx: &[usize], ct: &V) -> V {
        primitives::index::index_select::vjp(x, norm_axis("index_select", axis, x.len()), idx, ct)
    }
}

pub mod index_add {
    use super::*;
    #[track_caller]
    #[inline]
    pub fn forward<V: ArrayValue>(x: &V, shape: &[usize], axis: isize, idx: &[usize]) -> V {
        x.index_add(shape, norm_axis("index_add", axis, shape.len()), idx)
    }
    #[inline]
    pub fn vjp_0<V: ArrayValue>(shape: &[usize], axis: isize, idx: &[usize], ct: &V) -> V {
        primitives::index::index_add::vjp(norm_axis("index_add", axis, shape.len()), idx, ct)
    }
}

pub mod outer {
    use super::*;
    #[inline]
    #[track_caller]
    pub fn forward<V: ArrayValue>(a: &V, b: &V) -> V {
        primitives::linalg::outer(a, b)
    }
    #[inline]
    pub fn vjp_0<V: ArrayValue>(b: &V, ct: &V) -> V {
        ct.matmul(b)
    }
    #[inline]
    pub fn vjp_1<V: ArrayValue>(a: &V, ct: &V) -> V {
        a.matmul(ct)
    }
}

/// The number of elements a reduction over `axes` of `shape` combines.
fn count_of(shape: &[usize], axes: &[usize]) -> f64 {
    axes.iter().map(|&a| shape[a]).product::<usize>() as f64
}

/// Mean of all elements (a composite: `sum · 1/n`).
pub mod mean {
    use super::*;
    #[inline]
    #[track_caller]
    pub fn forward<V: ArrayValue>(x: &V) -> V {
        primitives::reduce::mean(x, &all(x), false)
    }
    #[inline]
    pub fn vjp_0<V: ArrayValue>(x: &[usize], ct: &V) -> V {
        tail::fit(tail::mean::vjp_0(x, ct), x)
    }
}

/// Mean over axes.
pub mod mean_axes {
    use super::*;
    #[track_caller]
    #[inline]
    pub fn forward<V: ArrayValue>(x: &V, axes: &[isize], keepdim: bool) -> V {
        primitives::reduce::mean(x, &norm_axes("mean", axes, x.ndim()), keepdim)
    }
    #[inline]
    pub fn vjp_0<V: ArrayValue>(x: &[usize], axes: &[isize], keepdim: bool, ct: &V) -> V {
        tail::fit(tail::mean_axes::vjp_0(x, axes, keepdim, ct), x)
    }
}

/// `where_(&mask, &a, &b)`: the mask is a static bool array.
pub mod where_ {
    use super::*;
    use crate::Array;
    #[inline]
    #[track_caller]
    pub fn forward<V: ArrayValue>(a: &V, b: &V, mask: &Array) -> V {
        V::select(mask, a, b)
    }
    #[inline]
    pub fn vjp_0<V: ArrayValue>(a: &[usize], mask: &Array, ct: &V) -> V {
        primitives::index::select::vjp_0(mask, a, ct)
    }
    #[inline]
    pub fn vjp_1<V: ArrayValue>(b: &[usize], mask: &Array, ct: &V) -> V {
        primitives::index::select::vjp_1(mask, b, ct)
    }
}

/// `concat(&[a, b, ..], axis)`.
pub mod concat {
    use super::*;
    #[track_caller]
    #[inline]
    pub fn forward<V: ArrayValue>(parts: &[&V], axis: isize) -> V {
        let owned: Vec<V> = parts.iter().map(|p| (*p).clone()).collect();
        let nd = owned.first().map(|p| p.ndim()).unwrap_or(0);
        V::concat(&owned, norm_axis("concat", axis, nd))
    }
    /// Cotangent of part `k`, from the parts' shapes.
    #[inline]
    pub fn vjp<V: ArrayValue>(k: usize, parts: &[&[usize]], axis: isize, ct: &V) -> V {
        let nd = parts[0].len();
        let ax = norm_axis("concat", axis, nd);
        let sizes: Vec<usize> = parts.iter().map(|p| p[ax]).collect();
        primitives::shape::concat::vjp(&sizes, ax, k, ct)
    }
}

/// `stack(&[a, b, ..], axis)`: joins along a new axis.
pub mod stack {
    use super::*;
    #[track_caller]
    #[inline]
    pub fn forward<V: ArrayValue>(parts: &[&V], axis: isize) -> V {
        let owned: Vec<V> = parts
            .iter()
            .map(|p| p.reshape(&expanded(&p.shape_vec(), axis)))
            .collect();
        let nd = parts.first().map(|p| p.ndim()).unwrap_or(0);
        V::concat(&owned, norm_axis("stack", axis, nd + 1))
    }
    /// Cotangent of part `k`, from the parts' shapes.
    #[inline]
    pub fn vjp<V: ArrayValue>(k: usize, parts: &[&[usize]], axis: isize, ct: &V) -> V {
        let shape = parts[k];
        let ax = norm_axis("stack", axis, shape.len() + 1);
        let sizes = vec![1; parts.len()];
        primitives::shape::concat::vjp(&sizes, ax, k, ct).reshape(shape)
    }
}
