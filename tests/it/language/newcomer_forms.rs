//! Forms a new user writes first that must simply work (issue 46, item
//! 7): `nabla::linalg::slogdet` destructured inside differentiable code as
//! outside it, an accumulator that starts as a number in a function of
//! arrays (`let mut v = 0.0; for .. { v += dt * a }`), and `.log()` beside
//! `.ln()`. Each is checked against the plain computation and, for
//! derivatives, against a closed form.

use crate::common::*;
use nabla::prelude::*;

/// `log |det a|` with the sign folded in, by the full path.
#[differentiable]
fn signed_logdet(a: &Array) -> Array {
    let (sign, logdet) = nabla::linalg::slogdet(a);
    sign * logdet
}

#[test]
fn slogdet_destructures_by_its_full_path_inside_and_outside() {
    let a = Array::from_vec(vec![2.0f64, 1.0, 0.5, 3.0], &[2, 2]);
    let (sign, logdet) = nabla::linalg::slogdet(&a);
    assert_eq!(sign.item(), 1.0);
    let det: f64 = 2.0 * 3.0 - 1.0 * 0.5;
    assert!((logdet.item() - det.ln()).abs() < 1e-14, "{logdet}");
    assert_eq!(signed_logdet(&a).item(), logdet.item());
    // d log|det a| / da = a⁻ᵀ.
    let g = grad(signed_logdet)(&a);
    let inv_t = [3.0 / det, -0.5 / det, -1.0 / det, 2.0 / det];
    assert_close(&g, &Array::from_vec(inv_t.to_vec(), &[2, 2]), 1e-12, "grad");
}

/// `v` starts as a number and accumulates `dt · a`; `dt` is static.
#[differentiable]
fn integrate(a: &Array, #[nondiff] dt: f64) -> Array {
    let mut v = 0.0;
    for _ in 0..3 {
        v += dt * a;
    }
    nabla::sum(&(&v * &v))
}

/// The same, with the step a local number and the update written out.
#[differentiable]
fn integrate_local(a: &Array) -> Array {
    let dt = 0.25;
    let mut v = 0.0;
    for _ in 0..4 {
        v = v + dt * a;
    }
    nabla::sum(&v)
}

#[test]
fn an_accumulator_that_starts_as_a_number_works_in_a_function_of_arrays() {
    let a = Array::from_vec(vec![2.0f64, -1.0, 0.5], &[3]);
    let dt = 0.5;
    // v = 3·dt·a, so Σ v² = 9 dt² Σ a² and its gradient 18 dt² a.
    let want: f64 = 9.0 * dt * dt * a.to_vec::<f64>().iter().map(|x| x * x).sum::<f64>();
    assert!((integrate(&a, dt).item() - want).abs() < 1e-12);
    assert_close(
        &grad(integrate)(&a, dt),
        &(&a * (18.0 * dt * dt)),
        1e-12,
        "grad",
    );
    assert!((integrate_local(&a).item() - 1.5).abs() < 1e-12);
    assert_close(&grad(integrate_local)(&a), &a.ones_like(), 1e-12, "grad");
}

/// `Σ log x` written with `.log()`.
#[differentiable]
fn log_sum(x: &Array) -> Array {
    nabla::sum(&x.log())
}

#[test]
fn log_is_ln_as_a_method_a_function_and_in_differentiable_code() {
    let x = Array::from_vec(vec![0.5f64, 1.0, 4.0], &[3]);
    assert_eq!(x.log().to_vec::<f64>(), x.ln().to_vec::<f64>());
    assert_eq!(nabla::log(&x).to_vec::<f64>(), x.ln().to_vec::<f64>());
    let want: f64 = x.to_vec::<f64>().iter().map(|v| v.ln()).sum();
    assert!((log_sum(&x).item() - want).abs() < 1e-15);
    assert_close(&grad(log_sum)(&x), &x.recip(), 1e-15, "grad");
    // Through the value traits: forward mode, and an imperative backward.
    let (y, t) = jvp(log_sum)((&x,), (&x.ones_like(),));
    assert_eq!(y.item(), log_sum(&x).item());
    assert!((t.item() - (2.0 + 1.0 + 0.25)).abs() < 1e-15, "{t}");
    let xt = x.clone().requires_grad();
    nabla::sum(&xt.log()).backward();
    assert_close(&xt.grad(), &x.recip(), 1e-15, "backward");
}
