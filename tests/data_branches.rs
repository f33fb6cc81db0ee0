//! Data-dependent `if` in differentiable code: the condition reads the data
//! (`x.item()`); the forward sweep records the branch taken and the reverse
//! sweep replays it. Under `vmap` such a condition is a clear run-time error.

mod common;

use common::*;
use nabla::prelude::*;

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
        let g = nabla::grad(piecewise)(&x);
        let f = |v: &[Array]| piecewise(&v[0]);
        let fd = fd_grad(
            &f,
            std::slice::from_ref(&x),
            &Array::scalar(1.0f64),
            0,
            1e-6,
        );
        assert_close(&g, &fd, 1e-7, &format!("grad at {p:?}"));
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
