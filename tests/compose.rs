//! Composable transforms from `jax_programs.json`: the seed example
//! `jacfwd(jacrev(vmap(foo)))`, Hessians and Hessian-vector products, third
//! derivatives of a scalar function, and equality of the orders.

mod common;

use common::*;
use nabla::prelude::*;

#[differentiable]
fn foo(x: &Array) -> Array {
    nabla::sum(&nabla::sin(x))
}

#[test]
fn seed_hessian_matches_jax() {
    let p = program("seed_hessian");
    let x = arr(&p["inputs"]["x"]);
    let o = &p["outputs"];
    // Function values compose through variables.
    let foo_vmapped = nabla::vmap(foo);
    let foo_jacobian = nabla::jacrev(foo_vmapped);
    let foo_hessian = nabla::jacfwd(foo_jacobian);
    assert_close(&foo_vmapped(&x), &arr(&o["vmap"]), 1e-9, "vmap");
    assert_close(
        &foo_jacobian(&x),
        &arr(&o["jacrev_vmap"]),
        1e-9,
        "jacrev(vmap)",
    );
    let h = foo_hessian(&x);
    assert_eq!(h.shape(), &[2, 2, 3, 2, 3]);
    assert_close(&h, &arr(&o["hessian"]), 1e-7, "jacfwd(jacrev(vmap))");
    // f32 too.
    let h32 = foo_hessian(&x.cast(DType::F32));
    assert_eq!(h32.dtype(), DType::F32);
    assert_close(&h32, &arr(&o["hessian"]), 1e-4, "f32 hessian");
}

#[differentiable]
fn rosenbrock(x: &Array) -> Array {
    let n = x.shape()[0];
    let head = x.slice_axis(0, 0..n - 1);
    let tail = x.slice_axis(0, 1..n);
    nabla::sum(&((tail - head.square()).square() * 100.0 + (1.0 - head).square()))
}

#[test]
fn rosenbrock_hessian_and_hvp_match_jax() {
    let p = program("rosenbrock");
    let x = arr(&p["inputs"]["x"]);
    let o = &p["outputs"];
    let h = nabla::hessian(rosenbrock)(&x);
    assert_close(&h, &arr(&o["hessian"]), 1e-7, "hessian");
    assert_close(
        &nabla::jacrev(rosenbrock)(&x),
        &arr(&o["grad"]),
        1e-9,
        "jacrev = grad",
    );
    // hvp (JAX's direction is the all-ones vector): forward-over-reverse
    // through the generated VJP program, no Hessian formed.
    let v = x.ones_like();
    let (_, pullback) =
        rosenbrock::vjp::<nabla::Dual<Array>>(&nabla::Dual::new(x.clone(), Some(v.clone())));
    let g = pullback(nabla::Dual::constant(Array::scalar(1.0f64)));
    assert_close(&g.0.tangent_or_zero(), &arr(&o["hvp"]), 1e-7, "hvp");
    assert_close(&h.matmul(&v), &arr(&o["hvp"]), 1e-7, "hessian · ones");
}

#[differentiable]
fn vector_fn(x: &Array) -> Array {
    let x0 = x.slice_axis(0, 0..1);
    let x1 = x.slice_axis(0, 1..2);
    let x2 = x.slice_axis(0, 2..3);
    let a = &x0 * &x1;
    let b = x2.exp() * &x0;
    let c = (&x1 * &x2).sin();
    let d = nabla::sum(&x.square()).reshape(&[1]);
    nabla::concat(&[a, b, c, d], 0)
}

#[test]
fn vector_fn_jacobians_and_hessian_match_jax() {
    let p = program("vector_fn");
    let x = arr(&p["inputs"]["x"]);
    let o = &p["outputs"];
    assert_close(
        &nabla::jacfwd(vector_fn)(&x),
        &arr(&o["jacfwd"]),
        1e-9,
        "jacfwd",
    );
    assert_close(
        &nabla::jacrev(vector_fn)(&x),
        &arr(&o["jacrev"]),
        1e-9,
        "jacrev",
    );
    assert_close(
        &nabla::hessian(vector_fn)(&x),
        &arr(&o["hessian"]),
        1e-7,
        "hessian",
    );
}

