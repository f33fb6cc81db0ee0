//! Criterion benchmarks of `#[differentiable]` (issue 3): the `scalar_grad`,
//! `rosenbrock` and MLP-gradient workloads of `BENCHMARKS.md`, each against
//! the baseline its target is stated for.
//!
//! - `scalar_grad`: `grad!(f, argnums = (0, 1, 2))` of a 30-operation f64
//!   function of 3 inputs vs a hand-written reverse-mode gradient of the same
//!   function vs the function itself. Targets: ≤ 1.2× hand-written, ≤ 3×
//!   the function.
//! - `rosenbrock`: gradient through the macro vs the plain call (forward),
//!   x: 1e6 f64. Target: ≤ 3× forward.
//! - `mlp_loss_grad`: gradient of the MSE loss of the 784→512→512→10 tanh
//!   MLP (batch 256, f32) w.r.t. its 6 parameters, `grad!` vs the imperative
//!   tape (`requires_grad`, `backward`, `grad()`) on the same loss. Target:
//!   ≤ 1.1× tape.
//!
//! - `sim_loop`: gradient of a 10 000-step f64 damped-oscillator simulation
//!   (explicit Euler; `benches/sim_loop/`) vs the simulation itself and vs
//!   a hand-written adjoint; also the gradient with the binomial schedule
//!   (`#[nabla::checkpoint(snapshots = 20)]`). Targets: ≤ 3× the
//!   simulation, ≤ 1.5× hand-written. JAX twin:
//!   `benches/compare/jax_sim_loop_twin.py`.
//!
//! - `projectile`: gradient of the projectile example's miss distance
//!   (1 000 steps, f64 scalars) vs the forward; the JAX twin
//!   `benches/compare/jax_projectile_twin.py` gives the ≤ 1.0× JAX target.
//!
//! Diagnostics (no target): the tape's Rosenbrock gradient, and the MLP
//! gradient with the data behind `stop_gradient` (see `docs/performance.md`).
//!
//! Before timing, each group checks its gradients (scalar: macro vs
//! hand-written to 1e-12 relative, and both against central differences;
//! Rosenbrock: against the analytic gradient; MLP: macro vs tape). After
//! criterion, each ratio is measured once more with the two sides
//! interleaved (`ratios::paired`), which is robust to load from other processes,
//! and printed with its target; that is the figure to quote.
//!
//! Run: `cargo bench --bench macro` (~30 s; a filter such as `rosenbrock`
//! runs one group). See `docs/performance.md`, section "Macro (issue 3)".

mod common;
mod projectile;
mod ratios;
mod scalar_fn;
mod sim_loop;

use criterion::Criterion;
use nabla::prelude::*;
use ratios::{Report, print_report};
use scalar_fn::{SCALAR_AT, scalar30, scalar30_grad_by_hand};
use std::hint::black_box;
use std::time::{Duration, SystemTime};

// ----- scalar_grad -----

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * a.abs().max(b.abs()).max(1.0)
}

fn check_scalar() {
    let (x, y, z) = SCALAR_AT;
    let by_macro = nabla::grad!(scalar30, argnums = (0, 1, 2))(x, y, z);
    let by_hand = scalar30_grad_by_hand(x, y, z);
    let m = [by_macro.0, by_macro.1, by_macro.2];
    let h = [by_hand.0, by_hand.1, by_hand.2];
    // Independent check of both: central differences.
    let eps = 1e-6;
    let fd = [
        (scalar30(x + eps, y, z) - scalar30(x - eps, y, z)) / (2.0 * eps),
        (scalar30(x, y + eps, z) - scalar30(x, y - eps, z)) / (2.0 * eps),
        (scalar30(x, y, z + eps) - scalar30(x, y, z - eps)) / (2.0 * eps),
    ];
    for k in 0..3 {
        assert!(
            close(m[k], h[k], 1e-12),
            "scalar_grad: macro and hand-written gradients differ in input {k}: {} vs {}",
            m[k],
            h[k]
        );
        assert!(
            close(h[k], fd[k], 1e-6),
            "scalar_grad: hand-written gradient {} vs central difference {} in input {k}",
            h[k],
            fd[k]
        );
    }
}

