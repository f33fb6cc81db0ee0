//! Shared helpers for the integration tests: fixture loading, the op
//! dispatcher used by fixture and finite-difference tests, tolerant
//! comparisons, and the guard of the global random generator.
#![allow(dead_code)]

use nabla::prelude::*;
use nabla::{Dual, primitives};
use ndarray::Slice;
use serde_json::Value as Json;
use std::sync::{Mutex, MutexGuard};

/// Seeds the global random generator and holds it until the guard drops.
///
/// The generator is global to the process (like `torch.manual_seed`), and
/// the tests of this binary run in parallel threads: a test that seeds it
/// and relies on the draws that follow holds this guard, so no other test
/// draws in between. (The CUDA seed-example test draws the same values
/// twice, once per device; without the lock it failed on the H200 when
/// another test drew in between.) Do not call it twice in one scope: the
/// lock is not reentrant.
pub fn seeded(value: u64) -> MutexGuard<'static, ()> {
    let guard = rng_lock();
    nabla::manual_seed(value);
    guard
}

/// The guard of [`seeded`] without reseeding, for a test that draws from
/// the global generator without seeding it: it then never draws in the
/// middle of a seeded test's draws.
pub fn rng_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Reads a fixture file from the repository's `tests/fixtures/`, or from
/// the folder in `NABLA_FIXTURES` (how test binaries find them on another
/// machine, e.g. the GPU machine `scripts/gpu-check.sh` runs them on).
pub fn fixture(name: &str) -> Json {
    let path = fixture_path(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).expect("fixture is valid JSON")
}

/// The cases of fixture file `name` whose `op` is one of `ops`.
pub fn cases_of(name: &str, ops: &[&str]) -> Vec<Json> {
    fixture(name)["cases"]
        .as_array()
        .expect("a `cases` list")
        .iter()
        .filter(|c| ops.contains(&c["op"].as_str().expect("an `op` name")))
        .cloned()
        .collect()
}

/// The path of a fixture file (`name` may name a subfolder, e.g.
/// `torch/torch_gpt_tiny.safetensors`), where [`fixture`] reads it.
pub fn fixture_path(name: &str) -> std::path::PathBuf {
    let dir = std::env::var_os("NABLA_FIXTURES").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures"),
        std::path::PathBuf::from,
    );
    dir.join(name)
}

