//! Transforms called inside differentiable code: a gradient penalty, a
//! `vmap` inside a loss, `jvp`, Jacobians and `argnums` forms — and the
//! enclosing function differentiated again (grad, jvp, vmap), against
//! central finite differences in f64.

use crate::common::*;
use nabla::prelude::*;
use nabla::testing::check_grads;

#[differentiable]
fn critic(x: &Array, w: &Array) -> Array {
    nabla::sum(&x.matmul(w).tanh())
}

/// A WGAN-GP style loss: the critic plus a penalty on the norm of its
/// gradient with respect to the input.
#[differentiable]
fn penalised(w: &Array, x: &Array) -> Array {
    let g = nabla::grad(critic)(x, w);
    let n2 = nabla::sum(&(&g * &g));
    critic(x, w) + (&n2 - 1.0) * (&n2 - 1.0) * 0.5
}

fn penalised_by_hand(w: &Array, x: &Array) -> Array {
    // ∂/∂x Σ tanh(x w) = (1 − tanh²(x w)) wᵀ.
    let t = x.matmul(w).tanh();
    let g = (t.ones_like() - &t * &t).matmul(&w.transpose());
    let n2 = (&g * &g).sum();
    let p = (&n2 - 1.0) * (&n2 - 1.0) * 0.5;
    t.sum() + p
}

#[test]
fn a_gradient_penalty_is_differentiable() {
    let _g = seeded(11);
    let w = nabla::randn(&[3, 2], DType::F64);
    let x = nabla::randn(&[4, 3], DType::F64);
    assert_close(
        &penalised(&w, &x),
        &penalised_by_hand(&w, &x),
        1e-12,
        "value",
    );
    check_grads(penalised, &(w.clone(), x.clone()), 1);
    let (gw, gx) = grad!(penalised, argnums = (0, 1))(&w, &x);
    // Forward mode through it too.
    let (tw, tx) = (
        nabla::randn(&[3, 2], DType::F64),
        nabla::randn(&[4, 3], DType::F64),
    );
    let (_, t) = nabla::jvp(penalised)((&w, &x), (&tw, &tx));
    let want = (&gw * &tw).sum() + (&gx * &tx).sum();
    assert!(
        (t.item() - want.item()).abs() < 1e-9,
        "{} {}",
        t.item(),
        want.item()
    );
}

#[differentiable]
fn energy(z: &Array, k: &Array) -> Array {
    nabla::sum(&(z * z * k).sin())
}

/// Σ over a batch of `energy`, mapped with `in_axes = (0, None)`.
#[differentiable]
fn batch_energy(zs: &Array, k: &Array) -> Array {
    let e = nabla::vmap!(energy, in_axes = (0, None))(zs, k);
    nabla::sum(&e)
}

#[test]
fn vmap_inside_a_loss_under_grad() {
    let _g = seeded(12);
    let zs = nabla::randn(&[5, 3], DType::F64);
    let k = nabla::randn(&[3], DType::F64);
    let direct = |zs: &Array, k: &Array| nabla::sum(&(zs * zs * k).sin());
    assert_close(&batch_energy(&zs, &k), &direct(&zs, &k), 1e-12, "value");
    check_grads(batch_energy, &(zs.clone(), k.clone()), 2);
    // vmap of the function that holds a vmap: a batch of batches.
    let zss = nabla::randn(&[2, 5, 3], DType::F64);
    let per = nabla::vmap!(batch_energy, in_axes = (0, None))(&zss, &k);
    for b in 0..2 {
        let zb = zss.index_select(0, &[b]).reshape(&[5, 3]);
        assert_close(
            &per.index_select(0, &[b]).reshape(&[]),
            &direct(&zb, &k),
            1e-12,
            "row",
        );
    }
}

#[differentiable]
fn wave(x: &Array) -> Array {
    x.sin() * nabla::sum(&(x * x))
}

