//! The tool as GradBench drives it: recorded message sequences on stdin,
//! every reply's JSON keys checked exactly, and the answers checked
//! against closed forms and finite differences (through the tool itself).

use serde_json::{Value as Json, json};
use std::io::Write;
use std::process::{Command, Stdio};

/// Runs one session of `messages` (one per line) and returns the replies.
fn session(messages: &[String]) -> Vec<Json> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_nabla-gradbench"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the tool starts");
    let mut stdin = child.stdin.take().unwrap();
    for m in messages {
        writeln!(stdin, "{m}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the tool exits cleanly at EOF");
    let text = String::from_utf8(out.stdout).unwrap();
    let replies: Vec<Json> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON value per line"))
        .collect();
    assert_eq!(
        replies.len(),
        messages.len(),
        "one reply per message:\n{text}"
    );
    replies
}

fn keys(j: &Json) -> Vec<&str> {
    let mut k: Vec<&str> = j.as_object().unwrap().keys().map(String::as_str).collect();
    k.sort();
    k
}

fn evaluate(id: usize, module: &str, function: &str, input: Json) -> String {
    json!({"id": id, "kind": "evaluate", "module": module, "function": function, "input": input})
        .to_string()
}

/// The outputs of `module.function` on each input, in one session.
fn outputs(module: &str, function: &str, inputs: &[Json]) -> Vec<Json> {
    let msgs: Vec<String> = inputs
        .iter()
        .enumerate()
        .map(|(i, x)| evaluate(i, module, function, x.clone()))
        .collect();
    session(&msgs)
        .into_iter()
        .map(|r| {
            assert_eq!(r["success"], true, "{r}");
            r["output"].clone()
        })
        .collect()
}

fn close(a: f64, b: f64, tol: f64, what: &str) {
    assert!((a - b).abs() <= tol * (1.0 + b.abs()), "{what}: {a} vs {b}");
}

#[test]
fn hello_session_replies_have_exactly_the_protocol_keys() {
    let msgs = vec![
        json!({"id": 0, "kind": "start", "eval": "hello"}).to_string(),
        json!({"id": 1, "kind": "define", "module": "hello"}).to_string(),
        evaluate(2, "hello", "square", json!(3.0)),
        json!({"id": 3, "kind": "analysis", "of": 2, "valid": true}).to_string(),
        evaluate(4, "hello", "double", json!(3.0)),
        json!({"id": 5, "kind": "something new"}).to_string(),
    ];
    let r = session(&msgs);
    assert_eq!(r[0], json!({"id": 0, "tool": "nabla"}));
    assert_eq!(r[1], json!({"id": 1, "success": true}));
    assert_eq!(keys(&r[2]), ["id", "output", "success", "timings"]);
    assert_eq!(
        (r[2]["id"].clone(), r[2]["output"].clone()),
        (json!(2), json!(9.0))
    );
    let t = r[2]["timings"].as_array().unwrap();
    assert_eq!(t.len(), 1, "hello has no min_runs: one run");
    assert_eq!(keys(&t[0]), ["name", "nanoseconds"]);
    assert_eq!(t[0]["name"], "evaluate");
    assert!(t[0]["nanoseconds"].is_u64());
    assert_eq!(r[3], json!({"id": 3}));
    assert_eq!(r[4]["output"], json!(6.0));
    assert_eq!(r[5], json!({"id": 5}));
}