/// One program of `jax_programs.json` by name.
pub fn program(name: &str) -> Json {
    let all = fixture("jax_programs.json");
    all["programs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap()
        .clone()
}

/// `{"shape": [..], "data": [..]}` as an f64 array.
pub fn arr(j: &Json) -> Array {
    let shape: Vec<usize> = j["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as usize)
        .collect();
    let data: Vec<f64> = j["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    Array::from_vec(data, &shape)
}

pub fn usizes(j: &Json) -> Vec<usize> {
    j.as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as usize)
        .collect()
}

/// Asserts `got` matches `want` elementwise within `tol·max(1, |want|)`.
#[track_caller]
pub fn assert_close(got: &Array, want: &Array, tol: f64, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    let (g, w) = (got.to_vec::<f64>(), want.to_vec::<f64>());
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        let ok = (a - b).abs() <= tol * b.abs().max(1.0) || (a.is_nan() && b.is_nan());
        assert!(
            ok,
            "{what}: element {i}: got {a}, want {b} (tol {tol})\n got  {g:?}\n want {w:?}"
        );
    }
}

fn axes_param(params: &Json) -> Option<Vec<usize>> {
    params.get("axes").map(usizes)
}

fn keepdim(params: &Json) -> bool {
    params
        .get("keepdim")
        .and_then(|v| v.as_bool())
        .unwrap_or(false)
}

fn isize_axes(a: &[usize]) -> Vec<isize> {
    a.iter().map(|&v| v as isize).collect()
}

fn all_axes(n: usize) -> Vec<usize> {
    (0..n).collect()
}

fn iparam(params: &Json, key: &str) -> isize {
    params[key].as_i64().unwrap() as isize
}

fn norm(axis: isize, nd: usize) -> usize {
    if axis < 0 {
        (axis + nd as isize) as usize
    } else {
        axis as usize
    }
}

/// The bool mask of a `where` case.
pub fn where_mask(params: &Json) -> Array {
    let m: Vec<bool> = params["mask"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap() != 0.0)
        .collect();
    Array::from_vec(m, &usizes(&params["mask_shape"]))
}

/// Applies fixture op `op` to `xs`, generically (arrays, duals, ...).
pub fn apply<V: ArrayValue>(op: &str, params: &Json, xs: &[V]) -> V {
    let x = &xs[0];
    let nd = x.shape_vec().len();
    let axes = || axes_param(params).unwrap_or_else(|| all_axes(nd));
    match op {
        "neg" => x.neg(),
        "exp" => x.exp(),
        "log" => x.ln(),
        "sin" => x.sin(),
        "cos" => x.cos(),
        "tan" => x.tan(),
        "tanh" => x.tanh(),
        "sigmoid" => x.sigmoid(),
        "relu" => x.relu(),
        "sqrt" => x.sqrt(),
        "rsqrt" => x.rsqrt(),
        "abs" => x.abs(),
        "square" => x.square(),
        "reciprocal" => x.recip(),
        "log1p" => x.ln_1p(),
        "expm1" => x.exp_m1(),
        "erf" => x.erf(),
        "gelu" => nabla::gelu::forward(x),
        "gelu_tanh" => nabla::gelu_tanh::forward(x),
        "silu" => nabla::silu::forward(x),
        "softplus" => nabla::softplus::forward(x),
        "powi" => x.powi(params["n"].as_i64().unwrap() as i32),
        "powf" => x.powf(params["p"].as_f64().unwrap()),
        "clip" => x.clip(
            params["min"].as_f64().unwrap(),
            params["max"].as_f64().unwrap(),
        ),
        "add" => x.add(&xs[1]),
        "sub" => x.sub(&xs[1]),
        "mul" => x.mul(&xs[1]),
        "div" => x.div(&xs[1]),
        "pow" => x.pow(&xs[1]),
        "maximum" => x.maximum(&xs[1]),
        "minimum" => x.minimum(&xs[1]),
        "atan2" => x.atan2(&xs[1]),
        "sum" => x.sum_axes(&axes(), keepdim(params)),
        "mean" => nabla::composite::mean(x, &axes(), keepdim(params)),
        "max" => x.max_axes(&axes(), keepdim(params)),
        "min" => x.min_axes(&axes(), keepdim(params)),
        "prod" => x.prod_axes(&axes(), keepdim(params)),
        "logsumexp" => nabla::logsumexp_axes::forward(x, &isize_axes(&axes()), keepdim(params)),
        "var" => nabla::var_axes::forward(
            x,
            &isize_axes(&axes()),
            keepdim(params),
            params["ddof"].as_u64().unwrap_or(0) as usize,
        ),
        "cumsum" => x.cumsum_axis(norm(iparam(params, "axis"), nd), false),
        "softmax" => nabla::softmax::forward(x, iparam(params, "axis")),
        "log_softmax" => nabla::log_softmax::forward(x, iparam(params, "axis")),
        "reshape" => x.reshape(&usizes(&params["shape"])),
        "permute" => x.permute(&usizes(&params["perm"])),
        "transpose" => x.permute(&[1, 0]),
        "broadcast_to" => x.broadcast_to(&usizes(&params["shape"])),
        "expand_dims" => {
            let mut s = x.shape_vec();
            s.insert(norm(iparam(params, "axis"), nd + 1), 1);
            x.reshape(&s)
        }
        "squeeze" => {
            let mut s = x.shape_vec();
            s.remove(norm(iparam(params, "axis"), nd));
            x.reshape(&s)
        }
        "concat" => V::concat(xs, norm(iparam(params, "axis"), nd)),
        "stack" => {
            let ax = norm(iparam(params, "axis"), nd + 1);
            let parts: Vec<V> = xs
                .iter()
                .map(|p| {
                    let mut s = p.shape_vec();
                    s.insert(ax, 1);
                    p.reshape(&s)
                })
                .collect();
            V::concat(&parts, ax)
        }
        "slice" => {
            let sl: Vec<Slice> = params["ranges"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    Slice::new(
                        r[0].as_i64().unwrap() as isize,
                        Some(r[1].as_i64().unwrap() as isize),
                        1,
                    )
                })
                .collect();
            x.slice(&sl)
        }
        "index_select" => x.index_select(
            norm(iparam(params, "axis"), nd),
            &usizes(&params["indices"]),
        ),
        "where" => V::select(&where_mask(params), x, &xs[1]),
        "matmul" => x.matmul(&xs[1]),
        "outer" => nabla::outer(x, &xs[1]),
        other => panic!("fixture op {other} has no dispatch"),
    }
}

