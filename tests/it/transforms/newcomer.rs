//! The code a new user writes first: the prelude's transform macros,
//! `jvp(grad(f))` for Hessian-vector products, loops and branches that
//! start from constants, and printing with a precision. Each is checked
//! against a closed form or central finite differences in f64.

use crate::common::*;
use nabla::prelude::*;
use nabla::testing::check_grads;

#[differentiable]
fn quartic(x: &Array) -> Array {
    nabla::sum(&(x * x * x * x)) + nabla::sum(&x.sin())
}

/// `Σ x⁴ + Σ sin x`: its gradient and Hessian-vector product by hand.
fn quartic_hvp_by_hand(x: &[f64], v: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let g = x.iter().map(|x| 4.0 * x * x * x + x.cos()).collect();
    let hv = x
        .iter()
        .zip(v)
        .map(|(x, v)| (12.0 * x * x - x.sin()) * v)
        .collect();
    (g, hv)
}

#[test]
fn jvp_of_grad_is_the_gradient_and_a_hessian_vector_product() {
    let x = Array::from_vec(vec![0.3f64, -1.2, 2.0], &[3]);
    let v = Array::from_vec(vec![1.0f64, 0.5, -2.0], &[3]);
    let (g, hv) = jvp(grad(quartic))((&x,), (&v,));
    let (g_want, hv_want) = quartic_hvp_by_hand(&x.to_vec(), &v.to_vec());
    assert_close(&g, &Array::from_vec(g_want, &[3]), 1e-12, "grad");
    assert_close(&hv, &Array::from_vec(hv_want, &[3]), 1e-12, "hvp");
    // The same through the macros.
    let (_, hv2) = jvp!(grad!(quartic))((&x,), (&v,));
    assert_close(&hv2, &hv, 0.0, "macro form");
}

#[differentiable]
fn weighted(w: &Array, x: &Array, #[nondiff] scale: f64) -> Array {
    nabla::sum(&(w.matmul(x).tanh() * scale))
}

/// [`weighted`] at scale 1.5: a function of arrays alone, what
/// `check_grads` takes.
#[differentiable]
fn weighted_at(w: &Array, x: &Array) -> Array {
    weighted(w, x, 1.5)
}

#[test]
fn jvp_of_grad_with_argnums_matches_finite_differences() {
    let _g = seeded(3);
    let w = nabla::randn(&[2, 3], DType::F64);
    let x = nabla::randn(&[3, 2], DType::F64);
    let (tw, tx) = (
        nabla::randn(&[2, 3], DType::F64),
        nabla::randn(&[3, 2], DType::F64),
    );
    // The tangents (and cotangents) of both gradients against finite
    // differences.
    check_grads(grad(weighted_at), &(w.clone(), x.clone()), 1);
    check_grads(grad!(weighted_at, argnums = 1), &(w.clone(), x.clone()), 1);
    // With the static argument passed through `jvp`: the same values.
    let (g, t) = jvp(grad(weighted))((&w, &x, 1.5), (&tw, &tx));
    let (g0, t0) = jvp(grad(weighted_at))((&w, &x), (&tw, &tx));
    assert_close(
        &g,
        &grad(weighted)(&w, &x, 1.5),
        1e-12,
        "primal is the gradient",
    );
    assert_close(&g, &g0, 1e-12, "gradient");
    assert_close(&t, &t0, 1e-12, "tangent of the gradient");
    // Both gradients at once: argnums = (0, 1).
    let ((gw2, gx2), (tw2, tx2)) =
        jvp!(grad!(weighted, argnums = (0, 1)))((&w, &x, 1.5), (&tw, &tx));
    assert_close(&gw2, &g, 1e-12, "argnums (0, 1): w");
    assert_close(&tw2, &t, 1e-12, "argnums (0, 1): w tangent");
    let (gx, tx0) = jvp!(grad!(weighted_at, argnums = 1))((&w, &x), (&tw, &tx));
    assert_close(&gx2, &gx, 1e-12, "argnums (0, 1): x");
    assert_close(&tx2, &tx0, 1e-12, "argnums (0, 1): x tangent");
}

