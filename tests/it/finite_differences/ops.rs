//! Finite-difference checks (f64, central differences) of every rule: the
//! tape's VJP and the `Dual` JVP of every fixture op at freshly perturbed
//! inputs, plus broadcasting shapes the fixtures do not cover.

use crate::common::*;
use nabla::Dual;
use nabla::prelude::*;
use nabla::random::Key;
use serde_json::json;

const EPS: f64 = 1e-6;
const TOL: f64 = 1e-6;

/// Multiplies every element by `1 + 0.1·u`, `u ∈ [-1, 1)`: new values that
/// keep each input's sign (and so its domain, e.g. for `log`).
fn perturb(x: &Array, key: Key) -> Array {
    let u = key.uniform(x.shape(), DType::F64) * 2.0 - 1.0;
    x * &(u * 0.1 + 1.0)
}

/// Hand-rolled differences: the ops run by name through `apply(op, params)`
/// on the tape and at `Dual`, not as composable functions `check_grads` takes.
fn check(name: &str, op: &str, params: &serde_json::Value, xs: &[Array], key: Key) {
    let f = |v: &[Array]| apply(op, params, v);
    let y = f(xs);
    let keys = key.split(xs.len() + 1);
    let ct = keys[0].normal(y.shape(), DType::F64);
    let (_, grads) = tape_vjp(op, params, xs, &ct);
    for (i, g) in grads.iter().enumerate() {
        let num = fd_grad(&f, xs, &ct, i, EPS);
        assert_close(
            g,
            &num,
            TOL,
            &format!("{name}: tape vjp[{i}] vs finite differences"),
        );
    }
    // JVP in a random direction vs the directional difference quotient.
    let ts: Vec<Array> = xs
        .iter()
        .zip(&keys[1..])
        .map(|(x, k)| k.normal(x.shape(), DType::F64))
        .collect();
    let jvp: Dual<Array> = apply(op, params, &duals(xs, &ts));
    let shifted = |s: f64| -> Array {
        let v: Vec<Array> = xs.iter().zip(&ts).map(|(x, t)| x + &(t * s)).collect();
        f(&v)
    };
    let num = (shifted(EPS) - shifted(-EPS)) / (2.0 * EPS);
    assert_close(
        &jvp.tangent_or_zero(),
        &num,
        TOL,
        &format!("{name}: jvp vs finite differences"),
    );
}

