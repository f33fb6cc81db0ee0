//! vjp(vjp): every primitive's VJP rule, run on tracked arrays so the tape
//! records it, differentiated again by `backward()` — checked against
//! central finite differences of the (fixture-checked) first derivative.

use crate::common::*;
use nabla::prelude::*;
use nabla::random::Key;

#[test]
fn vjp_of_vjp_matches_finite_differences() {
    let cases = fixture("jax_reference.json")["cases"]
        .as_array()
        .unwrap()
        .clone();
    let mut checked = 0;
    let mut second = 0;
    for (n, case) in cases.iter().enumerate() {
        let (name, op, params) = (
            case["name"].as_str().unwrap(),
            case["op"].as_str().unwrap(),
            &case["params"],
        );
        let xs: Vec<Array> = case["inputs"].as_array().unwrap().iter().map(arr).collect();
        let ct = arr(&case["cotangent"]);
        let key = Key::new(n as u64);
        // First derivative as a function of the inputs: Σ_k <u_k, vjp_k(x, ct)>.
        let us: Vec<Array> = xs
            .iter()
            .enumerate()
            .map(|(k, x)| key.fold_in(k as u64).normal(x.shape(), DType::F64))
            .collect();
        let first = |v: &[Array]| -> Option<Array> {
            let y = apply(op, params, v);
            let g = direct_vjp(op, params, v, &y, &ct)?;
            Some(
                g.iter()
                    .zip(&us)
                    .map(|(g, u)| (g * u).sum())
                    .reduce(|a, b| a + b)
                    .unwrap(),
            )
        };
        if first(&xs).is_none() {
            continue;
        }
        checked += 1;
        // Reverse over reverse on the tape, against hand-rolled differences:
        // the rules run by name (`apply`, `direct_vjp`), not as a DiffFn.
        let leaves: Vec<Array> = xs.iter().map(|x| x.clone().requires_grad()).collect();
        let s = first(&leaves).unwrap();
        if !s.is_tracked() {
            continue; // linear ops: the first derivative does not depend on x
        }
        second += 1;
        s.backward();
        for (k, leaf) in leaves.iter().enumerate() {
            let got = leaf.try_grad().unwrap_or_else(|| leaf.zeros_like());
            let f = |v: &[Array]| first(v).unwrap();
            let want = fd_grad(&f, &xs, &Array::scalar(1.0f64), k, 1e-5);
            assert_close(&got, &want, 1e-5, &format!("{name}: vjp(vjp)[{k}]"));
        }
    }
    assert!(checked >= 60, "{checked}");
    assert!(
        second >= 30,
        "only {second} cases have a non-constant first derivative"
    );
}
