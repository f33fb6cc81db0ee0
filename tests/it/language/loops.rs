//! `for` loops over static ranges in differentiable functions: loop-carried
//! values, a tape of per-iteration residuals in the reverse sweep, nested
//! loops, branches inside loops, and every mode (grad, jvp, vmap, Hessian).

use crate::common::*;
use nabla::prelude::*;
use nabla::testing::check_grads;

/// 50 explicit-Euler steps of a damped oscillator; `s = [x0, v0, k]`.
#[differentiable]
fn euler_energy(s: &Array) -> Array {
    let mut x = s.slice_axis(0, 0..1);
    let mut v = s.slice_axis(0, 1..2);
    let k = s.slice_axis(0, 2..3);
    for _ in 0..50 {
        let a = -(&k * &x) - &v * 0.1;
        let x_next = &x + &v * 0.05;
        v = &v + a * 0.05;
        x = x_next;
    }
    nabla::sum(&(v.square() * 0.5 + k * x.square() * 0.5))
}

#[test]
fn euler_oscillator_matches_jax() {
    let p = program("euler_oscillator");
    let (i, o) = (&p["inputs"], &p["outputs"]);
    let s = nabla::concat(
        &[
            arr(&i["x0"]).reshape(&[1]),
            arr(&i["v0"]).reshape(&[1]),
            arr(&i["k"]).reshape(&[1]),
        ],
        0,
    );
    let (e, g) = nabla::value_and_grad(euler_energy)(&s);
    assert_close(&e, &arr(&o["energy"]), 1e-9, "energy");
    assert_close(&g, &arr(&o["grad"]), 1e-9, "gradient through 50 steps");
    let h = nabla::hessian(euler_energy)(&s);
    assert_close(
        &h,
        &arr(&o["hessian"]),
        1e-7,
        "Hessian through the loop (forward-over-reverse)",
    );
}

/// The same loop on plain f64 values: straight-line float code per step.
#[differentiable]
fn euler_scalar(k: f64) -> f64 {
    let mut x = 1.0 * k / k;
    let mut v = 0.0 * k;
    for _ in 0..50 {
        let a = -k * x - 0.1 * v;
        let x_next = x + 0.05 * v;
        v += 0.05 * a;
        x = x_next;
    }
    0.5 * v * v + 0.5 * k * x * x
}

#[test]
fn scalar_loop_gradients_match_finite_differences() {
    let k = 1.7;
    let g = nabla::grad(euler_scalar)(k);
    // Hand-rolled: check_grads takes functions of arrays, not of floats.
    let h = 1e-6;
    let fd = (euler_scalar(k + h) - euler_scalar(k - h)) / (2.0 * h);
    assert!((g - fd).abs() < 1e-7 * fd.abs().max(1.0), "{g} vs {fd}");
    let g2 = nabla::grad(nabla::grad(euler_scalar))(k);
    let fd2 = (nabla::grad(euler_scalar)(k + h) - nabla::grad(euler_scalar)(k - h)) / (2.0 * h);
    assert!(
        (g2 - fd2).abs() < 1e-6 * fd2.abs().max(1.0),
        "{g2} vs {fd2}"
    );
}

/// Nested loops, the loop variable in arithmetic, a static branch on it,
/// and a call of another differentiable function inside the loop.
#[differentiable]
fn step(x: &Array, w: &Array) -> Array {
    (x.matmul(w)).tanh()
}

#[differentiable]
fn unrolled(x: &Array, w: &Array) -> Array {
    let mut h = x.clone();
    let mut acc = nabla::sum(&x.zeros_like());
    for i in 0..3 {
        for j in 0..2 {
            h = step(&h, w) * (1.0 + 0.1 * j as f64);
            if (i + j) % 2 == 0 {
                acc += nabla::sum(&h.square()) * (i as f64 + 1.0);
            } else {
                acc -= nabla::mean(&h);
            }
        }
    }
    acc + nabla::sum(&h)
}

#[test]
fn nested_loops_match_the_tape_and_finite_differences() {
    let _rng = seeded(12);
    let x = nabla::randn(&[2, 3], DType::F64);
    let w = nabla::randn(&[3, 3], DType::F64) * 0.5;
    let (gx, gw) = nabla::grad!(unrolled, argnums = (0, 1))(&x, &w);
    let (tx, tw) = (x.clone().requires_grad(), w.clone().requires_grad());
    unrolled(&tx, &tw).backward();
    assert_close(&gx, &tx.grad(), 1e-12, "d/dx vs tape");
    assert_close(&gw, &tw.grad(), 1e-12, "d/dw vs tape");
    check_grads(unrolled, &(x.clone(), w.clone()), 1);
    // jvp through the loops agrees with the gradient.
    let (dx, dw) = (x.cos(), w.sin());
    let (_, t) = nabla::jvp(unrolled)((&x, &w), (&dx, &dw));
    let dot = (&gx * &dx).sum().item() + (&gw * &dw).sum().item();
    assert!((t.item() - dot).abs() < 1e-10 * dot.abs().max(1.0));
}

#[test]
fn vmap_of_a_loop_equals_a_loop_of_calls() {
    let _rng = seeded(13);
    let xs = nabla::randn(&[4, 2, 3], DType::F64);
    let w = nabla::randn(&[3, 3], DType::F64) * 0.5;
    let batched = nabla::vmap!(unrolled, in_axes = (0, None))(&xs, &w);
    let grads = nabla::vmap!(nabla::grad!(unrolled, argnums = 1), in_axes = (0, None))(&xs, &w);
    for b in 0..4 {
        let xb = xs.index_select(0, &[b]).squeeze(0);
        assert_close(
            &batched.index_select(0, &[b]).squeeze(0),
            &unrolled(&xb, &w),
            1e-12,
            "vmap(loop)",
        );
        let gb = nabla::grad!(unrolled, argnums = 1)(&xb, &w);
        assert_close(
            &grads.index_select(0, &[b]).squeeze(0),
            &gb,
            1e-12,
            "vmap(grad(loop))",
        );
    }
}
