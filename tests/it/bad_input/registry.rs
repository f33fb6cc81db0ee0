//! Every op of the registry (`nabla_ops`) with drawn arguments. Unary and
//! binary ops come from the registry's lists themselves; the other
//! primitives are called by name ([`call_other`]), and a name the list
//! gains without a call here fails [`every_other_primitive`].

use super::Cases;
use super::draw::{Drawn, Gen, broadcast, contiguous, same};
use nabla::{Array, Value};

/// Draws per op.
const DRAWS: u64 = 24;

/// A static parameter of a unary op from a drawn `f64`.
trait FromParam {
    fn from_param(v: f64) -> Self;
}
impl FromParam for f64 {
    fn from_param(v: f64) -> f64 {
        v
    }
}
impl FromParam for i32 {
    fn from_param(v: f64) -> i32 {
        v as i32
    }
}

type UnaryCall = fn(&Array, &[f64]) -> Array;

/// `(registry name, method, function, call)` of every unary op; the call
/// takes its parameters, in order, from the slice.
macro_rules! unary_list {
    ($($(#[$doc:meta])* $name:ident $k:ident ($($p:ident: $t:ty),*) {
        method: $m:ident, func: $f:ident, $($rest:tt)*
    })*) => {
        &[$((
            stringify!($name),
            stringify!($m),
            stringify!($f),
            {
                #[allow(unused_mut, unused_variables)]
                fn call(x: &Array, ps: &[f64]) -> Array {
                    let mut ps = ps.iter().copied();
                    x.$m($(<$t as FromParam>::from_param({
                        let $p = ps.next().unwrap();
                        $p
                    })),*)
                }
                call as UnaryCall
            },
        )),*]
    };
}

type BinaryCall = fn(&Array, &Array) -> Array;

