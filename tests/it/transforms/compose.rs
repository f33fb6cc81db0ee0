//! Composable transforms against `tests/fixtures/jax_programs.json`: the
//! seed example `jacfwd(jacrev(vmap(foo)))`, Hessians and Hessian-vector
//! products, the Jacobians and Hessian of `vector_fn` and `vector_fn2`
//! (mixed partials included), third derivatives of a scalar function; and
//! every order of a second or third derivative agreeing with the others and
//! with central differences, `vmap` of Jacobians equal to a loop.

use crate::common::*;
use nabla::prelude::*;
use nabla::testing::check_grads;

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
    // t1 is jacfwd of jacrev(jacrev(mixed)): that function's JVP (and VJP)
    // against finite differences.
    check_grads(nabla::jacrev(nabla::jacrev(mixed)), &(x,), 1);
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