#[differentiable]
fn scalar_f(x: f64) -> f64 {
    x.sin() * x.exp() / (1.0 + x * x)
}

#[test]
fn scalar_third_order_matches_jax() {
    let p = program("scalar_third_order");
    let x = p["inputs"]["x"]["data"][0].as_f64().unwrap();
    let want = |k: &str| p["outputs"][k]["data"][0].as_f64().unwrap();
    let d1 = nabla::grad(scalar_f);
    let d2 = nabla::grad(d1);
    let d3 = nabla::grad(d2);
    for (got, k, tol) in [
        (d1(x), "d1", 1e-9),
        (d2(x), "d2", 1e-7),
        (d3(x), "d3", 1e-7),
    ] {
        assert!(
            (got - want(k)).abs() <= tol * want(k).abs().max(1.0),
            "{k}: {got} vs {}",
            want(k)
        );
    }
}

#[differentiable]
fn mixed(x: &Array) -> Array {
    let a = x.sin() * x.slice_axis(0, 0..1).exp();
    let b = x.matmul(&x.reshape(&[1, 3]).transpose());
    nabla::sum(&a.tanh()) * b.reshape(&[1]).sum()
}

#[test]
fn all_orders_agree() {
    let x = Array::from_vec(vec![0.3f64, -0.7, 1.1], &[3]);
    let ff = nabla::jacfwd(nabla::jacfwd(mixed))(&x);
    let fr = nabla::jacfwd(nabla::jacrev(mixed))(&x);
    let rf = nabla::jacrev(nabla::jacfwd(mixed))(&x);
    let rr = nabla::jacrev(nabla::jacrev(mixed))(&x);
    assert_close(&fr, &ff, 1e-12, "jacfwd(jacrev) vs jacfwd(jacfwd)");
    assert_close(&rf, &ff, 1e-12, "jacrev(jacfwd) vs jacfwd(jacfwd)");
    assert_close(&rr, &ff, 1e-12, "jacrev(jacrev) vs jacfwd(jacfwd)");
    // Third order, mixed modes.
    let t1 = nabla::jacfwd(nabla::jacrev(nabla::jacrev(mixed)))(&x);
    let t2 = nabla::jacrev(nabla::jacfwd(nabla::jacfwd(mixed)))(&x);
    assert_eq!(t1.shape(), &[3, 3, 3]);
    assert_close(&t1, &t2, 1e-11, "third order");
    // Finite differences of the Hessian.
    let eps = 1e-5;
    for i in 0..3 {
        let mut e = vec![0.0; 3];
        e[i] = eps;
        let d = Array::from_vec(e, &[3]);
        let fd =
            (nabla::hessian(mixed)(&(&x + &d)) - nabla::hessian(mixed)(&(&x - &d))) / (2.0 * eps);
        let slice = t1.index_select(2, &[i]).squeeze(2);
        assert_close(&slice, &fd, 1e-6, &format!("third derivative column {i}"));
    }
}

#[test]
fn vmap_of_jacobians_equals_a_loop() {
    let xs = Array::from_vec(
        vec![0.1f64, 0.2, 0.3, -0.4, 0.5, 0.6, 0.7, -0.8, 0.9],
        &[3, 3],
    );
    let batched = nabla::vmap(nabla::jacrev(mixed))(&xs);
    for i in 0..3 {
        let xi = xs.index_select(0, &[i]).squeeze(0);
        assert_close(
            &batched.index_select(0, &[i]).squeeze(0),
            &nabla::jacrev(mixed)(&xi),
            1e-12,
            "vmap(jacrev)",
        );
    }
    let nested = nabla::vmap(nabla::vmap(foo))(&xs.reshape(&[3, 3, 1]));
    assert_close(&nested, &xs.sin(), 1e-15, "vmap(vmap)");
}