#[test]
fn vjp_of_grad_pulls_back_through_the_hessian() {
    let x = Array::from_vec(vec![0.3f64, -1.2, 2.0], &[3]);
    let u = Array::from_vec(vec![1.0f64, 0.5, -2.0], &[3]);
    let (g, pullback) = vjp(grad(quartic))(&x);
    let (g_want, hu) = quartic_hvp_by_hand(&x.to_vec(), &u.to_vec());
    assert_close(&g, &Array::from_vec(g_want, &[3]), 1e-12, "grad");
    // The Hessian is symmetric: uᵀH = Hu.
    assert_close(&pullback(&u), &Array::from_vec(hu, &[3]), 1e-12, "pullback");
}

#[test]
fn vjp_of_grad_with_argnums_matches_finite_differences() {
    let _g = seeded(4);
    let w = nabla::randn(&[2, 3], DType::F64);
    let x = nabla::randn(&[3, 2], DType::F64);
    let u = nabla::randn(&[2, 3], DType::F64);
    // The pullback of the gradient (checked against finite differences
    // in the test above) with the static argument passed through `vjp`.
    let (g, pullback) = vjp(grad(weighted))(&w, &x, 1.5);
    assert_close(&g, &grad(weighted)(&w, &x, 1.5), 1e-12, "grad");
    let (cw, cx) = pullback(&u);
    let (_, pullback0) = vjp(grad(weighted_at))(&w, &x);
    let (cw0, cx0) = pullback0(&u);
    assert_close(&cw, &cw0, 1e-12, "cotangent of w");
    assert_close(&cx, &cx0, 1e-12, "cotangent of x");
    // argnums = (0, 1): the cotangent of both gradients.
    let ux = nabla::randn(&[3, 2], DType::F64);
    let ((gw, gx), pb2) = vjp!(grad!(weighted, argnums = (0, 1)))(&w, &x, 1.5);
    assert_close(&gw, &g, 1e-12, "argnums (0, 1): w");
    assert_close(
        &gx,
        &grad!(weighted, argnums = 1)(&w, &x, 1.5),
        1e-12,
        "argnums (0, 1): x",
    );
    let (cw2, cx2) = pb2(&(u.clone(), ux.clone()));
    // Linear in the cotangent: the w part is (cw, cx) above, plus the
    // pullback of the x gradient's cotangent.
    let (_, pbx) = vjp!(grad!(weighted, argnums = 1))(&w, &x, 1.5);
    let (cwx, cxx) = pbx(&ux);
    assert_close(&cw2, &(&cw + &cwx), 1e-12, "argnums (0, 1): w cotangent");
    assert_close(&cx2, &(&cx + &cxx), 1e-12, "argnums (0, 1): x cotangent");
}

#[differentiable]
fn rosen2(a: f64, b: f64) -> f64 {
    (1.0 - a) * (1.0 - a) + 100.0 * (b - a * a) * (b - a * a)
}

#[test]
fn jvp_of_grad_of_a_float_function() {
    let (a, b) = (0.5, 2.0);
    let (g, t) = jvp(grad(rosen2))((a, b), (1.0, 0.0));
    // ∂f/∂a and ∂²f/∂a².
    let ga = -2.0 * (1.0 - a) - 400.0 * a * (b - a * a);
    let haa = 2.0 - 400.0 * (b - 3.0 * a * a);
    assert!((g - ga).abs() < 1e-12 && (t - haa).abs() < 1e-9, "{g} {t}");
    // vjp(grad): the column of the Hessian for a cotangent of 1.
    let (g2, pullback) = vjp(grad(rosen2))(a, b);
    let (paa, pab) = pullback(&1.0);
    let hab = -400.0 * a;
    assert!((g2 - ga).abs() < 1e-12, "{g2}");
    assert!(
        (paa - haa).abs() < 1e-9 && (pab - hab).abs() < 1e-9,
        "{paa} {pab}"
    );
}

/// A damped oscillator integrated from constants: `x` and `v` start as
/// numbers and become differentiable through `k` and `c`.
#[differentiable]
fn oscillator(k: f64, c: f64) -> f64 {
    let dt = 0.01;
    let mut x = 1.0;
    let mut v = 0.0;
    for _ in 0..100 {
        let a = -k * x - c * v;
        x += dt * v;
        v += dt * a;
    }
    0.5 * v * v + 0.5 * k * x * x
}

