//! Entry points for an op in a function's *output-only tail*.
//!
//! When a transform needs only the shapes of a function's outputs (`jacrev`,
//! `grad`, `hessian` discard the output values), the statements whose
//! results reach nothing but the outputs need not run: `sum(sin(x))` under
//! `jacrev` needs `x` for the pullback and nothing else. `#[differentiable]`
//! finds that tail at compile time and generates a second VJP program
//! (`DiffFn::vjp_masked_shapes`) in which each tail statement is replaced
//! by its `out_shape`, and its reverse step calls the `vjp_<k>` here, which
//! takes no output value and, for inputs whose values the rule does not
//! read, only their shapes. An op can be in a tail only if it has an entry
//! here; the macro's table (`uses` in `nabla-macros/src/tail.rs`) says
//! which inputs each entry takes by value (`V`) and which by shape
//! (`&[usize]`), and a mismatch does not compile. The rules are those of
//! [`crate::primitives`] without the output: ops whose derivative reads only their
//! inputs (`reads: x` / `reads: inputs` in the op registry) call the
//! `vjp_from_x` / `vjp_{0,1}_from_inputs` generated beside their rules;
//! the shape ops, reductions and `mul` handle unbroadcast cotangents here.
//!
//! **Unbroadcast cotangents.** Inside a tail, the cotangent a `vjp_<k>`
//! receives need only *broadcast* to the op's output shape: `sum` and
//! `mean` hand back their (scalar) cotangent instead of a copy broadcast to
//! their input's shape, and the elementwise, scalar and reduction rules pass
//! such a cotangent on unbroadcast while that stays exact (a constant stays
//! a constant under reshapes and permutations; `a · b` broadcasts it against
//! the other operand). A rule that needs the full array first calls
//! [`full`]; the generated code calls [`fit`] on every cotangent that
//! leaves the tail for a computed value. `sum(sin x)` then costs one
//! multiply in reverse (`ȳ · cos x`, broadcast by the kernel), not a
//! broadcast copy and a multiply.

#![allow(missing_docs)]

use super::{all_axes, count_of, expanded, squeezed};
use crate::array::norm_axes;
use crate::primitives;
use crate::registry::tail_entries;
use crate::{ArrayValue, Shape, Value};
use std::borrow::Cow;

/// The cotangent `ct` (which broadcasts to `out`) as a full array of shape
/// `out`: borrowed when it already is one.
#[inline]
pub fn full<'a, V: Value>(ct: &'a V, out: &[usize]) -> Cow<'a, V> {
    if ct.shape_vec()[..] == *out {
        Cow::Borrowed(ct)
    } else {
        Cow::Owned(ct.broadcast_to(out))
    }
}

/// A cotangent leaving the tail for a computed value of shape `shape`:
/// broadcast to it if it is not yet that shape (see the module docs).
#[inline]
pub fn fit<V: Value>(ct: V, shape: &[usize]) -> V {
    if ct.shape_vec()[..] == *shape {
        ct
    } else {
        ct.broadcast_to(shape)
    }
}

/// A rank-0 cotangent: the same value for every element, so it stays
/// itself under any reshape, permutation or added or removed axis.
fn constant<V: Value>(ct: &V) -> bool {
    ct.ndim() == 0
}

/// The cotangent of operand `x` of a broadcasting binary op whose other
/// operand has shape `other`, from the output's cotangent `ct`: `ct`
/// itself when `x` has the output's shape, else the full cotangent summed
/// to `x`'s shape.
fn unbroadcast<V: Value>(x: &[usize], other: &[usize], ct: &V) -> V {
    let out = primitives::binary::broadcast_shapes("tail", x, other);
    if out[..] == *x {
        return ct.clone();
    }
    full(ct, &out).sum_to_shape(x)
}

