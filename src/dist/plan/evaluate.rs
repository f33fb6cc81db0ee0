//! A plan's exact cost: the layouts the runtime reaches, node by node in
//! program order, when each op moves its operands to what
//! [`Rule::targets`](super::super::factors::Rule::targets) asks for under
//! the planned assignment. The pairwise model the solver works on agrees
//! with this wherever at most one operand of an op can hold a pending
//! sum; [`Eval::refine`] then moves single nodes on this exact cost.

use super::super::factors::Assignment;
use super::super::graph::Graph;
use super::super::layout::Layout;
use super::cost::Pricer;
use super::solve::below;
use std::collections::BTreeSet;

/// The layouts and costs of one assignment per node.
pub(crate) struct Eval {
    /// Each node's output layout.
    pub outs: Vec<Layout>,
    /// Each node's compute, incoming moves, gather (outputs) and memory
    /// penalty, in seconds.
    cost: Vec<f64>,
    /// How many times each node is an output.
    outputs: Vec<usize>,
    users: Vec<Vec<(usize, usize)>>,
}

impl Eval {
    /// Runs `assign` through `g`.
    pub fn new(
        g: &Graph,
        pr: &mut Pricer,
        assign: &[Assignment],
        weight: &[f64],
        lambda: f64,
    ) -> Eval {
        let outputs = g.gathers();
        let mut e = Eval {
            outs: Vec::with_capacity(g.nodes.len()),
            cost: Vec::with_capacity(g.nodes.len()),
            outputs,
            users: g.users(),
        };
        for (v, a) in assign.iter().enumerate() {
            let (out, c) = e.node(g, pr, v, a, weight[v] * lambda);
            e.outs.push(out);
            e.cost.push(c);
        }
        e
    }

    /// The modelled seconds plus the memory penalty.
    pub fn total(&self) -> f64 {
        self.cost.iter().sum()
    }

    /// Bytes one rank sends under `assign` (which this evaluated): every
    /// op's incoming moves and the gathers of the outputs.
    pub fn bytes(&self, g: &Graph, pr: &mut Pricer, assign: &[Assignment]) -> u64 {
        let mut sent = 0;
        for (v, node) in g.nodes.iter().enumerate() {
            let from: Vec<&Layout> = node.operands.iter().map(|&u| &self.outs[u]).collect();
            let (targets, _) = node.rule.targets(&assign[v], &from);
            for (k, &u) in node.operands.iter().enumerate() {
                let (f, t) = (pr.layout(from[k]), pr.layout(&targets[k]));
                let s = pr.shape(&g.nodes[u].rule.out, g.nodes[u].elem);
                sent += pr.reshard(f, t, s).1;
            }
        }
        for &o in &g.outputs {
            let n = &g.nodes[o];
            let f = pr.layout(&self.outs[o]);
            let r = pr.layout(&Layout::replicated(n.rule.out.len()));
            let s = pr.shape(&n.rule.out, n.elem);
            sent += pr.reshard(f, r, s).1;
        }
        sent
    }

    /// Node `v` under `a`, its operands as they are now: its output layout
    /// and its cost.
    fn node(
        &self,
        g: &Graph,
        pr: &mut Pricer,
        v: usize,
        a: &Assignment,
        penalty: f64,
    ) -> (Layout, f64) {
        let node = &g.nodes[v];
        let rule = &node.rule;
        let from: Vec<&Layout> = node.operands.iter().map(|&u| &self.outs[u]).collect();
        let (targets, out) = rule.targets(a, &from);
        let mut c = pr.compute(rule, a);
        for (k, &u) in node.operands.iter().enumerate() {
            let f = pr.layout(from[k]);
            let t = pr.layout(&targets[k]);
            let s = pr.shape(&g.nodes[u].rule.out, g.nodes[u].elem);
            c += pr.reshard(f, t, s).0;
        }
        let numel: usize = out.local_shape(&rule.out, pr.mesh).iter().product();
        c += penalty * (numel * node.elem) as f64;
        if self.outputs[v] > 0 {
            let o = pr.layout(&out);
            let r = pr.layout(&Layout::replicated(rule.out.len()));
            let s = pr.shape(&rule.out, node.elem);
            c += self.outputs[v] as f64 * pr.reshard(o, r, s).0;
        }
        (out, c)
    }

    /// Iterated conditional modes on the exact cost: each node in turn
    /// takes the candidate assignment that lowers the total most, the
    /// layouts downstream of it following, for at most `sweeps` passes.
    #[allow(clippy::too_many_arguments)]
    pub fn refine(
        &mut self,
        g: &Graph,
        pr: &mut Pricer,
        assign: &mut [Assignment],
        cands: &[&[Assignment]],
        weight: &[f64],
        lambda: f64,
        sweeps: usize,
    ) {
        for _ in 0..sweeps {
            let mut changed = false;
            let eps = -1e-12 * self.total().abs();
            for v in 0..g.nodes.len() {
                let mut best = (below(0.0), None);
                for (i, a) in cands[v].iter().enumerate() {
                    if *a == assign[v] {
                        continue;
                    }
                    let (delta, log) = self.change(g, pr, assign, v, a.clone(), weight, lambda);
                    self.undo(assign, log);
                    if delta < best.0 && delta < eps {
                        best = (delta, Some(i));
                    }
                }
                if let Some(i) = best.1 {
                    self.change(g, pr, assign, v, cands[v][i].clone(), weight, lambda);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// Gives `v` assignment `a` and updates what follows from it: the
    /// change in the total, and what to put back to undo it.
    #[allow(clippy::too_many_arguments)]
    fn change(
        &mut self,
        g: &Graph,
        pr: &mut Pricer,
        assign: &mut [Assignment],
        v: usize,
        a: Assignment,
        weight: &[f64],
        lambda: f64,
    ) -> (f64, Vec<(usize, Assignment, Layout, f64)>) {
        let mut log = Vec::new();
        let mut delta = 0.0;
        let mut todo = BTreeSet::from([v]);
        let mut first = Some(a);
        while let Some(w) = todo.pop_first() {
            let aw = if w == v {
                first.take().unwrap_or_else(|| assign[w].clone())
            } else {
                assign[w].clone()
            };
            let (out, c) = self.node(g, pr, w, &aw, weight[w] * lambda);
            let grew = out != self.outs[w];
            let old_a = std::mem::replace(&mut assign[w], aw);
            let old_out = std::mem::replace(&mut self.outs[w], out);
            delta += c - self.cost[w];
            let old_c = std::mem::replace(&mut self.cost[w], c);
            log.push((w, old_a, old_out, old_c));
            if grew {
                todo.extend(self.users[w].iter().map(|&(u, _)| u));
            }
        }
        (delta, log)
    }

    fn undo(&mut self, assign: &mut [Assignment], log: Vec<(usize, Assignment, Layout, f64)>) {
        for (w, a, out, c) in log.into_iter().rev() {
            assign[w] = a;
            self.outs[w] = out;
            self.cost[w] = c;
        }
    }
}
