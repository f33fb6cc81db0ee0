//! Every case of `tests/fixtures/jax_reference.json` re-run through a
//! `#[differentiable]` wrapper: `vjp` through the generated reverse sweep and
//! `jvp` through the generated forward code at `Dual<Array>`, in f64.

mod common;

use common::*;
use nabla::Dual;
use nabla::prelude::*;

macro_rules! unary_wrappers {
    ($($name:ident => |$x:ident| $body:expr;)*) => {
        $(
            #[nabla::differentiable]
            fn $name($x: &Array) -> Array {
                $body
            }
        )*
    };
}

unary_wrappers! {
    w_neg => |x| -x;
    w_exp => |x| x.exp();
    w_log => |x| nabla::log(x);
    w_sin => |x| x.sin();
    w_cos => |x| nabla::cos(x);
    w_tan => |x| x.tan();
    w_tanh => |x| x.tanh();
    w_sigmoid => |x| nabla::sigmoid(x);
    w_relu => |x| x.relu();
    w_sqrt => |x| x.sqrt();
    w_rsqrt => |x| x.rsqrt();
    w_abs => |x| nabla::abs(x);
    w_square => |x| x.square();
    w_reciprocal => |x| nabla::reciprocal(x);
    w_log1p => |x| x.ln_1p();
    w_expm1 => |x| nabla::expm1(x);
    w_erf => |x| x.erf();
    w_powi3 => |x| x.powi(3);
    w_powf25 => |x| nabla::powf(x, 2.5);
    w_sum_all => |x| nabla::sum(x);
    w_mean_all => |x| x.mean();
    w_transpose => |x| x.transpose();
    w_outer_self => |x| x.outer(x);
    w_gelu => |x| nabla::gelu(x);
    w_gelu_tanh => |x| nabla::gelu_tanh(x);
    w_silu => |x| nabla::silu(x);
    w_softplus => |x| nabla::softplus(x);
}

#[nabla::differentiable]
fn w_logsumexp(x: &Array, axes: &[isize], keepdim: bool) -> Array {
    nabla::logsumexp_axes(x, axes, keepdim)
}
#[nabla::differentiable]
fn w_softmax(x: &Array, axis: isize) -> Array {
    nabla::softmax(x, axis)
}
#[nabla::differentiable]
fn w_log_softmax(x: &Array, axis: isize) -> Array {
    nabla::log_softmax(x, axis)
}
#[nabla::differentiable]
fn w_var(x: &Array, axes: &[isize], keepdim: bool, ddof: usize) -> Array {
    nabla::var_axes(x, axes, keepdim, ddof)
}
#[nabla::differentiable]
fn w_concat(a: &Array, b: &Array, axis: isize) -> Array {
    nabla::concat(&[a, b], axis)
}
#[nabla::differentiable]
fn w_stack(a: &Array, b: &Array, axis: isize) -> Array {
    nabla::stack(&[a, b], axis)
}
#[nabla::differentiable]
fn w_where(#[nondiff] mask: &Array, a: &Array, b: &Array) -> Array {
    nabla::where_(mask, a, b)
}

#[nabla::differentiable]
fn w_add(a: &Array, b: &Array) -> Array {
    a + b
}
#[nabla::differentiable]
fn w_sub(a: &Array, b: &Array) -> Array {
    a - b
}
#[nabla::differentiable]
fn w_mul(a: &Array, b: &Array) -> Array {
    a * b
}
#[nabla::differentiable]
fn w_div(a: &Array, b: &Array) -> Array {
    a / b
}
#[nabla::differentiable]
fn w_pow(a: &Array, b: &Array) -> Array {
    nabla::pow(a, b)
}
#[nabla::differentiable]
fn w_maximum(a: &Array, b: &Array) -> Array {
    a.maximum(b)
}
#[nabla::differentiable]
fn w_minimum(a: &Array, b: &Array) -> Array {
    nabla::minimum(a, b)
}
#[nabla::differentiable]
fn w_atan2(a: &Array, b: &Array) -> Array {
    a.atan2(b)
}
#[nabla::differentiable]
fn w_matmul(a: &Array, b: &Array) -> Array {
    a.matmul(b)
}
#[nabla::differentiable]
fn w_outer(a: &Array, b: &Array) -> Array {
    nabla::outer(a, b)
}
#[nabla::differentiable]
fn w_sum_axes(x: &Array, axes: &[isize], keepdim: bool) -> Array {
    x.sum_axes(axes, keepdim)
}
#[nabla::differentiable]
fn w_mean_axes(x: &Array, axes: &[isize], keepdim: bool) -> Array {
    nabla::mean_axes(x, axes, keepdim)
}
#[nabla::differentiable]
fn w_max_axes(x: &Array, axes: &[isize], keepdim: bool) -> Array {
    x.max_axes(axes, keepdim)
}
#[nabla::differentiable]
fn w_min_axes(x: &Array, axes: &[isize], keepdim: bool) -> Array {
    x.min_axes(axes, keepdim)
}
#[nabla::differentiable]
fn w_prod_axes(x: &Array, axes: &[isize], keepdim: bool) -> Array {
    x.prod_axes(axes, keepdim)
}
#[nabla::differentiable]
fn w_cumsum(x: &Array, axis: isize) -> Array {
    x.cumsum(axis)
}
#[nabla::differentiable]
fn w_reshape(x: &Array, shape: &[usize]) -> Array {
    x.reshape(shape)
}
#[nabla::differentiable]
fn w_permute(x: &Array, perm: &[usize]) -> Array {
    x.permute(perm)
}
#[nabla::differentiable]
fn w_broadcast_to(x: &Array, shape: &[usize]) -> Array {
    x.broadcast_to(shape)
}
#[nabla::differentiable]
fn w_expand_dims(x: &Array, axis: isize) -> Array {
    x.expand_dims(axis)
}
#[nabla::differentiable]
fn w_squeeze(x: &Array, axis: isize) -> Array {
    nabla::squeeze(x, axis)
}
#[nabla::differentiable]
fn w_slice2(x: &Array, r0: std::ops::Range<usize>, r1: std::ops::Range<usize>) -> Array {
    let a = x.slice_axis(0, r0);
    a.slice_axis(1, r1)
}
#[nabla::differentiable]
fn w_index_select(x: &Array, axis: isize, idx: &[usize]) -> Array {
    x.index_select(axis, idx)
}
#[nabla::differentiable]
fn w_clip(x: &Array, #[nondiff] lo: f64, #[nondiff] hi: f64) -> Array {
    x.clip(lo, hi)
}