/// `ct` for an input of shape `x` of a shape op with output shape `out`,
/// through `f` (the op's reverse on a full cotangent): constants pass as
/// they are.
fn through<V: Value>(ct: &V, out: &[usize], f: impl FnOnce(&V) -> V) -> V {
    if constant(ct) {
        return ct.clone();
    }
    f(&full(ct, out))
}

fn keep(x: &[usize], axes: &[usize], keepdim: bool) -> Shape {
    x.iter()
        .enumerate()
        .filter_map(|(i, &d)| match (axes.contains(&i), keepdim) {
            (false, _) => Some(d),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect()
}

/// The cotangent of a reduction's input (shape `x`, reduced `axes`) from
/// the output's `ct`, left to broadcast: the reduced axes are put back as
/// length-1 axes when `keepdim` did not keep them.
fn kept<V: ArrayValue>(x: &[usize], axes: &[usize], keepdim: bool, ct: &V) -> V {
    if keepdim || constant(ct) {
        return ct.clone();
    }
    full(ct, &keep(x, axes, false)).reshape(&keep(x, axes, true))
}

/// `-x`: `−ȳ`.
pub mod neg {
    use super::*;
    #[inline]
    pub fn out_shape(x: &[usize]) -> Shape {
        Shape::from_slice(x)
    }
    #[inline]
    pub fn vjp_0<V: Value>(_x: &[usize], ct: &V) -> V {
        ct.neg()
    }
}

// Unary ops whose derivative reads only their input (`reads: x` in the
// registry) and binary ops whose partials read only their inputs (`reads:
// inputs`): the rules of `crate::primitives` without the output.
nabla_ops::unary_ops!(tail_entries unary);
nabla_ops::binary_ops!(tail_entries binary);

/// `x²`: `2 x ȳ`, accumulated in one fused pass.
pub mod square {
    use super::*;
    #[inline]
    pub fn out_shape(x: &[usize]) -> Shape {
        Shape::from_slice(x)
    }
    #[inline]
    pub fn acc_0<V: Value>(slot: &mut Option<V>, x: &V, ct: &V) {
        *slot = Some(match slot.take() {
            None => ct.mul_scaled(x, 2.0),
            // An earlier cotangent may still be unbroadcast (module docs).
            Some(old) if old.shape_vec() != x.shape_vec() => old.add(&ct.mul_scaled(x, 2.0)),
            Some(old) => old.add_mul_scaled(ct, x, 2.0),
        });
    }
}

/// `x + c`: `ȳ`.
pub mod add_scalar {
    use super::*;
    #[inline]
    pub fn out_shape(x: &[usize], _c: f64) -> Shape {
        Shape::from_slice(x)
    }
    #[inline]
    pub fn vjp_0<V: Value>(_x: &[usize], _c: f64, ct: &V) -> V {
        ct.clone()
    }
}

/// `x · c`: `c · ȳ`.
pub mod mul_scalar {
    use super::*;
    #[inline]
    pub fn out_shape(x: &[usize], _c: f64) -> Shape {
        Shape::from_slice(x)
    }
    #[inline]
    pub fn vjp_0<V: Value>(_x: &[usize], c: f64, ct: &V) -> V {
        primitives::unary::affine::vjp(c, ct)
    }
}

/// Broadcasting binary ops: the output shape.
#[track_caller]
fn broadcast(a: &[usize], b: &[usize], op: &str) -> Shape {
    primitives::binary::broadcast_shapes(op, a, b)
}

/// `a + b`: `ȳ` summed to each input's shape.
pub mod add {
    use super::*;
    #[track_caller]
    #[inline]
    pub fn out_shape(a: &[usize], b: &[usize]) -> Shape {
        broadcast(a, b, "add")
    }
    #[inline]
    pub fn vjp_0<V: Value>(a: &[usize], b: &[usize], ct: &V) -> V {
        unbroadcast(a, b, ct)
    }
    #[inline]
    pub fn vjp_1<V: Value>(a: &[usize], b: &[usize], ct: &V) -> V {
        unbroadcast(b, a, ct)
    }
}

/// `a − b`: `ȳ` and `−ȳ` summed to each input's shape.
pub mod sub {
    use super::*;
    #[track_caller]
    #[inline]
    pub fn out_shape(a: &[usize], b: &[usize]) -> Shape {
        broadcast(a, b, "sub")
    }
    #[inline]
    pub fn vjp_0<V: Value>(a: &[usize], b: &[usize], ct: &V) -> V {
        unbroadcast(a, b, ct)
    }
    #[inline]
    pub fn vjp_1<V: Value>(a: &[usize], b: &[usize], ct: &V) -> V {
        unbroadcast(b, a, &ct.neg())
    }
}

/// `a · b`: `ȳ · b` and `ȳ · a` summed to each input's shape.
pub mod mul {
    use super::*;
    #[track_caller]
    #[inline]
    pub fn out_shape(a: &[usize], b: &[usize]) -> Shape {
        broadcast(a, b, "mul")
    }
    #[inline]
    pub fn vjp_0<V: Value>(a: &V, b: &V, ct: &V) -> V {
        operand(a, b, ct)
    }
    #[inline]
    pub fn vjp_1<V: Value>(a: &V, b: &V, ct: &V) -> V {
        operand(b, a, ct)
    }
    /// `ȳ · other` for the operand `x`: summed to `x`'s shape when `other`
    /// has the output's shape, left unbroadcast when `x` has it, and from
    /// the full `ȳ` otherwise.
    fn operand<V: Value>(x: &V, other: &V, ct: &V) -> V {
        let (sx, so) = (x.shape_vec(), other.shape_vec());
        let out = primitives::binary::broadcast_shapes("mul", &sx, &so);
        if so == out {
            ct.mul(other).sum_to_shape(&sx)
        } else if sx == out {
            ct.mul(other)
        } else {
            full(ct, &out).mul(other).sum_to_shape(&sx)
        }
    }
}

/// `a @ b` (NumPy's 1-D promotions): `ȳ bᵀ` and `aᵀ ȳ`, from the full
/// cotangent.
pub mod matmul {
    use super::*;
    #[track_caller]
    #[inline]
    pub fn out_shape(a: &[usize], b: &[usize]) -> Shape {
        primitives::linalg::matmul::out_shape(a, b)
    }
    #[inline]
    pub fn vjp_0<V: ArrayValue>(a: &V, b: &V, ct: &V) -> V {
        let out = out_shape(&a.shape_vec(), &b.shape_vec());
        crate::entry::matmul::vjp_0(a, b, &full(ct, &out))
    }
    #[inline]
    pub fn vjp_1<V: ArrayValue>(a: &V, b: &V, ct: &V) -> V {
        let out = out_shape(&a.shape_vec(), &b.shape_vec());
        crate::entry::matmul::vjp_1(a, b, &full(ct, &out))
    }
}

/// Sum of all elements: `ȳ` broadcast back.
pub mod sum {
    use super::*;
    #[inline]
    pub fn out_shape(_x: &[usize]) -> Shape {
        Shape::new()
    }
    #[inline]
    pub fn vjp_0<V: ArrayValue>(_x: &[usize], ct: &V) -> V {
        ct.clone()
    }
}

/// Sum over axes.
pub mod sum_axes {
    use super::*;
    #[track_caller]
    #[inline]
    pub fn out_shape(x: &[usize], axes: &[isize], keepdim: bool) -> Shape {
        keep(x, &norm_axes("sum", axes, x.len()), keepdim)
    }
    #[inline]
    pub fn vjp_0<V: ArrayValue>(x: &[usize], axes: &[isize], keepdim: bool, ct: &V) -> V {
        kept(x, &norm_axes("sum", axes, x.len()), keepdim, ct)
    }
}

/// Mean of all elements: `ȳ / n` broadcast back.
pub mod mean {
    use super::*;
    #[inline]
    pub fn out_shape(_x: &[usize]) -> Shape {
        Shape::new()
    }
    #[inline]
    pub fn vjp_0<V: ArrayValue>(x: &[usize], ct: &V) -> V {
        ct.mul_scalar(1.0 / count_of(x, &all_axes(x.len())))
    }
}

/// Mean over axes.
pub mod mean_axes {
    use super::*;
    #[track_caller]
    #[inline]
    pub fn out_shape(x: &[usize], axes: &[isize], keepdim: bool) -> Shape {
        keep(x, &norm_axes("mean", axes, x.len()), keepdim)
    }
    #[inline]
    pub fn vjp_0<V: ArrayValue>(x: &[usize], axes: &[isize], keepdim: bool, ct: &V) -> V {
        let ax = norm_axes("mean", axes, x.len());
        kept(x, &ax, keepdim, ct).mul_scalar(1.0 / count_of(x, &ax))
    }
}

/// Shape ops: their reverse steps need only the input's shape.
pub mod reshape {
    use super::*;
    #[track_caller]
    #[inline]
    pub fn out_shape(x: &[usize], shape: &[usize]) -> Shape {
        primitives::shape::reshape::out_shape(x, shape)
    }
    #[inline]
    pub fn vjp_0<V: ArrayValue>(x: &[usize], shape: &[usize], ct: &V) -> V {
        through(ct, shape, |ct| primitives::shape::reshape::vjp(x, ct))
    }
}

pub mod flatten {
    use super::*;
    #[inline]
    pub fn out_shape(x: &[usize]) -> Shape {
        Shape::from_slice(&[x.iter().product()])
    }
    #[inline]
    pub fn vjp_0<V: ArrayValue>(x: &[usize], ct: &V) -> V {
        through(ct, &out_shape(x), |ct| {
            primitives::shape::reshape::vjp(x, ct)
        })
    }
}

pub mod permute {
    use super::*;
    #[track_caller]
    #[inline]
    pub fn out_shape(x: &[usize], perm: &[usize]) -> Shape {
        primitives::shape::permute::out_shape(x, perm)
    }
    #[inline]
    pub fn vjp_0<V: ArrayValue>(x: &[usize], perm: &[usize], ct: &V) -> V {
        through(ct, &out_shape(x, perm), |ct| {
            primitives::shape::permute::vjp(perm, ct)
        })
    }
}

pub mod transpose {
    use super::*;
    #[track_caller]
    #[inline]
    pub fn out_shape(x: &[usize]) -> Shape {
        super::permute::out_shape(x, &[1, 0])
    }
    #[inline]
    pub fn vjp_0<V: ArrayValue>(x: &[usize], ct: &V) -> V {
        through(ct, &out_shape(x), |ct| ct.permute(&[1, 0]))
    }
}

pub mod broadcast_to {
    use super::*;
    #[track_caller]
    #[inline]
    pub fn out_shape(x: &[usize], shape: &[usize]) -> Shape {
        primitives::shape::broadcast_to::out_shape(x, shape)
    }
    #[inline]
    pub fn vjp_0<V: Value>(x: &[usize], shape: &[usize], ct: &V) -> V {
        full(ct, shape).sum_to_shape(x)
    }
}

pub mod expand_dims {
    use super::*;
    #[track_caller]
    #[inline]
    pub fn out_shape(x: &[usize], axis: isize) -> Shape {
        expanded(x, axis)
    }
    #[inline]
    pub fn vjp_0<V: ArrayValue>(x: &[usize], axis: isize, ct: &V) -> V {
        through(ct, &out_shape(x, axis), |ct| ct.reshape(x))
    }
}

pub mod squeeze {
    use super::*;
    #[track_caller]
    #[inline]
    pub fn out_shape(x: &[usize], axis: isize) -> Shape {
        squeezed(x, axis)
    }
    #[inline]
    pub fn vjp_0<V: ArrayValue>(x: &[usize], axis: isize, ct: &V) -> V {
        through(ct, &out_shape(x, axis), |ct| ct.reshape(x))
    }
}