/// `(registry name, method, function, call)` of every binary op.
macro_rules! binary_list {
    ($($(#[$doc:meta])* $name:ident $k:ident { method: $m:ident, func: $f:ident, $($rest:tt)* })*) => {
        &[$((
            stringify!($name),
            stringify!($m),
            stringify!($f),
            (|a: &Array, b: &Array| a.$m(b)) as BinaryCall,
        )),*]
    };
}

/// Float input in any shape and layout must give the same shape and
/// dtype, equal to the op on a contiguous copy; any other dtype must be
/// accepted or rejected with a proper message.
#[test]
fn every_unary_op() {
    let ops: &[(&str, &str, &str, UnaryCall)] = nabla_ops::unary_ops!(unary_list);
    let mut cases = Cases::new("every_unary_op");
    for (k, &(name, method, func, call)) in ops.iter().enumerate() {
        let mut g = Gen::new(1000 + k as u64);
        for draw in 0..DRAWS {
            let Drawn { array: x, desc } = g.array();
            let ps = [g.param(), g.param()];
            let what = format!("{name}(x: {desc}, params {ps:?}) draw {draw}");
            let xc = x.clone();
            if !x.dtype().is_float() {
                cases.expect_ok_or_rejected(&[name, method, func], &what, move || {
                    call(&xc, &ps);
                });
                continue;
            }
            let Some(y) = cases.expect_ok(&what, move || call(&xc, &ps)) else {
                continue;
            };
            if y.shape() != x.shape() || y.dtype() != x.dtype() {
                cases.fail(format!("{what}: gave {} {:?}", y.dtype(), y.shape()));
            } else if !same(&y, &call(&contiguous(&x), &ps)) {
                cases.fail(format!("{what}: differs from the op on a contiguous copy"));
            }
        }
    }
    cases.finish();
}

/// Two floats of one dtype and broadcasting shapes must give the
/// broadcast shape (equal to the op on contiguous copies); anything else
/// must be rejected with a message naming the op.
#[test]
fn every_binary_op() {
    let ops: &[(&str, &str, &str, BinaryCall)] = nabla_ops::binary_ops!(binary_list);
    let mut cases = Cases::new("every_binary_op");
    for (k, &(name, method, func, call)) in ops.iter().enumerate() {
        let mut g = Gen::new(2000 + k as u64);
        for draw in 0..DRAWS {
            let a = g.array();
            let b = match g.below(4) {
                // The same shape; a broadcastable one; any shape.
                0 | 1 => {
                    let d = if g.chance(0.8) {
                        a.array.dtype()
                    } else {
                        g.dtype()
                    };
                    g.array_of(a.array.shape(), d)
                }
                2 => {
                    let s: Vec<usize> = a.array.shape()[g.below(a.array.ndim() + 1)..]
                        .iter()
                        .map(|&n| if g.chance(0.5) { 1 } else { n })
                        .collect();
                    let d = a.array.dtype();
                    g.array_of(&s, d)
                }
                _ => g.array(),
            };
            let what = format!("{name}(a: {}, b: {}) draw {draw}", a.desc, b.desc);
            let (x, y) = (a.array, b.array);
            let valid = x.dtype().is_float() && x.dtype() == y.dtype();
            let out = broadcast(x.shape(), y.shape());
            let (xc, yc) = (x.clone(), y.clone());
            match out {
                Some(shape) if valid => {
                    let Some(z) = cases.expect_ok(&what, move || call(&xc, &yc)) else {
                        continue;
                    };
                    if z.shape() != shape {
                        cases.fail(format!("{what}: shape {:?}, want {shape:?}", z.shape()));
                    } else if !same(&z, &call(&contiguous(&x), &contiguous(&y))) {
                        cases.fail(format!("{what}: differs from contiguous copies"));
                    }
                }
                _ => cases.expect_rejected(&[name, method, func], &what, move || call(&xc, &yc)),
            }
        }
    }
    cases.finish();
}

macro_rules! other_names {
    ($($name:ident [$($n:ident)*] $v:literal, $p:literal, tail $t:tt, reads $([$($r:tt)*])+;)*) => {
        &[$((stringify!($name), &[$(stringify!($n)),*] as &[&str])),*]
    };
}

/// Calls the primitive `name` with arguments drawn from `g`, or gives
/// `None` for a name this test does not know. Validity is the op's
/// business: the caller only checks that a rejection is well formed.
#[allow(clippy::type_complexity)]
fn call_other(name: &str, g: &mut Gen) -> Option<(String, Box<dyn FnOnce() -> Array + Send>)> {
    let Drawn { array: x, desc } = g.array();
    let nd = x.ndim();
    let (ax, axes, keep) = (g.axis(nd), g.axes(nd), g.chance(0.5));
    let c = g.param();
    let other = g.array();
    let shape = if g.chance(0.5) {
        g.shape()
    } else {
        let mut s = x.shape().to_vec();
        s.reverse();
        s
    };
    let len = x.shape().first().copied().unwrap_or(1);
    let idx = g.indices(len);
    let (lo, hi) = (g.below(len + 2), g.below(len + 2));
    let d = format!(
        "x: {desc}, other: {}, axis {ax}, axes {axes:?}, keepdim {keep}, c {c}, shape {shape:?}, idx {idx:?}, \
         range {lo}..{hi}",
        other.desc
    );
    let o = other.array;
    let f: Box<dyn FnOnce() -> Array + Send> = match name {
        "add_scalar" => Box::new(move || Value::add_scalar(&x, c)),
        "mul_scalar" => Box::new(move || Value::mul_scalar(&x, c)),
        "sum" => Box::new(move || x.sum()),
        "sum_axes" => Box::new(move || x.sum_axes(&axes, keep)),
        "max" => Box::new(move || x.max()),
        "max_axes" => Box::new(move || x.max_axes(&axes, keep)),
        "min" => Box::new(move || x.min()),
        "min_axes" => Box::new(move || x.min_axes(&axes, keep)),
        "prod" => Box::new(move || x.prod()),
        "prod_axes" => Box::new(move || x.prod_axes(&axes, keep)),
        "mean" => Box::new(move || x.mean()),
        "mean_axes" => Box::new(move || x.mean_axes(&axes, keep)),
        "cumsum" => Box::new(move || x.cumsum(ax)),
        "matmul" => Box::new(move || x.matmul(&o)),
        "dot" => Box::new(move || x.dot(&o)),
        "outer" => Box::new(move || x.outer(&o)),
        "reshape" => Box::new(move || x.reshape(&shape)),
        "flatten" => Box::new(move || x.flatten()),
        "permute" => {
            let perm: Vec<usize> = axes.iter().map(|&a| a.unsigned_abs()).collect();
            Box::new(move || x.permute(&perm))
        }
        "transpose" => Box::new(move || x.transpose()),
        "broadcast_to" => Box::new(move || x.broadcast_to(&shape)),
        "expand_dims" => Box::new(move || x.expand_dims(ax)),
        "squeeze" => Box::new(move || x.squeeze(ax)),
        "slice_axis" => Box::new(move || x.slice_axis(ax, lo..hi)),
        "index_select" => Box::new(move || x.index_select(ax, &idx)),
        "index_add" => Box::new(move || x.index_add(&shape, ax, &idx)),
        _ => return None,
    };
    Some((d, f))
}

/// Every primitive of `other_ops!` that users call by name, with drawn
/// arguments (valid and not); entries without a user-facing name
/// (`add_const`, `mul_const`: generated code's own) are skipped.
#[test]
fn every_other_primitive() {
    let ops: &[(&str, &[&str])] = nabla_ops::other_ops!(other_names);
    let mut cases = Cases::new("every_other_primitive");
    for (k, &(name, users)) in ops.iter().enumerate() {
        if users.is_empty() {
            continue;
        }
        let mut g = Gen::new(3000 + k as u64);
        for draw in 0..DRAWS * 2 {
            let Some((d, f)) = call_other(name, &mut g) else {
                cases.fail(format!(
                    "{name}: a registry op this test does not call; add it to call_other"
                ));
                break;
            };
            // The `_axes` forms report under the short name, the scalar
            // ops under `affine` (the method they call).
            let short = match name {
                "add_scalar" | "mul_scalar" => "affine",
                _ => name.trim_end_matches("_axes"),
            };
            let what = format!("{name}({d}) draw {draw}");
            cases.expect_ok_or_rejected(&[name, short], &what, f);
        }
    }
    cases.finish();
}
