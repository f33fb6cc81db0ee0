//! The elementwise cases of `tests/fixtures/jax_reference_more.json`
//! (JAX 0.10.2, f64): the ops added through the op registry. Each case runs
//! forward (f64 1e-9, f32 1e-4), VJP through the tape and through the
//! generated rule entry points, JVP at `Dual<Array>`, forward-over-reverse
//! HVP (1e-7), `vmap` at `Batched<Array>` (all inputs batched, and the
//! second one unbatched), and VJP and JVP through `#[differentiable]`
//! code that calls the op as a method and as a `nabla::` function.

mod common;

use common::*;
use nabla::prelude::*;
use nabla::{Batched, Dual};
use serde_json::Value as Json;

/// The unary and binary elementwise ops of the file (every case).
const OPS: &[&str] = &[
    "arcsin",
    "arccos",
    "arctan",
    "sinh",
    "cosh",
    "arcsinh",
    "arccosh",
    "arctanh",
    "log2",
    "log10",
    "exp2",
    "erfc",
    "lgamma",
    "digamma",
    "log_sigmoid",
    "mish",
    "elu",
    "leaky_relu",
    "hard_tanh",
    "cbrt",
    "sinc",
    "logaddexp",
    "hypot",
    "remainder",
    "copysign",
];

fn cases() -> Vec<Json> {
    let all = fixture("jax_reference_more.json")["cases"]
        .as_array()
        .unwrap()
        .clone();
    let picked: Vec<Json> = all
        .into_iter()
        .filter(|c| OPS.contains(&c["op"].as_str().unwrap()))
        .collect();
    // Every op of the list, the binary ones with two broadcast patterns.
    assert_eq!(picked.len(), 21 + 2 * 4, "elementwise cases in the file");
    picked
}

