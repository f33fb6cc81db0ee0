//! Output-only tails: the ops after the last one whose value a derivative
//! reads, which the reverse sweeps of `jacrev` and of `grad` inside other
//! transforms skip (they compute only the tail's shapes). For every op that
//! can be in a tail, the pullback without the tail equals the full one, and
//! `jacrev`, `hessian` and `vmap(grad)` equal forward-only Hessians and
//! per-example calls.

use crate::common::*;
use nabla::prelude::*;

/// Every op that can be in an output-only tail, in tail position, with
/// broadcasting and `keepdim`: `cos` runs (the `square` reads it), the rest
/// is the tail.
#[differentiable]
fn tail_a(x: &Array, w: &Array) -> Array {
    let a = x.cos();
    let b = x * w;
    let c = (a.square() + b - w.sin()).sum_axes(&[1], true) * 0.5 + 2.0;
    c.mean()
}

/// The other tail ops: negation, `mean_axes`, `sum`, `sub` of a broadcast
/// operand.
#[differentiable]
fn tail_b(x: &Array, w: &Array) -> Array {
    nabla::sum(&-(x - w).mean_axes(&[0], false))
}

/// Shape ops in a tail, with a non-scalar output (so a random cotangent
/// checks where each element goes).
#[differentiable]
fn tail_c(x: &Array, w: &Array) -> Array {
    let a = x.transpose().reshape(&[2, 6]);
    let b = w.broadcast_to(&[3, 4]).permute(&[1, 0]).reshape(&[2, 6]);
    (a + b).flatten().expand_dims(0).squeeze(0).reshape(&[6, 2])
}

/// A tail after a loop and a constant: the loop's result and the constant
/// are computed (the tail reads their shapes); `c.sin()` has no derivative
/// and is in the tail too.
#[differentiable]
fn tail_d(x: &Array, w: &Array) -> Array {
    let mut h = x * w;
    for _ in 0..3 {
        h = h.sin() * w;
    }
    let c = x.stop_gradient().sin();
    (h + c - w).sum_axes(&[0], false).mean()
}

/// Cotangents left unbroadcast through every tail op (`rules::tail`): the
/// scalar cotangents of `sum` and `mean` through shape ops, `mul` with a
/// broadcast operand on either side or both, `broadcast_to`, `neg`, and
/// reductions without `keepdim` given a full cotangent.
#[differentiable]
fn tail_e(x: &Array, w: &Array) -> Array {
    let a = (x * w)
        .transpose()
        .reshape(&[2, 6])
        .expand_dims(0)
        .squeeze(0)
        .flatten();
    let b = (w * x).permute(&[1, 0]).sum_axes(&[0], false);
    let c = -w.broadcast_to(&[2, 4]) + 1.0;
    let d = (x * 2.0).sum_axes(&[1], false) * x.sum_axes(&[1], false);
    let e = (x - w).mean_axes(&[1], true).square();
    // A trailing-axis reduction given a full cotangent (from `add`'s
    // broadcast), and a product where neither operand has the output's shape.
    let f = x.sum_axes(&[1], false) + x.transpose();
    let g = x.sum_axes(&[1], true) * w.expand_dims(0);
    nabla::sum(&a) + b.mean() + nabla::sum(&c.sin()) + nabla::sum(&d) + e.mean() + f.mean()
        - nabla::sum(&g)
}

/// `matmul` in a tail, with each of NumPy's 1-D promotions and a batched
/// product, given unbroadcast (scalar) and full cotangents.
#[differentiable]
fn tail_f(x: &Array, w: &Array) -> Array {
    let a = x.matmul(w); // [3, 4] @ [4] -> [3]
    let b = w.matmul(&x.transpose()); // [4] @ [4, 3] -> [3]
    let c = w.matmul(w); // [4] @ [4] -> []
    let d = x.matmul(&x.transpose()); // [3, 4] @ [4, 3] -> [3, 3]
    let e = x.reshape(&[3, 2, 2]).matmul(&w.reshape(&[2, 2])); // batched
    (a * 2.0 + b).sum() + c + d.sum() + e.mean()
}

/// Unary ops whose derivative reads only the input, in the tail under
/// their method and free-function names (`relu`, `abs`, `ln`/`log`,
/// `ln_1p`/`log1p`, `erf`), given scalar (unbroadcast) cotangents and, for
/// `abs` and `erf`, a full one (from `add`'s broadcast); `square` and the
/// `+ 1` run (`ln` reads its input).
#[differentiable]
fn tail_g(x: &Array, w: &Array) -> Array {
    let p = x.square() + 1.0;
    let a = (x * w).relu().sum();
    let b = (x - w).abs().mean_axes(&[0], false).sum();
    let c = p.ln().sum() + nabla::log(&(w.square() + 2.0)).mean();
    let d =
        (x.square() + 0.5).ln_1p().sum_axes(&[1], false).mean() + nabla::log1p(&w.square()).sum();
    let e = (x.abs().sum_axes(&[1], false) + x.transpose()).mean();
    let f = (nabla::erf(&(x * 0.3)).sum_axes(&[0], false) + w.expand_dims(0)).sum();
    a + b * 2.0 + c + d + e - f
}

/// Binary ops whose partials read only their inputs, in the tail
/// (`maximum`, `minimum`, `atan2`, as methods and free functions), with a
/// broadcast operand on either side and scalar and full (from `add`'s
/// broadcast) cotangents; the operands they read run.
#[differentiable]
fn tail_h(x: &Array, w: &Array) -> Array {
    let a = nabla::maximum(&x.sin(), w).sum();
    let b = w.minimum(&(x * 0.5)).mean();
    let c = nabla::atan2(x, &(w.square() + 1.0))
        .mean_axes(&[0], false)
        .sum();
    let d = (x.maximum(&x.cos()).sum_axes(&[1], false) + x.transpose()).mean();
    let e = (nabla::minimum(&x.cos(), &x.sin()).sum_axes(&[0], false) + w.atan2(x)).sum();
    a + b * 3.0 + c + d - e
}

