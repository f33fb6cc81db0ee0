//! The search against the single start it replaced, against hand
//! layouts and against brute force (no MPI).

use super::super::factors::Assignment;
use super::super::graph::Graph;
use super::super::layout::MeshShape;
use super::super::rules;
use super::cost::Pricer;
use super::evaluate::Eval;
use super::models::{Builder, mlp_graph};
use super::solve::Model;
use super::tests::brute_force;
use super::*;

/// The exact time of the old solver's plan: both programmes and
/// conditional modes, one start.
fn one_start(g: &Graph, mesh: &MeshShape, cm: &CostModel) -> f64 {
    let mut pr = Pricer::new(mesh, cm);
    let weight = vec![0.0; g.nodes.len()];
    let model = Model::build(g, &mut pr, &weight);
    let choice = model.start(0.0, &[]);
    let assign: Vec<Assignment> = (0..choice.len())
        .map(|v| model.nodes[v].states[choice[v]].a.clone())
        .collect();
    Eval::new(g, &mut pr, &assign, &weight, 0.0).total()
}

/// Data parallelism and Megatron for `mlp_graph`'s leaves (batch, then
/// each layer's weight and bias), over the mesh axes `data` and `model`.
fn hand(layers: usize, data: &[&str], model: &[&str]) -> Vec<Option<Spec>> {
    let mut specs = vec![Some(Spec::split(&[data, &[]]))];
    for l in 0..layers {
        let (w, b) = if l + 1 == layers && l % 2 == 0 {
            (Spec::replicated(2), Spec::replicated(1))
        } else if l % 2 == 0 {
            (Spec::split(&[&[], model]), Spec::split(&[model]))
        } else {
            (Spec::split(&[model, &[]]), Spec::replicated(1))
        };
        specs.push(Some(w));
        specs.push(Some(b));
    }
    specs
}

#[test]
fn the_search_beats_one_start_and_every_hand_layout() {
    // A small MLP step where the single start (both programmes and
    // conditional modes) is several percent slower than the search's plan.
    let g = mlp_graph(32, &[32, 128, 32], 4);
    let cm = CostModel::default();
    for axes in [&[("x", 4)][..], &[("data", 4), ("model", 2)]] {
        let mesh = MeshShape::new(axes);
        let names: Vec<&str> = axes.iter().map(|a| a.0).collect();
        let planner = Plan::for_mesh(axes).cost_model(cm.clone());
        let plan = planner.graph(&g);
        let old = one_start(&g, &mesh, &cm);
        assert!(
            plan.time_s() < old * 0.99,
            "{mesh}: search {} s, one start {old} s",
            plan.time_s()
        );
        let mut hands = vec![hand(2, &names, &[]), hand(2, &[], &names)];
        if names.len() == 2 {
            hands.push(hand(2, &names[..1], &names[1..]));
        }
        for h in hands {
            let fixed = planner.clone().fix_inputs(&h).graph(&g);
            assert!(
                plan.time_s() <= fixed.time_s() * (1.0 + 1e-9),
                "{mesh}: search {} s, hand layout {} s\n{fixed}",
                plan.time_s(),
                fixed.time_s()
            );
        }
    }
}

#[test]
fn the_plan_equals_brute_force_on_a_graph_with_shared_values() {
    // z feeds both operands of the product and is an output too (three
    // users); five nodes keep brute force to seconds in a debug build.
    let mut b = Builder::default();
    let x = b.input(0, &[16, 12], 4);
    let w = b.input(1, &[12, 24], 4);
    let z = b.op(rules::matmul(&[16, 12], &[12, 24]), &[x, w], 4);
    let m = b.op(rules::binary("mul", &[16, 24], &[16, 24]), &[z, z], 4);
    let s = b.op(
        rules::reduce("sum_axes", &[16, 24], &[0, 1], false),
        &[m],
        4,
    );
    b.g.outputs = vec![s, z];
    let g = b.g;
    let mesh = MeshShape::new(&[("a", 2), ("b", 2)]);
    for cm in [
        CostModel::default(),
        CostModel::uniform(1e14, 1e11, 1e-5),
        CostModel {
            bandwidth: vec![1e8, 3e9],
            ..CostModel::uniform(1e8, 0.0, 1e-7)
        },
    ] {
        let plan = Plan::for_mesh(&[("a", 2), ("b", 2)])
            .cost_model(cm.clone())
            .graph(&g);
        let brute = brute_force(&g, &mesh, &cm);
        assert!(
            (plan.time_s() - brute).abs() <= 1e-9 * brute,
            "plan {} s vs brute force {brute} s\n{plan}",
            plan.time_s()
        );
    }
}