fn oscillator_by_hand(k: f64, c: f64) -> f64 {
    let (dt, mut x, mut v) = (0.01, 1.0, 0.0);
    for _ in 0..100 {
        let a = -k * x - c * v;
        x += dt * v;
        v += dt * a;
    }
    0.5 * v * v + 0.5 * k * x * x
}

#[test]
fn a_loop_from_constants_is_differentiable() {
    let (k, c) = (2.0, 0.3);
    assert_eq!(oscillator(k, c), oscillator_by_hand(k, c));
    let (gk, gc) = grad!(oscillator, argnums = (0, 1))(k, c);
    // Hand-rolled: check_grads takes functions of arrays, not of floats.
    let eps = 1e-6;
    let fk = (oscillator_by_hand(k + eps, c) - oscillator_by_hand(k - eps, c)) / (2.0 * eps);
    let fc = (oscillator_by_hand(k, c + eps) - oscillator_by_hand(k, c - eps)) / (2.0 * eps);
    assert!(
        (gk - fk).abs() < 1e-7 && (gc - fc).abs() < 1e-7,
        "{gk} {fk} {gc} {fc}"
    );
}

/// An accumulator that starts from a constant array.
#[differentiable]
fn accumulate(x: &Array) -> Array {
    let mut s = Array::zeros(&[3], DType::F64);
    for i in 0..3 {
        s = &s + &(x * x * (i as f64 + 1.0));
    }
    nabla::sum(&s)
}

#[test]
fn an_array_accumulator_from_a_constant_is_differentiable() {
    let x = Array::from_vec(vec![1.0f64, -2.0, 0.5], &[3]);
    // s = 6 x², Σ s = 6 Σ x², d/dx = 12 x.
    assert_close(&accumulate(&x), &Array::scalar(6.0 * 5.25), 1e-12, "value");
    assert_close(&grad(accumulate)(&x), &(&x * 12.0), 1e-12, "grad");
}

/// Differentiable on one path only.
#[differentiable]
fn one_path(x: f64, on: bool) -> f64 {
    let mut y = 0.5;
    if on {
        y = x * x;
    }
    let z = if on { y * 3.0 } else { 2.0 };
    y + z
}

#[test]
fn a_branch_that_is_differentiable_on_one_path_only() {
    // on: y = x², z = 3x², f = 4x², f' = 8x; off: constant.
    assert_eq!(grad(one_path)(1.5, true), 12.0);
    assert_eq!(grad(one_path)(1.5, false), 0.0);
    assert_eq!(one_path(1.5, false), 2.5);
}

#[differentiable]
fn sines(x: &Array) -> Array {
    nabla::sum(&x.sin())
}

#[test]
fn the_prelude_brings_the_transform_macros() {
    let x = Array::from_vec(vec![0.1f64, 0.2, 0.3, 0.4, 0.5, 0.6], &[2, 3]);
    let h = jacfwd!(jacrev!(vmap!(sines)))(&x);
    assert_eq!(h.shape(), &[2, 2, 3, 2, 3]);
    let g = grad!(sines)(&x);
    assert_close(&g, &x.cos(), 1e-12, "grad!");
    let (_, gv) = value_and_grad(sines)(&x);
    assert_close(&gv, &g, 0.0, "value_and_grad");
    let d: Dual<Array> = Dual::new(x.clone(), None);
    assert_eq!(d.primal.shape(), &[2, 3]);
}

#[test]
fn display_honours_precision_and_width() {
    let x = Array::from_vec(vec![1.0f64, 2.5, -3.125], &[3]);
    assert_eq!(format!("{x}"), "[ 1.     2.5   -3.125]");
    assert_eq!(format!("{x:.2}"), "[ 1.00  2.50 -3.12]");
    assert_eq!(format!("{x:7.1}"), "[    1.0     2.5    -3.1]");
    assert_eq!(format!("{:.3}", Array::scalar(2.0f32)), "2.000");
}

#[differentiable]
fn scaled(w: &Array, x: &Array) -> Array {
    let y = w * x; // the line the panic names
    nabla::sum(&y)
}