#[test]
fn every_fixture_op_at_new_points() {
    let cases = fixture("jax_reference.json")["cases"]
        .as_array()
        .unwrap()
        .clone();
    let root = Key::new(2024);
    for (n, case) in cases.iter().enumerate() {
        let (name, op, params) = (
            case["name"].as_str().unwrap(),
            case["op"].as_str().unwrap(),
            &case["params"],
        );
        let k = root.fold_in(n as u64);
        let xs: Vec<Array> = case["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(i, j)| perturb(&arr(j), k.fold_in(100 + i as u64)))
            .collect();
        check(name, op, params, &xs, k);
    }
}

#[test]
fn binary_ops_with_broadcasting() {
    let shapes: [(&[usize], &[usize]); 5] = [
        (&[4, 1, 3], &[2, 3]),
        (&[3], &[2, 1, 3]),
        (&[1], &[2, 2]),
        (&[2, 3, 1], &[1, 4]),
        (&[], &[3]),
    ];
    let root = Key::new(7);
    for (s, (sa, sb)) in shapes.iter().enumerate() {
        for (o, op) in [
            "add", "sub", "mul", "div", "pow", "maximum", "minimum", "atan2",
        ]
        .iter()
        .enumerate()
        {
            let k = root.fold_in((s * 10 + o) as u64);
            let [ka, kb] = k.split2();
            // Positive operands keep `pow` and `div` smooth.
            let a = ka.uniform(sa, DType::F64) + 0.5;
            let b = kb.uniform(sb, DType::F64) + 0.5;
            check(&format!("{op} {sa:?} {sb:?}"), op, &json!({}), &[a, b], k);
        }
    }
}

#[test]
fn reductions_and_shape_ops_on_random_shapes() {
    let root = Key::new(11);
    let x = root.normal(&[3, 4, 5], DType::F64);
    let cases = [
        ("sum", json!({"axes": [0, 2], "keepdim": false})),
        ("sum", json!({"axes": [1], "keepdim": true})),
        ("max", json!({"axes": [2], "keepdim": true})),
        ("min", json!({"axes": [0, 1], "keepdim": false})),
        ("prod", json!({"axes": [1], "keepdim": false})),
        ("logsumexp", json!({"axes": [0, 2], "keepdim": true})),
        ("var", json!({"axes": [2], "keepdim": false, "ddof": 1})),
        ("cumsum", json!({"axis": -1})),
        ("softmax", json!({"axis": 0})),
        ("log_softmax", json!({"axis": 1})),
        ("permute", json!({"perm": [1, 2, 0]})),
        ("reshape", json!({"shape": [12, 5]})),
        ("slice", json!({"ranges": [[1, 3], [0, 4], [2, 5]]})),
        ("index_select", json!({"axis": 2, "indices": [4, 0, 4, 1]})),
        ("broadcast_to", json!({"shape": [2, 3, 4, 5]})),
    ];
    for (i, (op, params)) in cases.iter().enumerate() {
        check(
            &format!("{op} {params}"),
            op,
            params,
            std::slice::from_ref(&x),
            root.fold_in(i as u64),
        );
    }
}

#[test]
fn matmul_shapes() {
    let root = Key::new(5);
    let shapes: [(&[usize], &[usize]); 6] = [
        (&[3, 4], &[4, 2]),
        (&[2, 3, 4], &[2, 4, 5]),
        (&[2, 1, 3, 4], &[5, 4, 2]),
        (&[4], &[4, 3]),
        (&[2, 3, 4], &[4]),
        (&[3, 4], &[2, 4, 2]),
    ];
    for (i, (sa, sb)) in shapes.iter().enumerate() {
        let [ka, kb] = root.fold_in(i as u64).split2();
        let (a, b) = (ka.normal(sa, DType::F64), kb.normal(sb, DType::F64));
        check(
            &format!("matmul {sa:?} {sb:?}"),
            "matmul",
            &json!({}),
            &[a, b],
            root.fold_in(99 + i as u64),
        );
    }
}

/// `prod` at inputs with zeros: rows with none, one and two zeros, and the
/// first and second derivatives (the latter by vjp-of-vjp on the tape)
/// against finite differences and the analytic Hessian.
#[test]
fn prod_rules_are_exact_at_zeros() {
    let x = Array::from_vec(
        vec![
            1.5, -2.0, 0.5, 3.0, // no zeros
            2.0, 0.0, -1.5, 4.0, // one zero
            0.0, 3.0, 0.0, 2.5, // two zeros
        ],
        &[3, 4],
    );
    let params = json!({"axes": [1], "keepdim": false});
    check(
        "prod with zeros",
        "prod",
        &params,
        std::slice::from_ref(&x),
        Key::new(5),
    );
    // ∂y_r/∂x_ri for the one-zero row: nonzero only at the zero.
    let g = {
        let leaf = x.clone().requires_grad();
        leaf.prod_axes(&[1], false).sum().backward();
        leaf.grad().to_vec::<f64>()
    };
    assert_eq!(g[4..8], [0.0, 2.0 * -1.5 * 4.0, 0.0, 0.0]);
    assert_eq!(g[8..12], [0.0; 4]);
    // Second order: d/dx <vjp(x, ct), u> = H·u with
    // H[(r,i),(r,k)] = ∏_{j∉{i,k}} x_rj (i ≠ k), 0 on the diagonal.
    let u = Key::new(6).normal(&[3, 4], DType::F64);
    let ct = Key::new(7).normal(&[3], DType::F64);
    let leaf = x.clone().requires_grad();
    let y = leaf.prod_axes(&[1], false);
    let first = nabla::primitives::reduce::prod::vjp(&leaf, &y, &[1], false, &ct);
    (&first * &u).sum().backward();
    let (xv, uv, cv) = (x.to_vec::<f64>(), u.to_vec::<f64>(), ct.to_vec::<f64>());
    let mut want = vec![0.0; 12];
    for r in 0..3 {
        for i in 0..4 {
            for k in (0..4).filter(|&k| k != i) {
                let rest: f64 = (0..4)
                    .filter(|&j| j != i && j != k)
                    .map(|j| xv[4 * r + j])
                    .product();
                want[4 * r + i] += cv[r] * rest * uv[4 * r + k];
            }
        }
    }
    assert_close(
        &leaf.grad(),
        &Array::from_vec(want, &[3, 4]),
        1e-12,
        "prod Hessian-vector product at zeros",
    );
}
