//! Data-dependent `if` in differentiable code: the condition reads the data
//! (`x.item()`); the forward sweep records the branch taken and the reverse
//! sweep replays it. Under `vmap` such a condition is a clear run-time error.

use crate::common::*;
use nabla::prelude::*;
use nabla::testing::check_grads;

#[differentiable]
fn piecewise(x: &Array) -> Array {
    let s = nabla::sum(x);
    let y = if s.item() > 0.0 {
        let t = x.sin() * 2.0;
        t * x
    } else if s.item() > -1.0 {
        x.exp()
    } else {
        x.square() * 3.0
    };
    nabla::sum(&y)
}

#[test]
fn each_branch_matches_finite_differences_and_jvp() {
    let points = [vec![0.5f64, 0.3], vec![-0.2, -0.4], vec![-1.5, -0.1]];
    for p in points {
        let x = Array::from_vec(p.clone(), &[2]);
        check_grads(piecewise, &(x.clone(),), 2);
        let g = nabla::grad(piecewise)(&x);
        let (_, t) = nabla::jvp(piecewise)((&x,), (&x.ones_like(),));
        assert!((t.item() - g.sum().item()).abs() < 1e-12, "jvp at {p:?}");
        let h = nabla::hessian(piecewise)(&x);
        assert_eq!(h.shape(), &[2, 2]);
    }
}

#[test]
fn data_dependent_branch_under_vmap_is_a_clear_error() {
    let xs = Array::from_vec(vec![0.5f64, 0.3, -0.2, -0.4], &[2, 2]);
    let err = std::panic::catch_unwind(|| {
        nabla::vmap(piecewise)(&xs);
    })
    .expect_err("must panic");
    let msg = match err.downcast::<String>() {
        Ok(s) => *s,
        Err(e) => e
            .downcast::<&str>()
            .map(|s| s.to_string())
            .unwrap_or_default(),
    };
    assert!(
        msg.starts_with("item() under vmap: the value differs across the batch"),
        "{msg}"
    );
}

/// Halve until small: a data-dependent trip count.
#[differentiable]
fn halve_until_small(x: &Array) -> Array {
    let mut y = x * 3.0;
    let mut steps = 0;
    while nabla::sum(&y).item() > 1.0 {
        y = y.sin() * 0.5 + &y * 0.25;
        steps += 1;
    }
    nabla::sum(&y.square()) * (1.0 + steps as f64)
}

/// Square root by Newton's method, iterated to convergence.
#[differentiable]
fn newton_sqrt(a: f64) -> f64 {
    let mut x = a * 0.0 + 1.0;
    while (x * x - a).abs() > 1e-13 {
        x = (x + a / x) * 0.5;
    }
    x
}

#[test]
fn while_loops_with_data_dependent_trip_counts() {
    let x = Array::from_vec(vec![0.9f64, 1.3, 0.4], &[3]);
    check_grads(halve_until_small, &(x.clone(),), 1);
    let g = nabla::grad(halve_until_small)(&x);
    let tx = x.clone().requires_grad();
    halve_until_small(&tx).backward();
    assert_close(&g, &tx.grad(), 1e-13, "while: grad vs tape");
    let (_, t) = nabla::jvp(halve_until_small)((&x,), (&x.ones_like(),));
    assert!((t.item() - g.sum().item()).abs() < 1e-12);
    // Newton's sqrt: the derivative through the iterations is 1 / (2 sqrt a).
    for a in [2.0f64, 9.0, 0.25] {
        let d = nabla::grad(newton_sqrt)(a);
        assert!((newton_sqrt(a) - a.sqrt()).abs() < 1e-12);
        assert!((d - 0.5 / a.sqrt()).abs() < 1e-9, "d sqrt({a}) = {d}");
    }
}
