//! Every transform takes every function: `jvp`, `vjp`, `grad` and
//! `value_and_grad` of `vmap`, `jacfwd`, `jacrev` and `hessian`; `grad` of
//! a checkpointed function; Jacobians and Hessians of gradients with
//! `argnums`. Each is checked against central finite differences of the
//! inner transform, in f64, on the functions of the composition matrix.

use super::matrix::{bowl, bump, pair, wave};
use crate::common::*;
use nabla::prelude::*;
use nabla::testing::check_grads;

fn vec3(v: [f64; 3]) -> Array {
    Array::from_vec(v.to_vec(), &[3])
}

#[test]
fn jvp_and_vjp_of_vmap_match_the_loop() {
    let xs = Array::from_vec(vec![0.3f64, -1.2, 2.0, 0.5, 0.1, -0.7], &[2, 3]);
    let ts = Array::from_vec(vec![1.0f64, 0.5, -2.0, 0.0, 1.0, 3.0], &[2, 3]);
    let (y, t) = nabla::jvp(nabla::vmap(wave))((&xs,), (&ts,));
    assert_close(&y, &nabla::vmap(wave)(&xs), 0.0, "primal");
    assert_eq!(t.shape(), xs.shape());
    let (y2, pullback) = nabla::vjp(nabla::vmap(wave))(&xs);
    assert_close(&y2, &y, 0.0, "vjp primal");
    assert_eq!(pullback(&ts).shape(), xs.shape());
    // JVP and VJP (each row through its own Jacobian) and their own
    // derivatives against finite differences.
    check_grads(nabla::vmap(wave), &(xs,), 2);
}

#[test]
fn jvp_and_vjp_of_jacobians_match_finite_differences() {
    let x = vec3([0.3, -1.2, 2.0]);
    let v = vec3([1.0, 0.5, -2.0]);
    // jvp(hessian(f)): the third derivative along v.
    let (h, dh) = nabla::jvp(nabla::hessian(bowl))((&x,), (&v,));
    assert_close(&h, &nabla::hessian(bowl)(&x), 0.0, "primal hessian");
    assert_eq!(dh.shape(), &[3, 3]);
    // jvp(hessian(f)) and vjp(hessian(f)): third derivatives.
    check_grads(nabla::hessian(bowl), &(x.clone(),), 1);
    // Of the Jacobians of a vector function, to second order.
    check_grads(nabla::jacrev(wave), &(x.clone(),), 2);
    let (j, pullback) = nabla::vjp(nabla::jacfwd(wave))(&x);
    assert_eq!(j.shape(), &[3, 3]);
    assert_eq!(pullback(&j).shape(), &[3]);
    check_grads(nabla::jacfwd(wave), &(x,), 2);
}

#[test]
fn grad_of_jacobians_of_a_scalar_function_is_the_second_derivative() {
    // bump: R → R on 0-d arrays, so its derivative is a scalar function.
    let x = Array::scalar(0.7f64);
    let d2 = |x: f64| {
        // (sin x · x² + e^{x/2})'' by hand.
        -x.sin() * x * x + 4.0 * x * x.cos() + 2.0 * x.sin() + 0.25 * (0.5 * x).exp()
    };
    let g1 = nabla::grad(nabla::jacfwd(bump))(&x);
    let g2 = nabla::grad(nabla::jacrev(bump))(&x);
    assert!((g1.item() - d2(0.7)).abs() < 1e-12, "{}", g1.item());
    assert!((g2.item() - d2(0.7)).abs() < 1e-12, "{}", g2.item());
    let (y, g) = nabla::value_and_grad(nabla::jacrev(bump))(&x);
    assert_close(&y, &nabla::jacrev(bump)(&x), 0.0, "value");
    assert!((g.item() - d2(0.7)).abs() < 1e-12);
    // jvp and vjp of that gradient (the third derivative) and their own
    // derivatives (the fourth).
    let one = Array::scalar(1.0f64);
    let (_, t) = nabla::jvp(nabla::grad(nabla::jacfwd(bump)))((&x,), (&one,));
    let (_, pullback) = nabla::vjp(nabla::grad(nabla::jacrev(bump)))(&x);
    assert_close(
        &pullback(&one),
        &t,
        1e-12,
        "vjp(grad(jacrev)) = jvp(grad(jacfwd))",
    );
    check_grads(nabla::grad(nabla::jacfwd(bump)), &(x.clone(),), 2);
    check_grads(nabla::grad(nabla::jacrev(bump)), &(x,), 2);
}

#[test]
fn grad_of_checkpoint_and_jacobians_of_gradients() {
    let x = vec3([0.3, -1.2, 2.0]);
    let a = vec3([0.5, 2.0, -1.0]);
    assert_close(
        &nabla::grad(nabla::checkpoint(bowl))(&x),
        &nabla::grad(bowl)(&x),
        0.0,
        "grad(checkpoint(f))",
    );
    // The Hessian w.r.t. x, three ways.
    let h1 = jacfwd!(nabla::grad(pair), argnums = 0)(&x, &a);
    let h2 = hessian!(pair, argnums = 0)(&x, &a);
    assert_eq!(h1.shape(), &[3, 3]);
    assert_close(&h1, &h2, 1e-12, "jacfwd(grad) = hessian");
    // The gradient's JVP (the Hessian's columns) against finite differences.
    check_grads(nabla::grad(pair), &(x.clone(), a.clone()), 1);
    // jacrev(jacfwd(g)) = jacfwd(jacrev(g)) for a vector function.
    let rf = nabla::jacrev(nabla::jacfwd(wave))(&x);
    let fr = nabla::jacfwd(nabla::jacrev(wave))(&x);
    assert_eq!(rf.shape(), &[3, 3, 3]);
    assert_close(&rf, &fr, 1e-12, "rf = fr");
}

#[test]
fn vmap_of_hessian_is_the_loop_of_hessians() {
    let xs = Array::from_vec(vec![0.3f64, -1.2, 2.0, 0.5, 0.1, -0.7], &[2, 3]);
    let hs = nabla::vmap(nabla::hessian(bowl))(&xs);
    assert_eq!(hs.shape(), &[2, 3, 3]);
    for b in 0..2 {
        let xb = xs.index_select(0, &[b]).reshape(&[3]);
        let hb = hs.index_select(0, &[b]).reshape(&[3, 3]);
        assert_close(&hb, &nabla::hessian(bowl)(&xb), 1e-12, "row");
    }
}
