//! The row primitives (`nabla::softmax` over the last axis and
//! `nabla::layer_norm` with a 1-D weight run `composite::rows`' kernels)
//! against their composite definitions written out here: values, all four
//! second-order modes, vmap, the tape, and f32; and the backward ops
//! against finite differences.

use crate::common::*;
use nabla::composite::rows::{normalize_rows_backward, softmax_rows_backward};
use nabla::prelude::*;

#[differentiable]
fn softmax_composite(x: &Array) -> Array {
    let m = nabla::stop_gradient(&x.max_axes(&[-1], true));
    let e = (x - &m).exp();
    &e / &e.sum_axes(&[-1], true)
}

/// A scalar whose Hessian sees softmax's second derivative.
#[differentiable]
fn softmax_loss(x: &Array) -> Array {
    nabla::sum(&(nabla::softmax(x, -1).sin() * x))
}

#[differentiable]
fn softmax_loss_composite(x: &Array) -> Array {
    nabla::sum(&(softmax_composite(x).sin() * x))
}

/// Attention's softmax with the causal mask added, written out.
#[differentiable]
fn attention_composite(s: &Array) -> Array {
    let mask = nabla::composite::rows::causal_mask(s.shape(), s.dtype(), s.device());
    (s * 0.35 + mask).softmax(-1)
}

#[differentiable]
fn attention_loss(s: &Array) -> Array {
    let a = nabla::composite::rows::attention_softmax(&s.reshape(&[2, 3, 3]), 0.35, true);
    nabla::sum(&(a.sin() * s.reshape(&[2, 3, 3])))
}

#[differentiable]
fn attention_loss_composite(s: &Array) -> Array {
    let a = attention_composite(&s.reshape(&[2, 3, 3]));
    nabla::sum(&(a.sin() * s.reshape(&[2, 3, 3])))
}

#[differentiable]
fn softmax_loss_flat(x: &Array) -> Array {
    softmax_loss(&x.reshape(&[2, 3, 7]))
}

#[differentiable]
fn softmax_loss_composite_flat(x: &Array) -> Array {
    softmax_loss_composite(&x.reshape(&[2, 3, 7]))
}

#[differentiable]
fn layer_norm_composite(x: &Array, w: &Array, b: &Array) -> Array {
    let c = x - &x.mean_axes(&[-1], true);
    let v = c.square().mean_axes(&[-1], true);
    c * (v + 1e-5).rsqrt() * w + b
}

#[differentiable]
fn layer_norm_loss(x: &Array, w: &Array, b: &Array) -> Array {
    nabla::sum(&(nabla::layer_norm(x, w, b, 1e-5).tanh() * x))
}

#[differentiable]
fn layer_norm_loss_composite(x: &Array, w: &Array, b: &Array) -> Array {
    nabla::sum(&(layer_norm_composite(x, w, b).tanh() * x))
}

#[differentiable]
fn layer_norm_loss_flat(x: &Array, w: &Array, b: &Array) -> Array {
    layer_norm_loss(&x.reshape(&[2, 3, 7]), w, b)
}

#[differentiable]
fn layer_norm_loss_composite_flat(x: &Array, w: &Array, b: &Array) -> Array {
    layer_norm_loss_composite(&x.reshape(&[2, 3, 7]), w, b)
}

/// Rows of 7 (not a multiple of any vector width) in a [2, 3, 7] array.
fn x() -> Array {
    Array::from_vec(
        (0..42)
            .map(|i| ((i * 29 % 17) as f64) / 5.0 - 1.5)
            .collect(),
        &[2, 3, 7],
    )
}

fn w() -> Array {
    Array::from_vec((0..7).map(|i| 0.5 + 0.2 * i as f64).collect(), &[7])
}

fn b() -> Array {
    Array::from_vec((0..7).map(|i| 0.1 * i as f64 - 0.3).collect(), &[7])
}