#[test]
fn transform_macros_nest() {
    let x = Array::from_vec(vec![0.1f64, 0.2, 0.3, 0.4, 0.5, 0.6], &[2, 3]);
    let h = nabla::jacfwd!(nabla::jacrev!(nabla::vmap!(foo)))(&x);
    let h2 = nabla::jacfwd(nabla::jacrev(nabla::vmap(foo)))(&x);
    assert_close(&h, &h2, 0.0, "macro and function forms");
    let hm = nabla::hessian!(rosenbrock)(&Array::ones(&[4], DType::F64));
    assert_eq!(hm.shape(), &[4, 4]);
}

// ----- several arguments: in_axes, argnums -----

#[differentiable]
fn single(w: &Array, x: &Array, y: &Array) -> Array {
    let r = x.dot(w) - y;
    r.square() + nabla::sum(&(w * x).sin()) * 0.1
}

#[test]
fn per_example_grads_match_jax() {
    let p = program("per_example_grads");
    let (i, o) = (&p["inputs"], &p["outputs"]);
    let per_example = nabla::vmap!(nabla::grad!(single), in_axes = (None, 0, 0));
    let g = per_example(&arr(&i["w"]), &arr(&i["X"]), &arr(&i["y"]));
    assert_close(
        &g,
        &arr(&o["per_example"]),
        1e-9,
        "vmap(grad(single), in_axes=(None, 0, 0))",
    );
    // The batch axis of the output can go elsewhere.
    let gt = nabla::vmap!(nabla::grad!(single), in_axes = (None, 0, 0), out_axes = 1)(
        &arr(&i["w"]),
        &arr(&i["X"]),
        &arr(&i["y"]),
    );
    assert_close(
        &gt,
        &arr(&o["per_example"]).transpose(),
        1e-9,
        "out_axes = 1",
    );
    // And the data may be batched along its last axis.
    let gl = nabla::vmap!(nabla::grad!(single), in_axes = (None, -1, 0))(
        &arr(&i["w"]),
        &arr(&i["X"]).transpose(),
        &arr(&i["y"]),
    );
    assert_close(&gl, &arr(&o["per_example"]), 1e-9, "in_axes = -1");
}

#[differentiable]
fn vector_fn2(x: &Array, a: &Array) -> Array {
    (a.matmul(x).sin() * x.exp()) + nabla::sum(&x.square())
}

#[test]
fn vector_fn2_derivatives_match_jax() {
    let p = program("vector_fn2");
    let (i, o) = (&p["inputs"], &p["outputs"]);
    let (x, a) = (arr(&i["x"]), arr(&i["A"]));
    assert_close(&vector_fn2(&x, &a), &arr(&o["f"]), 1e-12, "f");
    assert_close(
        &nabla::jacfwd(vector_fn2)(&x, &a),
        &arr(&o["jacfwd"]),
        1e-9,
        "jacfwd",
    );
    assert_close(
        &nabla::jacrev!(vector_fn2, argnums = 0)(&x, &a),
        &arr(&o["jacrev"]),
        1e-9,
        "jacrev",
    );
    assert_close(
        &nabla::hessian(vector_fn2)(&x, &a),
        &arr(&o["hessian"]),
        1e-7,
        "hessian",
    );
    // Derivatives with respect to the matrix argument agree in both modes.
    let ja = nabla::jacrev!(vector_fn2, argnums = 1)(&x, &a);
    assert_eq!(ja.shape(), &[3, 3, 3]);
    assert_close(
        &nabla::jacfwd!(vector_fn2, argnums = 1)(&x, &a),
        &ja,
        1e-12,
        "d/dA",
    );
    // Mixed second derivatives: jacfwd w.r.t. A of jacrev w.r.t. x.
    // (A local `let mixed = ..` would clash with the differentiable
    // function `mixed` above: function values are constants.)
    let cross = nabla::jacfwd!(nabla::jacrev!(vector_fn2, argnums = 0), argnums = 1)(&x, &a);
    assert_eq!(cross.shape(), &[3, 3, 3, 3]);
    let cross2 = nabla::jacrev!(nabla::jacfwd!(vector_fn2, argnums = 1), argnums = 0)(&x, &a);
    assert_close(
        &cross2.permute(&[0, 3, 1, 2]),
        &cross,
        1e-12,
        "mixed partials commute",
    );
}

