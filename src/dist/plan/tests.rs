//! The planner's checks, without MPI: the layouts it picks for models
//! whose best split is known, the dynamic programme against brute force,
//! its bytes against the runtime's formula, JSON, and the pipeline model.

use super::super::factors::{Assignment, Linearity, Rule};
use super::super::graph::Graph;
use super::super::layout::{Layout, MeshShape};
use super::super::moves::reshard_bytes;
use super::super::rules;
use super::cost::Pricer;
use super::evaluate::Eval;
use super::memory;
use super::models::{Builder, mlp_graph};
use super::solve::Model;
use super::*;

/// A training step of an MLP (forward and backward), f32.
fn mlp(batch: usize, widths: &[usize]) -> Graph {
    mlp_graph(batch, widths, 4)
}

/// The bytes the runtime sends running `plan` on `g`: each op's operands
/// moved to `Rule::targets` of its planned assignment, then the outputs
/// gathered, counted with `reshard_bytes`.
fn runtime_bytes(g: &Graph, plan: &Plan) -> u64 {
    let mesh = plan.mesh();
    let mut outs: Vec<Layout> = Vec::new();
    let mut total = 0;
    for (v, node) in g.nodes.iter().enumerate() {
        let from: Vec<&Layout> = node.operands.iter().map(|&u| &outs[u]).collect();
        let (targets, out) = node.rule.targets(plan.assignment(v), &from);
        for (k, &u) in node.operands.iter().enumerate() {
            let shape = &g.nodes[u].rule.out;
            total += reshard_bytes(from[k], &targets[k], shape, g.nodes[u].elem, mesh);
        }
        outs.push(out);
    }
    for &o in &g.outputs {
        let n = &g.nodes[o];
        total += reshard_bytes(
            &outs[o],
            &Layout::replicated(n.rule.out.len()),
            &n.rule.out,
            n.elem,
            mesh,
        );
    }
    total
}

#[test]
fn weights_over_the_memory_limit_are_split_over_the_model_axis() {
    let g = mlp(8, &[512, 2048, 512]);
    let planner = Plan::for_mesh(&[("model", 4)]);
    let free = planner.graph(&g);
    let limit = 6 << 20;
    // Replicated, the weights alone (2 · 4 MiB) exceed the limit.
    let weights: u64 = 2 * 512 * 2048 * 4;
    assert!(weights > limit);
    let plan = planner.clone().memory_limit(limit).graph(&g);
    assert!(plan.fits(), "{plan}");
    assert!(plan.memory_per_rank() <= limit);
    let specs = plan.input_specs();
    for w in [1, 3] {
        assert!(
            specs[w].dim(0).len() + specs[w].dim(1).len() == 1,
            "weight {w}: {}",
            specs[w]
        );
    }
    // Without the limit the planner may choose otherwise, never slower.
    assert!(free.time_s() <= plan.time_s() * (1.0 + 1e-12));
    assert_eq!(plan.bytes_per_call(), runtime_bytes(&g, &plan));
}

#[test]
fn no_plan_fits_a_tiny_limit_and_the_plan_says_so() {
    let g = mlp(8, &[64, 64]);
    let plan = Plan::for_mesh(&[("model", 2)]).memory_limit(64).graph(&g);
    assert!(!plan.fits());
    assert!(plan.to_string().contains("DOES NOT FIT"));
    let free = Plan::for_mesh(&[("model", 2)]).graph(&g);
    assert!(plan.memory_per_rank() <= free.memory_per_rank());
}

#[test]
fn a_wide_batch_and_a_small_model_are_data_parallel() {
    let g = mlp(4096, &[16, 32, 16]);
    let plan = Plan::for_mesh(&[("data", 4)]).graph(&g);
    let specs = plan.input_specs();
    assert_eq!(specs[0].to_string(), "[data, -]", "{plan}");
    for (i, s) in specs.iter().enumerate().skip(1) {
        assert!(s.is_replicated(), "parameter {i}: {s}\n{plan}");
    }
    // The only communication: the loss and gradients' all-reduce.
    let params = 16 * 32 + 32 + 32 * 16 + 16 + 1;
    assert_eq!(plan.bytes_per_call(), 2 * params * 4 * 3 / 4);
    assert_eq!(plan.bytes_per_call(), runtime_bytes(&g, &plan));
}