#[test]
fn runs_follow_min_runs_and_min_seconds() {
    let x = json!({"x": [1.0, 2.0], "min_runs": 3, "min_seconds": 0});
    let r = session(&[evaluate(0, "lse", "primal", x)]);
    assert_eq!(r[0]["timings"].as_array().unwrap().len(), 3);
    // min_seconds may arrive as an integer; runs go on until it has passed.
    let x = json!({"x": [1.0, 2.0], "min_runs": 1, "min_seconds": 0.05});
    let r = session(&[evaluate(0, "lse", "primal", x)]);
    let total: u64 = r[0]["timings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["nanoseconds"].as_u64().unwrap())
        .sum();
    assert!(total >= 50_000_000 || r[0]["timings"].as_array().unwrap().len() > 1);
}

#[test]
fn bad_messages_fail_and_the_tool_keeps_serving() {
    let msgs = vec![
        "this is not json".to_string(),
        json!({"id": 1, "kind": "define", "module": "no-such-eval"}).to_string(),
        evaluate(2, "lse", "primal", json!({"y": [1.0]})),
        evaluate(3, "lse", "no_such_function", json!({"x": [1.0]})),
        evaluate(4, "det", "primal", json!({"A": [1.0, 2.0, 3.0], "ell": 2})),
        evaluate(
            5,
            "lse",
            "gradient",
            json!({"x": [0.0, 0.0], "min_runs": 1, "min_seconds": 0}),
        ),
    ];
    let r = session(&msgs);
    for (i, want) in [
        (0, "not JSON"),
        (1, "unknown module"),
        (2, "\"x\""),
        (3, "unknown function"),
        (4, "ell = 2 needs 4"),
    ] {
        assert_eq!(r[i]["success"], false, "{}", r[i]);
        assert_eq!(keys(&r[i]), ["error", "id", "success"]);
        assert!(r[i]["error"].as_str().unwrap().contains(want), "{}", r[i]);
    }
    assert_eq!(r[5]["output"], json!([0.5, 0.5]));
}

#[test]
fn closed_forms() {
    let run = |x: Json| {
        let mut x = x;
        x["min_runs"] = json!(1);
        x["min_seconds"] = json!(0);
        x
    };
    // lse of equal entries: ln n, gradient 1/n.
    let o = outputs("lse", "primal", &[run(json!({"x": [0.5, 0.5, 0.5, 0.5]}))]);
    close(o[0].as_f64().unwrap(), 0.5 + 4f64.ln(), 1e-12, "lse");
    // det of a diagonal matrix and its cofactors.
    let a = run(json!({"A": [2.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 4.0], "ell": 3}));
    assert_eq!(
        outputs("det", "primal", std::slice::from_ref(&a))[0],
        json!(24.0)
    );
    let g: Vec<f64> = serde_json::from_value(outputs("det", "gradient", &[a])[0].clone()).unwrap();
    for (k, want) in [12.0, 0.0, 0.0, 0.0, 8.0, 0.0, 0.0, 0.0, 6.0]
        .iter()
        .enumerate()
    {
        close(g[k], *want, 1e-12, "det gradient");
    }
    // ode with n ≤ 4: RK4 is exact for the last component, y = Π x · 2ⁿ / n!.
    let x = [0.5, 0.6, 0.7, 0.8];
    let o = outputs("ode", "gradient", &[run(json!({"x": x, "s": 3}))]);
    let y: f64 = x.iter().product::<f64>() * 16.0 / 24.0;
    for (k, g) in o[0].as_array().unwrap().iter().enumerate() {
        close(g.as_f64().unwrap(), y / x[k], 1e-12, "ode gradient");
    }
    // kmeans: every point at its own centroid costs 0 and moves nothing;
    // two points sharing a centroid pull it to their mean.
    let km = run(
        json!({"points": [[0.0, 0.0], [2.0, 0.0], [10.0, 10.0]], "centroids": [[1.0, 1.0], [10.0, 10.0]]}),
    );
    close(
        outputs("kmeans", "cost", std::slice::from_ref(&km))[0]
            .as_f64()
            .unwrap(),
        4.0,
        1e-12,
        "kmeans cost",
    );
    assert_eq!(
        outputs("kmeans", "dir", &[km])[0],
        json!([[0.0, 1.0], [0.0, 0.0]])
    );
}

/// Central differences of a scalar function of the tool, perturbing
/// `input[path]` entry by entry.
fn fd(module: &str, function: &str, input: &Json, key: &str, eps: f64) -> Vec<f64> {
    let flat: Vec<(usize, Option<usize>)> = match &input[key] {
        Json::Array(rows) if rows.first().is_some_and(Json::is_array) => rows
            .iter()
            .enumerate()
            .flat_map(|(i, r)| (0..r.as_array().unwrap().len()).map(move |j| (i, Some(j))))
            .collect(),
        Json::Array(v) => (0..v.len()).map(|i| (i, None)).collect(),
        _ => panic!("{key} is not a list"),
    };
    let mut inputs = Vec::new();
    for &(i, j) in &flat {
        for s in [eps, -eps] {
            let mut x = input.clone();
            let e = match j {
                Some(j) => &mut x[key][i][j],
                None => &mut x[key][i],
            };
            *e = json!(e.as_f64().unwrap() + s);
            inputs.push(x);
        }
    }
    let o = outputs(module, function, &inputs);
    o.chunks(2)
        .map(|p| (p[0].as_f64().unwrap() - p[1].as_f64().unwrap()) / (2.0 * eps))
        .collect()
}

fn flat(j: &Json) -> Vec<f64> {
    match j {
        Json::Array(v) => v.iter().flat_map(flat).collect(),
        n => vec![n.as_f64().unwrap()],
    }
}

#[test]
fn derivatives_match_finite_differences_of_the_values() {
    let gmm = json!({
        "d": 3, "k": 2, "n": 4, "m": 2, "gamma": 0.7, "min_runs": 1, "min_seconds": 0,
        "x": [[0.1, -0.4, 0.9], [1.2, 0.3, -0.5], [-0.7, 0.8, 0.2], [0.3, 0.3, 0.3]],
        "alpha": [0.3, -0.2], "mu": [[0.1, 0.2, 0.3], [-0.3, 0.5, 0.0]],
        "q": [[0.1, -0.2, 0.3], [0.0, 0.4, -0.1]], "l": [[0.5, -0.3, 0.2], [0.1, 0.2, -0.4]]
    });
    let jac = outputs("gmm", "jacobian", std::slice::from_ref(&gmm)).remove(0);
    assert_eq!(keys(&jac), ["alpha", "l", "mu", "q"]);
    for key in ["alpha", "mu", "q", "l"] {
        let want = fd("gmm", "objective", &gmm, key, 1e-6);
        for (g, w) in flat(&jac[key]).iter().zip(&want) {
            close(*g, *w, 1e-6, &format!("gmm d/d{key}"));
        }
    }
    let llsq = json!({"x": [0.1, 0.2, 0.3, -0.4], "n": 7, "min_runs": 1, "min_seconds": 0});
    let g = flat(&outputs("llsq", "gradient", std::slice::from_ref(&llsq))[0]);
    for (g, w) in g.iter().zip(fd("llsq", "primal", &llsq, "x", 1e-6)) {
        close(*g, w, 1e-6, "llsq");
    }
    // lstm's gradient entries are mostly below 1e-4, where GradBench's
    // check is loose: compare them tightly here.
    let lstm = json!({
        "main_params": [[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2],
                        [0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6],
                        [0.3, 0.1, 0.4, 0.1, 0.5, 0.9, 0.2, 0.6, 0.5, 0.3, 0.5, 0.8],
                        [0.9, 0.7, 0.9, 0.3, 0.2, 0.3, 0.8, 0.4, 0.6, 0.2, 0.6, 0.4]],
        "extra_params": [[0.6, 0.7, 0.8], [0.3, 0.2, 0.1], [0.5, 0.4, 0.3]],
        "state": [[0.1, 0.2, 0.3], [0.4, 0.5, 0.6], [0.7, 0.8, 0.9], [0.2, 0.4, 0.6]],
        "sequence": [[1, 0, 1], [0, 1, 1], [1, 1, 0], [0, 0, 1]],
        "min_runs": 1, "min_seconds": 0
    });
    let g = flat(&outputs("lstm", "jacobian", std::slice::from_ref(&lstm))[0]);
    let want = [
        fd("lstm", "objective", &lstm, "main_params", 1e-6),
        fd("lstm", "objective", &lstm, "extra_params", 1e-6),
    ]
    .concat();
    assert_eq!(g.len(), want.len());
    for (g, w) in g.iter().zip(&want) {
        assert!((g - w).abs() < 1e-9, "lstm: {g} vs {w}");
    }
    let lse = json!({"x": [0.3, -1.0, 2.5], "min_runs": 1, "min_seconds": 0});
    let g = flat(&outputs("lse", "gradient", std::slice::from_ref(&lse))[0]);
    for (g, w) in g.iter().zip(fd("lse", "primal", &lse, "x", 1e-6)) {
        close(*g, w, 1e-6, "lse");
    }
}

#[test]
fn gradbench_protocol_example_values() {
    // The `gmm` example of GradBench's protocol (copied from a recorded
    // run of its JAX tool): objective −16.52493032205487 and its gradient.
    let input = json!({"d": 2, "k": 2, "n": 2, "x": [[1.215408162057621, -1.2955735712157117], [0.8203896032126184, 0.8674399791734169]], "m": 0, "gamma": 1.0, "alpha": [0.45094682107320144, 0.6885456552696072], "mu": [[0.025459713597800637, 0.4313841222686283], [0.50207334256556, 0.0703451230577341]], "q": [[0.4548605276626972, 0.5843511655939126], [0.7726779404226064, -0.6405889536481759]], "l": [[0.7584684910855557], [0.4779235743831309]], "min_runs": 1, "min_seconds": 0.0});
    close(
        outputs("gmm", "objective", std::slice::from_ref(&input))[0]
            .as_f64()
            .unwrap(),
        -16.52493032205487,
        1e-12,
        "gmm objective",
    );
    let j = outputs("gmm", "jacobian", &[input]).remove(0);
    let want = json!({"alpha": [-0.44720894855525556, 0.4472089485552557], "mu": [[1.1466052600493717, 0.4581956654991429], [4.027652586108248, 0.019331900270456448]], "q": [[-2.919519154928106, -3.8073483340702774], [-5.59424760015856, 0.8822363333113564]], "l": [[-0.8775990134698539], [-0.35441370848150977]]});
    for key in ["alpha", "mu", "q", "l"] {
        for (g, w) in flat(&j[key]).iter().zip(flat(&want[key])) {
            close(*g, w, 1e-10, &format!("gmm {key}"));
        }
    }
    // lse from the same document.
    let x = json!({"x": [0.7218521074240813, 0.9664407992811007, 0.28904906882680115, 0.17134622674002598], "min_runs": 1, "min_seconds": 0.0});
    close(
        outputs("lse", "primal", &[x])[0].as_f64().unwrap(),
        1.9753126004238646,
        1e-12,
        "lse",
    );
}

#[test]
fn nested_derivatives_reach_gradbench_constants() {
    // GradBench's hard-coded answers (its particle and saddle evals).
    let p = outputs(
        "particle",
        "rr",
        &[json!({"w": 0.0, "min_runs": 1, "min_seconds": 0})],
    );
    close(p[0].as_f64().unwrap(), 0.2071918746486116, 1e-9, "particle");
    let s = outputs(
        "saddle",
        "fr",
        &[json!({"start": [1.0, 1.0], "min_runs": 1, "min_seconds": 0})],
    );
    for v in s[0].as_array().unwrap() {
        close(v.as_f64().unwrap(), 8.246324826140356e-06, 1e-12, "saddle");
    }
    let bad = session(&[evaluate(0, "saddle", "rx", json!({"start": [1.0, 1.0]}))]);
    assert_eq!(bad[0]["success"], false);
}

#[test]
fn bundle_adjustment_jacobian_matches_finite_differences() {
    // Observation 0's errors depend on camera 0, point 0 and weight 0
    // alone, so perturbing the (shared) camera, point and weight of the
    // input moves them as perturbing those would: central differences of
    // the objective's reported elements give the Jacobian's first two rows.
    for r in [[0.1, -0.2, 0.3], [0.0, 0.0, 0.0]] {
        let input = json!({
            "n": 2, "m": 3, "p": 20,
            "cam": [r[0], r[1], r[2], 1.0, 2.0, -3.0, 400.0, 5.0, -8.0, 0.08, 0.003],
            "x": [0.5, -1.0, 4.0], "w": 0.4, "feat": [270.0, -80.0],
            "min_runs": 1, "min_seconds": 0
        });
        let jac = outputs("ba", "jacobian", std::slice::from_ref(&input)).remove(0);
        assert_eq!(keys(&jac), ["cols", "rows", "vals"]);
        let rows: Vec<u64> = serde_json::from_value(jac["rows"].clone()).unwrap();
        let cols: Vec<u64> = serde_json::from_value(jac["cols"].clone()).unwrap();
        assert_eq!(
            (rows.len(), rows[1], rows[29], rows[30]),
            (31, 15, 435, 31 * 20)
        );
        assert_eq!(&cols[10..15], &[10, 22, 23, 24, 31]);
        assert_eq!(cols[30], 22 + 9 + 19);
        let vals = flat(&jac["vals"]);
        close(vals[30], -0.8, 1e-12, "d(1 - w²)/dw");
        let elements = |x: &Json| flat(&x["reproj_error"]["elements"]);
        let mut want = vec![vec![0.0; 15]; 2];
        for (k, (key, i)) in (0..11)
            .map(|i| ("cam", i))
            .chain((0..3).map(|i| ("x", i)))
            .chain([("w", 0)])
            .enumerate()
        {
            let h = 1e-6
                * (1.0
                    + input[key]
                        .get(i)
                        .unwrap_or(&input[key])
                        .as_f64()
                        .unwrap()
                        .abs());
            let moved = |s: f64| {
                let mut x = input.clone();
                let e = if key == "w" {
                    &mut x[key]
                } else {
                    &mut x[key][i]
                };
                *e = json!(e.as_f64().unwrap() + s);
                x
            };
            let o = outputs("ba", "objective", &[moved(h), moved(-h)]);
            let (ep, em) = (elements(&o[0]), elements(&o[1]));
            for row in 0..2 {
                want[row][k] = (ep[row] - em[row]) / (2.0 * h);
            }
        }
        for row in 0..2 {
            for k in 0..15 {
                close(
                    vals[15 * row + k],
                    want[row][k],
                    1e-6,
                    &format!("ba r = {r:?}, row {row}, entry {k}"),
                );
            }
        }
    }
}

/// A small hand: GradBench's 22-bone skeleton with each bone offset from
/// its parent by a translation, the inverse base absolutes the inverses of
/// the chained offsets (so the rest pose maps every vertex to itself),
/// and six vertices with mixed weights.
fn toy_hand(theta: &[f64], us: Json, corr: &[usize]) -> Json {
    let parents: Vec<i64> = (0..22)
        .map(|b| match b {
            0 => -1,
            1 | 5 | 9 | 13 | 17 | 21 => 0,
            _ => b - 1,
        })
        .collect();
    let offset = |b: usize| {
        [
            0.1 * (b % 3) as f64,
            0.2 + 0.05 * b as f64,
            -0.03 * b as f64,
        ]
    };
    let translation = |t: [f64; 3]| {
        json!([
            [1.0, 0.0, 0.0, t[0]],
            [0.0, 1.0, 0.0, t[1]],
            [0.0, 0.0, 1.0, t[2]],
            [0.0, 0.0, 0.0, 1.0]
        ])
    };
    let mut absolute = vec![[0.0; 3]; 22];
    for b in 0..22 {
        let o = offset(b);
        let base = if parents[b] < 0 {
            [0.0; 3]
        } else {
            absolute[parents[b] as usize]
        };
        absolute[b] = [base[0] + o[0], base[1] + o[1], base[2] + o[2]];
    }
    let relatives: Vec<Json> = (0..22).map(|b| translation(offset(b))).collect();
    let inverses: Vec<Json> = absolute
        .iter()
        .map(|a| translation([-a[0], -a[1], -a[2]]))
        .collect();
    let positions: Vec<Json> = (0..6)
        .map(|v| {
            json!([
                0.3 * v as f64,
                1.0 - 0.2 * v as f64,
                0.1 * (v * v) as f64,
                1.0
            ])
        })
        .collect();
    let weights: Vec<Json> = (0..6)
        .map(|v| {
            let mut w = vec![0.0; 22];
            w[(3 * v + 2) % 22] = 0.7;
            w[(5 * v + 7) % 22] += 0.3;
            json!(w)
        })
        .collect();
    let points: Vec<Json> = corr
        .iter()
        .enumerate()
        .map(|(i, _)| json!([0.2 * i as f64, -0.5, 0.4]))
        .collect();
    json!({
        "theta": theta, "us": us, "min_runs": 1, "min_seconds": 0,
        "data": {
            "model": {
                "bone_count": 22, "parents": parents, "base_relatives": relatives,
                "inverse_base_absolutes": inverses, "base_positions": positions, "weights": weights,
                "triangles": [[0, 1, 2], [3, 4, 5], [1, 3, 5]], "is_mirrored": false
            },
            "correspondences": corr, "points": points
        }
    })
}

#[test]
fn hand_tracking_rest_pose_and_jacobian() {
    // At rest (no angles, no global rotation) the model points are the
    // vertices moved by the translation θ[3..6].
    let mut theta = vec![0.0; 26];
    theta[3..6].copy_from_slice(&[0.5, -0.25, 1.0]);
    let corr = [4, 0, 5];
    let e = flat(&outputs("ht", "objective", &[toy_hand(&theta, json!([]), &corr)])[0]);
    for (i, &v) in corr.iter().enumerate() {
        let rest = [0.3 * v as f64, 1.0 - 0.2 * v as f64, 0.1 * (v * v) as f64];
        let point = [0.2 * i as f64, -0.5, 0.4];
        for j in 0..3 {
            close(
                e[3 * i + j],
                point[j] - rest[j] - theta[3 + j],
                1e-12,
                "ht rest pose",
            );
        }
    }
    // Away from rest, both variants' Jacobians against central differences.
    let theta: Vec<f64> = (0..26)
        .map(|c| 0.1 * ((c * 7) % 11) as f64 - 0.45)
        .collect();
    let us = json!([[0.2, 0.3], [0.5, 0.1], [0.25, 0.25]]);
    for (us, corr) in [(json!([]), [4, 0, 5]), (us, [1, 2, 0])] {
        let input = toy_hand(&theta, us.clone(), &corr);
        let jac: Vec<Vec<f64>> = serde_json::from_value(
            outputs("ht", "jacobian", std::slice::from_ref(&input)).remove(0),
        )
        .unwrap();
        let complicated = !us.as_array().unwrap().is_empty();
        let extra = if complicated { 2 } else { 0 };
        assert_eq!((jac.len(), jac[0].len()), (9, 26 + extra));
        let dtheta = fd_columns(&input, "theta");
        for r in 0..9 {
            for c in 0..26 {
                close(
                    jac[r][extra + c],
                    dtheta[c][r],
                    1e-6,
                    &format!("ht row {r}, theta {c}"),
                );
            }
        }
        if complicated {
            // Column k is ∂err_i/∂us[i][k]: perturb every point's us[k] at once.
            for k in 0..2 {
                let moved = |s: f64| {
                    let mut x = input.clone();
                    for i in 0..3 {
                        let e = &mut x["us"][i][k];
                        *e = json!(e.as_f64().unwrap() + s);
                    }
                    x
                };
                let o = outputs("ht", "objective", &[moved(1e-6), moved(-1e-6)]);
                let (p, m) = (flat(&o[0]), flat(&o[1]));
                for r in 0..9 {
                    close(
                        jac[r][k],
                        (p[r] - m[r]) / 2e-6,
                        1e-6,
                        &format!("ht row {r}, us {k}"),
                    );
                }
            }
        }
    }
}

/// Central differences of `ht`'s objective in every entry of `key`
/// (`[entry][row]`).
fn fd_columns(input: &Json, key: &str) -> Vec<Vec<f64>> {
    let n = input[key].as_array().unwrap().len();
    let mut inputs = Vec::new();
    for c in 0..n {
        for s in [1e-6, -1e-6] {
            let mut x = input.clone();
            x[key][c] = json!(x[key][c].as_f64().unwrap() + s);
            inputs.push(x);
        }
    }
    let o = outputs("ht", "objective", &inputs);
    o.chunks(2)
        .map(|p| {
            flat(&p[0])
                .iter()
                .zip(flat(&p[1]))
                .map(|(a, b)| (a - b) / 2e-6)
                .collect()
        })
        .collect()
}
