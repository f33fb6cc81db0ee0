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
//! (`&[usize]`), and a mismatch does not compile. The rules are the same as
//! in [`crate::ops`], written without the output.

#![allow(missing_docs)]

use super::{all_axes, count_of, expanded, squeezed};
use crate::array::norm_axes;
use crate::ops;
use crate::{ArrayValue, Shape, Value};

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

/// `-x`: `−ȳ`.
pub mod neg {
    use super::*;
    pub fn out_shape(x: &[usize]) -> Shape {
        Shape::from_slice(x)
    }
    pub fn vjp_0<V: Value>(_x: &[usize], ct: &V) -> V {
        ct.neg()
    }
}

/// `sin x`: `ȳ · cos x`.
pub mod sin {
    use super::*;
    pub fn out_shape(x: &[usize]) -> Shape {
        Shape::from_slice(x)
    }
    pub fn vjp_0<V: Value>(x: &V, ct: &V) -> V {
        ct.mul(&x.cos())
    }
}

/// `cos x`: `−ȳ · sin x`, in one fused pass.
pub mod cos {
    use super::*;
    pub fn out_shape(x: &[usize]) -> Shape {
        Shape::from_slice(x)
    }
    pub fn vjp_0<V: Value>(x: &V, ct: &V) -> V {
        ct.mul_scaled(&x.sin(), -1.0)
    }
}

/// `x²`: `2 x ȳ`, accumulated in one fused pass.
pub mod square {
    use super::*;
    pub fn out_shape(x: &[usize]) -> Shape {
        Shape::from_slice(x)
    }
    pub fn acc_0<V: Value>(slot: &mut Option<V>, x: &V, ct: &V) {
        *slot = Some(match slot.take() {
            None => ct.mul_scaled(x, 2.0),
            Some(old) => old.add_mul_scaled(ct, x, 2.0),
        });
    }
}

/// `x + c`: `ȳ`.
pub mod add_scalar {
    use super::*;
    pub fn out_shape(x: &[usize], _c: f64) -> Shape {
        Shape::from_slice(x)
    }
    pub fn vjp_0<V: Value>(_x: &[usize], _c: f64, ct: &V) -> V {
        ct.clone()
    }
}

/// `x · c`: `c · ȳ`.
pub mod mul_scalar {
    use super::*;
    pub fn out_shape(x: &[usize], _c: f64) -> Shape {
        Shape::from_slice(x)
    }
    pub fn vjp_0<V: Value>(_x: &[usize], c: f64, ct: &V) -> V {
        ops::unary::affine::vjp(c, ct)
    }
}

/// Broadcasting binary ops: the output shape.
#[track_caller]
fn broadcast(a: &[usize], b: &[usize], op: &str) -> Shape {
    ops::binary::broadcast_shapes(op, a, b)
}

/// `a + b`: `ȳ` summed to each input's shape.
pub mod add {
    use super::*;
    #[track_caller]
    pub fn out_shape(a: &[usize], b: &[usize]) -> Shape {
        broadcast(a, b, "add")
    }
    pub fn vjp_0<V: Value>(a: &[usize], _b: &[usize], ct: &V) -> V {
        ct.sum_to_shape(a)
    }
    pub fn vjp_1<V: Value>(_a: &[usize], b: &[usize], ct: &V) -> V {
        ct.sum_to_shape(b)
    }
}

/// `a − b`: `ȳ` and `−ȳ` summed to each input's shape.
pub mod sub {
    use super::*;
    #[track_caller]
    pub fn out_shape(a: &[usize], b: &[usize]) -> Shape {
        broadcast(a, b, "sub")
    }
    pub fn vjp_0<V: Value>(a: &[usize], _b: &[usize], ct: &V) -> V {
        ct.sum_to_shape(a)
    }
    pub fn vjp_1<V: Value>(_a: &[usize], b: &[usize], ct: &V) -> V {
        ct.neg().sum_to_shape(b)
    }
}

/// `a · b`: `ȳ · b` and `ȳ · a` summed to each input's shape.
pub mod mul {
    use super::*;
    #[track_caller]
    pub fn out_shape(a: &[usize], b: &[usize]) -> Shape {
        broadcast(a, b, "mul")
    }
    pub fn vjp_0<V: Value>(a: &V, b: &V, ct: &V) -> V {
        ct.mul(b).sum_to_shape(&a.shape_vec())
    }
    pub fn vjp_1<V: Value>(a: &V, b: &V, ct: &V) -> V {
        ct.mul(a).sum_to_shape(&b.shape_vec())
    }
}

