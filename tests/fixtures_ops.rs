//! Every case of `tests/fixtures/jax_reference.json`: forward output,
//! VJP through the imperative tape and through the rule functions directly,
//! JVP through the JVP rules (`Dual<Array>`), and forward-over-reverse HVP
//! through the rule functions, in f64 (1e-9) and f32 (1e-4).

mod common;

use common::*;
use nabla::Dual;
use nabla::prelude::*;

fn cases() -> Vec<serde_json::Value> {
    fixture("jax_reference.json")["cases"]
        .as_array()
        .unwrap()
        .clone()
}

fn inputs(case: &serde_json::Value, dtype: DType) -> Vec<Array> {
    case["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| arr(j).cast(dtype))
        .collect()
}

#[test]
fn forward_matches_jax_f64_and_f32() {
    for case in cases() {
        let (name, op, params) = (
            case["name"].as_str().unwrap(),
            case["op"].as_str().unwrap(),
            &case["params"],
        );
        let want = arr(&case["output"]);
        let y = apply(op, params, &inputs(&case, DType::F64));
        assert_eq!(y.dtype(), DType::F64, "{name}");
        assert_close(&y, &want, 1e-9, &format!("{name} forward f64"));
        let y32 = apply(op, params, &inputs(&case, DType::F32));
        assert_eq!(y32.dtype(), DType::F32, "{name}");
        assert_close(&y32, &want, 1e-4, &format!("{name} forward f32"));
    }
}

#[test]
fn vjp_through_tape_matches_jax() {
    for case in cases() {
        let (name, op, params) = (
            case["name"].as_str().unwrap(),
            case["op"].as_str().unwrap(),
            &case["params"],
        );
        let wants: Vec<Array> = case["vjp"].as_array().unwrap().iter().map(arr).collect();
        for (dtype, tol) in [(DType::F64, 1e-9), (DType::F32, 1e-4)] {
            let ct = arr(&case["cotangent"]).cast(dtype);
            let (_, grads) = tape_vjp(op, params, &inputs(&case, dtype), &ct);
            for (k, (g, w)) in grads.iter().zip(&wants).enumerate() {
                assert_eq!(g.dtype(), dtype, "{name}");
                assert_close(g, w, tol, &format!("{name} tape vjp[{k}] {dtype}"));
            }
        }
    }
}

#[test]
fn vjp_through_rule_functions_matches_jax() {
    let mut checked = 0;
    for case in cases() {
        let (name, op, params) = (
            case["name"].as_str().unwrap(),
            case["op"].as_str().unwrap(),
            &case["params"],
        );
        let xs = inputs(&case, DType::F64);
        let y = apply(op, params, &xs);
        let ct = arr(&case["cotangent"]);
        let Some(grads) = direct_vjp(op, params, &xs, &y, &ct) else {
            continue;
        };
        checked += 1;
        for (k, (g, w)) in grads
            .iter()
            .zip(case["vjp"].as_array().unwrap())
            .enumerate()
        {
            assert_close(g, &arr(w), 1e-9, &format!("{name} rule vjp[{k}]"));
        }
    }
    // Every primitive case; only composites (mean, var, softmax, ...) and
    // the 1-D matmul promotions (reshape + matmul) are skipped.
    assert!(
        checked >= 60,
        "only {checked} cases went through the rule functions"
    );
}

#[test]
fn jvp_through_rules_matches_jax() {
    for case in cases() {
        let (name, op, params) = (
            case["name"].as_str().unwrap(),
            case["op"].as_str().unwrap(),
            &case["params"],
        );
        let want = arr(&case["jvp"]);
        for (dtype, tol) in [(DType::F64, 1e-9), (DType::F32, 1e-4)] {
            let ts: Vec<Array> = case["tangents"]
                .as_array()
                .unwrap()
                .iter()
                .map(|j| arr(j).cast(dtype))
                .collect();
            let y: Dual<Array> = apply(op, params, &duals(&inputs(&case, dtype), &ts));
            assert_close(
                &y.tangent_or_zero(),
                &want,
                tol,
                &format!("{name} jvp {dtype}"),
            );
        }
    }
}

/// Forward-over-reverse: the rule functions instantiated at `Dual<Array>`.
#[test]
fn hvp_of_rule_functions_matches_jax() {
    let mut checked = 0;
    for case in cases() {
        let (name, op, params) = (
            case["name"].as_str().unwrap(),
            case["op"].as_str().unwrap(),
            &case["params"],
        );
        let xs = inputs(&case, DType::F64);
        let ts: Vec<Array> = case["tangents"]
            .as_array()
            .unwrap()
            .iter()
            .map(arr)
            .collect();
        let dx = duals(&xs, &ts);
        let y = apply(op, params, &dx);
        let ct = Dual::constant(arr(&case["cotangent"]));
        let Some(grads) = direct_vjp(op, params, &dx, &y, &ct) else {
            continue;
        };
        checked += 1;
        for (k, (g, w)) in grads
            .iter()
            .zip(case["hvp"].as_array().unwrap())
            .enumerate()
        {
            assert_close(
                &g.tangent_or_zero(),
                &arr(w),
                1e-7,
                &format!("{name} hvp[{k}]"),
            );
        }
    }
    assert!(checked >= 60);
}