/// VJP by calling the primitives' rule functions directly (no tape), for
/// the ops that are primitives. `None` for composite ops.
pub fn direct_vjp<V: ArrayValue>(
    op: &str,
    params: &Json,
    xs: &[V],
    y: &V,
    ct: &V,
) -> Option<Vec<V>> {
    use primitives::{binary as b, index as ix, linalg as la, reduce as r, shape as s, unary as u};
    let x = &xs[0];
    let nd = x.shape_vec().len();
    let xs_shape = x.shape_vec();
    let axes = || axes_param(params).unwrap_or_else(|| all_axes(nd));
    macro_rules! un {
        ($m:ident) => {
            Some(vec![u::$m::vjp(x, y, ct)])
        };
    }
    macro_rules! bin {
        ($m:ident) => {
            Some(vec![
                b::$m::vjp_0(x, &xs[1], y, ct),
                b::$m::vjp_1(x, &xs[1], y, ct),
            ])
        };
    }
    Some(match op {
        "neg" => un!(neg)?,
        "exp" => un!(exp)?,
        "log" => un!(log)?,
        "sin" => un!(sin)?,
        "cos" => un!(cos)?,
        "tan" => un!(tan)?,
        "tanh" => un!(tanh)?,
        "sigmoid" => un!(sigmoid)?,
        "relu" => un!(relu)?,
        "sqrt" => un!(sqrt)?,
        "rsqrt" => un!(rsqrt)?,
        "abs" => un!(abs)?,
        "square" => un!(square)?,
        "reciprocal" => un!(reciprocal)?,
        "log1p" => un!(log1p)?,
        "expm1" => un!(expm1)?,
        "erf" => un!(erf)?,
        "powi" => vec![u::powi::vjp(x, y, params["n"].as_i64().unwrap() as i32, ct)],
        "powf" => vec![u::powf::vjp(x, y, params["p"].as_f64().unwrap(), ct)],
        "clip" => vec![u::clip::vjp(
            x,
            y,
            params["min"].as_f64().unwrap(),
            params["max"].as_f64().unwrap(),
            ct,
        )],
        "add" => bin!(add)?,
        "sub" => bin!(sub)?,
        "mul" => bin!(mul)?,
        "div" => bin!(div)?,
        "pow" => bin!(pow)?,
        "maximum" => bin!(maximum)?,
        "minimum" => bin!(minimum)?,
        "atan2" => bin!(atan2)?,
        "sum" => vec![r::sum::vjp(&xs_shape, &axes(), keepdim(params), ct)],
        "max" => vec![r::max::vjp(x, y, &axes(), keepdim(params), ct)],
        "min" => vec![r::min::vjp(x, y, &axes(), keepdim(params), ct)],
        "prod" => vec![r::prod::vjp(x, y, &axes(), keepdim(params), ct)],
        "cumsum" => vec![r::cumsum::vjp(norm(iparam(params, "axis"), nd), false, ct)],
        "reshape" => vec![s::reshape::vjp(&xs_shape, ct)],
        "permute" => vec![s::permute::vjp(&usizes(&params["perm"]), ct)],
        "transpose" => vec![s::permute::vjp(&[1, 0], ct)],
        "broadcast_to" => vec![s::broadcast_to::vjp(&xs_shape, ct)],
        "slice" => {
            let sl: Vec<Slice> = params["ranges"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    Slice::new(
                        r[0].as_i64().unwrap() as isize,
                        Some(r[1].as_i64().unwrap() as isize),
                        1,
                    )
                })
                .collect();
            vec![s::slice::vjp(&xs_shape, &sl, ct)]
        }
        "concat" => {
            let ax = norm(iparam(params, "axis"), nd);
            let sizes: Vec<usize> = xs.iter().map(|p| p.shape_vec()[ax]).collect();
            (0..xs.len())
                .map(|i| s::concat::vjp(&sizes, ax, i, ct))
                .collect()
        }
        "index_select" => {
            let ax = norm(iparam(params, "axis"), nd);
            vec![ix::index_select::vjp(
                &xs_shape,
                ax,
                &usizes(&params["indices"]),
                ct,
            )]
        }
        "where" => {
            let m = where_mask(params);
            vec![
                ix::select::vjp_0(&m, &xs_shape, ct),
                ix::select::vjp_1(&m, &xs[1].shape_vec(), ct),
            ]
        }
        "matmul" if nd >= 2 && xs[1].shape_vec().len() >= 2 => {
            vec![
                la::matmul::vjp_0(x, &xs[1], ct),
                la::matmul::vjp_1(x, &xs[1], ct),
            ]
        }
        _ => return None,
    })
}

