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
//! interleaved ([`paired`]), which is robust to load from other processes,
//! and printed with its target; that is the figure to quote.
//!
//! Run: `cargo bench --bench macro` (~30 s; a filter such as `rosenbrock`
//! runs one group). See `docs/performance.md`, section "Macro (issue 3)".

mod common;
mod projectile;
mod sim_loop;

use criterion::Criterion;
use nabla::prelude::*;
use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

// ----- scalar_grad -----

/// A scalar function of three inputs with exactly 30 operations (numbered).
/// Every `ln` and `sqrt` argument is positive for all real inputs.
#[differentiable]
fn scalar30(x: f64, y: f64, z: f64) -> f64 {
    let a = x * y; // 1
    let b = a.sin(); // 2
    let c = z.cos(); // 3
    let d = b * c; // 4
    let e = x.powi(2); // 5
    let f = e + 1.0; // 6
    let g = f.ln(); // 7
    let h = y.exp(); // 8
    let i = h / f; // 9
    let j = g + i; // 10
    let k = z.tanh(); // 11
    let l = k * x; // 12
    let m = y * y; // 13
    let n = m + 2.0; // 14
    let o = n.sqrt(); // 15
    let p = l / o; // 16
    let q = d + p; // 17
    let r = j * q; // 18
    let s = z.powi(3); // 19
    let t = s - x; // 20
    let u = t.sin(); // 21
    let v = u * h; // 22
    let w = r - v; // 23
    let aa = x + z; // 24
    let bb = aa.exp(); // 25
    let cc = o * bb; // 26
    let dd = cc.ln(); // 27
    let ee = w + dd; // 28
    let ff = ee.tanh(); // 29
    ff * o // 30
}

/// The gradient of [`scalar30`] written by hand: the same forward sweep with
/// named intermediates, then the adjoints (`*_b`) in reverse order.
#[inline(never)]
fn scalar30_grad_by_hand(x: f64, y: f64, z: f64) -> (f64, f64, f64) {
    let a = x * y;
    let b = a.sin();
    let c = z.cos();
    let d = b * c;
    let e = x.powi(2);
    let f = e + 1.0;
    let g = f.ln();
    let h = y.exp();
    let i = h / f;
    let j = g + i;
    let k = z.tanh();
    let l = k * x;
    let m = y * y;
    let n = m + 2.0;
    let o = n.sqrt();
    let p = l / o;
    let q = d + p;
    let r = j * q;
    let s = z.powi(3);
    let t = s - x;
    let u = t.sin();
    let v = u * h;
    let w = r - v;
    let aa = x + z;
    let bb = aa.exp();
    let cc = o * bb;
    let dd = cc.ln();
    let ee = w + dd;
    let ff = ee.tanh();
    // 30: out = ff * o
    let ff_b = o;
    let mut o_b = ff;
    // 29: ff = tanh(ee)
    let ee_b = ff_b * (1.0 - ff * ff);
    // 28: ee = w + dd
    let w_b = ee_b;
    let dd_b = ee_b;
    // 27: dd = ln(cc)
    let cc_b = dd_b / cc;
    // 26: cc = o * bb
    o_b += cc_b * bb;
    let bb_b = cc_b * o;
    // 25: bb = exp(aa)
    let aa_b = bb_b * bb;
    // 24: aa = x + z
    let mut x_b = aa_b;
    let mut z_b = aa_b;
    // 23: w = r - v
    let r_b = w_b;
    let v_b = -w_b;
    // 22: v = u * h
    let u_b = v_b * h;
    let mut h_b = v_b * u;
    // 21: u = sin(t)
    let t_b = u_b * t.cos();
    // 20: t = s - x
    let s_b = t_b;
    x_b -= t_b;
    // 19: s = z^3
    z_b += s_b * 3.0 * z * z;
    // 18: r = j * q
    let j_b = r_b * q;
    let q_b = r_b * j;
    // 17: q = d + p
    let d_b = q_b;
    let p_b = q_b;
    // 16: p = l / o
    let l_b = p_b / o;
    o_b -= p_b * p / o;
    // 15: o = sqrt(n)
    let n_b = o_b * 0.5 / o;
    // 14: n = m + 2
    let m_b = n_b;
    // 13: m = y * y
    let mut y_b = m_b * 2.0 * y;
    // 12: l = k * x
    let k_b = l_b * x;
    x_b += l_b * k;
    // 11: k = tanh(z)
    z_b += k_b * (1.0 - k * k);
    // 10: j = g + i
    let g_b = j_b;
    let i_b = j_b;
    // 9: i = h / f
    h_b += i_b / f;
    let mut f_b = -i_b * i / f;
    // 8: h = exp(y)
    y_b += h_b * h;
    // 7: g = ln(f)
    f_b += g_b / f;
    // 6: f = e + 1
    let e_b = f_b;
    // 5: e = x^2
    x_b += e_b * 2.0 * x;
    // 4: d = b * c
    let b_b = d_b * c;
    let c_b = d_b * b;
    // 3: c = cos(z)
    z_b -= c_b * z.sin();
    // 2: b = sin(a)
    let a_b = b_b * a.cos();
    // 1: a = x * y
    x_b += a_b * y;
    y_b += a_b * x;
    (x_b, y_b, z_b)
}