/// Sum of all elements: `ȳ` broadcast back.
pub mod sum {
    use super::*;
    pub fn out_shape(_x: &[usize]) -> Shape {
        Shape::new()
    }
    pub fn vjp_0<V: ArrayValue>(x: &[usize], ct: &V) -> V {
        ops::reduce::sum::vjp(x, &all_axes(x.len()), false, ct)
    }
}

/// Sum over axes.
pub mod sum_axes {
    use super::*;
    #[track_caller]
    pub fn out_shape(x: &[usize], axes: &[isize], keepdim: bool) -> Shape {
        keep(x, &norm_axes("sum", axes, x.len()), keepdim)
    }
    pub fn vjp_0<V: ArrayValue>(x: &[usize], axes: &[isize], keepdim: bool, ct: &V) -> V {
        ops::reduce::sum::vjp(x, &norm_axes("sum", axes, x.len()), keepdim, ct)
    }
}

/// Mean of all elements: `ȳ / n` broadcast back.
pub mod mean {
    use super::*;
    pub fn out_shape(_x: &[usize]) -> Shape {
        Shape::new()
    }
    pub fn vjp_0<V: ArrayValue>(x: &[usize], ct: &V) -> V {
        let ax = all_axes(x.len());
        ops::reduce::sum::vjp(x, &ax, false, ct).mul_scalar(1.0 / count_of(x, &ax))
    }
}

/// Mean over axes.
pub mod mean_axes {
    use super::*;
    #[track_caller]
    pub fn out_shape(x: &[usize], axes: &[isize], keepdim: bool) -> Shape {
        keep(x, &norm_axes("mean", axes, x.len()), keepdim)
    }
    pub fn vjp_0<V: ArrayValue>(x: &[usize], axes: &[isize], keepdim: bool, ct: &V) -> V {
        let ax = norm_axes("mean", axes, x.len());
        ops::reduce::sum::vjp(x, &ax, keepdim, ct).mul_scalar(1.0 / count_of(x, &ax))
    }
}

/// Shape ops: their reverse steps need only the input's shape.
pub mod reshape {
    use super::*;
    #[track_caller]
    pub fn out_shape(x: &[usize], shape: &[usize]) -> Shape {
        ops::shape::reshape::out_shape(x, shape)
    }
    pub fn vjp_0<V: ArrayValue>(x: &[usize], _shape: &[usize], ct: &V) -> V {
        ops::shape::reshape::vjp(x, ct)
    }
}

pub mod flatten {
    use super::*;
    pub fn out_shape(x: &[usize]) -> Shape {
        Shape::from_slice(&[x.iter().product()])
    }
    pub fn vjp_0<V: ArrayValue>(x: &[usize], ct: &V) -> V {
        ops::shape::reshape::vjp(x, ct)
    }
}

pub mod permute {
    use super::*;
    #[track_caller]
    pub fn out_shape(x: &[usize], perm: &[usize]) -> Shape {
        ops::shape::permute::out_shape(x, perm)
    }
    pub fn vjp_0<V: ArrayValue>(_x: &[usize], perm: &[usize], ct: &V) -> V {
        ops::shape::permute::vjp(perm, ct)
    }
}

pub mod transpose {
    use super::*;
    #[track_caller]
    pub fn out_shape(x: &[usize]) -> Shape {
        super::permute::out_shape(x, &[1, 0])
    }
    pub fn vjp_0<V: ArrayValue>(_x: &[usize], ct: &V) -> V {
        ct.permute(&[1, 0])
    }
}

pub mod broadcast_to {
    use super::*;
    #[track_caller]
    pub fn out_shape(x: &[usize], shape: &[usize]) -> Shape {
        ops::shape::broadcast_to::out_shape(x, shape)
    }
    pub fn vjp_0<V: Value>(x: &[usize], _shape: &[usize], ct: &V) -> V {
        ct.sum_to_shape(x)
    }
}

pub mod expand_dims {
    use super::*;
    #[track_caller]
    pub fn out_shape(x: &[usize], axis: isize) -> Shape {
        expanded(x, axis)
    }
    pub fn vjp_0<V: ArrayValue>(x: &[usize], _axis: isize, ct: &V) -> V {
        ct.reshape(x)
    }
}

pub mod squeeze {
    use super::*;
    #[track_caller]
    pub fn out_shape(x: &[usize], axis: isize) -> Shape {
        squeezed(x, axis)
    }
    pub fn vjp_0<V: ArrayValue>(x: &[usize], _axis: isize, ct: &V) -> V {
        ct.reshape(x)
    }
}