#[test]
fn a_dtype_panic_inside_grad_points_at_the_users_operation() {
    use std::sync::{Arc, Mutex};
    let seen: Arc<Mutex<Option<(String, u32)>>> = Arc::new(Mutex::new(None));
    let me = std::thread::current().id();
    let prev: Arc<dyn Fn(&std::panic::PanicHookInfo<'_>) + Send + Sync> =
        Arc::from(std::panic::take_hook());
    {
        let (seen, prev) = (seen.clone(), prev.clone());
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().id() == me {
                let loc = info.location().map(|l| (l.file().to_string(), l.line()));
                *seen.lock().unwrap() = loc;
            } else {
                prev(info);
            }
        }));
    }
    let w = Array::ones(&[3], DType::F32);
    let x = Array::ones(&[3], DType::F64);
    let r = std::panic::catch_unwind(|| grad(scaled)(&w, &x));
    let prev2 = prev.clone();
    std::panic::set_hook(Box::new(move |info| prev2(info)));
    assert!(r.is_err(), "mixing f32 and f64 panics");
    let (file, line) = seen.lock().unwrap().clone().expect("a location");
    let src = include_str!("newcomer.rs");
    let want = src
        .lines()
        .position(|l| l.contains("the line the panic names"))
        .unwrap() as u32
        + 1;
    assert!(
        file.ends_with("newcomer.rs") && line == want,
        "{file}:{line}, want line {want}"
    );
}

/// Squared error against labels that are not differentiated, with a
/// constant mask built in the body: static arrays in arithmetic.
#[differentiable]
fn masked_error(w: &Array, x: &Array, #[nondiff] y: &Array) -> Array {
    let pred = x.matmul(w);
    let mask = Array::from_vec(vec![1.0f64, 0.5, 2.0, 1.0], &[4, 1]);
    let d = (pred - y) * mask;
    let r = (y - &d) / y + 1.0 / (y + &d * &d);
    nabla::sum(&(&d * &d)) + nabla::sum(&r)
}

fn masked_error_by_hand(w: &Array, x: &Array, y: &Array) -> Array {
    let mask = Array::from_vec(vec![1.0f64, 0.5, 2.0, 1.0], &[4, 1]);
    let d = (x.matmul(w) - y) * &mask;
    let r = (y - &d) / y + (y + &(&d * &d)).recip();
    (&d * &d).sum() + r.sum()
}

/// Labels for [`masked_error`], built in the body as static arrays are.
fn labels() -> Array {
    Array::from_vec(vec![1.3f64, 2.1, 1.7, 1.05], &[4, 1])
}

/// [`masked_error`] at [`labels`]: a function of the differentiated
/// arrays alone, what `check_grads` takes.
#[differentiable]
fn masked_error_at_labels(w: &Array, x: &Array) -> Array {
    let y = Array::from_vec(vec![1.3f64, 2.1, 1.7, 1.05], &[4, 1]);
    masked_error(w, x, &y)
}

#[test]
fn static_arrays_in_arithmetic_are_constants() {
    let _g = seeded(21);
    let w = nabla::randn(&[3, 1], DType::F64);
    let x = nabla::randn(&[4, 3], DType::F64);
    let y = labels();
    assert_close(
        &masked_error(&w, &x, &y),
        &masked_error_by_hand(&w, &x, &y),
        1e-12,
        "value",
    );
    assert_close(
        &masked_error_at_labels(&w, &x),
        &masked_error(&w, &x, &y),
        0.0,
        "the wrapper",
    );
    check_grads(masked_error_at_labels, &(w.clone(), x.clone()), 2);
    let (gw, gx) = grad!(masked_error, argnums = (0, 1))(&w, &x, &y);
    let (gw0, gx0) = grad!(masked_error_at_labels, argnums = (0, 1))(&w, &x);
    assert_close(&gw, &gw0, 1e-12, "d/dw");
    assert_close(&gx, &gx0, 1e-12, "d/dx");
    // Forward mode agrees with the gradient.
    let tw = nabla::randn(&[3, 1], DType::F64);
    let (_, t) = jvp(masked_error)((&w, &x, &y), (&tw, &x.zeros_like()));
    assert!((t.item() - (&gw * &tw).sum().item()).abs() < 1e-9);
}
