//! Imperative autograd: the seed example against JAX (`seed_imperative`);
//! accumulation, leaves, `no_grad`, `detach`, and tape release against
//! hand-derived values.

use crate::common::*;
use nabla::prelude::*;

#[test]
fn seed_imperative_matches_jax() {
    let progs = fixture("jax_programs.json");
    let p = progs["programs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "seed_imperative")
        .unwrap();
    let (ins, outs) = (&p["inputs"], &p["outputs"]);
    for (dtype, tol) in [(DType::F64, 1e-9), (DType::F32, 1e-4)] {
        let mut weight = arr(&ins["weight"]).cast(dtype).requires_grad();
        let mut bias = arr(&ins["bias"]).cast(dtype).requires_grad();
        let label = arr(&ins["label"]).cast(dtype);
        let input = arr(&ins["input"]).cast(dtype);
        let logits = nabla::relu(&(input.matmul(&weight) + &bias));
        let loss = nabla::sum(&(logits - &label).powi(2));
        loss.backward();
        assert_close(&loss, &arr(&outs["loss"]), tol, "loss");
        assert_close(
            &weight.grad(),
            &arr(&outs["weight_grad"]),
            tol,
            "weight grad",
        );
        assert_close(&bias.grad(), &arr(&outs["bias_grad"]), tol, "bias grad");
        weight -= 0.01 * weight.grad();
        bias -= 0.01 * bias.grad();
        assert!(
            weight.is_leaf() && bias.is_leaf(),
            "in-place updates keep leaves"
        );
        assert_eq!(weight.dtype(), dtype, "0.01 * grad keeps the dtype");
        assert_close(&weight, &arr(&outs["weight_new"]), tol, "weight after SGD");
        assert_close(&bias, &arr(&outs["bias_new"]), tol, "bias after SGD");
    }
}

#[test]
fn gradients_accumulate_until_zero_grad() {
    let x = Array::from_vec(vec![1.0f64, 2.0], &[2]).requires_grad();
    (&x * 3.0).sum().backward();
    (&x * &x).sum().backward();
    assert_eq!(x.grad().to_vec::<f64>(), vec![5.0, 7.0]);
    x.zero_grad();
    assert!(x.try_grad().is_none());
    (&x * 2.0).sum().backward();
    assert_eq!(x.grad().to_vec::<f64>(), vec![2.0, 2.0]);
}

#[test]
fn shared_subexpressions_accumulate_cotangents() {
    let x = Array::scalar(1.5f64).requires_grad();
    let s = x.sin();
    let y = &s * &s + &s; // s used three times
    y.backward();
    let want = (2.0 * 1.5f64.sin() + 1.0) * 1.5f64.cos();
    assert!((x.grad().item() - want).abs() < 1e-14);
}

#[test]
fn untracked_arrays_record_nothing() {
    let a = Array::ones(&[3], DType::F32);
    let b = (&a * 2.0).exp();
    assert!(!b.is_tracked());
    let w = Array::ones(&[3], DType::F32).requires_grad();
    assert!(!nabla::no_grad(|| (&w * 2.0).is_tracked()));
    assert!((&w * 2.0).is_tracked());
    assert!(!w.detach().is_tracked());
    assert!(!(&w.detach() * 2.0).is_tracked());
}

#[test]
fn backward_frees_the_tape() {
    let x = Array::scalar(2.0f64).requires_grad();
    let y = x.exp() * 2.0;
    y.backward();
    let second = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| y.backward()));
    let msg = *second
        .expect_err("second backward must fail")
        .downcast::<String>()
        .unwrap();
    assert!(
        msg.contains("already used by an earlier backward()"),
        "{msg}"
    );
}

#[test]
fn residuals_survive_in_place_updates() {
    // The tape saved `w` by value; updating w in place before backward()
    // must not change the gradient (storage is copy-on-write).
    let mut w = Array::from_vec(vec![1.0f64, 2.0], &[2]).requires_grad();
    let loss = (&w * &w).sum();
    w -= 10.0;
    loss.backward();
    assert_eq!(w.grad().to_vec::<f64>(), vec![2.0, 4.0]);
    assert_eq!(w.to_vec::<f64>(), vec![-9.0, -8.0]);
}

#[test]
fn non_leaf_ops_in_place_are_recorded() {
    let x = Array::scalar(3.0f64).requires_grad();
    let mut y = &x * 2.0;
    y += &x; // y = 3x, recorded
    y *= 2.0; // y = 6x
    y.backward();
    assert_eq!(x.grad().item(), 6.0);
}

