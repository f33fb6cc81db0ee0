//! Custom primitives: a forward computation with a hand-written CPU kernel,
//! JVP and VJP rules written with value operations, used in every mode —
//! and trusted as given (a deliberately scaled rule shows through).

use crate::common::*;
use nabla::prelude::*;

/// `ln(1 + e^x)`, computed stably by a custom kernel over the elements.
#[nabla::custom_op(jvp = softplus_jvp, vjp = softplus_vjp)]
pub(crate) fn my_softplus(x: &Array) -> Array {
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
    let _rng = seeded(31);
    let x = nabla::randn(&[4, 3], DType::F64);
    let w = nabla::randn(&[3, 2], DType::F64);
    // Value: the op is a function value.
    let z = x.matmul(&w);
    assert_close(&my_softplus(&z), &nabla::softplus(&z), 1e-14, "forward");
    // grad through generated code that calls the op.
    let gw = nabla::grad!(model, argnums = 1)(&x, &w);
    // JVP, VJP and their derivatives against finite differences.
    nabla::testing::check_grads(model, &(x.clone(), w.clone()), 2);
    nabla::testing::check_grads(my_softplus, &(x.clone(),), 2);
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

// ----- static parameters, batching rules, one-rule ops, custom kernels -----

use std::sync::atomic::{AtomicUsize, Ordering};

/// Calls of `damped`'s forward. The two tests that call `damped` both hold
/// the generator's guard (`seeded`), so they never run at the same time and
/// the batching test counts only its own calls.
static DAMPED_CALLS: AtomicUsize = AtomicUsize::new(0);

/// `k · x² + c · v` with static `k`, `c`, over a CPU kernel; elementwise
/// batching rule.
#[nabla::custom_op(jvp = damped_jvp, vjp = damped_vjp, batch = elementwise)]
fn damped(x: &Array, v: &Array, k: f64, c: f64) -> Array {
    DAMPED_CALLS.fetch_add(1, Ordering::SeqCst);
    nabla::custom::cpu_kernel::<f64>(&[x, v], x.shape(), |ins, out| {
        for ((o, &x), &v) in out.iter_mut().zip(ins[0].as_slice()).zip(ins[1].as_slice()) {
            *o = k * x * x + c * v;
        }
    })
}

fn damped_jvp<V: ArrayValue>(
    x: &V,
    _v: &V,
    _y: &V,
    dx: Option<&V>,
    dv: Option<&V>,
    k: f64,
    c: f64,
) -> V {
    let mut t = x.zeros_like();
    if let Some(dx) = dx {
        t = t.add(&dx.mul(&x.mul_scalar(2.0 * k)));
    }
    if let Some(dv) = dv {
        t = t.add(&dv.mul_scalar(c));
    }
    t
}

fn damped_vjp<V: ArrayValue>(x: &V, _v: &V, _y: &V, ct: &V, k: f64, c: f64) -> (V, V) {
    (ct.mul(&x.mul_scalar(2.0 * k)), ct.mul_scalar(c))
}

#[differentiable]
fn damped_energy(x: &Array, v: &Array) -> Array {
    let f = damped(x, v, 1.5, -0.25);
    nabla::sum(&(&f * &f))
}

#[test]
fn static_parameters_reach_the_forward_and_the_rules() {
    let _rng = seeded(5);
    let x = nabla::randn(&[5], DType::F64);
    let v = nabla::randn(&[5], DType::F64);
    let want: Vec<f64> = x
        .to_vec::<f64>()
        .iter()
        .zip(v.to_vec::<f64>())
        .map(|(x, v)| 1.5 * x * x - 0.25 * v)
        .collect();
    assert_eq!(damped(&x, &v, 1.5, -0.25).to_vec::<f64>(), want);
    let (gx, gv) = nabla::grad!(damped_energy, argnums = (0, 1))(&x, &v);
    // First and second derivatives against finite differences.
    nabla::testing::check_grads(damped_energy, &(x.clone(), v.clone()), 2);
    // The Hessian in x: column j is the gradient's JVP along x[j].
    let h = nabla::hessian(damped_energy)(&x, &v);
    for j in 0..5 {
        let mut d = vec![0.0; 5];
        d[j] = 1.0;
        let dj = Array::from_vec(d, &[5]);
        let (_, col) = nabla::jvp(nabla::grad(damped_energy))((&x, &v), (&dj, &v.zeros_like()));
        assert_close(
            &h.slice_axis(1, j..j + 1).reshape(&[5]),
            &col,
            1e-12,
            &format!("hessian column {j}"),
        );
    }
    // Imperative mode.
    let (tx, tv) = (x.clone().requires_grad(), v.clone().requires_grad());
    let f = damped(&tx, &tv, 1.5, -0.25);
    (&f * &f).sum().backward();
    assert_close(&tx.grad(), &gx, 1e-12, "tape grad with statics");
    assert_close(&tv.grad(), &gv, 1e-12, "tape grad of v with statics");
}

#[test]
fn elementwise_batching_rule_runs_the_op_once_per_call() {
    let _rng = seeded(6);
    let xs = nabla::randn(&[7, 5], DType::F64);
    let v = nabla::randn(&[5], DType::F64);
    let before = DAMPED_CALLS.load(Ordering::SeqCst);
    let per = nabla::vmap!(nabla::grad!(damped_energy), in_axes = (0, None))(&xs, &v);
    let calls = DAMPED_CALLS.load(Ordering::SeqCst) - before;
    // One forward call for the whole batch (the default rule would make 7).
    assert_eq!(calls, 1, "batch = elementwise must not loop over the batch");
    for i in 0..7 {
        let one = nabla::grad(damped_energy)(&xs.slice_axis(0, i..i + 1).reshape(&[5]), &v);
        assert_close(
            &per.slice_axis(0, i..i + 1).reshape(&[5]),
            &one,
            1e-12,
            &format!("example {i}"),
        );
    }
}

static ROWSUM_RULE_CALLS: AtomicUsize = AtomicUsize::new(0);

/// Sum of each row (`[n, m] -> [n]`) with a user batching rule.
#[nabla::custom_op(jvp = rowsum_jvp, vjp = rowsum_vjp, batch = rowsum_batch)]
fn rowsum(x: &Array) -> Array {
    x.sum_axes(&[-1], false)
}

fn rowsum_jvp<V: ArrayValue>(x: &V, _y: &V, dx: Option<&V>) -> V {
    match dx {
        Some(d) => d.sum_axes(&[d.shape_vec().len() - 1], false),
        None => x.sum_axes(&[x.shape_vec().len() - 1], false).zeros_like(),
    }
}

fn rowsum_vjp<V: ArrayValue>(x: &V, _y: &V, ct: &V) -> V {
    let mut s = ct.shape_vec();
    s.push(1);
    ct.reshape(&s).broadcast_to(&x.shape_vec())
}

/// The batched input is `[b, n, m]`: summing the last axis is still right.
fn rowsum_batch<V: ArrayValue>(x: &V, batched: [bool; 1]) -> V {
    assert!(batched[0]);
    ROWSUM_RULE_CALLS.fetch_add(1, Ordering::SeqCst);
    rowsum::forward(x)
}

#[differentiable]
fn rowsum_loss(x: &Array) -> Array {
    nabla::sum(&rowsum(x).square())
}

#[test]
fn a_user_batching_rule_is_used_and_correct() {
    let _rng = seeded(8);
    let xs = nabla::randn(&[4, 3, 2], DType::F64);
    let before = ROWSUM_RULE_CALLS.load(Ordering::SeqCst);
    let y = nabla::vmap(rowsum)(&xs);
    assert!(
        ROWSUM_RULE_CALLS.load(Ordering::SeqCst) > before,
        "the rule ran"
    );
    assert_close(&y, &xs.sum_axes(&[2], false), 1e-12, "vmap(rowsum)");
    let g = nabla::vmap(nabla::grad(rowsum_loss))(&xs);
    for i in 0..4 {
        let xi = xs.slice_axis(0, i..i + 1).reshape(&[3, 2]);
        let gi = nabla::grad(rowsum_loss)(&xi);
        assert_close(
            &g.slice_axis(0, i..i + 1).reshape(&[3, 2]),
            &gi,
            1e-12,
            &format!("example {i}"),
        );
    }
}

/// Only a VJP rule: reverse mode works; forward mode says what to add.
#[nabla::custom_op(vjp = cube_vjp)]
fn cube_rev(x: &Array) -> Array {
    x * &(x * x)
}

fn cube_vjp<V: ArrayValue>(x: &V, _y: &V, ct: &V) -> V {
    ct.mul(&x.square().mul_scalar(3.0))
}

/// Only a JVP rule: forward mode works; reverse mode says what to add.
#[nabla::custom_op(jvp = cube_jvp)]
fn cube_fwd(x: &Array) -> Array {
    x * &(x * x)
}

fn cube_jvp<V: ArrayValue>(x: &V, _y: &V, dx: Option<&V>) -> V {
    dx.map(|d| d.mul(&x.square().mul_scalar(3.0)))
        .unwrap_or_else(|| x.zeros_like())
}

#[differentiable]
fn rev_total(x: &Array) -> Array {
    nabla::sum(&cube_rev(x))
}

#[differentiable]
fn fwd_total(x: &Array) -> Array {
    nabla::sum(&cube_fwd(x))
}

fn panic_message(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let e = std::panic::catch_unwind(f).expect_err("must panic");
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn ops_with_one_rule_work_in_its_modes_and_name_the_missing_rule() {
    let x = Array::from_vec(vec![1.0f64, -2.0], &[2]);
    assert_eq!(nabla::grad(rev_total)(&x).to_vec::<f64>(), vec![3.0, 12.0]);
    let t = x.clone().requires_grad();
    cube_rev(&t).sum().backward();
    assert_eq!(t.grad().to_vec::<f64>(), vec![3.0, 12.0]);
    let (_, d) = nabla::jvp(fwd_total)((&x,), (&x.ones_like(),));
    assert_eq!(d.item(), 15.0);
    assert_eq!(
        nabla::jacfwd(fwd_total)(&x).to_vec::<f64>(),
        vec![3.0, 12.0]
    );

    let m = panic_message(|| {
        nabla::jvp(rev_total)((&Array::scalar(1.0f64),), (&Array::scalar(1.0f64),));
    });
    assert!(
        m.contains("`cube_rev` has no JVP rule") && m.contains("add `jvp = my_jvp`"),
        "{m}"
    );
    let m = panic_message(|| {
        nabla::grad(fwd_total)(&Array::scalar(1.0f64));
    });
    assert!(
        m.contains("`cube_fwd` has no VJP rule") && m.contains("add `vjp = my_vjp`"),
        "{m}"
    );
}

#[test]
fn cpu_kernels_see_strided_inputs_row_major() {
    let x = Array::from_vec((0..6).map(|v| v as f64).collect(), &[2, 3]).transpose();
    let y = nabla::custom::cpu_kernel::<f64>(&[&x], &[3, 2], |ins, out| {
        assert_eq!(ins[0].shape(), &[3, 2]);
        assert_eq!(ins[0].strides(), &[2, 1]);
        assert_eq!(ins[0].get(&[2, 1]), 5.0);
        out.copy_from_slice(ins[0].as_slice());
    });
    assert_eq!(y.to_vec::<f64>(), x.to_vec::<f64>());
    let m = panic_message(|| {
        nabla::custom::cpu_kernel::<f32>(&[&Array::scalar(1.0f64)], &[], |_, _| {});
    });
    assert!(m.contains("cpu_kernel: input 0 is a f64 array"), "{m}");
}