fn scalar_grad(c: &mut Criterion, report: &mut Report) {
    check_scalar();
    let (x, y, z) = SCALAR_AT;
    let dfdxyz = nabla::grad!(scalar30, argnums = (0, 1, 2));
    let mut g = c.benchmark_group("scalar_grad");
    g.sample_size(30)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    g.bench_function("macro_grad", |b| {
        b.iter(|| dfdxyz(black_box(x), black_box(y), black_box(z)))
    });
    g.bench_function("hand_written_grad", |b| {
        b.iter(|| scalar30_grad_by_hand(black_box(x), black_box(y), black_box(z)))
    });
    g.bench_function("function", |b| {
        b.iter(|| scalar30(black_box(x), black_box(y), black_box(z)))
    });
    g.finish();
    let by_macro = || {
        black_box(dfdxyz(black_box(x), black_box(y), black_box(z)));
    };
    let by_hand = || {
        black_box(scalar30_grad_by_hand(
            black_box(x),
            black_box(y),
            black_box(z),
        ));
    };
    let function = || {
        black_box(scalar30(black_box(x), black_box(y), black_box(z)));
    };
    let group = "scalar_grad";
    report.ratio(
        (group, "macro_grad", "hand_written_grad", Some(1.2)),
        by_macro,
        by_hand,
    );
    report.ratio(
        (group, "macro_grad", "function", Some(3.0)),
        by_macro,
        function,
    );
}

// ----- rosenbrock -----

/// Length of the `rosenbrock` input (1e6 f64).
const ROSEN_N: usize = 1_000_000;

/// `sum(100 (x[1:] − x[:-1]²)² + (1 − x[:-1])²)`, as in `BENCHMARKS.md`.
#[differentiable]
fn rosenbrock(x: &Array) -> Array {
    let n = x.shape()[0];
    let head = x.slice_axis(0, 0..n - 1);
    let tail = x.slice_axis(0, 1..n);
    nabla::sum(&((tail - head.square()).square() * 100.0 + (1.0 - head).square()))
}

/// The analytic gradient, for the check only (not timed).
fn rosenbrock_grad_reference(x: &[f64]) -> Vec<f64> {
    let n = x.len();
    let mut g = vec![0.0; n];
    for i in 0..n - 1 {
        let r = x[i + 1] - x[i] * x[i];
        g[i] += -400.0 * x[i] * r - 2.0 * (1.0 - x[i]);
        g[i + 1] += 200.0 * r;
    }
    g
}

fn rosenbrock_bench(c: &mut Criterion, report: &mut Report) {
    nabla::manual_seed(4);
    let x = nabla::randn(&[ROSEN_N], DType::F64);
    let grad = nabla::grad(rosenbrock);
    {
        let got = grad(&x).to_vec::<f64>();
        let want = rosenbrock_grad_reference(&x.to_vec::<f64>());
        for (i, (a, b)) in got.iter().zip(&want).enumerate() {
            assert!(
                close(*a, *b, 1e-12),
                "rosenbrock: gradient {a} vs analytic {b} at {i}"
            );
        }
    }
    let mut g = c.benchmark_group("rosenbrock");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    g.bench_function("macro_grad_1e6_f64", |b| {
        b.iter(|| black_box(grad(black_box(&x))))
    });
    g.bench_function("forward_1e6_f64", |b| {
        b.iter(|| black_box(rosenbrock(black_box(&x))))
    });
    // Diagnostic: the imperative tape on the same function (same rules).
    let xt = x.clone().requires_grad();
    let tape_grad = || {
        rosenbrock(&xt).backward();
        let gx = xt.grad();
        xt.zero_grad();
        gx
    };
    g.bench_function("tape_grad_1e6_f64", |b| b.iter(|| black_box(tape_grad())));
    g.finish();
    let group = "rosenbrock";
    report.ratio(
        (group, "macro_grad_1e6_f64", "forward_1e6_f64", Some(3.0)),
        || drop(black_box(grad(black_box(&x)))),
        || drop(black_box(rosenbrock(black_box(&x)))),
    );
    report.ratio(
        (group, "tape_grad_1e6_f64", "forward_1e6_f64", None),
        || drop(black_box(tape_grad())),
        || drop(black_box(rosenbrock(black_box(&x)))),
    );
}

// ----- mlp_loss_grad -----