#[test]
fn predicted_bytes_are_what_the_runtime_moves() {
    for axes in [
        &[("data", 2), ("model", 2)][..],
        &[("a", 2), ("b", 3)],
        &[("x", 8)],
    ] {
        for (batch, widths) in [
            (48, &[24, 96, 24][..]),
            (6, &[480, 480]),
            (96, &[12, 12, 12, 12]),
        ] {
            let g = mlp(batch, widths);
            let plan = Plan::for_mesh(axes).graph(&g);
            assert_eq!(plan.bytes_per_call(), runtime_bytes(&g, &plan), "{plan}");
            for n in &plan.nodes {
                for (k, e) in n.edges.iter().enumerate() {
                    let u = &plan.nodes[n.operands[k]];
                    assert_eq!(
                        e.bytes,
                        reshard_bytes(&e.from, &e.to, &u.shape, u.elem, plan.mesh())
                    );
                }
            }
            assert!(plan.lower_bound_s() <= plan.time_s() * (1.0 + 1e-12));
            assert!((0.0..1.0).contains(&plan.gap()));
        }
    }
}

/// Every combination of the nodes' assignments, costed exactly.
pub(super) fn brute_force(g: &Graph, mesh: &MeshShape, cm: &CostModel) -> f64 {
    let mut pr = Pricer::new(mesh, cm);
    let weight = vec![0.0; g.nodes.len()];
    let options: Vec<Vec<Assignment>> = g.nodes.iter().map(|n| n.rule.assignments(mesh)).collect();
    let mut pick = vec![0usize; g.nodes.len()];
    let mut best = f64::INFINITY;
    loop {
        let assign: Vec<Assignment> = (0..pick.len())
            .map(|v| options[v][pick[v]].clone())
            .collect();
        best = best.min(Eval::new(g, &mut pr, &assign, &weight, 0.0).total());
        let mut v = 0;
        loop {
            if v == pick.len() {
                return best;
            }
            pick[v] += 1;
            if pick[v] < options[v].len() {
                break;
            }
            pick[v] = 0;
            v += 1;
        }
    }
}

#[test]
fn the_dynamic_programme_is_exact_on_a_chain() {
    // x·W, summed (a pending sum passes), scaled (one more). Brute force
    // over a 2 × 2 mesh grows with every op: four keep it to seconds.
    let mut b = Builder::default();
    let x = b.input(0, &[16, 12], 8);
    let w = b.input(1, &[12, 24], 8);
    let z = b.op(rules::matmul(&[16, 12], &[12, 24]), &[x, w], 8);
    let s = b.op(rules::reduce("sum_axes", &[16, 24], &[1], false), &[z], 8);
    let o = b.op(rules::unary("mul_scalar", &[16]), &[s], 8);
    b.g.outputs = vec![o];
    let g = b.g;
    let mesh = MeshShape::new(&[("a", 2), ("b", 2)]);
    for cm in [
        CostModel::default(),
        CostModel {
            bandwidth: vec![1e8, 3e9],
            ..CostModel::uniform(1e8, 0.0, 1e-7)
        },
        CostModel::uniform(1e12, 1e6, 1e-3),
    ] {
        let mut pr = Pricer::new(&mesh, &cm);
        let weight = vec![0.0; g.nodes.len()];
        let model = Model::build(&g, &mut pr, &weight);
        let choice = model.dp(0.0, &[]);
        let assign: Vec<Assignment> = (0..choice.len())
            .map(|v| model.nodes[v].states[choice[v]].a.clone())
            .collect();
        let exact = Eval::new(&g, &mut pr, &assign, &weight, 0.0).total();
        let brute = brute_force(&g, &mesh, &cm);
        assert!(
            (exact - brute).abs() <= 1e-12 * brute,
            "dp {exact} vs brute force {brute}"
        );
        assert!((model.objective(&choice, 0.0) - exact).abs() <= 1e-12 * exact);
        assert!(model.lower_bound(&mut pr, &g) <= brute * (1.0 + 1e-12));
    }
}

