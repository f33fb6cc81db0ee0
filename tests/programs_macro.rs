//! Whole programs from `tests/fixtures/jax_programs.json` through
//! `#[differentiable]`: `mlp_grad`, `rosenbrock` (gradient), `vector_fn`
//! (vjp, jvp) and `scalar_third_order` (first derivative), plus calls
//! between differentiable functions, `has_aux` and static parameters.

mod common;

use common::*;
use nabla::prelude::*;

#[differentiable]
fn mlp_loss(w1: &Array, b1: &Array, w2: &Array, b2: &Array, x: &Array, y: &Array) -> Array {
    let h = (x.matmul(w1) + b1).tanh();
    let out = h.matmul(w2) + b2;
    nabla::mean(&(out - y).powi(2))
}

#[test]
fn mlp_grad_matches_jax() {
    let p = program("mlp_grad");
    let (i, o) = (&p["inputs"], &p["outputs"]);
    let (w1, b1, w2, b2, x, y) = (
        arr(&i["w1"]),
        arr(&i["b1"]),
        arr(&i["w2"]),
        arr(&i["b2"]),
        arr(&i["X"]),
        arr(&i["Y"]),
    );
    let (loss, (g1, gb1, g2, gb2)) =
        nabla::value_and_grad!(mlp_loss, argnums = (0, 1, 2, 3))(&w1, &b1, &w2, &b2, &x, &y);
    assert_close(&loss, &arr(&o["loss"]), 1e-9, "loss");
    assert_close(&g1, &arr(&o["g_w1"]), 1e-9, "g_w1");
    assert_close(&gb1, &arr(&o["g_b1"]), 1e-9, "g_b1");
    assert_close(&g2, &arr(&o["g_w2"]), 1e-9, "g_w2");
    assert_close(&gb2, &arr(&o["g_b2"]), 1e-9, "g_b2");
    // The plain call still works and agrees.
    assert_close(
        &mlp_loss(&w1, &b1, &w2, &b2, &x, &y),
        &loss,
        1e-15,
        "plain call",
    );
}

#[differentiable]
fn rosenbrock(x: &Array) -> Array {
    let n = x.shape()[0];
    let head = x.slice_axis(0, 0..n - 1);
    let tail = x.slice_axis(0, 1..n);
    let a = (tail - head.square()).square() * 100.0;
    let b = (1.0 - head).square();
    nabla::sum(&(a + b))
}

