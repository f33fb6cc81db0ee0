//! Transforms of functions of several arguments: `vmap` with `in_axes` and
//! `out_axes` (per-example gradients against `jax_programs.json`, and equal
//! to a loop of single-example calls), masked pullbacks equal to the full
//! one's cotangents, `argnums` tuples giving one Jacobian per argument
//! (reverse equal to forward mode and to central differences), cross-Hessian
//! blocks by nesting against differences of the gradient, and the message
//! for mismatched batch sizes.

use crate::common::*;
use nabla::prelude::*;
use nabla::testing::check_grads;

#[differentiable]
fn single(w: &Array, x: &Array, y: &Array) -> Array {
    let r = x.dot(w) - y;
    r.square() + nabla::sum(&(w * x).sin()) * 0.1
}

#[test]
fn per_example_grads_match_jax() {
    let p = program("per_example_grads");
    let (i, o) = (&p["inputs"], &p["outputs"]);
    let per_example = nabla::vmap!(nabla::grad!(single), in_axes = (None, 0, 0));
    let g = per_example(&arr(&i["w"]), &arr(&i["X"]), &arr(&i["y"]));
    assert_close(
        &g,
        &arr(&o["per_example"]),
        1e-9,
        "vmap(grad(single), in_axes=(None, 0, 0))",
    );
    // The batch axis of the output can go elsewhere.
    let gt = nabla::vmap!(nabla::grad!(single), in_axes = (None, 0, 0), out_axes = 1)(
        &arr(&i["w"]),
        &arr(&i["X"]),
        &arr(&i["y"]),
    );
    assert_close(
        &gt,
        &arr(&o["per_example"]).transpose(),
        1e-9,
        "out_axes = 1",
    );
    // And the data may be batched along its last axis.
    let gl = nabla::vmap!(nabla::grad!(single), in_axes = (None, -1, 0))(
        &arr(&i["w"]),
        &arr(&i["X"]).transpose(),
        &arr(&i["y"]),
    );
    assert_close(&gl, &arr(&o["per_example"]), 1e-9, "in_axes = -1");
}

#[test]
fn vmap_grad_equals_a_loop_and_sums_shared_cotangents() {
    let _rng = seeded(9);
    let (w, xs, ys) = (
        nabla::randn(&[4], DType::F64),
        nabla::randn(&[6, 4], DType::F64),
        nabla::randn(&[6], DType::F64),
    );
    let batched = nabla::vmap!(nabla::grad!(single), in_axes = (None, 0, 0))(&w, &xs, &ys);
    for k in 0..6 {
        let (xk, yk) = (
            xs.index_select(0, &[k]).squeeze(0),
            ys.index_select(0, &[k]).squeeze(0),
        );
        let gk = nabla::grad(single)(&w, &xk, &yk);
        assert_close(
            &batched.index_select(0, &[k]).squeeze(0),
            &gk,
            1e-13,
            "vmap(grad) row",
        );
    }
    // d/dw of Σ_k single(w, x_k, y_k): reverse mode through vmap with a
    // shared argument sums the batch's cotangents.
    #[allow(clippy::type_complexity)]
    let total = nabla::jacrev(nabla::vmap!(single, in_axes = (None, 0, 0)))(&w, &xs, &ys)
        .sum_axes(&[0], false);
    assert_close(
        &total,
        &batched.sum_axes(&[0], false),
        1e-12,
        "jacrev through vmap(None)",
    );
}

#[test]
fn masked_pullbacks_give_the_wanted_cotangents() {
    use nabla::compose::DiffFn;
    let _rng = seeded(10);
    let (w, x, y) = (
        nabla::randn(&[4], DType::F64),
        nabla::randn(&[4], DType::F64),
        nabla::randn(&[], DType::F64),
    );
    let args = (w.clone(), x.clone(), y.clone());
    let ct = Array::scalar(1.5f64);
    let (_, all) = <single::Function as DiffFn>::vjp::<Array>(&args);
    let all = all(ct.clone());
    for (i, want) in [
        [true, false, false],
        [false, true, false],
        [false, false, true],
    ]
    .iter()
    .enumerate()
    {
        let (_, masked) = <single::Function as DiffFn>::vjp_masked::<Array>(&args, want);
        let m = masked(ct.clone());
        let (got, full) = match i {
            0 => (m.0, &all.0),
            1 => (m.1, &all.1),
            _ => (m.2, &all.2),
        };
        assert_close(&got, full, 0.0, "masked cotangent");
    }
    // grad with argnums > 0 inside vmap: only that argument's cotangent.
    let xs = nabla::randn(&[5, 4], DType::F64);
    let ys = nabla::randn(&[5], DType::F64);
    let gx = nabla::vmap!(nabla::grad!(single, argnums = 1), in_axes = (None, 0, 0))(&w, &xs, &ys);
    for k in 0..5 {
        let (xk, yk) = (
            xs.index_select(0, &[k]).squeeze(0),
            ys.index_select(0, &[k]).squeeze(0),
        );
        let (_, want, _) = nabla::vjp!(single)(&w, &xk, &yk).1(&Array::scalar(1.0f64));
        assert_close(
            &gx.index_select(0, &[k]).squeeze(0),
            &want,
            1e-13,
            "vmap(grad argnums=1)",
        );
    }
}