#[test]
fn softmax_matches_its_composite_at_every_order() {
    let x = x();
    assert_close(
        &nabla::softmax(&x, -1),
        &softmax_composite(&x),
        1e-15,
        "softmax",
    );
    assert_close(
        &nabla::softmax(&x, 1),
        &{
            let e = (&x - &x.max_axes(&[1], true)).exp();
            &e / &e.sum_axes(&[1], true)
        },
        1e-15,
        "softmax over a middle axis (the composite path)",
    );
    let (g, want) = (grad(softmax_loss)(&x), grad(softmax_loss_composite)(&x));
    assert_close(&g, &want, 1e-13, "grad");
    let xf = x.reshape(&[42]);
    let h = nabla::hessian(softmax_loss_flat)(&xf);
    let hc = nabla::hessian(softmax_loss_composite_flat)(&xf);
    assert_close(&h, &hc, 1e-12, "hessian (jacfwd of jacrev)");
    let rr = nabla::jacrev(nabla::jacrev(softmax_loss_flat))(&xf);
    assert_close(&rr, &hc, 1e-12, "jacrev of jacrev");
    let ff = nabla::jacfwd(nabla::jacfwd(softmax_loss_flat))(&xf);
    assert_close(&ff, &hc, 1e-12, "jacfwd of jacfwd");
    let rf = nabla::jacrev(nabla::jacfwd(softmax_loss_flat))(&xf);
    assert_close(&rf, &hc, 1e-12, "jacrev of jacfwd");
    // vmap over the leading axis: per-example gradients.
    let per = nabla::vmap!(grad(softmax_loss), in_axes = (0,))(&x);
    let per_c = nabla::vmap!(grad(softmax_loss_composite), in_axes = (0,))(&x);
    assert_close(&per, &per_c, 1e-13, "vmap of grad");
    // The tape.
    let xt = x.clone().requires_grad();
    (nabla::softmax(&xt, -1).sin() * &xt).sum().backward();
    assert_close(&xt.grad(), &want, 1e-13, "tape");
    // f32.
    let x32 = x.cast(DType::F32);
    assert_close(
        &grad(softmax_loss)(&x32).cast(DType::F64),
        &want,
        2e-6,
        "grad in f32",
    );
}

#[test]
fn causal_scaled_softmax_matches_the_masked_composite() {
    // Scores [2, 3, 3]: each 3×3 block masked above its diagonal.
    let s = Array::from_vec(
        (0..18).map(|i| ((i * 7 % 11) as f64) / 3.0 - 1.0).collect(),
        &[18],
    );
    let rows = nabla::composite::rows::attention_softmax(&s.reshape(&[2, 3, 3]), 0.35, true);
    let mask = nabla::composite::rows::causal_mask([3, 3], DType::F64, Device::Cpu);
    let want = (s.reshape(&[2, 3, 3]) * 0.35 + mask).softmax(-1);
    assert_close(&rows, &want, 1e-15, "causal softmax");
    assert_eq!(rows.to_vec::<f64>()[1], 0.0, "masked entries are exactly 0");
    let plain = nabla::composite::rows::attention_softmax(&s.reshape(&[2, 3, 3]), 0.35, false);
    assert_close(
        &plain,
        &(s.reshape(&[2, 3, 3]) * 0.35).softmax(-1),
        1e-15,
        "scaled softmax",
    );
    let g = grad(attention_loss)(&s);
    let gc = grad(attention_loss_composite)(&s);
    assert_close(&g, &gc, 1e-13, "grad");
    let h = nabla::hessian(attention_loss)(&s);
    let hc = nabla::hessian(attention_loss_composite)(&s);
    assert_close(&h, &hc, 1e-12, "hessian");
    let rr = nabla::jacrev(nabla::jacrev(attention_loss))(&s);
    assert_close(&rr, &hc, 1e-12, "jacrev of jacrev");
}

#[test]
fn layer_norm_matches_its_composite_at_every_order() {
    let (x, w, b) = (x(), w(), b());
    assert_close(
        &nabla::layer_norm(&x, &w, &b, 1e-5),
        &layer_norm_composite(&x, &w, &b),
        1e-14,
        "layer_norm",
    );
    for k in 0..3 {
        let g = match k {
            0 => grad!(layer_norm_loss, argnums = 0)(&x, &w, &b),
            1 => grad!(layer_norm_loss, argnums = 1)(&x, &w, &b),
            _ => grad!(layer_norm_loss, argnums = 2)(&x, &w, &b),
        };
        let want = match k {
            0 => grad!(layer_norm_loss_composite, argnums = 0)(&x, &w, &b),
            1 => grad!(layer_norm_loss_composite, argnums = 1)(&x, &w, &b),
            _ => grad!(layer_norm_loss_composite, argnums = 2)(&x, &w, &b),
        };
        assert_close(&g, &want, 1e-12, &format!("grad of argument {k}"));
    }
    let xf = x.reshape(&[42]);
    let hc = nabla::hessian(layer_norm_loss_composite_flat)(&xf, &w, &b);
    let h = nabla::hessian(layer_norm_loss_flat)(&xf, &w, &b);
    assert_close(&h, &hc, 1e-10, "hessian");
    let rr = nabla::jacrev(nabla::jacrev(layer_norm_loss_flat))(&xf, &w, &b);
    assert_close(&rr, &hc, 1e-10, "jacrev of jacrev");
    let ff = nabla::jacfwd(nabla::jacfwd(layer_norm_loss_flat))(&xf, &w, &b);
    assert_close(&ff, &hc, 1e-10, "jacfwd of jacfwd");
    let per = nabla::vmap!(grad(layer_norm_loss), in_axes = (0, None, None))(&x, &w, &b);
    let per_c =
        nabla::vmap!(grad(layer_norm_loss_composite), in_axes = (0, None, None))(&x, &w, &b);
    assert_close(&per, &per_c, 1e-12, "vmap of grad");
    let (xt, wt, bt) = (
        x.clone().requires_grad(),
        w.clone().requires_grad(),
        b.clone().requires_grad(),
    );
    (nabla::layer_norm(&xt, &wt, &bt, 1e-5).tanh() * &xt)
        .sum()
        .backward();
    let want_w = grad!(layer_norm_loss_composite, argnums = 1)(&x, &w, &b);
    assert_close(&wt.grad(), &want_w, 1e-12, "tape, weight");
    assert_close(
        &xt.grad(),
        &grad!(layer_norm_loss_composite, argnums = 0)(&x, &w, &b),
        1e-12,
        "tape, input",
    );
}