fn ints(j: &serde_json::Value) -> Vec<isize> {
    j.as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_i64().unwrap() as isize)
        .collect()
}

/// Runs the wrapper for `case` through vjp and jvp; `None` for ops still
/// handled only by the tape (composites, concat, stack, where).
fn run(case: &serde_json::Value) -> Option<(Array, Vec<Array>, Array)> {
    let op = case["op"].as_str().unwrap();
    let p = &case["params"];
    let xs: Vec<Array> = case["inputs"].as_array().unwrap().iter().map(arr).collect();
    let ts: Vec<Array> = case["tangents"]
        .as_array()
        .unwrap()
        .iter()
        .map(arr)
        .collect();
    let ct = arr(&case["cotangent"]);
    macro_rules! un {
        ($f:expr) => {{
            let (y, pb) = nabla::vjp($f)(&xs[0]);
            let g = pb(&ct);
            let (_, t) = nabla::jvp($f)((&xs[0],), (&ts[0],));
            Some((y, vec![g], t))
        }};
    }
    macro_rules! bin {
        ($f:expr) => {{
            let (y, pb) = nabla::vjp($f)(&xs[0], &xs[1]);
            let (ga, gb) = pb(&ct);
            let (_, t) = nabla::jvp($f)((&xs[0], &xs[1]), (&ts[0], &ts[1]));
            Some((y, vec![ga, gb], t))
        }};
    }
    // Wrappers with static parameters.
    macro_rules! with {
        ($f:expr, $($s:expr),*) => {{
            let (y, pb) = nabla::vjp($f)(&xs[0], $($s),*);
            let g = pb(&ct);
            let (_, t) = nabla::jvp($f)((&xs[0], $($s),*), (&ts[0],));
            Some((y, vec![g], t))
        }};
    }
    let kd = p.get("keepdim").and_then(|v| v.as_bool()).unwrap_or(false);
    let axes: Vec<isize> = p
        .get("axes")
        .map(ints)
        .unwrap_or_else(|| (0..xs[0].ndim() as isize).collect());
    let shape = p.get("shape").map(usizes).unwrap_or_default();
    let perm = p.get("perm").map(usizes).unwrap_or_default();
    let idx = p.get("indices").map(usizes).unwrap_or_default();
    match op {
        "neg" => un!(w_neg),
        "exp" => un!(w_exp),
        "log" => un!(w_log),
        "sin" => un!(w_sin),
        "cos" => un!(w_cos),
        "tan" => un!(w_tan),
        "tanh" => un!(w_tanh),
        "sigmoid" => un!(w_sigmoid),
        "relu" => un!(w_relu),
        "sqrt" => un!(w_sqrt),
        "rsqrt" => un!(w_rsqrt),
        "abs" => un!(w_abs),
        "square" => un!(w_square),
        "reciprocal" => un!(w_reciprocal),
        "log1p" => un!(w_log1p),
        "expm1" => un!(w_expm1),
        "erf" => un!(w_erf),
        "powi" => un!(w_powi3),
        "powf" => un!(w_powf25),
        "transpose" => un!(w_transpose),
        "add" => bin!(w_add),
        "sub" => bin!(w_sub),
        "mul" => bin!(w_mul),
        "div" => bin!(w_div),
        "pow" => bin!(w_pow),
        "maximum" => bin!(w_maximum),
        "minimum" => bin!(w_minimum),
        "atan2" => bin!(w_atan2),
        "matmul" => bin!(w_matmul),
        "outer" => bin!(w_outer),
        "sum" if p.get("axes").is_none() => un!(w_sum_all),
        "mean" if p.get("axes").is_none() => un!(w_mean_all),
        "sum" => with!(w_sum_axes, &axes, kd),
        "mean" => with!(w_mean_axes, &axes, kd),
        "max" => with!(w_max_axes, &axes, kd),
        "min" => with!(w_min_axes, &axes, kd),
        "prod" => with!(w_prod_axes, &axes, kd),
        "cumsum" => with!(w_cumsum, p["axis"].as_i64().unwrap() as isize),
        "reshape" => with!(w_reshape, &shape),
        "permute" => with!(w_permute, &perm),
        "broadcast_to" => with!(w_broadcast_to, &shape),
        "expand_dims" => with!(w_expand_dims, p["axis"].as_i64().unwrap() as isize),
        "squeeze" => with!(w_squeeze, p["axis"].as_i64().unwrap() as isize),
        "slice" => {
            let r = p["ranges"].as_array().unwrap();
            let rg =
                |i: usize| r[i][0].as_u64().unwrap() as usize..r[i][1].as_u64().unwrap() as usize;
            with!(w_slice2, rg(0), rg(1))
        }
        "index_select" => with!(w_index_select, p["axis"].as_i64().unwrap() as isize, &idx),
        "gelu" => un!(w_gelu),
        "gelu_tanh" => un!(w_gelu_tanh),
        "silu" => un!(w_silu),
        "softplus" => un!(w_softplus),
        "logsumexp" => with!(w_logsumexp, &axes, kd),
        "softmax" => with!(w_softmax, p["axis"].as_i64().unwrap() as isize),
        "log_softmax" => with!(w_log_softmax, p["axis"].as_i64().unwrap() as isize),
        "var" => with!(w_var, &axes, kd, p["ddof"].as_u64().unwrap_or(0) as usize),
        "concat" | "stack" => {
            let ax = p["axis"].as_i64().unwrap() as isize;
            macro_rules! join {
                ($f:expr) => {{
                    let (y, pb) = nabla::vjp($f)(&xs[0], &xs[1], ax);
                    let (ga, gb) = pb(&ct);
                    let (_, t) = nabla::jvp($f)((&xs[0], &xs[1], ax), (&ts[0], &ts[1]));
                    Some((y, vec![ga, gb], t))
                }};
            }
            if op == "concat" {
                join!(w_concat)
            } else {
                join!(w_stack)
            }
        }
        "where" => {
            let m = where_mask(p);
            let (y, pb) = nabla::vjp(w_where)(&m, &xs[0], &xs[1]);
            let (ga, gb) = pb(&ct);
            let (_, t) = nabla::jvp(w_where)((&m, &xs[0], &xs[1]), (&ts[0], &ts[1]));
            Some((y, vec![ga, gb], t))
        }
        "clip" => with!(
            w_clip,
            p["min"].as_f64().unwrap(),
            p["max"].as_f64().unwrap()
        ),
        _ => None,
    }
}

