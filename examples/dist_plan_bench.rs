//! The planner's benchmark (no MPI: plans for meshes this machine is not):
//! for a training step (`value_and_grad`) of the `mlp_step` MLP
//! (784→512→512→10, batch 256) and of a 12-layer GPT on embedded inputs
//! and one-hot targets, at mesh sizes 2 to 64 as a 1-D mesh and as 2-D
//! `data × model` meshes, the plan's modelled communication and time
//! against hand layouts, each planned with its inputs fixed
//! ([`Planner::fix_inputs`]; the planner lays out the intermediates):
//!
//! - DP: the batch split over every mesh axis, parameters replicated;
//! - TP: Megatron over every mesh axis (the first linear of each pair
//!   split by output features, the second by input features), the batch
//!   whole;
//! - DP×TP (2-D meshes): the batch over `data`, Megatron over `model`.
//!
//! It also prints the planning time (recording the program from shapes
//! plus solving), the time `dist::auto` spends once per shape.
//!
//! Each table is printed for two cost models: the planner's default (CPU
//! ranks of one thread, where arithmetic dominates) and accelerators
//! (100 TFLOP/s, 100 GB/s, 10 µs), where communication decides.
//!
//! Run: `cargo run --release --example dist_plan_bench` (`-- mlp`,
//! `-- gpt`, `-- cpu` or `-- gpu` for some, `-- 16` for the meshes of 16
//! ranks only).

use nabla::dist::{CostModel, Plan, Planner, Spec};
use nabla::nn::models::{Gpt, GptConfig};
use nabla::prelude::*;
use std::time::Instant;

#[derive(Clone, Tree)]
struct Mlp {
    w1: Array,
    b1: Array,
    w2: Array,
    b2: Array,
    w3: Array,
    b3: Array,
}

#[differentiable]
fn mlp_loss(p: &Mlp, x: &Array, y: &Array) -> Array {
    let h = (x.matmul(&p.w1) + &p.b1).tanh();
    let h = (h.matmul(&p.w2) + &p.b2).tanh();
    nabla::mse_loss(&(h.matmul(&p.w3) + &p.b3), y)
}

/// The GPT from embedded inputs `x` `[B, T, C]` to the mean cross-entropy
/// against one-hot targets `y` `[B·T, vocab]` (token ids would be a static
/// argument, which the planner's recording does not take).
#[differentiable]
fn gpt_loss(model: &Gpt, x: &Array, y: &Array) -> Array {
    let mut h = x.clone();
    for i in 0..model.blocks.len() {
        h = model.blocks[i].forward(&h);
    }
    let logits = model.lm_head.forward(&model.ln_f.forward(&h));
    let v = logits.shape()[2];
    let n = logits.numel() / v;
    let lp = nabla::log_softmax(&logits.reshape(&[n, v]), -1);
    (&lp * y).sum() * (-1.0 / n as f64)
}

/// Builds a workload.
type Make = fn() -> Workload;

/// How Megatron lays out a parameter: split by output features, by input
/// features, or whole.
#[derive(Clone, Copy, PartialEq)]
enum Split {
    Columns,
    Rows,
    Whole,
}

/// A program to plan: its argument leaves (name, shape, Megatron's split,
/// whether the batch is its leading axis) and a planning call.
struct Workload {
    title: String,
    leaves: Vec<(String, Vec<usize>, Split, bool)>,
    plan: Box<dyn Fn(Planner) -> Plan>,
}

/// A parameter's Megatron split over `axes`: `out_axis` is the axis of
/// output features of a weight (0 for `nn::Linear`'s `[out, in]`, 1 for
/// the MLP's `[in, out]`).
fn megatron(shape: &[usize], split: Split, out_axis: usize, axes: &[&str]) -> Spec {
    let mut dims: Vec<&[&str]> = vec![&[]; shape.len()];
    match (split, shape.len()) {
        (Split::Columns, 1) => dims[0] = axes,
        (Split::Columns, 2) => dims[out_axis] = axes,
        (Split::Rows, 2) => dims[1 - out_axis] = axes,
        _ => {}
    }
    Spec::split(&dims)
}

