//! `if`/`else` on static conditions inside `#[differentiable]` functions:
//! the reverse sweep replays the branch that ran, branches may bind
//! different intermediates, rebind outer variables (values and statics),
//! nest, and call other differentiable functions.

use crate::common::*;
use nabla::prelude::*;
use nabla::testing::check_grads;

#[differentiable]
fn inner(x: &Array, #[nondiff] k: f64) -> Array {
    (x * k).tanh()
}

#[differentiable]
fn piecewise(x: &Array, w: &Array, mode: u8, scale: bool) -> Array {
    let mut y = x.sin();
    if scale {
        y = &y * 2.0;
    }
    let z = if mode == 0 {
        let e = (&y * w).exp();
        e + 1.0
    } else if mode == 1 {
        &y * &y
    } else {
        let t = inner(&y, 0.5);
        &t * w
    };
    let mut n = 1usize;
    if mode > 0 {
        n = 3;
    }
    nabla::sum(&z) * (n as f64)
}

#[test]
fn every_branch_matches_the_tape_and_finite_differences() {
    let _rng = seeded(1);
    let x = nabla::randn(&[2, 3], DType::F64);
    let w = nabla::randn(&[3], DType::F64);
    for mode in 0..3u8 {
        for scale in [false, true] {
            let what = format!("mode {mode} scale {scale}");
            let (gx, gw) = nabla::grad!(piecewise, argnums = (0, 1))(&x, &w, mode, scale);
            let (tx, tw) = (x.clone().requires_grad(), w.clone().requires_grad());
            piecewise(&tx, &tw, mode, scale).backward();
            assert_close(&gx, &tx.grad(), 1e-12, &format!("{what}: d/dx"));
            let tape_w = tw.try_grad().unwrap_or_else(|| w.zeros_like()); // mode 1 ignores w
            assert_close(&gw, &tape_w, 1e-12, &format!("{what}: d/dw"));
            let (_, t) =
                nabla::jvp(piecewise)((&x, &w, mode, scale), (&x.ones_like(), &w.zeros_like()));
            assert!((t.item() - gx.sum().item()).abs() < 1e-10, "{what}: jvp");
        }
    }
    check_grads(piecewise_each, &vec![x, w], 1);
}

/// [`piecewise`] in each mode, scaled and not, as a function of arrays
/// alone (what `check_grads` takes).
#[differentiable]
fn piecewise_each(xs: &[Array]) -> Vec<Array> {
    let (x, w) = (&xs[0], &xs[1]);
    vec![
        piecewise(x, w, 0, false),
        piecewise(x, w, 0, true),
        piecewise(x, w, 1, false),
        piecewise(x, w, 1, true),
        piecewise(x, w, 2, false),
        piecewise(x, w, 2, true),
    ]
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Activation {
    Tanh,
    Relu,
    Scaled,
}

#[differentiable]
fn activated(x: &Array, w: &Array, #[nondiff] act: Activation) -> Array {
    let z = x.matmul(w);
    let h = match act {
        Activation::Tanh => z.tanh(),
        Activation::Relu => z.relu(),
        Activation::Scaled => z * 2.0,
    };
    let scale = match x.sum().item() > 0.0 {
        true => 1.0,
        false => 3.0,
    };
    nabla::sum(&h.square()) * scale
}

#[test]
fn match_on_an_enum_argument_and_on_data() {
    let _rng = seeded(41);
    let x = nabla::randn(&[3, 4], DType::F64);
    let w = nabla::randn(&[4, 2], DType::F64);
    for act in [Activation::Tanh, Activation::Relu, Activation::Scaled] {
        for sign in [1.0, -1.0] {
            let xs = &x * sign;
            let gw = nabla::grad!(activated, argnums = 1)(&xs, &w, act);
            let tw = w.clone().requires_grad();
            activated(&xs, &tw, act).backward();
            assert_close(
                &gw,
                &tw.grad(),
                1e-12,
                &format!("{act:?}, sign {sign}: grad vs tape"),
            );
        }
    }
    check_grads(activated_each, &vec![x, w], 1);
}

/// [`activated`] with each activation, at `x` and `-x`, as a function of
/// arrays alone.
#[differentiable]
fn activated_each(xs: &[Array]) -> Vec<Array> {
    let (x, w) = (&xs[0], &xs[1]);
    let neg = x * -1.0;
    vec![
        activated(x, w, Activation::Tanh),
        activated(&neg, w, Activation::Tanh),
        activated(x, w, Activation::Relu),
        activated(&neg, w, Activation::Relu),
        activated(x, w, Activation::Scaled),
        activated(&neg, w, Activation::Scaled),
    ]
}

/// An `Option` of a number is a static setting, not a tree (only
/// `Option<Array>` and options of trees are differentiable arguments).
#[differentiable]
fn clipped(x: &Array, limit: Option<f64>, power: Option<i32>) -> Array {
    let y = x.powi(power.unwrap_or(2));
    if limit.is_some() {
        let l = limit.unwrap_or(0.0);
        y.clip(-l, l).sum()
    } else {
        y.sum()
    }
}

/// `clipped` with `if let` on the static option.
#[differentiable]
fn clipped_if_let(x: &Array, limit: Option<f64>, power: Option<i32>) -> Array {
    let y = x.powi(power.unwrap_or(2));
    if let Some(l) = limit {
        y.clip(-l, l).sum()
    } else {
        y.sum()
    }
}

#[test]
fn optional_numbers_are_static_arguments() {
    let x = Array::from_vec(vec![0.5f64, -1.5, 3.0], &[3]);
    // No limit, power 2: d/dx Σx² = 2x.
    let g = nabla::grad(clipped)(&x, None, None);
    assert_close(&g, &(&x * 2.0), 1e-12, "2x");
    // Power 3 with the limit 4: x³ = 27 is clipped (zero gradient), the rest 3x².
    let g = nabla::grad(clipped)(&x, Some(4.0), Some(3));
    let want = Array::from_vec(vec![0.75f64, 6.75, 0.0], &[3]);
    assert_close(&g, &want, 1e-12, "3x² where unclipped");
    // The same through `if let Some(l) = limit`.
    let g = nabla::grad(clipped_if_let)(&x, Some(4.0), Some(3));
    assert_close(&g, &want, 1e-12, "if let: 3x² where unclipped");
    let g = nabla::grad(clipped_if_let)(&x, None, None);
    assert_close(&g, &(&x * 2.0), 1e-12, "if let: 2x");
    assert_eq!(clipped_if_let(&x, Some(1.0), None).item(), 0.25 + 1.0 + 1.0);
}