#[test]
fn vmap_grad_equals_a_loop_and_sums_shared_cotangents() {
    nabla::manual_seed(9);
    let (w, xs, ys) = (
        nabla::randn(&[4], DType::F64),
        nabla::randn(&[6, 4], DType::F64),
        nabla::randn(&[6], DType::F64),
    );
    let batched = nabla::vmap!(nabla::grad!(single), in_axes = (None, 0, 0))(&w, &xs, &ys);
    for k in 0..6 {
        let (xk, yk) = (
            xs.index_select(0, &[k]).squeeze(0),
            ys.index_select(0, &[k]).squeeze(0),
        );
        let gk = nabla::grad(single)(&w, &xk, &yk);
        assert_close(
            &batched.index_select(0, &[k]).squeeze(0),
            &gk,
            1e-13,
            "vmap(grad) row",
        );
    }
    // d/dw of Σ_k single(w, x_k, y_k): reverse mode through vmap with a
    // shared argument sums the batch's cotangents.
    #[allow(clippy::type_complexity)]
    let total = nabla::jacrev(nabla::vmap!(single, in_axes = (None, 0, 0)))(&w, &xs, &ys)
        .sum_axes(&[0], false);
    assert_close(
        &total,
        &batched.sum_axes(&[0], false),
        1e-12,
        "jacrev through vmap(None)",
    );
}

#[test]
fn masked_pullbacks_give_the_wanted_cotangents() {
    use nabla::compose::DiffFn;
    nabla::manual_seed(10);
    let (w, x, y) = (
        nabla::randn(&[4], DType::F64),
        nabla::randn(&[4], DType::F64),
        nabla::randn(&[], DType::F64),
    );
    let args = (w.clone(), x.clone(), y.clone());
    let ct = Array::scalar(1.5f64);
    let (_, all) = <single::Function as DiffFn>::vjp::<Array>(&args);
    let all = all(ct.clone());
    for (i, want) in [
        [true, false, false],
        [false, true, false],
        [false, false, true],
    ]
    .iter()
    .enumerate()
    {
        let (_, masked) = <single::Function as DiffFn>::vjp_masked::<Array>(&args, want);
        let m = masked(ct.clone());
        let (got, full) = match i {
            0 => (m.0, &all.0),
            1 => (m.1, &all.1),
            _ => (m.2, &all.2),
        };
        assert_close(&got, full, 0.0, "masked cotangent");
    }
    // grad with argnums > 0 inside vmap: only that argument's cotangent.
    let xs = nabla::randn(&[5, 4], DType::F64);
    let ys = nabla::randn(&[5], DType::F64);
    let gx = nabla::vmap!(nabla::grad!(single, argnums = 1), in_axes = (None, 0, 0))(&w, &xs, &ys);
    for k in 0..5 {
        let (xk, yk) = (
            xs.index_select(0, &[k]).squeeze(0),
            ys.index_select(0, &[k]).squeeze(0),
        );
        let (_, want, _) = nabla::vjp!(single)(&w, &xk, &yk).1(&Array::scalar(1.0f64));
        assert_close(
            &gx.index_select(0, &[k]).squeeze(0),
            &want,
            1e-13,
            "vmap(grad argnums=1)",
        );
    }
}

