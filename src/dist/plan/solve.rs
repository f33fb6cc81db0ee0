//! ALPA's intra-operator pass: one strategy per node, minimising the
//! nodes' compute time plus the resharding time along every edge.
//!
//! A node's strategies are its rule's assignments, each with every set of
//! pending sums it could carry through (its output layout depends on
//! both). An edge's cost depends only on the producer's output layout and
//! the consumer's strategy, so the problem is the pairwise one ALPA
//! writes as an integer program. It is solved by a dynamic programme in
//! program order (exact when every value has one user: chains and trees;
//! on a value with several users each user takes an equal share of its
//! cost), a backward pass that fixes each node given its users, and
//! iterated conditional modes until no single node's change helps; each
//! may be restricted to some states (`Allowed`), which the search of
//! several starts (`search.rs`) uses.

use super::super::factors::{Assignment, Linearity, Rule};
use super::super::graph::Graph;
use super::cost::Pricer;
use std::collections::HashMap;

/// An edge cost the runtime cannot produce (a carried sum the operand
/// does not hold).
const INF: f64 = f64::INFINITY;

/// The states a search may use: per node, a flag per state (an empty
/// list, or a node's empty list, allows every state).
pub(crate) type Allowed = [Vec<bool>];

/// One strategy of a node.
#[derive(Clone, Debug)]
pub(crate) struct State {
    pub a: Assignment,
    /// Seconds of compute on one rank.
    pub compute: f64,
    /// Bytes of the output's block on one rank.
    pub bytes: u64,
}

/// A node's strategies and the costs of its incoming edges.
pub(crate) struct NodeModel {
    pub states: Vec<State>,
    /// The distinct assignments among the states.
    pub assigns: Vec<Assignment>,
    /// Distinct output layouts, and each state's index among them.
    outs: Vec<u32>,
    out_ix: Vec<u16>,
    /// Per operand: each state's target index, and the target's layout
    /// without pending sums (for the lower bound).
    tgt_ix: Vec<Vec<u16>>,
    tgt_dims: Vec<Vec<u32>>,
    /// Per operand: `[producer's outs × targets]` seconds.
    edge: Vec<Vec<f64>>,
    /// Per distinct output layout: seconds to gather it to the caller
    /// (zero unless an output).
    gather: Vec<f64>,
    /// Per state: the memory penalty's weight times its bytes.
    mem: Vec<f64>,
}

/// The pairwise problem for one graph.
pub(crate) struct Model {
    pub nodes: Vec<NodeModel>,
    /// Per node, its users `(node, operand)`.
    uses: Vec<Vec<(usize, usize)>>,
    /// Per node, its operands.
    operands: Vec<Vec<usize>>,
}

fn used(a: &Assignment) -> u8 {
    a.iter().flatten().fold(0, |m, &x| m | 1 << x)
}

/// Every subset of `mask`, `mask` first.
fn subsets(mask: u8) -> impl Iterator<Item = u8> {
    let mut next = Some(mask);
    std::iter::from_fn(move || {
        let s = next?;
        next = if s == 0 { None } else { Some((s - 1) & mask) };
        Some(s)
    })
}

fn intern<K: std::hash::Hash + Eq>(map: &mut HashMap<K, u16>, k: K) -> u16 {
    let n = map.len() as u16;
    *map.entry(k).or_insert(n)
}

impl Model {
    /// The strategies and edge costs of `g`; `weight[v]` scales node `v`'s
    /// bytes in the memory penalty.
    #[cfg(test)]
    pub fn build(g: &Graph, pr: &mut Pricer, weight: &[f64]) -> Model {
        Model::build_fixed(g, pr, weight, &[])
    }