fn mlp() -> Workload {
    let init = |i: usize, o: usize| Array::zeros(&[i, o], DType::F32);
    let p = Mlp {
        w1: init(784, 512),
        b1: Array::zeros(&[512], DType::F32),
        w2: init(512, 512),
        b2: Array::zeros(&[512], DType::F32),
        w3: init(512, 10),
        b3: Array::zeros(&[10], DType::F32),
    };
    let (x, y) = (
        Array::zeros(&[256, 784], DType::F32),
        Array::zeros(&[256, 10], DType::F32),
    );
    let split = |name: &str| match name {
        "w1" | "b1" => Split::Columns,
        "w2" => Split::Rows,
        _ => Split::Whole,
    };
    let mut leaves: Vec<_> = nabla::tree::named_leaves(&p)
        .into_iter()
        .map(|(n, a)| (n.clone(), a.shape().to_vec(), split(&n), false))
        .collect();
    leaves.push(("x".into(), x.shape().to_vec(), Split::Whole, true));
    leaves.push(("y".into(), y.shape().to_vec(), Split::Whole, true));
    let args = (p, x, y);
    Workload {
        title: "MLP 784→512→512→10, batch 256, f32".into(),
        leaves,
        plan: Box::new(move |pl| {
            pl.function(nabla::value_and_grad(mlp_loss), (&args.0, &args.1, &args.2))
        }),
    }
}

fn gpt() -> Workload {
    let cfg = GptConfig {
        vocab: 4096,
        context: 128,
        embd: 768,
        heads: 12,
        layers: 12,
    };
    let batch = 64;
    let model = Gpt::new(&cfg, Key::new(0));
    let x = Array::zeros(&[batch, cfg.context, cfg.embd], DType::F32);
    let y = Array::zeros(&[batch * cfg.context, cfg.vocab], DType::F32);
    let split = |name: &str| {
        if name.contains("attn.qkv") || name.contains("mlp.fc") {
            Split::Columns
        } else if name.contains("attn.proj.weight") || name.contains("mlp.proj.weight") {
            Split::Rows
        } else {
            Split::Whole
        }
    };
    let mut leaves: Vec<_> = nabla::tree::named_leaves(&model)
        .into_iter()
        .map(|(n, a)| (n.clone(), a.shape().to_vec(), split(&n), false))
        .collect();
    leaves.push(("x".into(), x.shape().to_vec(), Split::Whole, true));
    leaves.push(("y".into(), y.shape().to_vec(), Split::Whole, true));
    let args = (model, x, y);
    Workload {
        title: format!(
            "GPT {} layers, C {}, {} heads, T {}, batch {batch}, vocab {}, f32",
            cfg.layers, cfg.embd, cfg.heads, cfg.context, cfg.vocab
        ),
        leaves,
        plan: Box::new(move |pl| {
            pl.function(nabla::value_and_grad(gpt_loss), (&args.0, &args.1, &args.2))
        }),
    }
}

/// The input specs of a hand layout: the batch over `data`, Megatron over
/// `model`.
fn hand(w: &Workload, out_axis: usize, data: &[&str], model: &[&str]) -> Vec<Option<Spec>> {
    w.leaves
        .iter()
        .map(|(_, shape, split, batch)| {
            Some(if *batch {
                let mut dims: Vec<&[&str]> = vec![&[]; shape.len()];
                dims[0] = data;
                Spec::split(&dims)
            } else {
                megatron(shape, *split, out_axis, model)
            })
        })
        .collect()
}

/// The plan, or `None` where a layout does not divide the shapes.
fn try_plan(w: &Workload, planner: Planner) -> Option<Plan> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let plan = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (w.plan)(planner))).ok();
    std::panic::set_hook(hook);
    plan
}

fn cell(p: &Option<Plan>) -> String {
    match p {
        Some(p) => format!(
            "{:7.2} {:7.2} {:8.2}",
            p.comm_s() * 1e3,
            p.bytes_per_call() as f64 / 1e6,
            p.time_s() * 1e3
        ),
        None => format!("{:>24}", "(does not divide)"),
    }
}