#[test]
fn vmap_with_mismatched_sizes_is_a_clear_error() {
    let err = std::panic::catch_unwind(|| {
        nabla::vmap(single)(
            &Array::ones(&[3, 4], DType::F64),
            &Array::ones(&[2, 4], DType::F64),
            &Array::ones(&[3], DType::F64),
        );
    })
    .expect_err("must panic");
    let msg = err.downcast::<String>().map(|s| *s).unwrap_or_default();
    assert_eq!(
        msg,
        "vmap: mapped axes have different sizes: argument 0 has 3, argument 1 has 2; every mapped argument needs the same batch size"
    );
}

// ----- Jacobians w.r.t. several arguments -----

#[differentiable]
fn two_args(x: &Array, w: &Array) -> Array {
    x.matmul(w).tanh() * x.slice_axis(1, 0..1).exp()
}

#[test]
fn tuple_argnums_give_one_jacobian_per_argument() {
    let _rng = seeded(71);
    let x = nabla::randn(&[2, 3], DType::F64);
    let w = nabla::randn(&[3, 4], DType::F64);
    let (rx, rw) = nabla::jacrev!(two_args, argnums = (0, 1))(&x, &w);
    let (fx, fw) = nabla::jacfwd!(two_args, argnums = (0, 1))(&x, &w);
    assert_eq!(rx.shape(), &[2, 4, 2, 3]);
    assert_eq!(rw.shape(), &[2, 4, 3, 4]);
    assert_close(
        &rx,
        &nabla::jacrev!(two_args, argnums = 0)(&x, &w),
        1e-12,
        "jacrev x",
    );
    assert_close(
        &rw,
        &nabla::jacrev!(two_args, argnums = 1)(&x, &w),
        1e-12,
        "jacrev w",
    );
    assert_close(&fx, &rx, 1e-12, "jacfwd x = jacrev x");
    assert_close(&fw, &rw, 1e-12, "jacfwd w = jacrev w");
    // One selected argument in a 1-tuple is still a tuple.
    let (only_w,) = nabla::jacrev!(two_args, argnums = (1,))(&x, &w);
    assert_close(&only_w, &rw, 0.0, "(1,)");
    // The derivatives against finite differences, and column (0, 2) of
    // ∂f/∂w against the JVP along w[0, 2].
    check_grads(two_args, &(x.clone(), w.clone()), 1);
    let mut e = vec![0.0; 12];
    e[2] = 1.0;
    let dw = Array::from_vec(e, &[3, 4]);
    let (_, along) = nabla::jvp(two_args)((&x, &w), (&x.zeros_like(), &dw));
    let col = rw.reshape(&[8, 12]).slice_axis(1, 2..3).reshape(&[2, 4]);
    assert_close(&col, &along, 1e-12, "∂f/∂w[0, 2] vs the JVP");
}

#[differentiable]
fn energy2(x: &Array, w: &Array) -> Array {
    nabla::sum(&two_args(x, w))
}

#[test]
fn cross_hessian_blocks_by_nesting() {
    let _rng = seeded(72);
    let x = nabla::randn(&[2, 3], DType::F64);
    let w = nabla::randn(&[3, 4], DType::F64);
    // ∂²E/∂w∂x: jacrev w.r.t. x, then jacfwd of that w.r.t. w.
    let h = nabla::jacfwd!(nabla::jacrev!(energy2, argnums = 0), argnums = 1)(&x, &w);
    assert_eq!(h.shape(), &[2, 3, 3, 4]);
    // The gradient's derivatives against finite differences, and column
    // w[1, 1] of the block against the gradient's JVP along it.
    let gx = nabla::grad!(energy2, argnums = 0);
    check_grads(gx, &(x.clone(), w.clone()), 1);
    let mut e = vec![0.0; 12];
    e[5] = 1.0;
    let dw = Array::from_vec(e, &[3, 4]);
    let (_, along) = nabla::jvp(gx)((&x, &w), (&x.zeros_like(), &dw));
    let block = h.reshape(&[6, 12]).slice_axis(1, 5..6).reshape(&[2, 3]);
    assert_close(
        &block,
        &along,
        1e-12,
        "cross Hessian column vs the JVP of the gradient",
    );
}