    /// As `build`, with node `v` held to `fixed[v]` where that is
    /// given (inputs laid out by the caller).
    pub fn build_fixed(
        g: &Graph,
        pr: &mut Pricer,
        weight: &[f64],
        fixed: &[Option<Assignment>],
    ) -> Model {
        let mesh = pr.mesh;
        let full: u8 = (0..mesh.len())
            .filter(|&m| mesh.size(m) > 1)
            .fold(0, |s, m| s | 1 << m);
        let n = g.nodes.len();
        let mut pp = vec![0u8; n]; // pending sums each node may carry
        let mut nodes: Vec<NodeModel> = Vec::with_capacity(n);
        let outputs = g.gathers();
        for (v, node) in g.nodes.iter().enumerate() {
            let rule = &node.rule;
            let ops = &node.operands;
            let pool = match rule.linear {
                Linearity::None | Linearity::Shape => 0,
                Linearity::Sum => ops.iter().fold(full, |c, &u| c & pp[u]),
                Linearity::Each(mask) => (0..ops.len())
                    .filter(|&k| mask & (1 << k) != 0)
                    .fold(0, |c, k| c | pp[ops[k]]),
            };
            pp[v] = pool | if rule.summed != 0 { full } else { 0 };
            let shape = pr.shape(&rule.out, node.elem);
            let mut states = Vec::new();
            let mut out_map = HashMap::new();
            let mut out_ix = Vec::new();
            let mut tgt_maps: Vec<HashMap<(u32, u8, u8), u16>> = vec![HashMap::new(); ops.len()];
            let mut tgt_ix = vec![Vec::new(); ops.len()];
            let options = match fixed.get(v) {
                Some(Some(a)) => vec![a.clone()],
                _ => rule.assignments(mesh),
            };
            for a in options {
                let free = !used(&a) & full;
                let compute = pr.compute(rule, &a);
                let dims: Vec<u32> = (0..ops.len())
                    .map(|k| pr.layout(&rule.operand_layout(k, &a)))
                    .collect();
                for c in subsets(pool & free) {
                    let out_l = rule.output_layout(&a, c);
                    let numel: usize = out_l.local_shape(&rule.out, mesh).iter().product();
                    let out = pr.layout(&out_l);
                    out_ix.push(intern(&mut out_map, out));
                    for k in 0..ops.len() {
                        // Only what `keep` reads of the carried and free
                        // axes tells targets apart.
                        let carries = match rule.linear {
                            Linearity::Sum => true,
                            Linearity::Each(mask) => mask & (1 << k) != 0,
                            _ => false,
                        };
                        let key = if carries {
                            (dims[k], c, free & pp[ops[k]])
                        } else {
                            (dims[k], 0, 0)
                        };
                        tgt_ix[k].push(intern(&mut tgt_maps[k], key));
                    }
                    states.push(State {
                        a: a.clone(),
                        compute,
                        bytes: (numel * node.elem) as u64,
                    });
                }
            }
            let mut outs = vec![0; out_map.len()];
            for (&l, &i) in &out_map {
                outs[i as usize] = l;
            }
            let repl = pr.layout(&super::super::layout::Layout::replicated(rule.out.len()));
            let gather = outs
                .iter()
                .map(|&l| outputs[v] as f64 * pr.reshard(l, repl, shape).0)
                .collect();
            let mut tgt_dims = Vec::with_capacity(ops.len());
            let mut edge = Vec::with_capacity(ops.len());
            for k in 0..ops.len() {
                let mut keys = vec![(0, 0, 0); tgt_maps[k].len()];
                for (&key, &i) in &tgt_maps[k] {
                    keys[i as usize] = key;
                }
                let u = ops[k];
                let only = ops.iter().enumerate().all(|(j, &w)| j == k || pp[w] == 0);
                let ushape = pr.shape(&g.nodes[u].rule.out, g.nodes[u].elem);
                let mut m = Vec::with_capacity(nodes[u].outs.len() * keys.len());
                for d in 0..nodes[u].outs.len() {
                    let from = nodes[u].outs[d];
                    let p = pr.get(from).partial;
                    for &(dims, c, free) in &keys {
                        m.push(match keep(rule, k, only, p, c, free) {
                            Some(kp) => {
                                let to = pr.with_partial(dims, kp);
                                pr.reshard(from, to, ushape).0
                            }
                            None => INF,
                        });
                    }
                }
                tgt_dims.push(keys.iter().map(|k| k.0).collect());
                edge.push(m);
            }
            let mem = states.iter().map(|s| weight[v] * s.bytes as f64).collect();
            let mut assigns: Vec<Assignment> = Vec::new();
            for s in &states {
                if assigns.last() != Some(&s.a) {
                    assigns.push(s.a.clone());
                }
            }
            nodes.push(NodeModel {
                states,
                assigns,
                outs,
                out_ix,
                tgt_ix,
                tgt_dims,
                edge,
                gather,
                mem,
            });
        }
        Model {
            nodes,
            uses: g.users(),
            operands: g.nodes.iter().map(|n| n.operands.clone()).collect(),
        }
    }

    /// The cost of the edge from `u` in state `i` into operand `k` of `v`
    /// in state `j`.
    fn edge(&self, u: usize, i: usize, v: usize, k: usize, j: usize) -> f64 {
        let nv = &self.nodes[v];
        let nt = nv.edge[k].len() / self.nodes[u].outs.len();
        nv.edge[k][self.nodes[u].out_ix[i] as usize * nt + nv.tgt_ix[k][j] as usize]
    }