/// `½‖J v‖²` for the Jacobian `J` of `wave` at `x`, through `jvp`.
#[differentiable]
fn stretch(x: &Array, v: &Array) -> Array {
    let (_, y_dot) = nabla::jvp(wave)((x,), (v,));
    nabla::sum(&(&y_dot * &y_dot)) * 0.5
}

/// The same through `jacfwd`: `J` in full, then `J v`.
#[differentiable]
fn stretch_by_jacobian(x: &Array, v: &Array) -> Array {
    let j = nabla::jacfwd(wave)(x);
    let jv = j.matmul(v);
    nabla::sum(&(&jv * &jv)) * 0.5
}

#[test]
fn jvp_and_jacobians_inside_under_grad() {
    let x = Array::from_vec(vec![0.3f64, -1.2, 2.0], &[3]);
    let v = Array::from_vec(vec![1.0f64, 0.5, -2.0], &[3]);
    assert_close(
        &stretch(&x, &v),
        &stretch_by_jacobian(&x, &v),
        1e-12,
        "value",
    );
    check_grads(stretch, &(x.clone(), v.clone()), 2);
    check_grads(stretch_by_jacobian, &(x.clone(), v.clone()), 2);
    // `argnums` picks the same cotangents the full pullback gives.
    let (gx, gv) = grad!(stretch, argnums = (0, 1))(&x, &v);
    let g = (
        grad!(stretch, argnums = 0)(&x, &v),
        grad!(stretch, argnums = 1)(&x, &v),
    );
    let g2 = (
        grad!(stretch_by_jacobian, argnums = 0)(&x, &v),
        grad!(stretch_by_jacobian, argnums = 1)(&x, &v),
    );
    for (a, b, what) in [
        (&g.0, &gx, "stretch: argument 0"),
        (&g.1, &gv, "stretch: argument 1"),
        (&g2.0, &gx, "stretch_by_jacobian: argument 0"),
        (&g2.1, &gv, "stretch_by_jacobian: argument 1"),
    ] {
        assert_close(a, b, 1e-12, what);
    }
}

#[differentiable]
fn bowl(x: &Array) -> Array {
    nabla::sum(&(x * x * x + x.sin()))
}

/// The trace of the Hessian (a Laplacian), through `hessian` inside
/// (`eye` is the identity).
#[differentiable]
fn laplacian(x: &Array, eye: &Array) -> Array {
    let h = nabla::hessian(bowl)(x);
    nabla::sum(&(h * eye))
}

#[test]
fn a_hessian_inside_is_differentiable() {
    let x = Array::from_vec(vec![0.3f64, -1.2, 2.0], &[3]);
    // Σ (6x − sin x), so its gradient is 6 − cos x.
    let want: Vec<f64> = x.to_vec::<f64>().iter().map(|x| 6.0 - x.cos()).collect();
    let eye = Array::eye(3, DType::F64);
    assert_close(
        &nabla::grad(laplacian)(&x, &eye),
        &Array::from_vec(want, &[3]),
        1e-12,
        "grad",
    );
}

/// `value_and_grad` inside, and one result of `jvp` picked with `.1`.
#[differentiable]
fn mixed(x: &Array, v: &Array) -> Array {
    let (y, g) = nabla::value_and_grad(bowl)(x);
    let slope = nabla::jvp(bowl)((x,), (v,)).1;
    y * 2.0 + nabla::sum(&(&g * &g)) + slope
}

fn mixed_by_hand(x: &Array, v: &Array) -> Array {
    let g = &(x * x) * 3.0 + x.cos();
    nabla::sum(&(x * x * x + x.sin())) * 2.0 + (&g * &g).sum() + (&g * v).sum()
}

#[test]
fn value_and_grad_and_a_picked_jvp_inside() {
    let x = Array::from_vec(vec![0.3f64, -1.2, 2.0], &[3]);
    let v = Array::from_vec(vec![1.0f64, 0.5, -2.0], &[3]);
    assert_close(&mixed(&x, &v), &mixed_by_hand(&x, &v), 1e-12, "value");
    check_grads(mixed, &(x, v), 2);
}
