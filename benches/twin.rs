//! Timing binary for the PyTorch comparison (`benches/compare/run.sh`).
//!
//! Not a criterion bench: it times each workload of `BENCHMARKS.md` with
//! the same protocol as `benches/compare/torch_twin.py` (warm-up, then
//! many timed repetitions of one call each) and prints one JSON object on
//! stdout, so the script can put both frameworks side by side.
//!
//! Run: `cargo bench --bench twin` (environment: `TWIN_WARMUP_S`,
//! default 1; `TWIN_MEASURE_S`, default 3, per workload; `TWIN_ONLY`, a
//! comma-separated list of workloads to run, default all).

mod common;
#[path = "common/nn.rs"]
mod nn_workloads;
#[path = "common/compose.rs"]
mod workloads;

use serde_json::{Value as Json, json};
use std::hint::black_box;
use std::time::{Duration, Instant};

fn env_secs(name: &str, default: f64) -> Duration {
    let s = std::env::var(name)
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(default);
    Duration::from_secs_f64(s)
}

/// Warm up for `warmup` (at least 3 calls), then time single calls until
/// `measure` has passed and at least 20 were taken (at most 5000).
/// Returns summary statistics in milliseconds.
fn measure(mut f: impl FnMut(), warmup: Duration, measure: Duration) -> Json {
    let start = Instant::now();
    let mut n = 0;
    while n < 3 || start.elapsed() < warmup {
        f();
        n += 1;
    }
    let mut times = Vec::new();
    let start = Instant::now();
    while times.len() < 20 || (start.elapsed() < measure && times.len() < 5000) {
        let t = Instant::now();
        f();
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    let q = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
    json!({
        "median_ms": q(0.5),
        "p10_ms": q(0.1),
        "p90_ms": q(0.9),
        "min_ms": times[0],
        "reps": times.len(),
    })
}

fn main() {
    let warmup = env_secs("TWIN_WARMUP_S", 1.0);
    let meas = env_secs("TWIN_MEASURE_S", 3.0);
    let only = std::env::var("TWIN_ONLY").unwrap_or_default();
    let wanted = |name: &str| only.is_empty() || only.split(',').any(|w| w.trim() == name);
    let mut results = serde_json::Map::new();

    if wanted("gemm") {
        let (a, b) = common::gemm_inputs();
        let r = measure(
            || {
                black_box(black_box(&a).matmul(black_box(&b)));
            },
            warmup,
            meas,
        );
        results.insert("gemm".into(), r);
    }

    let (a, b) = common::eltwise_inputs();
    if wanted("eltwise_add") {
        let r = measure(
            || {
                black_box(black_box(&a) + black_box(&b));
            },
            warmup,
            meas,
        );
        results.insert("eltwise_add".into(), r);
    }
    if wanted("eltwise_tanh") {
        let r = measure(
            || {
                black_box(black_box(&a).tanh());
            },
            warmup,
            meas,
        );
        results.insert("eltwise_tanh".into(), r);
    }
    drop((a, b));

    if wanted("mlp_step") {
        let mut mlp = common::Mlp::new();
        let r = measure(
            || {
                black_box(mlp.step());
            },
            warmup,
            meas,
        );
        results.insert("mlp_step".into(), r);
    }

    // Composable transforms (`benches/compare/jax_compose_twin.py`).
    if wanted("mlp_fn") {
        let (mut p, x, y) = workloads::mlp_fn_state();
        let mut s = nabla::optim::Optimizer::init(&workloads::mlp_fn_opt(), &p);
        let r = measure(
            || drop(black_box(workloads::mlp_fn_step(&mut p, &mut s, &x, &y))),
            warmup,
            meas,
        );
        results.insert("mlp_fn".into(), r);
    }
    if wanted("seed_hessian") {
        let x = workloads::seed_input();
        let h = nabla::jacfwd(nabla::jacrev(nabla::vmap(workloads::foo)));
        let r = measure(|| drop(black_box(h(black_box(&x)))), warmup, meas);
        results.insert("seed_hessian".into(), r);
    }
    if wanted("rosen_hessian") {
        let x = workloads::rosen_input();
        let h = nabla::hessian(workloads::rosenbrock);
        let r = measure(|| drop(black_box(h(black_box(&x)))), warmup, meas);
        results.insert("rosen_hessian".into(), r);
    }
    // Fusion (`TWIN=fusion`): Rosenbrock 1e6 f64 and the elementwise loss
    // on 4M f32, fused and unfused, against the same JAX `jit`.
    if [
        "rosen_grad",
        "rosen_grad_unfused",
        "rosen_fwd",
        "rosen_jvp",
        "rosen_jvp_unfused",
    ]
    .iter()
    .any(|w| wanted(w))
    {
        let x = workloads::rosen_big_input();
        // Forward mode: a tangent of the same shape (fused: one pass over
        // dual blocks; unfused: op by op on `Dual<Array>`).
        let t = nabla::Array::ones(x.shape(), nabla::DType::F64);
        if wanted("rosen_jvp") {
            let f = nabla::jvp(workloads::rosenbrock);
            let r = measure(|| drop(black_box(f((black_box(&x),), (&t,)))), warmup, meas);
            results.insert("rosen_jvp".into(), r);
        }
        if wanted("rosen_jvp_unfused") {
            let f = nabla::jvp(workloads::rosenbrock_unfused);
            let r = measure(|| drop(black_box(f((black_box(&x),), (&t,)))), warmup, meas);
            results.insert("rosen_jvp_unfused".into(), r);
        }
        if wanted("rosen_grad") {
            let g = nabla::grad(workloads::rosenbrock);
            let r = measure(|| drop(black_box(g(black_box(&x)))), warmup, meas);
            results.insert("rosen_grad".into(), r);
        }
        if wanted("rosen_grad_unfused") {
            let g = nabla::grad(workloads::rosenbrock_unfused);
            let r = measure(|| drop(black_box(g(black_box(&x)))), warmup, meas);
            results.insert("rosen_grad_unfused".into(), r);
        }
        if wanted("rosen_fwd") {
            // The forward program every transform runs (fused).
            let r = measure(
                || {
                    drop(black_box(workloads::rosenbrock::forward::<nabla::Array>(
                        black_box(&x),
                    )))
                },
                warmup,
                meas,
            );
            results.insert("rosen_fwd".into(), r);
        }
    }
    if wanted("eltwise_loss") || wanted("eltwise_loss_unfused") {
        let (x, y) = workloads::eltwise_inputs();
        if wanted("eltwise_loss") {
            let g = nabla::grad!(workloads::eltwise_loss, argnums = (0, 1));
            let r = measure(|| drop(black_box(g(black_box(&x), &y))), warmup, meas);
            results.insert("eltwise_loss".into(), r);
        }
        if wanted("eltwise_loss_unfused") {
            let g = nabla::grad!(workloads::eltwise_loss_unfused, argnums = (0, 1));
            let r = measure(|| drop(black_box(g(black_box(&x), &y))), warmup, meas);
            results.insert("eltwise_loss_unfused".into(), r);
        }
    }
    if wanted("per_example") {
        let [w1, b1, w2, b2, xs, ys] = workloads::per_example_inputs();
        let pe = nabla::vmap!(
            nabla::grad!(workloads::example_loss),
            in_axes = (None, None, None, None, 0, 0)
        );
        let r = measure(
            || {
                drop(black_box(pe(
                    black_box(&w1),
                    &b1,
                    &w2,
                    &b2,
                    black_box(&xs),
                    &ys,
                )))
            },
            warmup,
            meas,
        );
        results.insert("per_example".into(), r);
    }

    // Neural networks (`TWIN=nn`, `TWIN=nn_jax`).
    if wanted("gpt_step") {
        let mut g = nn_workloads::GptStep::new();
        let r = measure(|| _ = black_box(g.step()), warmup, meas);
        results.insert("gpt_step".into(), r);
    }
    if wanted("gpt_step_fn") {
        let mut g = nn_workloads::GptStepFn::new();
        let r = measure(|| _ = black_box(g.step()), warmup, meas);
        results.insert("gpt_step_fn".into(), r);
    }
    if wanted("conv2d") {
        let mut c = nn_workloads::ConvStep::new();
        let r = measure(|| c.step(), warmup, meas);
        results.insert("conv2d".into(), r);
    }

    let out = json!({
        "framework": "nabla",
        "threads": rayon_threads(),
        "results": results,
    });
    println!("{out}");
}

/// Threads the runtime uses (rayon's global pool: all cores by default).
fn rayon_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
