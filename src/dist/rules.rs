//! The sharding rule of every value-type method, in one place: the
//! distributed value (`darray_value.rs`) and the shape-only recorder
//! (`trace.rs`) both build each op's [`Rule`] here, so a plan recorded
//! from one applies to the other op by op.
//!
//! Every elementwise op of the registry (`nabla_ops::unary_ops!` and
//! `binary_ops!`) shares all its factors; which of them let pending sums
//! through is [`unary_linearity`] and [`binary_linearity`]. The other
//! primitives lower to the methods below, one rule each.

use super::factors::{Linearity, Rule, cut_axes};
use ndarray::Slice;
use std::ops::Range;

/// What a registry unary op does with a pending sum: only `neg` is linear.
pub(crate) fn unary_linearity(method: &str) -> Linearity {
    match method {
        "neg" => Linearity::Each(1),
        _ => Linearity::None,
    }
}

/// What a registry binary op does with pending sums: `add` and `sub`
/// are additive, `mul` linear in each operand, `div` in the numerator.
pub(crate) fn binary_linearity(method: &str) -> Linearity {
    match method {
        "add" | "sub" => Linearity::Sum,
        "mul" => Linearity::Each(0b11),
        "div" => Linearity::Each(0b01),
        _ => Linearity::None,
    }
}

/// NumPy's broadcast of two shapes (the caller's op checks them).
pub(crate) fn broadcast_shapes(a: &[usize], b: &[usize]) -> Vec<usize> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|j| {
            let x = if j + a.len() >= n { a[j + a.len() - n] } else { 1 };
            let y = if j + b.len() >= n { b[j + b.len() - n] } else { 1 };
            if x == 1 { y } else { x }
        })
        .collect()
}

/// A registry unary op, `add_scalar`, `mul_scalar`, `stop_gradient`.
pub(crate) fn unary(name: &'static str, x: &[usize]) -> Rule {
    let linear = match name {
        "mul_scalar" | "stop_gradient" => Linearity::Each(1),
        _ => unary_linearity(name),
    };
    Rule::elementwise(name, &[x], x, linear)
}

/// `full_like`: the operand's shape and split, not its values.
pub(crate) fn full_like(x: &[usize]) -> Rule {
    Rule::elementwise("full_like", &[x], x, Linearity::Shape)
}

/// A registry binary op, or a comparison mask (`cmp`).
pub(crate) fn binary(name: &'static str, a: &[usize], b: &[usize]) -> Rule {
    let out = broadcast_shapes(a, b);
    Rule::elementwise(name, &[a, b], &out, binary_linearity(name))
}

/// `select(mask, a, b)`: elementwise over `a` and `b` (the mask is a
/// constant, cut to each rank's block).
pub(crate) fn select(a: &[usize], b: &[usize]) -> Rule {
    let out = broadcast_shapes(a, b);
    Rule::elementwise("select", &[a, b], &out, Linearity::Sum)
}

/// `sum_axes`, `max_axes`, `min_axes`, `prod_axes`.
pub(crate) fn reduce(name: &'static str, x: &[usize], axes: &[usize], keepdim: bool) -> Rule {
    Rule::reduce(name, x, axes, keepdim, name == "sum_axes")
}

/// `chooser_jvp(x, y, axes, keepdim, dx)` (output shaped like `y`) and
/// `chooser_vjp(x, y, axes, keepdim, ct)` (output shaped like `x`): the
/// reduced axes whole, the others shared; linear in the last operand.
pub(crate) fn chooser(
    name: &'static str,
    x: &[usize],
    y: &[usize],
    axes: &[usize],
    keepdim: bool,
    last: &[usize],
) -> Rule {
    let out = if name == "chooser_jvp" { y } else { x };
    let mut r = Rule::along(name, x, x, axes, Linearity::Each(0b100));
    // Operands x, y, last; the output is x-shaped (vjp) or y-shaped (jvp).
    let xf = r.operands[0].clone();
    let yf: Vec<_> = (0..x.len())
        .filter(|k| !axes.contains(k) || keepdim)
        .map(|k| if axes.contains(&k) { None } else { xf[k] })
        .collect();
    r.shapes = vec![x.to_vec(), y.to_vec(), last.to_vec()];
    r.operands = vec![xf.clone(), yf.clone(), if name == "chooser_jvp" { xf.clone() } else { yf.clone() }];
    r.output = if name == "chooser_jvp" { yf } else { xf };
    r.out = out.to_vec();
    r
}