#[test]
fn pending_sums_add_up_before_they_are_reduced() {
    // Two products over a long contraction, added. Under the limit only
    // a split contraction fits without gathering x: the partial products
    // add locally and one all-reduce of the [4, 4] sum is all that moves.
    let mut b = Builder::default();
    let (k, e) = (4096, 8);
    let x = b.input(0, &[4, k], e);
    let w = b.input(1, &[k, 4], e);
    let v = b.input(2, &[k, 4], e);
    let p = b.op(rules::matmul(&[4, k], &[k, 4]), &[x, w], e);
    let q = b.op(rules::matmul(&[4, k], &[k, 4]), &[x, v], e);
    let s = b.op(
        Rule::elementwise("add", &[&[4, 4], &[4, 4]], &[4, 4], Linearity::Sum),
        &[p, q],
        e,
    );
    b.g.outputs = vec![s];
    let g = b.g;
    let plan = Plan::for_mesh(&[("k", 4)])
        .memory_limit(100 << 10)
        .graph(&g);
    assert!(plan.fits(), "{plan}");
    assert_eq!(plan.bytes_per_call(), 2 * 16 * 8 * 3 / 4, "{plan}");
    assert_eq!(plan.bytes_per_call(), runtime_bytes(&g, &plan));
}

#[test]
fn plans_round_trip_through_json() {
    let g = mlp(32, &[16, 64, 8]);
    let plan = Plan::for_mesh(&[("data", 2), ("model", 2)])
        .memory_limit(1 << 20)
        .graph(&g);
    let back = Plan::from_json(&plan.to_json()).unwrap();
    assert_eq!(back, plan);
    assert_eq!(back.to_string(), plan.to_string());
    let dir = std::env::temp_dir().join(format!("nabla_plan_json_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("plan.json");
    plan.save(&path).unwrap();
    assert_eq!(Plan::load(&path).unwrap(), plan);
    // A damaged file is an error naming the file and what is wrong.
    let mut v: serde_json::Value = serde_json::from_str(&plan.to_json()).unwrap();
    v["nodes"][5]["out"]["dims"][0] = serde_json::json!(["modle"]);
    std::fs::write(&path, v.to_string()).unwrap();
    let err = Plan::load(&path).unwrap_err().to_string();
    assert!(
        err.contains("plan.json: not a plan (node 5 names \"modle\""),
        "{err}"
    );
    std::fs::write(&path, "{").unwrap();
    assert!(matches!(
        Plan::load(&path),
        Err(PlanError::Format { path: Some(_), .. })
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_table_names_inputs_collectives_and_totals() {
    let plan = Plan::for_mesh(&[("data", 4)]).graph(&mlp(4096, &[16, 32, 16]));
    let text = plan.to_string();
    for want in [
        "plan for mesh(data: 4)",
        "input 0",
        "[data, -]",
        "all-reduce(data)",
        "gap",
    ] {
        assert!(text.contains(want), "{want:?} missing from\n{text}");
    }
}

#[test]
fn memory_counts_the_blocks_live_at_once() {
    let g = mlp(8, &[4, 4]);
    let life = memory::lifetimes(&g);
    // Inputs live throughout; the loss (an output) to the end.
    assert_eq!(life[0], (0, g.nodes.len() - 1));
    assert_eq!(life[g.outputs[0]].1, g.nodes.len() - 1);
    let ones = vec![1; g.nodes.len()];
    let peak = memory::peak(&g, &ones);
    assert!(peak >= 3 && peak <= g.nodes.len() as u64);
}

#[test]
fn balanced_stages_have_the_1f1b_bubble() {
    for (p, m) in [(2, 1), (2, 4), (2, 7), (3, 5), (4, 8), (4, 16), (8, 8)] {
        for (f, b) in [(1.0, 1.0), (1.0, 2.0), (0.5, 1.5)] {
            let s = pipeline_schedule(&vec![f; p], &vec![b; p], m);
            let want = (p - 1) as f64 / (m + p - 1) as f64;
            assert_eq!(s.bubble, want, "p {p}, m {m}, f {f}, b {b}");
            assert_eq!(s.time_s, (m + p - 1) as f64 * (f + b));
        }
    }
    let plan = PipelinePlan::new(&[1.0; 12], &[2.0; 12], 2, 6);
    assert_eq!(plan.stages, vec![0..6, 6..12]);
    assert_eq!(plan.schedule.bubble, 1.0 / 7.0);
}

#[test]
fn unbalanced_stages_idle_more() {
    for (p, m) in [(2, 4), (4, 8)] {
        let balanced = pipeline_schedule(&vec![2.0; p], &vec![4.0; p], m);
        let mut fwd = vec![2.0; p];
        let mut bwd = vec![4.0; p];
        fwd[p - 1] = 3.0;
        bwd[p - 1] = 6.0;
        let skewed = pipeline_schedule(&fwd, &bwd, m);
        assert!(skewed.bubble > balanced.bubble, "p {p}, m {m}");
    }
    // The split balances what it can.
    let costs = [5.0, 1.0, 1.0, 1.0, 1.0, 1.0, 4.0, 2.0];
    for p in 1..=costs.len() {
        let s = split_stages(&costs, p);
        let worst = s
            .iter()
            .map(|r| costs[r.clone()].iter().sum::<f64>())
            .fold(0.0, f64::max);
        assert_eq!(worst, best_split(&costs, p), "{p} stages");
        assert_eq!((s[0].start, s[p - 1].end), (0, costs.len()));
    }
}

/// The least largest stage over every way to cut `costs` into `p` runs.
fn best_split(costs: &[f64], p: usize) -> f64 {
    if p == 1 {
        return costs.iter().sum();
    }
    (1..=costs.len() - (p - 1))
        .map(|c| {
            costs[..c]
                .iter()
                .sum::<f64>()
                .max(best_split(&costs[c..], p - 1))
        })
        .fold(f64::INFINITY, f64::min)
}

/// Planning time of a large graph (run with `--release -- --ignored`).
#[test]
#[ignore]
fn planning_time_of_a_large_graph() {
    for axes in [
        &[("data", 8), ("model", 4)][..],
        &[("data", 4), ("model", 4), ("pipe", 2)],
    ] {
        let g = mlp(512, &[1024; 171]);
        let t = std::time::Instant::now();
        let plan = Plan::for_mesh(axes).graph(&g);
        let free = t.elapsed();
        let t = std::time::Instant::now();
        let limited = Plan::for_mesh(axes)
            .memory_limit(plan.memory_per_rank() / 2)
            .graph(&g);
        eprintln!(
            "{} nodes on {}: {:.3} s (gap {:.2}%), with a memory limit {:.3} s (fits: {})",
            g.nodes.len(),
            plan.mesh(),
            free.as_secs_f64(),
            100.0 * plan.gap(),
            t.elapsed().as_secs_f64(),
            limited.fits()
        );
    }
}

/// Where the planning time goes (run with `--release -- --ignored`).
#[test]
#[ignore]
fn planning_time_by_phase() {
    let g = mlp(512, &[1024; 171]);
    for axes in [
        &[("data", 8), ("model", 4)][..],
        &[("data", 4), ("model", 4), ("pipe", 2)],
    ] {
        let mesh = MeshShape::new(axes);
        let cm = CostModel::default();
        let weight = memory::weights(&g);
        let t = std::time::Instant::now();
        let mut pr = Pricer::new(&mesh, &cm);
        let model = Model::build(&g, &mut pr, &weight);
        let states: usize = model.nodes.iter().map(|n| n.states.len()).sum();
        let t_build = t.elapsed();
        let t = std::time::Instant::now();
        let _lb = model.lower_bound(&mut pr, &g);
        let t_lb = t.elapsed();
        let t = std::time::Instant::now();
        let mut choice = model.dp(0.0, &[]);
        let t_dp = t.elapsed();
        let t = std::time::Instant::now();
        model.improve(&mut choice, 0.0, &[]);
        let t_icm = t.elapsed();
        let mut assign: Vec<Assignment> = (0..choice.len())
            .map(|v| model.nodes[v].states[choice[v]].a.clone())
            .collect();
        let cands: Vec<&[Assignment]> = model.nodes.iter().map(|n| &n.assigns[..]).collect();
        let t = std::time::Instant::now();
        let mut ev = Eval::new(&g, &mut pr, &assign, &weight, 0.0);
        let before = ev.total();
        ev.refine(&g, &mut pr, &mut assign, &cands, &weight, 0.0, 2);
        let t_ref = t.elapsed();
        eprintln!(
            "{mesh}: {states} states; build {t_build:?}, bound {t_lb:?}, dp {t_dp:?}, icm {t_icm:?}, exact refine {t_ref:?} ({before} -> {})",
            ev.total()
        );
    }
}

#[test]
fn a_value_with_several_users_gets_one_layout_they_all_can_use() {
    // The last layer's output feeds the loss and the cotangent's shape;
    // the cotangent feeds both gradients. Fixing users one at a time
    // from the back splits them differently and pays an all-to-all; the
    // plan here reaches the lower bound: provably optimal.
    let g = mlp(1 << 16, &[4, 4]);
    let plan = Plan::for_mesh(&[("data", 2)]).graph(&g);
    assert!(plan.gap() < 1e-12, "{plan}");
    assert!(plan.bytes_per_call() < 100, "{plan}");
}

#[test]
fn fixed_inputs_keep_their_layout_and_cost_at_least_the_free_plan() {
    let g = mlp(4096, &[16, 32, 16]);
    let planner = Plan::for_mesh(&[("data", 2), ("model", 2)]);
    let free = planner.graph(&g);
    // Megatron over `model`, the batch whole: a worse layout for a wide
    // batch, which the plan must keep.
    let tp = vec![
        Some(Spec::replicated(2)),
        Some(Spec::new(&[None, Some("model")])),
        Some(Spec::new(&[Some("model")])),
        Some(Spec::new(&[Some("model"), None])),
    ];
    let plan = planner.clone().fix_inputs(&tp).graph(&g);
    for (i, s) in tp.iter().enumerate() {
        assert_eq!(
            Some(&plan.input_specs()[i]),
            s.as_ref(),
            "input {i}\n{plan}"
        );
    }
    assert_eq!(plan.bytes_per_call(), runtime_bytes(&g, &plan));
    assert!(
        plan.time_s() > free.time_s(),
        "free {} s vs Megatron {} s\n{plan}",
        free.time_s(),
        plan.time_s()
    );
    // Fixing inputs to the free plan's own layouts changes nothing.
    let own: Vec<Option<Spec>> = free.input_specs().into_iter().map(Some).collect();
    let again = planner.fix_inputs(&own).graph(&g);
    assert!((again.time_s() - free.time_s()).abs() <= 1e-9 * free.time_s());
}

#[test]
#[should_panic(expected = "Planner::fix_inputs (argument leaf 0)")]
fn a_fixed_input_that_does_not_divide_panics_naming_the_leaf() {
    let g = mlp(6, &[16, 32]);
    Plan::for_mesh(&[("data", 4)])
        .fix_inputs(&[Some(Spec::new(&[Some("data"), None]))])
        .graph(&g);
}

#[test]
#[should_panic(expected = "give at most one per leaf")]
fn more_fixed_inputs_than_leaves_panic() {
    let g = mlp(8, &[4, 4]);
    Plan::for_mesh(&[("data", 2)])
        .fix_inputs(&vec![None; 4])
        .graph(&g);
}
