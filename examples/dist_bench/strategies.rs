//! The `mlp_step` on every rank eight ways, alternated round by round:
//! `dist::auto` (the planner lays out the whole step; global arrays in,
//! global gradients out), `auto(..).sharded()` (the same planner on
//! parameters, data and optimizer state kept in the layouts
//! `Planner::training_step` chooses, and in Megatron's layout) against the hand-written steps — `DataParallel`
//! (each rank's shard, the gradients' mean), `Zero1` (the same with the
//! optimizer's work split), tensor-parallel (`spmd` with Megatron's
//! layout: `w1` by columns, `w2` by rows, the batch whole) and
//! data-parallel through `spmd` — with medians, bytes sent and ratios.

use super::{Mlp, loss, median, mlp_step_data, time};
use nabla::dist::{self, Comm, CostModel, DataParallel, Mesh, Plan, Reduce, Spec, Zero1};
use nabla::optim::{Optimizer, Sgd};
use nabla::prelude::*;

type Step<'a> = Box<dyn FnMut() + 'a>;

/// `loss` again, as a function of its own: `dist::auto` keeps one set of
/// settings per function, and this one plans with the measured model.
#[differentiable]
fn loss_measured(p: &Mlp, x: &Array, y: &Array) -> Array {
    loss(p, x, y)
}

/// A cost model measured here: each rank's arithmetic rate on the whole
/// step (the planner's own FLOP count of the step over its time, every
/// rank at once, as in the run), the bandwidth of a 4 MB all-reduce and
/// the latency of a one-element one (least of several), rank 0's on every
/// rank.
fn measured_model(p: &Mlp, x: &Array, y: &Array) -> CostModel {
    let least = |v: Vec<f64>| v.into_iter().fold(f64::INFINITY, f64::min);
    let one = Plan::for_mesh(&[("x", 1)]).function(value_and_grad(loss), (p, x, y));
    let flops = one.compute_s() * CostModel::default().flops_per_s;
    let step = least(time(5, || {
        value_and_grad(loss)(p, x, y);
    }));
    let n = dist::world_size();
    let big = Array::ones(&[1 << 20], DType::F32);
    let t_big = least(time(5, || {
        dist::all_reduce(&big, Reduce::Sum, Comm::world());
    }));
    let small = Array::ones(&[1], DType::F32);
    let t_small = least(time(20, || {
        dist::all_reduce(&small, Reduce::Sum, Comm::world());
    }));
    let sent = 2.0 * (4 << 20) as f64 * (n - 1) as f64 / n as f64;
    // Rank 0's figures on every rank: ranks that plan with different
    // models make different plans, and their collectives would not meet.
    let mine = Array::from_vec(
        vec![flops / step, sent / (t_big - t_small).max(1e-9), t_small],
        &[3],
    );
    let v = dist::broadcast(&mine, 0, Comm::world()).to_vec::<f64>();
    CostModel::uniform(v[0], v[1], v[2])
}