// Chains of unary ops run backward as one pass (`fused::chain`); the
// generated (tape-free) gradients of the same functions are the oracle.
#[differentiable]
fn unary_chain(x: &Array) -> Array {
    x.sin().exp().tanh().sigmoid().sum()
}

#[differentiable]
fn chain_with_branch(x: &Array, w: &Array) -> Array {
    let a = (x * w).sin();
    let c = a.exp().tanh();
    (&c + &a).sum()
}

#[test]
fn a_chain_of_unary_ops_runs_backward_as_one_pass() {
    for (dtype, tol) in [(DType::F64, 1e-14), (DType::F32, 1e-6)] {
        nabla::manual_seed(11);
        let x0 = nabla::randn(&[300, 70], dtype);
        let x = x0.clone().requires_grad();
        let before = nabla::fused::passes();
        unary_chain(&x).backward();
        assert_eq!(nabla::fused::passes(), before + 1, "four links, one pass");
        assert_close(
            &x.grad(),
            &nabla::grad(unary_chain)(&x0),
            tol,
            &format!("{dtype}: chain vs generated"),
        );
        // A non-contiguous input takes the same pass.
        let xt = x0.transpose().requires_grad();
        unary_chain(&xt).backward();
        assert_close(
            &xt.grad(),
            &nabla::grad(unary_chain)(&x0.transpose()),
            tol,
            "transposed input",
        );
    }
}

#[test]
fn a_chain_stops_where_a_value_has_another_use() {
    nabla::manual_seed(12);
    let (x0, w0) = (
        nabla::randn(&[5, 4], DType::F64),
        nabla::randn(&[4], DType::F64),
    );
    let (x, w) = (x0.clone().requires_grad(), w0.clone().requires_grad());
    chain_with_branch(&x, &w).backward();
    let (gx, gw) = nabla::grad!(chain_with_branch, argnums = (0, 1))(&x0, &w0);
    assert_close(&x.grad(), &gx, 1e-14, "d/dx");
    assert_close(
        &w.grad(),
        &gw,
        1e-14,
        "d/dw (through the product under the chain)",
    );
    // Its derivatives against finite differences, independently of both.
    nabla::testing::check_grads(chain_with_branch, &(x0, w0), 1);
}

#[test]
#[should_panic(expected = "was already used by an earlier backward()")]
fn a_chain_cannot_run_backward_twice() {
    let x = Array::from_vec(vec![0.5f64, 1.0], &[2]).requires_grad();
    let y = x.sin().exp().sum();
    y.backward();
    y.backward();
}

/// `backward_with` reports each leaf once, with its complete accumulated
/// gradient, as soon as the last op reading it has run: the last layer's
/// weight before the first layer's, which is still without a gradient at
/// that moment; a leaf read by several ops (and through a chain of unary
/// ops) only after all of them.
#[test]
fn backward_with_reports_each_leaf_when_complete() {
    let x = Array::from_vec(vec![0.5f64, -1.0, 2.0], &[1, 3]);
    let w1 =
        Array::from_vec((0..6).map(|i| 0.1 * i as f64 - 0.2).collect(), &[3, 2]).requires_grad();
    let w2 = Array::from_vec(vec![0.7f64, -0.4], &[2, 1]).requires_grad();
    let h = x.matmul(&w1).tanh().exp().sin();
    // w2 read twice, w1 through the chain and again directly.
    let loss = nabla::sum(&(h.matmul(&w2) * h.matmul(&w2))) + nabla::sum(&(&w1 * &w1));
    let mut seen: Vec<(nabla::LeafId, Vec<f64>, bool)> = Vec::new();
    loss.backward_with(|leaf, g| seen.push((leaf, g.to_vec::<f64>(), w1.try_grad().is_some())));
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].0, w2.leaf_id().unwrap());
    assert!(
        !seen[0].2,
        "w1 is still without a gradient when w2 is reported"
    );
    assert_eq!(seen[1].0, w1.leaf_id().unwrap());
    // The reported gradients are the complete ones, as plain backward() gives.
    let (v1, v2) = (w1.detach().requires_grad(), w2.detach().requires_grad());
    let h = x.matmul(&v1).tanh().exp().sin();
    let loss = nabla::sum(&(h.matmul(&v2) * h.matmul(&v2))) + nabla::sum(&(&v1 * &v1));
    loss.backward();
    assert_eq!(seen[0].1, v2.grad().to_vec::<f64>());
    assert_eq!(seen[1].1, v1.grad().to_vec::<f64>());
    assert_eq!(w1.grad().to_vec::<f64>(), v1.grad().to_vec::<f64>());
}