const SCALAR_AT: (f64, f64, f64) = (0.7, 1.3, 0.4);

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

// ----- ratios -----

/// Rounds of the interleaved ratio measurement.
const ROUNDS: usize = 21;
/// Target length of one timed block of calls in a round.
const BLOCK: Duration = Duration::from_millis(20);

/// A ratio `num / den` within a group, its target (`None`: diagnostic) and
/// both measurements of it.
struct Row {
    group: &'static str,
    num: &'static str,
    den: &'static str,
    target: Option<f64>,
    paired: Paired,
}

/// Median and 10th/90th percentiles of the per-round ratios.
struct Paired {
    median: f64,
    p10: f64,
    p90: f64,
}

/// What the groups report, and when this run started.
struct Report {
    since: SystemTime,
    rows: Vec<Row>,
}

impl Report {
    /// Whether criterion measured `group/bench` in this run (not filtered
    /// out, not `--test`/`--list` mode).
    fn ran(&self, group: &str, bench: &str) -> bool {
        estimate_ns(group, bench, self.since).is_some()
    }

    /// Adds the ratio `num / den` measured by [`paired`], if criterion ran
    /// both benches in this run.
    fn ratio(
        &mut self,
        (group, num, den, target): (&'static str, &'static str, &'static str, Option<f64>),
        a: impl FnMut(),
        b: impl FnMut(),
    ) {
        if self.ran(group, num) && self.ran(group, den) {
            let paired = paired(a, b);
            self.rows.push(Row {
                group,
                num,
                den,
                target,
                paired,
            });
        }
    }
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

/// Times `a` against `b` interleaved: `ROUNDS` rounds, each timing a block
/// of calls of `a` and a block of calls of `b` (about `BLOCK` each, the
/// order alternating between rounds), and takes the ratio of the per-call
/// times within each round. Load from other processes on a shared machine
/// then hits both sides of a round alike, which sequential criterion groups
/// cannot guarantee.
fn paired(mut a: impl FnMut(), mut b: impl FnMut()) -> Paired {
    fn calls(f: &mut impl FnMut()) -> u32 {
        let t = std::time::Instant::now();
        f();
        let once = t.elapsed().max(Duration::from_nanos(1));
        (BLOCK.as_nanos() / once.as_nanos()).clamp(1, 10_000_000) as u32
    }
    fn block(f: &mut impl FnMut(), n: u32) -> f64 {
        let t = std::time::Instant::now();
        for _ in 0..n {
            f();
        }
        t.elapsed().as_secs_f64() / n as f64
    }
    let (na, nb) = (calls(&mut a), calls(&mut b));
    let mut ratios: Vec<f64> = (0..ROUNDS)
        .map(|r| {
            if r % 2 == 0 {
                let ta = block(&mut a, na);
                ta / block(&mut b, nb)
            } else {
                let tb = block(&mut b, nb);
                block(&mut a, na) / tb
            }
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let q = |p: f64| ratios[((ratios.len() - 1) as f64 * p).round() as usize];
    Paired {
        median: q(0.5),
        p10: q(0.1),
        p90: q(0.9),
    }
}

/// Criterion's output directory (as criterion chooses it under cargo).
fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
    target.join("criterion")
}

/// The median point estimate (ns) of `group/bench`, if criterion wrote it in
/// this run (estimates from earlier runs are ignored).
fn estimate_ns(group: &str, bench: &str, since: SystemTime) -> Option<f64> {
    let path = criterion_dir()
        .join(group)
        .join(bench)
        .join("new/estimates.json");
    let meta = std::fs::metadata(&path).ok()?;
    if meta.modified().ok()? < since {
        return None;
    }
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).ok()?).ok()?;
    json["median"]["point_estimate"].as_f64()
}

fn print_report(report: &Report) {
    if report.rows.is_empty() {
        return;
    }
    println!(
        "\nratios: criterion = quotient of the two median estimates; \
         paired = median [p10-p90] of {ROUNDS} interleaved rounds (the figure to quote)"
    );
    for row in &report.rows {
        let est = |b| estimate_ns(row.group, b, report.since).unwrap_or(f64::NAN);
        let p = &row.paired;
        let verdict = match row.target {
            Some(t) if p.median <= t => format!("target <= {t}x: met"),
            Some(t) => format!("target <= {t}x: NOT met"),
            None => "diagnostic".to_string(),
        };
        println!(
            "  {:<14} {:>26} / {:<18} criterion {:>5.2}x  paired {:>5.2}x [{:.2}-{:.2}]  {verdict}",
            row.group,
            row.num,
            row.den,
            est(row.num) / est(row.den),
            p.median,
            p.p10,
            p.p90,
        );
    }
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