    /// Node `v`'s own cost in state `j`: compute, the memory penalty, and
    /// the gather of an output.
    fn own(&self, v: usize, j: usize, lambda: f64) -> f64 {
        let n = &self.nodes[v];
        n.states[j].compute + lambda * n.mem[j] + n.gather[n.out_ix[j] as usize]
    }

    /// `own`, infinite for a state `allowed` rules out.
    fn own_in(&self, v: usize, j: usize, lambda: f64, allowed: &Allowed) -> f64 {
        match allowed.get(v) {
            Some(a) if !a.is_empty() && !a[j] => INF,
            _ => self.own(v, j, lambda),
        }
    }

    /// The same programme run from the outputs back: `down[v][j]`, the
    /// cost of what `v`'s users need given `v` in `j` (a user with several
    /// operands gives each an equal share of its own cost), then each node
    /// fixed in program order given its fixed operands and `down`. Where
    /// values have several users this sees all of them at once, which the
    /// forward programme's backward pass cannot.
    pub fn dp_reverse(&self, lambda: f64, allowed: &Allowed) -> Vec<usize> {
        let n = self.nodes.len();
        let mut down: Vec<Vec<f64>> = vec![Vec::new(); n];
        for v in (0..n).rev() {
            let nv = &self.nodes[v];
            let mut d = vec![0.0; nv.outs.len()];
            for &(w, k) in &self.uses[v] {
                let nw = &self.nodes[w];
                let share = 1.0 / self.operands[w].len() as f64;
                let nt = nw.edge[k].len() / nv.outs.len();
                let mut per_tgt = vec![INF; nt];
                for (s, &ds) in down[w].iter().enumerate() {
                    let t = nw.tgt_ix[k][s] as usize;
                    per_tgt[t] = per_tgt[t].min((self.own_in(w, s, lambda, allowed) + ds) * share);
                }
                // Targets no allowed state of the user reads are skipped.
                let live: Vec<usize> = (0..nt).filter(|&t| per_tgt[t] < INF).collect();
                for (o, dv) in d.iter_mut().enumerate() {
                    *dv += live
                        .iter()
                        .map(|&t| per_tgt[t] + nw.edge[k][o * nt + t])
                        .fold(INF, f64::min);
                }
            }
            down[v] = nv.out_ix.iter().map(|&o| d[o as usize]).collect();
        }
        let mut choice = vec![0usize; n];
        for v in 0..n {
            let mut arg = (INF, 0);
            for (j, &dj) in down[v].iter().enumerate() {
                let mut c = self.own_in(v, j, lambda, allowed) + dj;
                for (k, &u) in self.operands[v].iter().enumerate() {
                    c += self.edge(u, choice[u], v, k, j);
                }
                if c < arg.0 {
                    arg = (c, j);
                }
            }
            choice[v] = arg.1;
        }
        choice
    }

    /// The dynamic programme and the backward pass alone: optimal for the
    /// pairwise objective when every node has at most one user.
    pub fn dp(&self, lambda: f64, allowed: &Allowed) -> Vec<usize> {
        let n = self.nodes.len();
        // Forward: best[v][j], the cost of v's operands' subtrees and v in j.
        let mut best: Vec<Vec<f64>> = Vec::with_capacity(n);
        for v in 0..n {
            let nv = &self.nodes[v];
            let mut b: Vec<f64> = (0..nv.states.len())
                .map(|j| self.own_in(v, j, lambda, allowed))
                .collect();
            for (k, &u) in self.operands[v].iter().enumerate() {
                let share = 1.0 / self.uses[u].len() as f64;
                let nu = &self.nodes[u];
                let mut per_out = vec![INF; nu.outs.len()];
                for (i, &bi) in best[u].iter().enumerate() {
                    let d = nu.out_ix[i] as usize;
                    per_out[d] = per_out[d].min(bi * share);
                }
                let nt = nv.edge[k].len() / nu.outs.len();
                let mut per_tgt = vec![INF; nt];
                for (d, &c) in per_out.iter().enumerate() {
                    if c == INF {
                        continue; // no allowed state gives this layout
                    }
                    let row = &nv.edge[k][d * nt..(d + 1) * nt];
                    for (p, &e) in per_tgt.iter_mut().zip(row) {
                        *p = p.min(c + e);
                    }
                }
                for (j, bj) in b.iter_mut().enumerate() {
                    *bj += per_tgt[nv.tgt_ix[k][j] as usize];
                }
            }
            best.push(b);
        }
        // Backward: each node given its (already fixed) users.
        let mut choice = vec![0usize; n];
        for u in (0..n).rev() {
            let mut arg = (INF, 0);
            for (i, &bi) in best[u].iter().enumerate() {
                let c = bi
                    + self.uses[u]
                        .iter()
                        .map(|&(v, k)| self.edge(u, i, v, k, choice[v]))
                        .sum::<f64>();
                if c < arg.0 {
                    arg = (c, i);
                }
            }
            choice[u] = arg.1;
        }
        choice
    }