#[test]
fn vmap_with_mismatched_sizes_is_a_clear_error() {
    let err = std::panic::catch_unwind(|| {
        nabla::vmap(single)(
            &Array::ones(&[3, 4], DType::F64),
            &Array::ones(&[2, 4], DType::F64),
            &Array::ones(&[3], DType::F64),
        );
    })
    .expect_err("must panic");
    let msg = err.downcast::<String>().map(|s| *s).unwrap_or_default();
    assert_eq!(
        msg,
        "vmap: mapped axes have different sizes: argument 0 has 3, argument 1 has 2; every mapped argument needs the same batch size"
    );
}

// ----- Jacobians w.r.t. several arguments -----

#[differentiable]
fn two_args(x: &Array, w: &Array) -> Array {
    x.matmul(w).tanh() * x.slice_axis(1, 0..1).exp()
}

#[test]
fn tuple_argnums_give_one_jacobian_per_argument() {
    nabla::manual_seed(71);
    let x = nabla::randn(&[2, 3], DType::F64);
    let w = nabla::randn(&[3, 4], DType::F64);
    let (rx, rw) = nabla::jacrev!(two_args, argnums = (0, 1))(&x, &w);
    let (fx, fw) = nabla::jacfwd!(two_args, argnums = (0, 1))(&x, &w);
    assert_eq!(rx.shape(), &[2, 4, 2, 3]);
    assert_eq!(rw.shape(), &[2, 4, 3, 4]);
    assert_close(
        &rx,
        &nabla::jacrev!(two_args, argnums = 0)(&x, &w),
        1e-12,
        "jacrev x",
    );
    assert_close(
        &rw,
        &nabla::jacrev!(two_args, argnums = 1)(&x, &w),
        1e-12,
        "jacrev w",
    );
    assert_close(&fx, &rx, 1e-12, "jacfwd x = jacrev x");
    assert_close(&fw, &rw, 1e-12, "jacfwd w = jacrev w");
    // One selected argument in a 1-tuple is still a tuple.
    let (only_w,) = nabla::jacrev!(two_args, argnums = (1,))(&x, &w);
    assert_close(&only_w, &rw, 0.0, "(1,)");
    // Against central differences: column (0, 2) of ∂f/∂w.
    let mut e = vec![0.0; 12];
    e[2] = 1e-6;
    let dw = Array::from_vec(e, &[3, 4]);
    let fd = (two_args(&x, &(&w + &dw)) - two_args(&x, &(&w - &dw))) / 2e-6;
    let col = rw.reshape(&[8, 12]).slice_axis(1, 2..3).reshape(&[2, 4]);
    assert_close(&col, &fd, 1e-7, "∂f/∂w[0, 2] vs FD");
}

#[differentiable]
fn energy2(x: &Array, w: &Array) -> Array {
    nabla::sum(&two_args(x, w))
}

#[test]
fn cross_hessian_blocks_by_nesting() {
    nabla::manual_seed(72);
    let x = nabla::randn(&[2, 3], DType::F64);
    let w = nabla::randn(&[3, 4], DType::F64);
    // ∂²E/∂w∂x: jacrev w.r.t. x, then jacfwd of that w.r.t. w.
    let h = nabla::jacfwd!(nabla::jacrev!(energy2, argnums = 0), argnums = 1)(&x, &w);
    assert_eq!(h.shape(), &[2, 3, 3, 4]);
    let mut e = vec![0.0; 12];
    e[5] = 1e-6;
    let dw = Array::from_vec(e, &[3, 4]);
    let gx = |w: &Array| nabla::grad!(energy2, argnums = 0)(&x, w);
    let fd = (gx(&(&w + &dw)) - gx(&(&w - &dw))) / 2e-6;
    let block = h.reshape(&[6, 12]).slice_axis(1, 5..6).reshape(&[2, 3]);
    assert_close(
        &block,
        &fd,
        1e-6,
        "cross Hessian column vs FD of the gradient",
    );
}

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
    nabla::manual_seed(12);
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
    nabla::manual_seed(11);
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