/// MSE loss of the `mlp_step` network (784→512→512→10, tanh).
#[differentiable]
#[allow(clippy::too_many_arguments)] // six parameters and the data
fn mlp_loss(
    w1: &Array,
    b1: &Array,
    w2: &Array,
    b2: &Array,
    w3: &Array,
    b3: &Array,
    x: &Array,
    y: &Array,
) -> Array {
    let h1 = (x.matmul(w1) + b1).tanh();
    let h2 = (h1.matmul(w2) + b2).tanh();
    let pred = h2.matmul(w3) + b3;
    nabla::mse_loss(&pred, y)
}

/// [`mlp_loss`] with the data passed through `stop_gradient`: the same
/// program, but `x` is inactive, so the reverse sweep skips the cotangent
/// `ct · w1ᵀ` of `x` (diagnostic: the difference to `macro_grad` is the cost
/// of cotangents that `argnums` did not ask for).
#[differentiable]
#[allow(clippy::too_many_arguments)] // six parameters and the data
fn mlp_loss_inactive_data(
    w1: &Array,
    b1: &Array,
    w2: &Array,
    b2: &Array,
    w3: &Array,
    b3: &Array,
    x: &Array,
    y: &Array,
) -> Array {
    let x = nabla::stop_gradient(x);
    let y = nabla::stop_gradient(y);
    let h1 = (x.matmul(w1) + b1).tanh();
    let h2 = (h1.matmul(w2) + b2).tanh();
    let pred = h2.matmul(w3) + b3;
    nabla::mse_loss(&pred, &y)
}

/// The tape's gradient of [`mlp_loss`] w.r.t. the six (leaf) parameters:
/// forward on the tape, `backward()`, read the gradients, clear them.
fn tape_grads(p: &[Array], x: &Array, y: &Array) -> Vec<Array> {
    let loss = mlp_loss(&p[0], &p[1], &p[2], &p[3], &p[4], &p[5], x, y);
    loss.backward();
    p.iter()
        .map(|p| {
            let g = p.grad();
            p.zero_grad();
            g
        })
        .collect()
}

fn mlp_loss_grad(c: &mut Criterion, report: &mut Report) {
    // The `mlp_step` data and parameters; `tape` requires grad, `plain` is a
    // detached copy (the macro's program needs no tape).
    let mlp = common::Mlp::new();
    let tape = mlp.params.clone();
    let plain: Vec<Array> = tape.iter().map(|p| p.detach()).collect();
    let (x, y) = (&mlp.x, &mlp.y);
    let grad = nabla::grad!(mlp_loss, argnums = (0, 1, 2, 3, 4, 5));
    let macro_grads = |p: &[Array]| grad(&p[0], &p[1], &p[2], &p[3], &p[4], &p[5], x, y);
    let grad_inactive = nabla::grad!(mlp_loss_inactive_data, argnums = (0, 1, 2, 3, 4, 5));
    let inactive_grads =
        |p: &[Array]| grad_inactive(&p[0], &p[1], &p[2], &p[3], &p[4], &p[5], x, y);
    {
        let (a, b, c, d, e, f) = macro_grads(&plain);
        let (a2, b2, c2, d2, e2, f2) = inactive_grads(&plain);
        let by_tape = tape_grads(&tape, x, y);
        let pairs = [a, b, c, d, e, f, a2, b2, c2, d2, e2, f2];
        for (k, (m, t)) in pairs.iter().zip(by_tape.iter().cycle()).enumerate() {
            let (m, t) = (m.to_vec::<f32>(), t.to_vec::<f32>());
            let scale = t.iter().fold(0f32, |s, v| s.max(v.abs()));
            let err = m
                .iter()
                .zip(&t)
                .fold(0f32, |s, (a, b)| s.max((a - b).abs()));
            assert!(
                err <= 1e-5 * scale.max(1e-30),
                "mlp_loss_grad: gradient {k}: macro and tape differ by {err} (scale {scale})"
            );
        }
    }
    let mut g = c.benchmark_group("mlp_loss_grad");
    g.sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    g.bench_function("macro_grad", |b| {
        b.iter(|| black_box(macro_grads(black_box(&plain))))
    });
    g.bench_function("tape_backward", |b| {
        b.iter(|| black_box(tape_grads(black_box(&tape), x, y)))
    });
    g.bench_function("macro_grad_inactive_data", |b| {
        b.iter(|| black_box(inactive_grads(black_box(&plain))))
    });
    g.finish();
    let group = "mlp_loss_grad";
    report.ratio(
        (group, "macro_grad", "tape_backward", Some(1.1)),
        || drop(black_box(macro_grads(black_box(&plain)))),
        || drop(black_box(tape_grads(black_box(&tape), x, y))),
    );
    report.ratio(
        (group, "macro_grad_inactive_data", "tape_backward", None),
        || drop(black_box(inactive_grads(black_box(&plain)))),
        || drop(black_box(tape_grads(black_box(&tape), x, y))),
    );
}

