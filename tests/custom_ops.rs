//! Custom primitives: a forward computation with a hand-written CPU kernel,
//! JVP and VJP rules written with value operations, used in every mode —
//! and trusted as given (a deliberately scaled rule shows through).

mod common;

use common::*;
use nabla::prelude::*;

/// `ln(1 + e^x)`, computed stably by a custom kernel over the elements.
#[nabla::custom_op(jvp = softplus_jvp, vjp = softplus_vjp)]
fn my_softplus(x: &Array) -> Array {
    let v: Vec<f64> = x
        .to_vec::<f64>()
        .iter()
        .map(|&t| t.max(0.0) + (-t.abs()).exp().ln_1p())
        .collect();
    Array::from_vec(v, x.shape()).cast(x.dtype())
}

fn softplus_jvp<V: ArrayValue>(x: &V, _y: &V, dx: Option<&V>) -> V {
    match dx {
        Some(d) => d.mul(&x.sigmoid()),
        None => x.zeros_like(),
    }
}

fn softplus_vjp<V: ArrayValue>(x: &V, _y: &V, ct: &V) -> V {
    ct.mul(&x.sigmoid())
}

/// A two-input op whose VJP is deliberately twice the true derivative.
#[nabla::custom_op(jvp = scaled_jvp, vjp = scaled_vjp)]
fn scaled_mul(a: &Array, b: &Array) -> Array {
    a * b
}

fn scaled_jvp<V: ArrayValue>(a: &V, b: &V, _y: &V, da: Option<&V>, db: Option<&V>) -> V {
    let mut t = a.mul(b).zeros_like();
    if let Some(da) = da {
        t = t.add(&da.mul(b));
    }
    if let Some(db) = db {
        t = t.add(&a.mul(db));
    }
    t
}

fn scaled_vjp<V: ArrayValue>(a: &V, b: &V, _y: &V, ct: &V) -> (V, V) {
    (ct.mul(b).mul_scalar(2.0), ct.mul(a).mul_scalar(2.0))
}

#[differentiable]
fn model(x: &Array, w: &Array) -> Array {
    nabla::sum(&my_softplus(&x.matmul(w)))
}

#[test]
fn custom_op_in_every_mode_matches_finite_differences() {
    nabla::manual_seed(31);
    let x = nabla::randn(&[4, 3], DType::F64);
    let w = nabla::randn(&[3, 2], DType::F64);
    // Value: the op is a function value.
    let z = x.matmul(&w);
    assert_close(&my_softplus(&z), &nabla::softplus(&z), 1e-14, "forward");
    // grad through generated code that calls the op.
    let gw = nabla::grad!(model, argnums = 1)(&x, &w);
    let f = |v: &[Array]| model(&v[0], &v[1]);
    let one = Array::scalar(1.0f64);
    assert_close(
        &gw,
        &fd_grad(&f, &[x.clone(), w.clone()], &one, 1, 1e-6),
        1e-7,
        "grad vs finite differences",
    );
    // imperative tape.
    let tw = w.clone().requires_grad();
    model(&x, &tw).backward();
    assert_close(&tw.grad(), &gw, 1e-14, "tape");
    // jvp.
    let dw = w.cos();
    let (_, t) = nabla::jvp(model)((&x, &w), (&x.zeros_like(), &dw));
    assert!((t.item() - (&gw * &dw).sum().item()).abs() < 1e-12);
    // vmap (default batching rule: a loop over the batch) and vmap of grad.
    let xs = nabla::randn(&[5, 4, 3], DType::F64);
    let batched = nabla::vmap!(model, in_axes = (0, None))(&xs, &w);
    let per = nabla::vmap!(nabla::grad!(model, argnums = 1), in_axes = (0, None))(&xs, &w);
    for b in 0..5 {
        let xb = xs.index_select(0, &[b]).squeeze(0);
        assert_close(
            &batched.index_select(0, &[b]).squeeze(0),
            &model(&xb, &w),
            1e-14,
            "vmap",
        );
        assert_close(
            &per.index_select(0, &[b]).squeeze(0),
            &nabla::grad!(model, argnums = 1)(&xb, &w),
            1e-12,
            "vmap(grad)",
        );
    }
    // hessian: the rules are differentiated again.
    let v = Array::from_vec(vec![0.3f64, -0.2, 0.5], &[3]);
    let h = nabla::hessian(my_softplus)(&v);
    let s = v.sigmoid().to_vec::<f64>();
    // H[i, j, k] = ∂²y_i/∂x_j∂x_k: nonzero only at i = j = k, s(1 - s).
    let hv = h.to_vec::<f64>();
    for i in 0..3 {
        for j in 0..3 {
            for k in 0..3 {
                let want = if i == j && j == k {
                    s[i] * (1.0 - s[i])
                } else {
                    0.0
                };
                assert!(
                    (hv[(i * 3 + j) * 3 + k] - want).abs() < 1e-12,
                    "H[{i}, {j}, {k}]"
                );
            }
        }
    }
}

#[differentiable]
fn uses_scaled(a: &Array, b: &Array) -> Array {
    nabla::sum(&scaled_mul(a, b))
}

#[test]
fn the_library_trusts_the_rules() {
    let a = Array::from_vec(vec![1.0f64, 2.0], &[2]);
    let b = Array::from_vec(vec![3.0f64, 5.0], &[2]);
    let (ga, gb) = nabla::grad!(uses_scaled, argnums = (0, 1))(&a, &b);
    assert_eq!(
        ga.to_vec::<f64>(),
        vec![6.0, 10.0],
        "twice b, as the rule says"
    );
    assert_eq!(gb.to_vec::<f64>(), vec![2.0, 4.0], "twice a");
    let (ta, tb) = (a.clone().requires_grad(), b.clone().requires_grad());
    scaled_mul(&ta, &tb).sum().backward();
    assert_eq!(
        ta.grad().to_vec::<f64>(),
        vec![6.0, 10.0],
        "the tape uses the same rule"
    );
    // The JVP rule is the true one, so forward mode differs from the VJP.
    let (_, t) = nabla::jvp(uses_scaled)((&a, &b), (&a.ones_like(), &b.zeros_like()));
    assert_eq!(t.item(), 8.0);
}
