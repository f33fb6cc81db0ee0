//! A first `#[differentiable]` program: a scalar function's `grad` (one and
//! two `argnums`) against hand-derived derivatives, and a small model's
//! gradients against the imperative tape.

use crate::common::seeded;
use nabla::prelude::*;

#[nabla::differentiable]
fn f(x: f64, y: f64) -> f64 {
    let z = x * x * y;
    z + y.sin()
}

#[nabla::differentiable]
fn loss(w: &Array, b: &Array, x: &Array, y: &Array) -> Array {
    let h = x.matmul(w) + b;
    let d = h.tanh() - y;
    nabla::mean(&(&d * &d))
}

#[test]
fn smoke() {
    assert_eq!(f(3.0, 2.0), 18.0 + 2f64.sin());
    let g = nabla::grad(f)(3.0, 2.0);
    assert_eq!(g, 12.0);
    let (gx, gy) = nabla::grad!(f, argnums = (0, 1))(3.0, 2.0);
    assert_eq!(gx, 12.0);
    assert!((gy - (9.0 + 2f64.cos())).abs() < 1e-15);
    let _rng = seeded(0);
    let w = nabla::randn(&[3, 2], DType::F64);
    let b = nabla::randn(&[2], DType::F64);
    let x = nabla::randn(&[4, 3], DType::F64);
    let y = nabla::randn(&[4, 2], DType::F64);
    let (gw, gb) = nabla::grad!(loss, argnums = (0, 1))(&w, &b, &x, &y);
    // compare to tape
    let wt = w.clone().requires_grad();
    let bt = b.clone().requires_grad();
    loss(&wt, &bt, &x, &y).backward();
    assert!((gw - wt.grad()).abs().max().item() < 1e-14);
    assert!((gb - bt.grad()).abs().max().item() < 1e-14);
}

/// User names that look like the macro's own temporaries (`mul1`,
/// `matmul1`, `ct_h`, `h_1`) keep their meaning: the generated names never
/// capture them.
#[nabla::differentiable]
fn names_like_temporaries(x: &Array, w: &Array) -> Array {
    let mul1 = x * x;
    let matmul1 = (&mul1 * x).matmul(w);
    let h = matmul1.tanh();
    let ct_h = &h * 2.0;
    let h_1 = (x.matmul(w) * &ct_h).sin();
    nabla::sum(&(&h_1 + &h * &h))
}

#[test]
fn user_names_never_meet_generated_ones() {
    let _rng = seeded(3);
    let x = nabla::randn(&[2, 3], DType::F64);
    let w = nabla::randn(&[3, 2], DType::F64);
    let (xt, wt) = (x.clone().requires_grad(), w.clone().requires_grad());
    names_like_temporaries(&xt, &wt).backward();
    let (gx, gw) = nabla::grad!(names_like_temporaries, argnums = (0, 1))(&x, &w);
    assert!((gx - xt.grad()).abs().max().item() < 1e-12);
    assert!((gw - wt.grad()).abs().max().item() < 1e-12);
}