    /// Node `v`'s share of the objective in state `j`, its neighbours fixed.
    fn local(&self, choice: &[usize], v: usize, j: usize, lambda: f64, allowed: &Allowed) -> f64 {
        let mut c = self.own_in(v, j, lambda, allowed);
        if c == INF {
            return c;
        }
        for (k, &u) in self.operands[v].iter().enumerate() {
            c += self.edge(u, choice[u], v, k, j);
        }
        for &(w, k) in &self.uses[v] {
            c += self.edge(v, j, w, k, choice[w]);
        }
        c
    }

    /// Iterated conditional modes: move single nodes to their best
    /// allowed state while that lowers the objective.
    pub fn improve(&self, choice: &mut [usize], lambda: f64, allowed: &Allowed) {
        for _sweep in 0..20 {
            let mut changed = false;
            for v in 0..self.nodes.len() {
                let cur = self.local(choice, v, choice[v], lambda, allowed);
                let mut arg = (below(cur), choice[v]);
                for j in 0..self.nodes[v].states.len() {
                    let c = self.local(choice, v, j, lambda, allowed);
                    if c < arg.0 {
                        arg = (c, j);
                    }
                }
                if arg.1 != choice[v] {
                    choice[v] = arg.1;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// The pairwise objective (seconds, plus the memory penalty).
    pub fn objective(&self, choice: &[usize], lambda: f64) -> f64 {
        (0..self.nodes.len())
            .map(|v| {
                let j = choice[v];
                let ins: f64 = self.operands[v]
                    .iter()
                    .enumerate()
                    .map(|(k, &u)| self.edge(u, choice[u], v, k, j))
                    .sum();
                self.own(v, j, lambda) + ins
            })
            .sum()
    }

    /// A lower bound on the modelled time of every plan: per node, the
    /// least over its strategies of its compute, its gather and, per
    /// operand, the cheapest move from any layout its producer can have to
    /// what the strategy needs (keeping any of the pending sums).
    pub fn lower_bound(&self, pr: &mut Pricer, g: &Graph) -> f64 {
        let mut total = 0.0;
        for (v, nv) in self.nodes.iter().enumerate() {
            let mut per_tgt: Vec<Vec<f64>> = Vec::with_capacity(nv.tgt_dims.len());
            for (k, &u) in self.operands[v].iter().enumerate() {
                let ushape = pr.shape(&g.nodes[u].rule.out, g.nodes[u].elem);
                let mut cache: HashMap<u32, f64> = HashMap::new();
                let mut row = Vec::with_capacity(nv.tgt_dims[k].len());
                for &dims in &nv.tgt_dims[k] {
                    if let Some(&c) = cache.get(&dims) {
                        row.push(c);
                        continue;
                    }
                    let mut lo = INF;
                    for &from in &self.nodes[u].outs {
                        let p = pr.get(from).partial;
                        for s in subsets(p) {
                            let to = pr.with_partial(dims, s);
                            lo = lo.min(pr.reshard(from, to, ushape).0);
                        }
                    }
                    cache.insert(dims, lo);
                    row.push(lo);
                }
                per_tgt.push(row);
            }
            let least = (0..nv.states.len())
                .map(|j| {
                    self.own(v, j, 0.0)
                        + (0..per_tgt.len())
                            .map(|k| per_tgt[k][nv.tgt_ix[k][j] as usize])
                            .sum::<f64>()
                })
                .fold(INF, f64::min);
            total += least;
        }
        total
    }
}

/// What a change must beat to count as lower than `c` (rounding aside).
pub(crate) fn below(c: f64) -> f64 {
    if c.is_finite() {
        c - 1e-12 * c.abs()
    } else {
        c
    }
}

/// The pending sums operand `k` keeps under a strategy carrying `c`
/// (`None` where the runtime would not carry `c`): `p` is what the
/// operand holds, `free` the mesh axes the assignment leaves unused,
/// `only` whether no other operand can be pending.
fn keep(rule: &Rule, k: usize, only: bool, p: u8, c: u8, free: u8) -> Option<u8> {
    match rule.linear {
        Linearity::Shape => Some(p),
        Linearity::None => Some(0),
        Linearity::Sum => {
            if c & !p != 0 || (only && p & free != c) {
                None
            } else {
                Some(p & c)
            }
        }
        Linearity::Each(mask) => {
            if mask & (1 << k) == 0 {
                Some(0)
            } else if only && p & free != c {
                None
            } else {
                Some(p & c)
            }
        }
    }
}