/// Central differences of `f` at `v` along every coordinate, contracted
/// with `ct` (a VJP by finite differences). Hand-rolled: the backward ops
/// are functions of arrays differentiated on the tape, not composable ones.
fn fd_vjp(f: impl Fn(&Array) -> Array, v: &Array, ct: &Array) -> Array {
    let eps = 1e-6;
    let n = v.numel();
    let grads = (0..n)
        .map(|k| {
            let mut e = vec![0.0f64; n];
            e[k] = eps;
            let d = Array::from_vec(e, v.shape());
            let df = (f(&(v + &d)) - f(&(v - &d))) / (2.0 * eps);
            (df * ct).sum().item()
        })
        .collect();
    Array::from_vec(grads, v.shape())
}

#[test]
fn backward_ops_match_finite_differences() {
    let x = x();
    let y = nabla::softmax(&x, -1);
    let g = x.cos();
    let ct = x.sin() + 0.5;
    // The softmax's VJP is its backward op, and so is its JVP.
    let vjp_fd = fd_vjp(|v| nabla::softmax(v, -1), &x, &g);
    assert_close(
        &softmax_rows_backward(&y, &g, 1.0),
        &vjp_fd,
        1e-8,
        "softmax vjp",
    );
    // The backward op's own VJP (second order) in both arguments.
    let yt = y.clone().requires_grad();
    let gt = g.clone().requires_grad();
    (softmax_rows_backward(&yt, &gt, 1.0) * &ct)
        .sum()
        .backward();
    let fd_y = fd_vjp(|v| softmax_rows_backward(v, &g, 1.0), &y, &ct);
    let fd_g = fd_vjp(|v| softmax_rows_backward(&y, v, 1.0), &g, &ct);
    assert_close(&yt.grad(), &fd_y, 1e-8, "softmax backward, d/dy");
    assert_close(&gt.grad(), &fd_g, 1e-8, "softmax backward, d/dg");
    // Normalisation.
    let nb = |v: &Array| normalize_rows_backward(v, &g, 1e-5);
    let vjp_fd = fd_vjp(|v| nabla::composite::rows::normalize_rows(v, 1e-5), &x, &g);
    assert_close(&nb(&x), &vjp_fd, 1e-7, "normalize vjp");
    let (xt, gt) = (x.clone().requires_grad(), g.clone().requires_grad());
    (normalize_rows_backward(&xt, &gt, 1e-5) * &ct)
        .sum()
        .backward();
    assert_close(
        &xt.grad(),
        &fd_vjp(nb, &x, &ct),
        1e-6,
        "normalize backward, d/dx",
    );
    let fd_g = fd_vjp(|v| normalize_rows_backward(&x, v, 1e-5), &g, &ct);
    assert_close(&gt.grad(), &fd_g, 1e-7, "normalize backward, d/dg");
}

#[test]
fn row_ops_take_strided_and_degenerate_inputs() {
    // A transposed view (rows not contiguous), rows of one, empty arrays.
    let x = x().reshape(&[6, 7]).transpose();
    assert_close(
        &nabla::softmax(&x, -1),
        &softmax_composite(&x),
        1e-15,
        "transposed",
    );
    let one = Array::from_vec(vec![3.0f64, -1.0], &[2, 1]);
    assert_eq!(nabla::softmax(&one, -1).to_vec::<f64>(), vec![1.0, 1.0]);
    let w1 = Array::ones(&[1], DType::F64);
    let z = nabla::layer_norm(&one, &w1, &Array::zeros(&[1], DType::F64), 1e-5);
    assert_eq!(z.to_vec::<f64>(), vec![0.0, 0.0]);
    let empty = Array::zeros(&[0, 4], DType::F32);
    assert_eq!(nabla::softmax(&empty, -1).shape(), &[0, 4]);
}