/// `cumsum_axis`: the axis whole.
pub(crate) fn cumsum(x: &[usize], axis: usize) -> Rule {
    Rule::along("cumsum", x, x, &[axis], Linearity::Each(1))
}

fn ranges(shape: &[usize], slices: &[Slice]) -> Vec<Range<usize>> {
    shape
        .iter()
        .zip(slices)
        .map(|(&d, s)| {
            let start = if s.start < 0 { (d as isize + s.start).max(0) as usize } else { (s.start as usize).min(d) };
            let end = match s.end {
                Some(e) if e < 0 => (d as isize + e).max(0) as usize,
                Some(e) => (e as usize).min(d),
                None => d,
            };
            if s.step == 1 && start <= end { start..end } else { 0..d + 1 }
        })
        .collect()
}

/// `slice`: the axes it cuts whole, the others shared.
pub(crate) fn slice(x: &[usize], slices: &[Slice], out: &[usize]) -> Rule {
    let cut = cut_axes(x, &ranges(x, slices));
    Rule::along("slice", x, out, &cut, Linearity::Each(1))
}

/// `slice_place`: the transpose of `slice` (operand the slice, output the
/// whole `shape`).
pub(crate) fn slice_place(x: &[usize], shape: &[usize], slices: &[Slice]) -> Rule {
    let cut = cut_axes(shape, &ranges(shape, slices));
    Rule::along("slice_place", x, shape, &cut, Linearity::Each(1))
}

/// `index_select` and `index_add` along `axis`: the axis whole.
pub(crate) fn along_axis(name: &'static str, x: &[usize], out: &[usize], axis: usize) -> Rule {
    Rule::along(name, x, out, &[axis], Linearity::Each(1))
}

/// `concat` along `axis`.
pub(crate) fn concat(parts: &[&[usize]], axis: usize) -> Rule {
    let mut out = parts[0].to_vec();
    out[axis] = parts.iter().map(|p| p[axis]).sum();
    Rule::concat(parts, axis, &out)
}

/// `matmul`, with NumPy's output shape.
pub(crate) fn matmul(a: &[usize], b: &[usize]) -> Rule {
    let (an, bn) = (a.len(), b.len());
    let batch_a = &a[..an.saturating_sub(2)];
    let batch_b = if bn >= 2 { &b[..bn - 2] } else { &[][..] };
    let mut out = broadcast_shapes(batch_a, batch_b);
    if an >= 2 {
        out.push(a[an - 2]);
    }
    if bn >= 2 {
        out.push(b[bn - 1]);
    }
    Rule::matmul(a, b, &out)
}

/// `reshape`, `permute`, `broadcast_to`, `sum_to_shape`.
pub(crate) fn reshape(x: &[usize], to: &[usize]) -> Rule {
    Rule::reshape(x, to)
}

/// See [`reshape`].
pub(crate) fn permute(x: &[usize], perm: &[usize]) -> Rule {
    Rule::permute(x, perm)
}

/// See [`reshape`].
pub(crate) fn broadcast_to(x: &[usize], to: &[usize]) -> Rule {
    Rule::broadcast(x, to)
}

/// See [`reshape`].
pub(crate) fn sum_to_shape(x: &[usize], to: &[usize]) -> Rule {
    Rule::sum_to(x, to)
}

/// `lift`: a constant made inside the program.
pub(crate) fn constant(shape: &[usize]) -> Rule {
    Rule::source("constant", shape)
}

/// A custom op (`linalg`, user ops): no rule fits, every operand and the
/// output whole.
pub(crate) fn custom(name: &'static str, shapes: &[&[usize]], out: &[usize]) -> Rule {
    Rule::replicated(name, shapes, out)
}