fn inputs(case: &Json, dtype: DType) -> Vec<Array> {
    case["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| arr(j).cast(dtype))
        .collect()
}

fn slope(p: &Json) -> f64 {
    p["negative_slope"].as_f64().unwrap()
}

/// The op on any value type, as the methods of `Value` spell it.
fn apply<V: Value>(op: &str, p: &Json, xs: &[V]) -> V {
    let x = &xs[0];
    match op {
        "arcsin" => x.asin(),
        "arccos" => x.acos(),
        "arctan" => x.atan(),
        "sinh" => x.sinh(),
        "cosh" => x.cosh(),
        "arcsinh" => x.asinh(),
        // The fixture evaluates arccosh at input + 1 (params.note).
        "arccosh" => x.add_scalar(1.0).acosh(),
        "arctanh" => x.atanh(),
        "log2" => x.log2(),
        "log10" => x.log10(),
        "exp2" => x.exp2(),
        "erfc" => x.erfc(),
        "lgamma" => x.lgamma(),
        "digamma" => x.digamma(),
        "log_sigmoid" => x.log_sigmoid(),
        "mish" => x.mish(),
        "elu" => x.elu(),
        "leaky_relu" => x.leaky_relu(slope(p)),
        "hard_tanh" => x.hard_tanh(),
        "cbrt" => x.cbrt(),
        "sinc" => x.sinc(),
        "logaddexp" => x.logaddexp(&xs[1]),
        "hypot" => x.hypot(&xs[1]),
        "remainder" => x.remainder(&xs[1]),
        "copysign" => x.copysign(&xs[1]),
        _ => panic!("not an elementwise op of the file: {op}"),
    }
}

/// The VJP through the entry points generated code calls
/// (`nabla::rules::<op>::vjp_<k>`), from inputs, output and cotangent.
fn rule_vjp<V: Value>(op: &str, p: &Json, xs: &[V], y: &V, ct: &V) -> Vec<V> {
    use nabla::rules as r;
    let x = &xs[0];
    macro_rules! un {
        ($m:ident) => {
            vec![r::$m::vjp_0(x, y, ct)]
        };
    }
    macro_rules! bin {
        ($m:ident) => {
            vec![
                r::$m::vjp_0(x, &xs[1], y, ct),
                r::$m::vjp_1(x, &xs[1], y, ct),
            ]
        };
    }
    match op {
        "arcsin" => un!(arcsin),
        "arccos" => un!(arccos),
        "arctan" => un!(arctan),
        "sinh" => un!(sinh),
        "cosh" => un!(cosh),
        "arcsinh" => un!(arcsinh),
        "arccosh" => vec![r::arccosh::vjp_0(&x.add_scalar(1.0), y, ct)],
        "arctanh" => un!(arctanh),
        "log2" => un!(log2),
        "log10" => un!(log10),
        "exp2" => un!(exp2),
        "erfc" => un!(erfc),
        "lgamma" => un!(lgamma),
        "digamma" => un!(digamma),
        "log_sigmoid" => un!(log_sigmoid),
        "mish" => un!(mish),
        "elu" => un!(elu),
        "leaky_relu" => vec![r::leaky_relu::vjp_0(x, y, slope(p), ct)],
        "hard_tanh" => un!(hard_tanh),
        "cbrt" => un!(cbrt),
        "sinc" => un!(sinc),
        "logaddexp" => bin!(logaddexp),
        "hypot" => bin!(hypot),
        "remainder" => bin!(remainder),
        "copysign" => bin!(copysign),
        _ => unreachable!(),
    }
}

fn each(mut f: impl FnMut(&str, &str, &Json, &Json)) {
    for case in cases() {
        let (name, op) = (case["name"].as_str().unwrap(), case["op"].as_str().unwrap());
        f(name, op, &case["params"], &case);
    }
}

#[test]
fn forward_matches_jax_f64_and_f32() {
    each(|name, op, p, case| {
        let want = arr(&case["output"]);
        for (dtype, tol) in [(DType::F64, 1e-9), (DType::F32, 1e-4)] {
            let y = apply(op, p, &inputs(case, dtype));
            assert_eq!(y.dtype(), dtype, "{name}");
            assert_close(&y, &want, tol, &format!("{name} forward {dtype}"));
        }
        // Scalars (`f64`) go through the same element formula.
        let xs = inputs(case, DType::F64);
        if xs.iter().all(|x| x.shape() == xs[0].shape()) {
            let cols: Vec<Vec<f64>> = xs.iter().map(|x| x.to_vec::<f64>()).collect();
            let got: Vec<f64> = (0..cols[0].len())
                .map(|i| {
                    let s: Vec<f64> = cols.iter().map(|c| c[i]).collect();
                    apply(op, p, &s)
                })
                .collect();
            let got = Array::from_vec(got, xs[0].shape());
            assert_close(&got, &want, 1e-12, &format!("{name} forward f64 scalars"));
        }
    });
}

#[test]
fn vjp_through_tape_and_rules_matches_jax() {
    each(|name, op, p, case| {
        let wants: Vec<Array> = case["vjp"].as_array().unwrap().iter().map(arr).collect();
        for (dtype, tol) in [(DType::F64, 1e-9), (DType::F32, 1e-4)] {
            let xs = inputs(case, dtype);
            let ct = arr(&case["cotangent"]).cast(dtype);
            let leaves: Vec<Array> = xs.iter().map(|x| x.clone().requires_grad()).collect();
            let y = apply(op, p, &leaves);
            (&y * &ct).sum().backward();
            for (k, (l, w)) in leaves.iter().zip(&wants).enumerate() {
                assert_close(&l.grad(), w, tol, &format!("{name} tape vjp[{k}] {dtype}"));
            }
            let y = apply(op, p, &xs);
            for (k, (g, w)) in rule_vjp(op, p, &xs, &y, &ct).iter().zip(&wants).enumerate() {
                assert_close(g, w, tol, &format!("{name} rule vjp[{k}] {dtype}"));
            }
        }
    });
}

fn tangents(case: &Json, dtype: DType) -> Vec<Array> {
    case["tangents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| arr(j).cast(dtype))
        .collect()
}

fn duals(xs: &[Array], ts: &[Array]) -> Vec<Dual<Array>> {
    xs.iter()
        .zip(ts)
        .map(|(x, t)| Dual::new(x.clone(), Some(t.clone())))
        .collect()
}

#[test]
fn jvp_and_hvp_match_jax() {
    each(|name, op, p, case| {
        for (dtype, tol) in [(DType::F64, 1e-9), (DType::F32, 1e-4)] {
            let d = duals(&inputs(case, dtype), &tangents(case, dtype));
            let y: Dual<Array> = apply(op, p, &d);
            let t = y.tangent_or_zero();
            assert_close(&t, &arr(&case["jvp"]), tol, &format!("{name} jvp {dtype}"));
        }
        // Forward-over-reverse: the rule entry points at `Dual<Array>`.
        let d = duals(&inputs(case, DType::F64), &tangents(case, DType::F64));
        let y = apply(op, p, &d);
        let ct = Dual::constant(arr(&case["cotangent"]));
        let wants = case["hvp"].as_array().unwrap();
        for (k, (g, w)) in rule_vjp(op, p, &d, &y, &ct).iter().zip(wants).enumerate() {
            assert_close(
                &g.tangent_or_zero(),
                &arr(w),
                1e-7,
                &format!("{name} hvp[{k}]"),
            );
        }
    });
}

#[test]
fn vmap_matches_jax() {
    let mut unbatched = 0;
    each(|name, op, p, case| {
        for key in ["vmap", "vmap_in_axes_0_none"] {
            let Some(v) = case.get(key) else { continue };
            unbatched += usize::from(key != "vmap");
            let xs: Vec<Batched<Array>> = v["inputs"]
                .as_array()
                .unwrap()
                .iter()
                .zip(v["in_axes"].as_array().unwrap())
                .map(|(j, ax)| Batched::new(arr(j), ax.as_u64().map(|a| a as usize)))
                .collect();
            let y = apply(op, p, &xs);
            let got = y.materialize(3, 0);
            assert_close(&got, &arr(&v["output"]), 1e-9, &format!("{name} {key}"));
        }
    });
    assert_eq!(unbatched, 8, "binary cases with an unbatched operand");
}

// ----- through generated code -----

macro_rules! wrappers {
    ($($m:ident, $f:ident => |$x:ident| $method:expr, $func:expr;)*) => {
        $(
            #[nabla::differentiable]
            fn $m($x: &Array) -> Array {
                $method
            }
            #[nabla::differentiable]
            fn $f($x: &Array) -> Array {
                $func
            }
        )*
    };
}

wrappers! {
    m_arcsin, f_arcsin => |x| x.asin(), nabla::arcsin(x);
    m_arccos, f_arccos => |x| x.acos(), nabla::arccos(x);
    m_arctan, f_arctan => |x| x.atan(), nabla::arctan(x);
    m_sinh, f_sinh => |x| x.sinh(), nabla::sinh(x);
    m_cosh, f_cosh => |x| x.cosh(), nabla::cosh(x);
    m_arcsinh, f_arcsinh => |x| x.asinh(), nabla::arcsinh(x);
    m_arccosh, f_arccosh => |x| (x + 1.0).acosh(), nabla::arccosh(&(x + 1.0));
    m_arctanh, f_arctanh => |x| x.atanh(), nabla::arctanh(x);
    m_log2, f_log2 => |x| x.log2(), nabla::log2(x);
    m_log10, f_log10 => |x| x.log10(), nabla::log10(x);
    m_exp2, f_exp2 => |x| x.exp2(), nabla::exp2(x);
    m_erfc, f_erfc => |x| x.erfc(), nabla::erfc(x);
    m_lgamma, f_lgamma => |x| x.lgamma(), nabla::lgamma(x);
    m_digamma, f_digamma => |x| x.digamma(), nabla::digamma(x);
    m_log_sigmoid, f_log_sigmoid => |x| x.log_sigmoid(), nabla::log_sigmoid(x);
    m_mish, f_mish => |x| x.mish(), nabla::mish(x);
    m_elu, f_elu => |x| x.elu(), nabla::elu(x);
    m_leaky_relu, f_leaky_relu => |x| x.leaky_relu(0.1), nabla::leaky_relu(x, 0.1);
    m_hard_tanh, f_hard_tanh => |x| x.hard_tanh(), nabla::hard_tanh(x);
    m_cbrt, f_cbrt => |x| x.cbrt(), nabla::cbrt(x);
    m_sinc, f_sinc => |x| x.sinc(), nabla::sinc(x);
}

macro_rules! binary_wrappers {
    ($($m:ident, $f:ident => $method:ident, $func:path;)*) => {
        $(
            #[nabla::differentiable]
            fn $m(a: &Array, b: &Array) -> Array {
                a.$method(b)
            }
            #[nabla::differentiable]
            fn $f(a: &Array, b: &Array) -> Array {
                $func(a, b)
            }
        )*
    };
}

binary_wrappers! {
    m_logaddexp, f_logaddexp => logaddexp, nabla::logaddexp;
    m_hypot, f_hypot => hypot, nabla::hypot;
    m_remainder, f_remainder => remainder, nabla::remainder;
    m_copysign, f_copysign => copysign, nabla::copysign;
}

/// Output, VJP and JVP of `f` (method form and function form of the op)
/// through its generated code.
fn generated(op: &str, xs: &[Array], ts: &[Array], ct: &Array) -> Vec<(Array, Vec<Array>, Array)> {
    macro_rules! un {
        ($($f:expr),*) => {
            vec![$({
                let (y, pb) = nabla::vjp($f)(&xs[0]);
                let g = pb(ct);
                let (_, t) = nabla::jvp($f)((&xs[0],), (&ts[0],));
                (y, vec![g], t)
            }),*]
        };
    }
    macro_rules! bin {
        ($($f:expr),*) => {
            vec![$({
                let (y, pb) = nabla::vjp($f)(&xs[0], &xs[1]);
                let (ga, gb) = pb(ct);
                let (_, t) = nabla::jvp($f)((&xs[0], &xs[1]), (&ts[0], &ts[1]));
                (y, vec![ga, gb], t)
            }),*]
        };
    }
    match op {
        "arcsin" => un!(m_arcsin, f_arcsin),
        "arccos" => un!(m_arccos, f_arccos),
        "arctan" => un!(m_arctan, f_arctan),
        "sinh" => un!(m_sinh, f_sinh),
        "cosh" => un!(m_cosh, f_cosh),
        "arcsinh" => un!(m_arcsinh, f_arcsinh),
        "arccosh" => un!(m_arccosh, f_arccosh),
        "arctanh" => un!(m_arctanh, f_arctanh),
        "log2" => un!(m_log2, f_log2),
        "log10" => un!(m_log10, f_log10),
        "exp2" => un!(m_exp2, f_exp2),
        "erfc" => un!(m_erfc, f_erfc),
        "lgamma" => un!(m_lgamma, f_lgamma),
        "digamma" => un!(m_digamma, f_digamma),
        "log_sigmoid" => un!(m_log_sigmoid, f_log_sigmoid),
        "mish" => un!(m_mish, f_mish),
        "elu" => un!(m_elu, f_elu),
        "leaky_relu" => un!(m_leaky_relu, f_leaky_relu),
        "hard_tanh" => un!(m_hard_tanh, f_hard_tanh),
        "cbrt" => un!(m_cbrt, f_cbrt),
        "sinc" => un!(m_sinc, f_sinc),
        "logaddexp" => bin!(m_logaddexp, f_logaddexp),
        "hypot" => bin!(m_hypot, f_hypot),
        "remainder" => bin!(m_remainder, f_remainder),
        "copysign" => bin!(m_copysign, f_copysign),
        _ => unreachable!(),
    }
}

#[test]
fn every_case_through_generated_code() {
    each(|name, op, _p, case| {
        let xs = inputs(case, DType::F64);
        let ts = tangents(case, DType::F64);
        let ct = arr(&case["cotangent"]);
        for (form, (y, grads, t)) in ["method", "function"]
            .iter()
            .zip(generated(op, &xs, &ts, &ct))
        {
            assert_close(
                &y,
                &arr(&case["output"]),
                1e-9,
                &format!("{name} {form} output"),
            );
            for (k, (g, w)) in grads
                .iter()
                .zip(case["vjp"].as_array().unwrap())
                .enumerate()
            {
                assert_close(
                    g,
                    &arr(w),
                    1e-9,
                    &format!("{name} {form} generated vjp[{k}]"),
                );
            }
            assert_close(
                &t,
                &arr(&case["jvp"]),
                1e-9,
                &format!("{name} {form} generated jvp"),
            );
        }
    });
}