pub fn run() {
    let (rank, n) = (dist::rank(), dist::world_size());
    let (p0, x, y) = mlp_step_data();
    let dp = DataParallel::new(Comm::world());
    let p0 = dp.sync(&p0);
    let (xs, ys) = (dp.shard(&x), dp.shard(&y));
    let mesh = Mesh::new(&[("x", n)]);
    let opt = Sgd::new(0.01);
    let lay = |a: &Array, s: Spec| dist::distribute(a, &mesh, &s);
    let whole = |a: &Array| lay(a, Spec::replicated(a.ndim()));
    let rows = |a: &Array| lay(a, Spec::new(&[Some("x"), None]));

    let (mut p_dp, mut p_zero, mut p_auto) = (p0.clone(), p0.clone(), p0.clone());
    let mut s_dp = opt.init(&p_dp);
    let mut s_auto = opt.init(&p_auto);
    let mut zero = Zero1::new(DataParallel::new(Comm::world()), Sgd::new(0.01), &p_zero);
    let megatron = |name: &str, s: &[usize]| match name {
        "w1" => Spec::new(&[None, Some("x")]),
        "b1" => Spec::new(&[Some("x")]),
        "w2" => Spec::new(&[Some("x"), None]),
        _ => Spec::replicated(s.len()),
    };
    let mut p_tp = dist::distribute_tree(&p0, &mesh, megatron);
    let mut s_tp = opt.init(&p_tp);
    let (x_tp, y_tp) = (whole(&x), whole(&y));
    let mut p_sdp = dist::distribute_tree(&p0, &mesh, |_, s| Spec::replicated(s.len()));
    let mut s_sdp = opt.init(&p_sdp);
    let (x_sdp, y_sdp) = (rows(&x), rows(&y));
    let f = dist::spmd(loss, &mesh);
    let auto_step = dist::auto(loss, &mesh);
    let model = measured_model(&p0, &x, &y);
    let auto_measured = dist::auto(loss_measured, &mesh).cost_model(model.clone());
    let mut p_am = p0.clone();
    let mut s_am = opt.init(&p_am);
    // `auto` on sharded arguments: the parameters, data and optimizer
    // state stay in the layouts the planner chooses for a training step
    // that keeps them.
    let specs = Plan::for_mesh(&[("x", n)])
        .training_step(loss, (&p0, &x, &y))
        .input_specs();
    let mut leaf = 0;
    let mut p_sh = dist::distribute_tree(&p0, &mesh, |_, _| {
        leaf += 1;
        specs[leaf - 1].clone()
    });
    let (x_sh, y_sh) = (
        lay(&x, specs[leaf].clone()),
        lay(&y, specs[leaf + 1].clone()),
    );
    let mut s_sh = opt.init(&p_sh);
    // The same function as `auto_step` (its settings and plans are
    // shared; a wrapper function calling `loss` would run 20% slower).
    let sharded = auto_step.sharded();
    let mut p_shm = dist::distribute_tree(&p0, &mesh, megatron);
    let mut s_shm = opt.init(&p_shm);

    let mut steps: Vec<(&str, Step)> = vec![
        (
            "auto",
            Box::new(|| {
                let (_, g) = value_and_grad(auto_step)(&p_auto, &x, &y);
                opt.update(&mut p_auto, &g, &mut s_auto);
            }),
        ),
        (
            "auto (measured model)",
            Box::new(|| {
                let (_, g) = value_and_grad(auto_measured)(&p_am, &x, &y);
                opt.update(&mut p_am, &g, &mut s_am);
            }),
        ),
        (
            "auto (sharded: Megatron)",
            Box::new(|| {
                let (_, g) = value_and_grad(sharded)(&p_shm, &x_tp, &y_tp);
                opt.update(&mut p_shm, &g, &mut s_shm);
            }),
        ),
        (
            "auto (sharded)",
            Box::new(|| {
                let (_, g) = value_and_grad(sharded)(&p_sh, &x_sh, &y_sh);
                opt.update(&mut p_sh, &g, &mut s_sh);
            }),
        ),
        (
            "DataParallel",
            Box::new(|| {
                let g = dp.mean(&grad(loss)(&p_dp, &xs, &ys));
                opt.update(&mut p_dp, &g, &mut s_dp);
            }),
        ),
        (
            "Zero1",
            Box::new(|| {
                let g = grad(loss)(&p_zero, &xs, &ys);
                zero.update(&mut p_zero, &g);
            }),
        ),
        (
            "TP (spmd: Megatron)",
            Box::new(|| {
                let g = grad(f)(&p_tp, &x_tp, &y_tp);
                opt.update(&mut p_tp, &g, &mut s_tp);
            }),
        ),
        (
            "DP (spmd)",
            Box::new(|| {
                let g = grad(f)(&p_sdp, &x_sdp, &y_sdp);
                opt.update(&mut p_sdp, &g, &mut s_sdp);
            }),
        ),
    ];
    // `DIST_BENCH_ONLY=auto,Zero1` keeps some (for profiling one).
    if let Ok(only) = std::env::var("DIST_BENCH_ONLY") {
        steps.retain(|(name, _)| only.split(',').any(|o| o == *name));
    }
    let rounds: usize = std::env::var("DIST_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(30);
    let mut times = vec![Vec::new(); steps.len()];
    let mut bytes = vec![0u64; steps.len()];
    for round in 0..rounds + 2 {
        for (k, (_, step)) in steps.iter_mut().enumerate() {
            let before = dist::bytes_sent();
            let t = time(1, &mut *step);
            bytes[k] = dist::bytes_sent() - before;
            if round >= 2 {
                times[k].extend(t);
            }
        }
    }
    let names: Vec<&str> = steps.iter().map(|s| s.0).collect();
    drop(steps);

    // Every strategy that ran took the same SGD steps from the same start
    // as one process on the whole batch.
    let mut want = p0.clone();
    let mut s_want = opt.init(&want);
    for _ in 0..rounds + 2 {
        let g = grad(loss)(&want, &x, &y);
        opt.update(&mut want, &g, &mut s_want);
    }
    let got: Vec<(&str, Mlp)> = vec![
        ("auto", p_auto),
        ("auto (measured model)", p_am),
        ("auto (sharded)", p_sh.to_global()),
        ("auto (sharded: Megatron)", p_shm.to_global()),
        ("DataParallel", p_dp),
        ("Zero1", p_zero),
        ("TP (spmd: Megatron)", p_tp.to_global()),
        ("DP (spmd)", p_sdp.to_global()),
    ];
    let want = nabla::tree::leaves(&want);
    for (what, p) in got.iter().filter(|(w, _)| names.contains(w)) {
        for (k, (g, w)) in nabla::tree::leaves(p).iter().zip(&want).enumerate() {
            let diff = (g - w).abs().max().item();
            assert!(
                diff <= 1e-4,
                "{what}: parameter {k} differs from one process's by {diff}"
            );
        }
    }

    if rank == 0 {
        let least: Vec<f64> = times
            .iter()
            .map(|t| t.iter().copied().fold(f64::INFINITY, f64::min))
            .collect();
        let med: Vec<f64> = times.into_iter().map(median).collect();
        println!(
            "mlp_step on {n} ranks, strategies (median of {rounds}, alternated; RAYON_NUM_THREADS per rank)"
        );
        let auto = names.iter().position(|&s| s == "auto");
        for (k, name) in names.iter().enumerate() {
            let sent = if bytes[k] > 0 {
                format!("{:8.3} MB sent", bytes[k] as f64 / 1e6)
            } else {
                "   (not counted)".to_string()
            };
            let ratio = auto.map_or(String::new(), |a| {
                format!("  auto / this {:.3}", med[a] / med[k])
            });
            println!(
                "  {name:<20} {:7.2} ms (least {:7.2}) {sent}{ratio}",
                med[k] * 1e3,
                least[k] * 1e3
            );
        }
        let hand = (0..names.len()).filter(|&k| !names[k].starts_with("auto"));
        let Some(best) = hand.min_by(|&i, &j| med[i].total_cmp(&med[j])) else {
            return;
        };
        for (k, name) in names.iter().enumerate() {
            if name.starts_with("auto") {
                println!(
                    "  {name} / best hand-written ({}) {:.3}",
                    names[best],
                    med[k] / med[best]
                );
            }
        }
        if names.contains(&"auto") {
            println!("auto's plan (default cost model):\n{}", auto_step.plan());
        }
        if names.contains(&"auto (sharded)") {
            println!("auto (sharded)'s plan:\n{}", sharded.plan());
        }
        if names.contains(&"auto (measured model)") {
            println!(
                "measured model: {:.1} GFLOP/s, {:.2} GB/s, {:.1} µs a collective",
                model.flops_per_s / 1e9,
                model.bandwidth(0) / 1e9,
                model.latency_s * 1e6
            );
            println!("auto's plan (measured model):\n{}", auto_measured.plan());
        }
    }
}