#[test]
fn rosenbrock_gradient_matches_jax() {
    let p = program("rosenbrock");
    let x = arr(&p["inputs"]["x"]);
    let (f, g) = nabla::value_and_grad(rosenbrock)(&x);
    assert_close(&f, &arr(&p["outputs"]["f"]), 1e-9, "f");
    assert_close(&g, &arr(&p["outputs"]["grad"]), 1e-9, "grad");
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
fn vector_fn_vjp_and_jvp_match_jax() {
    let p = program("vector_fn");
    let (i, o) = (&p["inputs"], &p["outputs"]);
    let x = arr(&i["x"]);
    let (y, pullback) = nabla::vjp!(vector_fn)(&x);
    assert_close(&y, &arr(&o["f"]), 1e-9, "f");
    assert_close(
        &pullback(&arr(&i["cotangent"])),
        &arr(&o["vjp"]),
        1e-9,
        "vjp",
    );
    let (y2, t) = nabla::jvp!(vector_fn)((&x,), (&arr(&i["tangent"]),));
    assert_close(&y2, &arr(&o["f"]), 1e-9, "f via jvp");
    assert_close(&t, &arr(&o["jvp"]), 1e-9, "jvp");
}

/// A scalar-only function: generated code is straight-line f64 code.
#[differentiable]
fn scalar_f(x: f64) -> f64 {
    x.sin() * x.exp() / (1.0 + x * x)
}

#[test]
fn scalar_third_order_first_derivative_matches_jax() {
    let p = program("scalar_third_order");
    let x = p["inputs"]["x"]["data"][0].as_f64().unwrap();
    let want_f = p["outputs"]["f"]["data"][0].as_f64().unwrap();
    let want_d1 = p["outputs"]["d1"]["data"][0].as_f64().unwrap();
    assert!((scalar_f(x) - want_f).abs() < 1e-12);
    let d1 = nabla::grad(scalar_f)(x);
    assert!(
        (d1 - want_d1).abs() <= 1e-9 * want_d1.abs().max(1.0),
        "{d1} vs {want_d1}"
    );
    let (_, t) = nabla::jvp(scalar_f)((x,), (1.0,));
    assert!((t - want_d1).abs() <= 1e-9 * want_d1.abs().max(1.0));
}

// ----- composition of differentiable functions and other features -----

#[differentiable]
fn layer(x: &Array, w: &Array, b: &Array) -> Array {
    (x.matmul(w) + b).tanh()
}

#[differentiable]
fn two_layers(w1: &Array, w2: &Array, x: &Array) -> Array {
    let b = w1.zeros_like().sum_axes(&[0], false); // a constant: no derivative
    let h = layer(x, w1, &b);
    let out = layer(&h, w2, &nabla::stop_gradient(&b));
    nabla::sum(&out)
}

#[test]
fn calls_between_differentiable_functions_match_the_tape() {
    nabla::manual_seed(3);
    let w1 = nabla::randn(&[3, 4], DType::F64);
    let w2 = nabla::randn(&[4, 4], DType::F64);
    let x = nabla::randn(&[5, 3], DType::F64);
    let (g1, g2) = nabla::grad!(two_layers, argnums = (0, 1))(&w1, &w2, &x);
    let (t1, t2) = (w1.clone().requires_grad(), w2.clone().requires_grad());
    two_layers(&t1, &t2, &x).backward();
    assert_close(&g1, &t1.grad(), 1e-13, "w1");
    assert_close(&g2, &t2.grad(), 1e-13, "w2");
}

#[differentiable]
fn loss_with_aux(w: &Array, x: &Array) -> (Array, Array) {
    let pred = x.matmul(w);
    (nabla::sum(&pred.square()), pred)
}

#[test]
fn has_aux_returns_the_auxiliary_value() {
    let w = Array::from_vec(vec![1.0f64, 2.0], &[2]);
    let x = Array::from_vec(vec![1.0f64, 0.0, 0.0, 1.0, 1.0, 1.0], &[3, 2]);
    let ((l, aux), g) = nabla::value_and_grad!(loss_with_aux, has_aux)(&w, &x);
    assert_eq!(aux.to_vec::<f64>(), vec![1.0, 2.0, 3.0]);
    assert_eq!(l.item(), 14.0);
    // d/dw Σ (x w)² = 2 xᵀ (x w)
    assert_eq!(g.to_vec::<f64>(), vec![8.0, 10.0]);
    let (g2, aux2) = nabla::grad!(loss_with_aux, has_aux)(&w, &x);
    assert_eq!(g2.to_vec::<f64>(), g.to_vec::<f64>());
    assert_eq!(aux2.to_vec::<f64>(), aux.to_vec::<f64>());
}

#[differentiable]
#[allow(clippy::assign_op_pattern)] // reassignment is what this test exercises
fn scaled_sum(x: &Array, k: usize, #[nondiff] scale: f64) -> Array {
    let mut acc = x * scale;
    acc *= k as f64;
    acc = acc + 1.0;
    nabla::sum(&acc)
}

#[test]
fn static_parameters_and_ssa_rebinding() {
    let x = Array::from_vec(vec![1.0f64, 2.0], &[2]);
    assert_eq!(scaled_sum(&x, 3, 0.5).item(), 0.5 * 3.0 * 3.0 + 2.0);
    let g = nabla::grad(scaled_sum)(&x, 3, 0.5);
    assert_eq!(g.to_vec::<f64>(), vec![1.5, 1.5]);
}

#[test]
fn grad_of_a_non_scalar_output_is_a_clear_error() {
    let err = std::panic::catch_unwind(|| {
        nabla::grad(vector_fn)(&Array::ones(&[3], DType::F64));
    })
    .expect_err("grad of a vector must panic");
    let msg = err.downcast::<String>().map(|s| *s).unwrap_or_default();
    assert_eq!(
        msg,
        "grad: the function returns shape [4], but grad needs a scalar output; reduce it (e.g. with nabla::sum) or \
         use jacrev for the full Jacobian"
    );
}

#[test]
fn f32_programs_run_in_f32() {
    let p = program("mlp_grad");
    let i = &p["inputs"];
    let c = |k: &str| arr(&i[k]).cast(DType::F32);
    let g = nabla::grad(mlp_loss)(&c("w1"), &c("b1"), &c("w2"), &c("b2"), &c("X"), &c("Y"));
    assert_eq!(g.dtype(), DType::F32);
    assert_close(&g, &arr(&p["outputs"]["g_w1"]), 1e-4, "g_w1 f32");
}