#[test]
fn every_fixture_case_through_generated_code() {
    let cases = fixture("jax_reference.json")["cases"]
        .as_array()
        .unwrap()
        .clone();
    let mut covered = Vec::new();
    let mut missing = Vec::new();
    for case in &cases {
        let name = case["name"].as_str().unwrap();
        let Some((y, grads, t)) = run(case) else {
            missing.push(name.to_string());
            continue;
        };
        covered.push(name);
        assert_close(&y, &arr(&case["output"]), 1e-9, &format!("{name} output"));
        for (k, (g, w)) in grads
            .iter()
            .zip(case["vjp"].as_array().unwrap())
            .enumerate()
        {
            assert_close(g, &arr(w), 1e-9, &format!("{name} generated vjp[{k}]"));
        }
        assert_close(
            &t,
            &arr(&case["jvp"]),
            1e-9,
            &format!("{name} generated jvp"),
        );
    }
    assert!(
        missing.is_empty(),
        "fixture cases without a #[differentiable] wrapper: {missing:?}"
    );
}

#[test]
fn outer_of_a_value_with_itself_accumulates() {
    let x = Array::from_vec(vec![1.0f64, 2.0, 3.0], &[3]);
    let (_, pb) = nabla::vjp(w_outer_self)(&x);
    let ct = Array::ones(&[3, 3], DType::F64);
    // d/dx Σ_ij x_i x_j = 2 Σ_j x_j
    assert_eq!(pb(&ct).to_vec::<f64>(), vec![12.0, 12.0, 12.0]);
    let _ = Dual::constant(x);
}