/// Seeds `xs` as duals with tangents `ts`.
pub fn duals(xs: &[Array], ts: &[Array]) -> Vec<Dual<Array>> {
    xs.iter()
        .zip(ts)
        .map(|(x, t)| Dual::new(x.clone(), Some(t.clone())))
        .collect()
}

/// The tape's VJP of `op` at `xs` for cotangent `ct`.
pub fn tape_vjp(op: &str, params: &Json, xs: &[Array], ct: &Array) -> (Array, Vec<Array>) {
    let leaves: Vec<Array> = xs.iter().map(|x| x.clone().requires_grad()).collect();
    let y = apply(op, params, &leaves);
    (&y * ct).sum().backward();
    let grads = leaves
        .iter()
        .map(|l| l.try_grad().unwrap_or_else(|| l.zeros_like()))
        .collect();
    (y.detach(), grads)
}

/// Central finite difference of `Σ f(xs)·ct` w.r.t. every element of input `i`.
pub fn fd_grad(
    f: &dyn Fn(&[Array]) -> Array,
    xs: &[Array],
    ct: &Array,
    i: usize,
    eps: f64,
) -> Array {
    let base = xs[i].to_vec::<f64>();
    let mut g = vec![0.0; base.len()];
    let obj = |v: &[f64]| {
        let mut ys = xs.to_vec();
        ys[i] = Array::from_vec(v.to_vec(), xs[i].shape());
        (&f(&ys) * ct).sum().item()
    };
    for k in 0..base.len() {
        let mut p = base.clone();
        p[k] += eps;
        let fp = obj(&p);
        p[k] -= 2.0 * eps;
        let fm = obj(&p);
        g[k] = (fp - fm) / (2.0 * eps);
    }
    Array::from_vec(g, xs[i].shape())
}

/// The unary and binary elementwise ops of `jax_reference_more.json`
/// (every case), which [`apply_more`] applies.
pub const MORE_ELEMENTWISE: &[&str] = &[
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

pub fn more_slope(p: &Json) -> f64 {
    p["negative_slope"].as_f64().unwrap()
}

/// The op on any value type, as the methods of `Value` spell it.
pub fn apply_more<V: Value>(op: &str, p: &Json, xs: &[V]) -> V {
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
        "leaky_relu" => x.leaky_relu(more_slope(p)),
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

/// PyTorch's tiny GPT (`tests/fixtures/torch/`): the model with PyTorch's
/// weights, the fixture's token ids and targets, and PyTorch's loss.
pub fn torch_gpt() -> (nabla::nn::models::Gpt, Array, Array, f64) {
    let file = |name: &str| fixture_path(&format!("torch/{name}"));
    let j: Json =
        serde_json::from_str(&std::fs::read_to_string(file("torch_gpt_tiny.json")).unwrap())
            .unwrap();
    let c = &j["config"];
    let u = |k: &str| c[k].as_u64().unwrap() as usize;
    let cfg = nabla::nn::models::GptConfig {
        vocab: u("vocab"),
        context: u("context"),
        layers: u("layers"),
        heads: u("heads"),
        embd: u("embd"),
    };
    let ids = |k: &str| {
        let rows = j[k].as_array().unwrap();
        let v: Vec<i64> = rows
            .iter()
            .flat_map(|r| r.as_array().unwrap().iter().map(|x| x.as_i64().unwrap()))
            .collect();
        Array::from_vec(v, &[rows.len(), rows[0].as_array().unwrap().len()])
    };
    let mut gpt = nabla::nn::models::Gpt::new(&cfg, Key::new(0));
    nabla::io::load(&mut gpt, file("torch_gpt_tiny.safetensors")).unwrap();
    (gpt, ids("idx"), ids("targets"), j["loss"].as_f64().unwrap())
}

/// PyTorch's outputs for [`torch_gpt`]: logits, gradients (`grad.<name>`)
/// and optimizer steps.
pub fn torch_gpt_expected() -> std::collections::BTreeMap<String, Array> {
    nabla::io::load_file(fixture_path("torch/torch_gpt_tiny_expected.safetensors")).unwrap()
}
