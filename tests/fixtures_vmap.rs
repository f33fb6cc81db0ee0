//! The `vmap` entries of `tests/fixtures/jax_reference.json`: every op
//! through its batching rule (`Batched<Array>`), with all inputs batched
//! along axis 0 and, for binary ops, with the second input unbatched; plus
//! batching rules under forward mode (`Dual<Batched<Array>>`) and
//! forward-over-reverse of batched rule functions.

mod common;

use common::*;
use nabla::prelude::*;
use nabla::{Batched, Dual};

fn cases() -> Vec<serde_json::Value> {
    fixture("jax_reference.json")["cases"]
        .as_array()
        .unwrap()
        .clone()
}

fn batched_inputs(v: &serde_json::Value) -> Vec<Batched<Array>> {
    let axes = v["in_axes"].as_array().unwrap();
    v["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .zip(axes)
        .map(|(j, ax)| Batched::new(arr(j), ax.as_u64().map(|a| a as usize)))
        .collect()
}

fn check(case: &serde_json::Value, key: &str) -> bool {
    let Some(v) = case.get(key) else { return false };
    let (name, op, params) = (
        case["name"].as_str().unwrap(),
        case["op"].as_str().unwrap(),
        &case["params"],
    );
    let y: Batched<Array> = apply(op, params, &batched_inputs(v));
    let got = y.materialize(y.batch_size().unwrap_or(3), 0);
    assert_close(&got, &arr(&v["output"]), 1e-9, &format!("{name} {key}"));
    true
}

#[test]
fn vmap_of_every_op_matches_jax() {
    let mut n = 0;
    for case in cases() {
        n += check(&case, "vmap") as usize;
    }
    assert_eq!(n, 78);
}

#[test]
fn vmap_with_an_unbatched_operand_matches_jax() {
    let mut n = 0;
    for case in cases() {
        n += check(&case, "vmap_in_axes_0_none") as usize;
    }
    assert!(n >= 30, "only {n} binary cases");
}

/// The batch axis need not be first: move it and expect the same result.
#[test]
fn batch_axis_anywhere() {
    for case in cases() {
        let Some(v) = case.get("vmap") else { continue };
        let (name, op, params) = (
            case["name"].as_str().unwrap(),
            case["op"].as_str().unwrap(),
            &case["params"],
        );
        let xs: Vec<Batched<Array>> = batched_inputs(v)
            .into_iter()
            .map(|b| {
                let nd = b.value.ndim();
                Batched::new(b.materialize(3, nd - 1), Some(nd - 1))
            })
            .collect();
        let y: Batched<Array> = apply(op, params, &xs);
        assert_close(
            &y.materialize(3, 0),
            &arr(&v["output"]),
            1e-9,
            &format!("{name} with the batch axis last"),
        );
    }
}

/// jvp of vmap: `Dual<Batched<Array>>` against a loop of per-example jvps.
#[test]
fn forward_mode_of_batched_ops_matches_a_loop() {
    for case in cases() {
        let Some(v) = case.get("vmap") else { continue };
        let (name, op, params) = (
            case["name"].as_str().unwrap(),
            case["op"].as_str().unwrap(),
            &case["params"],
        );
        let xs = batched_inputs(v);
        let ts: Vec<Batched<Array>> = xs
            .iter()
            .map(|x| Batched::new(x.value.sin(), x.bdim))
            .collect();
        let duals: Vec<Dual<Batched<Array>>> = xs
            .iter()
            .zip(&ts)
            .map(|(x, t)| Dual::new(x.clone(), Some(t.clone())))
            .collect();
        let y: Dual<Batched<Array>> = apply(op, params, &duals);
        let t = y.tangent_or_zero();
        let got = t.materialize(3, 0);
        for i in 0..3 {
            let pick = |b: &Batched<Array>| b.materialize(3, 0).index_select(0, &[i]).squeeze(0);
            let px: Vec<Array> = xs.iter().map(pick).collect();
            let pt: Vec<Array> = ts.iter().map(pick).collect();
            let yi: Dual<Array> = apply(op, params, &duals_of(&px, &pt));
            assert_close(
                &got.index_select(0, &[i]).squeeze(0),
                &yi.tangent_or_zero(),
                1e-12,
                &format!("{name}: jvp of vmap, example {i}"),
            );
        }
    }
}

fn duals_of(xs: &[Array], ts: &[Array]) -> Vec<Dual<Array>> {
    xs.iter()
        .zip(ts)
        .map(|(x, t)| Dual::new(x.clone(), Some(t.clone())))
        .collect()
}

/// vmap of vjp: batched rule functions against a loop of per-example VJPs.
#[test]
fn vmap_of_rule_vjps_matches_a_loop() {
    let mut checked = 0;
    for case in cases() {
        let Some(v) = case.get("vmap") else { continue };
        let (name, op, params) = (
            case["name"].as_str().unwrap(),
            case["op"].as_str().unwrap(),
            &case["params"],
        );
        let xs = batched_inputs(v);
        let y: Batched<Array> = apply(op, params, &xs);
        let ct = Batched::new(y.materialize(3, 0).cos(), Some(0));
        let Some(gs) = direct_vjp(op, params, &xs, &y, &ct) else {
            continue;
        };
        checked += 1;
        for i in 0..3 {
            let pick = |b: &Batched<Array>| b.materialize(3, 0).index_select(0, &[i]).squeeze(0);
            let px: Vec<Array> = xs.iter().map(pick).collect();
            let yi = apply(op, params, &px);
            let gi = direct_vjp(op, params, &px, &yi, &pick(&ct)).unwrap();
            for (k, (g, w)) in gs.iter().zip(&gi).enumerate() {
                assert_close(
                    &pick(g),
                    w,
                    1e-12,
                    &format!("{name}: vmap(vjp)[{k}], example {i}"),
                );
            }
        }
    }
    assert!(checked >= 60);
}

// ----- generated code at `Batched<V>`: vmap of a #[differentiable] program -----

#[differentiable]
fn single(w: &Array, x: &Array, y: &Array) -> Array {
    let r = x.dot(w) - y;
    r.square() + nabla::sum(&(w * x).sin()) * 0.1
}

/// `vmap(grad(single), in_axes = (None, 0, 0))` from jax_programs.json,
/// computed as the generated VJP program instantiated at `Batched<Array>`.
#[test]
fn per_example_grads_through_generated_code() {
    let all = fixture("jax_programs.json");
    let p = all["programs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "per_example_grads")
        .unwrap();
    let (i, o) = (&p["inputs"], &p["outputs"]);
    let w = Batched::unbatched(arr(&i["w"]));
    let x = Batched::new(arr(&i["X"]), Some(0));
    let y = Batched::new(arr(&i["y"]), Some(0));
    let (out, pullback) = single::vjp::<Batched<Array>>(&w, &x, &y);
    let (gw, _, _) = pullback(out.ones_like());
    assert_close(
        &gw.materialize(7, 0),
        &arr(&o["per_example"]),
        1e-9,
        "per-example gradients",
    );
    // The same through the forward program: vmap of the function itself.
    let f = single::forward::<Batched<Array>>(&w, &x, &y);
    for k in 0..7 {
        let xi = arr(&i["X"]).index_select(0, &[k]).squeeze(0);
        let yi = arr(&i["y"]).index_select(0, &[k]).squeeze(0);
        let want = single(&arr(&i["w"]), &xi, &yi);
        assert_close(
            &f.materialize(7, 0).index_select(0, &[k]).squeeze(0),
            &want,
            1e-12,
            "vmap(single)",
        );
    }
}
