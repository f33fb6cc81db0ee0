//! `soft_sign`, added to the op registry as one entry and nothing else:
//! its method, free function, tape rule, JVP (`Dual`), batching rule
//! (`Batched`), generated code and second derivative all come from that
//! entry. Checked against the closed form and central finite differences
//! in f64.

use crate::common::*;
use nabla::prelude::*;
use nabla::{Batched, Dual};

fn x() -> Array {
    Array::from_vec(vec![-2.5f64, -0.3, 0.2, 1.7, 4.0, -0.9], &[2, 3])
}

#[nabla::differentiable]
fn total(x: &Array) -> Array {
    nabla::sum(&x.soft_sign())
}

#[test]
fn soft_sign_forward_and_derivatives() {
    let x = x();
    let v = x.to_vec::<f64>();
    let want = |f: &dyn Fn(f64) -> f64| Array::from_vec(v.iter().map(|&a| f(a)).collect(), &[2, 3]);
    let y = want(&|a| a / (1.0 + a.abs()));
    let d1 = want(&|a| 1.0 / (1.0 + a.abs()).powi(2));
    let d2 = want(&|a| -2.0 * a.signum() / (1.0 + a.abs()).powi(3));
    assert_close(&x.soft_sign(), &y, 1e-15, "method");
    assert_close(&nabla::soft_sign(&x), &y, 1e-15, "function");
    assert_close(&x.cast(DType::F32).soft_sign(), &y, 1e-6, "f32");
    // Tape and generated code.
    let l = x.clone().requires_grad();
    l.soft_sign().sum().backward();
    assert_close(&l.grad(), &d1, 1e-12, "tape");
    assert_close(&nabla::grad(total)(&x), &d1, 1e-12, "generated grad");
    // Forward mode, and the Hessian's diagonal (the function is separable).
    let t = Dual::new(x.clone(), Some(x.ones_like()))
        .soft_sign()
        .tangent_or_zero();
    assert_close(&t, &d1, 1e-12, "jvp");
    let h = nabla::hessian(total)(&x.reshape(&[6])).reshape(&[6, 6]);
    let diag: Vec<f64> = (0..6).map(|i| h.to_vec::<f64>()[i * 7]).collect();
    assert_close(
        &Array::from_vec(diag, &[2, 3]),
        &d2,
        1e-12,
        "hessian diagonal",
    );
    // JVP, VJP and second derivatives against finite differences.
    nabla::testing::check_grads(total, &(x.clone(),), 2);
    // vmap: a batch along axis 1.
    let b = Batched::new(x.clone(), Some(1)).soft_sign();
    assert_close(&b.materialize(3, 1), &y, 1e-15, "vmap");
}