fn bench(w: &Workload, out_axis: usize, (model_name, model): (&str, &CostModel), sizes: &[usize]) {
    println!(
        "\n{}: value_and_grad, cost model {model_name} ({:.0} GFLOP/s, {:.0} GB/s, {:.0} µs a collective)",
        w.title,
        model.flops_per_s / 1e9,
        model.bandwidth(0) / 1e9,
        model.latency_s * 1e6
    );
    // Recording alone: a plan for one rank has one strategy per op.
    let t = Instant::now();
    (w.plan)(Plan::for_mesh(&[("x", 1)]));
    println!(
        "  recording the program (a plan for one rank): {:.3} s",
        t.elapsed().as_secs_f64()
    );
    println!(
        "  each layout: comm ms, MB sent per rank, time ms (modelled); plan s: recording + solving"
    );
    println!(
        "  {:<16}| {:^24} | {:^24} | {:^24} | {:^24} | {:>6} {:>6} {:>6}",
        "mesh", "planner", "DP", "TP (Megatron)", "DP×TP", "comm/", "time/", "plan"
    );
    println!(
        "  {:<16}| {:^24} | {:^24} | {:^24} | {:^24} | {:>6} {:>6} {:>6}",
        "", "", "", "", "", "best", "best", "s"
    );
    for n in sizes.iter().copied() {
        let mut meshes: Vec<Vec<(&str, usize)>> = vec![vec![("x", n)]];
        for m in [2usize, 4, 8] {
            if m < n {
                meshes.push(vec![("data", n / m), ("model", m)]);
            }
        }
        for axes in meshes {
            let names: Vec<&str> = axes.iter().map(|a| a.0).collect();
            let planner = Plan::for_mesh(&axes).cost_model(model.clone());
            let t = Instant::now();
            let auto = (w.plan)(planner.clone());
            let secs = t.elapsed().as_secs_f64();
            let fixed = |data: &[&str], model: &[&str]| {
                try_plan(
                    w,
                    planner.clone().fix_inputs(&hand(w, out_axis, data, model)),
                )
            };
            let dp = fixed(&names, &[]);
            let tp = fixed(&[], &names);
            let dptp = if names.len() == 2 {
                fixed(&names[..1], &names[1..])
            } else {
                None
            };
            let hands: Vec<&Plan> = [&dp, &tp, &dptp].into_iter().flatten().collect();
            let best_comm = hands
                .iter()
                .map(|p| p.comm_s())
                .fold(f64::INFINITY, f64::min);
            let best_time = hands
                .iter()
                .map(|p| p.time_s())
                .fold(f64::INFINITY, f64::min);
            let mesh = axes
                .iter()
                .map(|(a, s)| format!("{a} {s}"))
                .collect::<Vec<_>>()
                .join("×");
            println!(
                "  {mesh:<16}| {} | {} | {} | {} | {:6.3} {:6.3} {secs:6.3}",
                cell(&Some(auto.clone())),
                cell(&dp),
                cell(&tp),
                if names.len() == 2 {
                    cell(&dptp)
                } else {
                    format!("{:>24}", "")
                },
                auto.comm_s() / best_comm,
                auto.time_s() / best_time,
            );
        }
    }
}

fn main() {
    // `dist_plan_bench [mlp|gpt] [cpu|gpu] [SIZE…]`: both of each and
    // every mesh size by default.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut sizes: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    if sizes.is_empty() {
        sizes = vec![2, 4, 8, 16, 32, 64];
    }
    let want = |s: &str, all: &[&str]| {
        !args.iter().any(|a| all.contains(&a.as_str())) || args.iter().any(|a| a == s)
    };
    let models = [
        // The planner's default: CPU ranks of one thread.
        ("cpu", CostModel::default()),
        // Accelerators whose arithmetic outruns their links: communication
        // decides.
        ("gpu", CostModel::uniform(1e14, 1e11, 1e-5)),
    ];
    // Each workload with the axis of output features of its weights.
    let workloads: [(&str, Make, usize); 2] = [("mlp", mlp, 1), ("gpt", gpt, 0)];
    for (name, make, out_axis) in workloads {
        if !want(name, &["mlp", "gpt"]) {
            continue;
        }
        let w = make();
        for (m, model) in &models {
            if want(m, &["cpu", "gpu"]) {
                bench(&w, out_axis, (m, model), &sizes);
            }
        }
    }
}