/// A list function (the seed's form) with outputs in the tail (`sum`, the
/// reduction, the scaled copy) and one outside it (`tanh` reads its output).
#[differentiable]
fn tail_list(args: &[Array]) -> Vec<Array> {
    let (x, w) = (&args[0], &args[1]);
    vec![
        nabla::sum(&x.sin()),
        w.tanh(),
        (x * w).sum_axes(&[1], false),
        x * 2.0,
    ]
}

#[test]
fn list_functions_have_output_only_tails() {
    use nabla::compose::{DiffFn, OutSpec};
    let _rng = seeded(12);
    let args = vec![
        nabla::randn(&[3, 4], DType::F64),
        nabla::randn(&[4], DType::F64),
    ];
    let (y, full) = tail_list::Function::vjp_masked::<Array>(&args, &[]);
    let (spec, tail) = tail_list::Function::vjp_masked_shapes::<Array>(&args, &[]);
    assert_eq!(spec, y.iter().map(OutSpec::of).collect::<Vec<_>>());
    let cts: Vec<Array> = y
        .iter()
        .map(|y| nabla::randn(y.shape(), DType::F64))
        .collect();
    let (g, h) = (full(cts.clone()), tail(cts));
    assert_eq!(g.len(), 2);
    for (k, (h, g)) in h.iter().zip(&g).enumerate() {
        assert_close(h, g, 1e-15, &format!("tail_list leaf {k}"));
    }
    // `jacrev` takes the tail; `jacfwd` never does.
    let (rev, fwd) = (
        nabla::jacrev(tail_list)(&args),
        nabla::jacfwd(tail_list)(&args),
    );
    assert_eq!(rev.len(), fwd.len());
    for (k, (r, f)) in rev.iter().zip(&fwd).enumerate() {
        assert_close(r, f, 1e-12, &format!("jacrev(tail_list) block {k}"));
    }
}

#[test]
fn output_only_tails_give_the_same_pullbacks() {
    use nabla::compose::{DiffFn, OutSpec};
    let _rng = seeded(11);
    let (x, w) = (
        nabla::randn(&[3, 4], DType::F64),
        nabla::randn(&[4], DType::F64),
    );
    let args = (x.clone(), w.clone());
    let ct = Array::scalar(0.7f64);
    fn check<F: DiffFn<Arity = nabla::compose::A2, Out = nabla::compose::One>>(
        args: &(Array, Array),
        ct: &Array,
        name: &str,
    ) {
        let (y, full) = F::vjp_masked::<Array>(args, &[]);
        let (spec, tail) = F::vjp_masked_shapes::<Array>(args, &[]);
        assert_eq!(spec, OutSpec::of(&y), "{name}: output spec");
        let (g, h) = (full(ct.clone()), tail(ct.clone()));
        assert_close(&h.0, &g.0, 1e-15, name);
        assert_close(&h.1, &g.1, 1e-15, name);
    }
    check::<tail_a::Function>(&args, &ct, "tail_a");
    check::<tail_b::Function>(&args, &ct, "tail_b");
    check::<tail_e::Function>(&args, &ct, "tail_e");
    check::<tail_f::Function>(&args, &ct, "tail_f");
    check::<tail_g::Function>(&args, &ct, "tail_g");
    check::<tail_h::Function>(&args, &ct, "tail_h");
    check::<tail_c::Function>(&args, &nabla::randn(&[6, 2], DType::F64), "tail_c");
    check::<tail_d::Function>(&args, &ct, "tail_d");
    // Through every transform that takes the tail (`jacrev` and `grad`
    // inside `jacfwd`, `hessian`, `vmap`): the same as forward-only
    // Hessians, which never do.
    for (name, rev, fwd) in [
        (
            "hessian(tail_a)",
            nabla::hessian(tail_a)(&x, &w),
            nabla::jacfwd(nabla::jacfwd(tail_a))(&x, &w),
        ),
        (
            "jacrev(grad(tail_b))",
            nabla::jacrev(nabla::grad(tail_b))(&x, &w),
            nabla::jacfwd(nabla::jacfwd(tail_b))(&x, &w),
        ),
        (
            "hessian(tail_g)",
            nabla::hessian(tail_g)(&x, &w),
            nabla::jacfwd(nabla::jacfwd(tail_g))(&x, &w),
        ),
        (
            "hessian(tail_h)",
            nabla::hessian(tail_h)(&x, &w),
            nabla::jacfwd(nabla::jacfwd(tail_h))(&x, &w),
        ),
        (
            "jacrev(tail_c)",
            nabla::jacrev(tail_c)(&x, &w),
            nabla::jacfwd(tail_c)(&x, &w),
        ),
    ] {
        assert_close(&rev, &fwd, 1e-12, name);
    }
    let xs = nabla::randn(&[5, 3, 4], DType::F64);
    let per = nabla::vmap!(nabla::grad(tail_a), in_axes = (0, None))(&xs, &w);
    for k in 0..5 {
        let xk = xs.index_select(0, &[k]).squeeze(0);
        assert_close(
            &per.index_select(0, &[k]).squeeze(0),
            &nabla::grad(tail_a)(&xk, &w),
            1e-15,
            "vmap(grad(tail_a))",
        );
    }
}