// ----- sim_loop -----

fn sim_loop_bench(c: &mut Criterion, report: &mut Report) {
    use sim_loop::{AT, sim, sim_adjoint_by_hand, sim_revolve};
    sim_loop::check();
    let (k, cd, x0) = AT;
    let grad = nabla::grad!(sim, argnums = (0, 1, 2));
    let grad_revolve = nabla::grad!(sim_revolve, argnums = (0, 1, 2));
    let mut g = c.benchmark_group("sim_loop");
    g.sample_size(30)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    g.bench_function("simulation", |b| {
        b.iter(|| sim(black_box(k), black_box(cd), black_box(x0)))
    });
    g.bench_function("macro_grad", |b| {
        b.iter(|| grad(black_box(k), black_box(cd), black_box(x0)))
    });
    g.bench_function("hand_adjoint", |b| {
        b.iter(|| sim_adjoint_by_hand(black_box(k), black_box(cd), black_box(x0)))
    });
    g.bench_function("macro_grad_snapshots_20", |b| {
        b.iter(|| grad_revolve(black_box(k), black_box(cd), black_box(x0)))
    });
    g.finish();
    let simulation = || {
        black_box(sim(black_box(k), black_box(cd), black_box(x0)));
    };
    let by_macro = || {
        black_box(grad(black_box(k), black_box(cd), black_box(x0)));
    };
    let by_hand = || {
        black_box(sim_adjoint_by_hand(
            black_box(k),
            black_box(cd),
            black_box(x0),
        ));
    };
    let revolve = || {
        black_box(grad_revolve(black_box(k), black_box(cd), black_box(x0)));
    };
    let group = "sim_loop";
    report.ratio(
        (group, "macro_grad", "simulation", Some(3.0)),
        by_macro,
        simulation,
    );
    report.ratio(
        (group, "macro_grad", "hand_adjoint", Some(1.5)),
        by_macro,
        by_hand,
    );
    report.ratio(
        (group, "macro_grad_snapshots_20", "simulation", None),
        revolve,
        simulation,
    );
    report.ratio(
        (group, "macro_grad_snapshots_20", "macro_grad", None),
        revolve,
        by_macro,
    );
}

// ----- projectile -----

fn projectile_bench(c: &mut Criterion, report: &mut Report) {
    use projectile::{AT, miss};
    projectile::check();
    let (s, a) = AT;
    let grad = nabla::grad!(miss, argnums = (0, 1));
    let mut g = c.benchmark_group("projectile");
    g.sample_size(30)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    g.bench_function("forward", |b| b.iter(|| miss(black_box(s), black_box(a))));
    g.bench_function("macro_grad", |b| {
        b.iter(|| grad(black_box(s), black_box(a)))
    });
    g.finish();
    report.ratio(
        ("projectile", "macro_grad", "forward", None),
        || {
            black_box(grad(black_box(s), black_box(a)));
        },
        || {
            black_box(miss(black_box(s), black_box(a)));
        },
    );
}

fn main() {
    let mut report = Report {
        since: SystemTime::now(),
        rows: Vec::new(),
    };
    let mut c = Criterion::default()
        .nresamples(20_000)
        .configure_from_args();
    scalar_grad(&mut c, &mut report);
    rosenbrock_bench(&mut c, &mut report);
    mlp_loss_grad(&mut c, &mut report);
    sim_loop_bench(&mut c, &mut report);
    projectile_bench(&mut c, &mut report);
    c.final_summary();
    print_report(&report);
}
