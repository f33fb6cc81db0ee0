//! The solver's search: the dynamic programmes of [`Model`] are exact on
//! trees only, and a training step's values have several users (a weight
//! feeds the forward product and the backward one), so the plan is the
//! best of several starts. Each start runs both programmes under a
//! restriction on the states (`Allowed`), keeps the better, and finishes
//! with iterated conditional modes first under the restriction, then
//! without it; a restriction only chooses where the search begins.
//!
//! The starts, none of which knows a model or a layout by name:
//!
//! - no restriction;
//! - the argument leaves pinned: all replicated, or one of the largest
//!   leaves split along one of its axes over every mesh axis and the
//!   others replicated (data parallelism is the batch's leaf split), or
//!   the largest leaves split together along their first axes (a batch
//!   and its targets);
//! - on meshes of several axes, one axis at a time (free, from the best
//!   pinned start, and from the largest leaves split together): the plan over the
//!   first axis alone, then the next axis added with the first axis's
//!   uses held, and so on, in every rotation of the axes (a batch split
//!   over `data` makes splitting features over `model` pay);
//! - then, while it helps, the best plan so far re-solved with its
//!   argument leaves pinned (the programmes are exact-er there: a pinned
//!   leaf's several users no longer share a choice).

use super::super::factors::Assignment;
use super::super::graph::{Graph, Source};
use super::super::layout::MeshShape;
use super::solve::{Allowed, Model, below};

/// How many of the largest argument leaves seed starts.
const LARGEST: usize = 2;

/// The mesh axis `m`'s factor in `a`, if it splits one.
fn holder(a: &Assignment, m: u8) -> Option<usize> {
    a.iter().position(|f| f.contains(&m))
}

/// Whether `a` uses only mesh axes in the bit set `axes`.
fn within(a: &Assignment, axes: u8) -> bool {
    a.iter().flatten().all(|&m| axes & (1 << m) != 0)
}

impl Model {
    /// Strategies per node from every start without repeats: the
    /// unrestricted start first, then the rest by pairwise objective
    /// (time plus `lambda` times the weighted bytes), lowest first.
    pub fn search(&self, g: &Graph, mesh: &MeshShape, lambda: f64) -> Vec<Vec<usize>> {
        let mut found: Vec<(f64, Vec<usize>)> = Vec::new();
        let keep = |found: &mut Vec<(f64, Vec<usize>)>, c: Vec<usize>| {
            let o = self.objective(&c, lambda);
            if o.is_finite() && !found.iter().any(|f| f.1 == c) {
                found.push((o, c));
            }
            o
        };
        keep(&mut found, self.start(lambda, &[]));
        let inputs: Vec<usize> = (0..g.nodes.len())
            .filter(|&v| matches!(g.nodes[v].source, Source::Input(_)))
            .collect();
        let axes: Vec<u8> = (0..mesh.len() as u8)
            .filter(|&m| mesh.size(m as usize) > 1)
            .collect();
        // Argument leaves pinned.
        let replicated = |v: usize| vec![Vec::new(); g.nodes[v].rule.out.len()];
        let mut pins: Vec<Vec<(usize, Assignment)>> =
            vec![inputs.iter().map(|&v| (v, replicated(v))).collect()];
        let mut largest = inputs.clone();
        largest.sort_by_key(|&v| {
            let n = &g.nodes[v];
            std::cmp::Reverse(n.rule.out.iter().product::<usize>() * n.elem)
        });
        for &leaf in largest.iter().take(LARGEST) {
            for d in 0..g.nodes[leaf].rule.out.len() {
                let mut a = replicated(leaf);
                a[d] = axes.clone();
                let pin = inputs
                    .iter()
                    .map(|&v| (v, if v == leaf { a.clone() } else { replicated(v) }))
                    .collect();
                pins.push(pin);
            }
        }
        // The largest leaves split together along their first axes (a
        // batch and its targets: data parallelism when both are data).
        let lead: Vec<usize> = largest.iter().take(LARGEST).copied().collect();
        let together = (lead.len() > 1).then(|| {
            let pin: Vec<(usize, Assignment)> = inputs
                .iter()
                .map(|&v| {
                    let mut a = replicated(v);
                    if lead.contains(&v) && !a.is_empty() {
                        a[0] = axes.clone();
                    }
                    (v, a)
                })
                .collect();
            pins.push(pin);
            pins.len() - 1
        });
        let mut best_pin: Option<(f64, usize)> = None;
        for (i, pin) in pins.iter().enumerate() {
            if let Some(allowed) = self.pinned(pin, &[]) {
                let o = keep(&mut found, self.start(lambda, &allowed));
                if best_pin.is_none_or(|b| o < b.0) {
                    best_pin = Some((o, i));
                }
            }
        }
        // One mesh axis at a time, free and from the best pinned start.
        if axes.len() > 1 {
            let mut from: Vec<&[(usize, Assignment)]> = vec![&[]];
            if let Some((_, i)) = best_pin {
                from.push(&pins[i]);
            }
            if let Some(t) = together.filter(|&t| best_pin.is_none_or(|(_, i)| i != t)) {
                from.push(&pins[t]);
            }
            for pin in from {
                for c in self.axis_by_axis(lambda, &axes, pin) {
                    keep(&mut found, c);
                }
            }
        }
        // The best so far with its leaves pinned, while that helps.
        for _ in 0..3 {
            let best = found
                .iter()
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .expect("the unrestricted start is finite")
                .clone();
            let pin: Vec<(usize, Assignment)> = inputs
                .iter()
                .map(|&v| (v, self.nodes[v].states[best.1[v]].a.clone()))
                .collect();
            let Some(allowed) = self.pinned(&pin, &[]) else {
                break;
            };
            let mut o = keep(&mut found, self.start(lambda, &allowed));
            if axes.len() > 1 {
                for c in self.axis_by_axis(lambda, &axes, &pin) {
                    o = o.min(keep(&mut found, c));
                }
            }
            if o >= below(best.0) {
                break;
            }
        }
        found[1..].sort_by(|a, b| a.0.total_cmp(&b.0));
        found.into_iter().map(|f| f.1).collect()
    }

    /// Plans made one mesh axis at a time, one per rotation of `axes`:
    /// the plan over the first axis alone, then with the next axis open
    /// and every node's use of the axes before it held, and so on; the
    /// nodes of `pin` hold their assignment's part on the open axes.
    fn axis_by_axis(
        &self,
        lambda: f64,
        axes: &[u8],
        pin: &[(usize, Assignment)],
    ) -> Vec<Vec<usize>> {
        let mut plans = Vec::new();
        for r in 0..axes.len() {
            let order: Vec<u8> = (0..axes.len())
                .map(|i| axes[(r + i) % axes.len()])
                .collect();
            let mut choice: Vec<usize> = Vec::new();
            for i in 0..order.len() {
                let open: u8 = order[..=i].iter().fold(0, |s, &x| s | 1 << x);
                let held = &order[..i];
                let allowed: Vec<Vec<bool>> = (0..self.nodes.len())
                    .map(|v| {
                        let now = choice.get(v).map(|&j| &self.nodes[v].states[j].a);
                        let ok: Vec<bool> = self.nodes[v]
                            .states
                            .iter()
                            .map(|s| {
                                within(&s.a, open)
                                    && now.is_none_or(|a| {
                                        held.iter().all(|&h| holder(&s.a, h) == holder(a, h))
                                    })
                            })
                            .collect();
                        // A node held by the caller (a fixed input) stays
                        // as it is.
                        if ok.contains(&true) { ok } else { Vec::new() }
                    })
                    .collect();
                let mut allowed = allowed;
                for (v, a) in pin {
                    allowed[*v] = self.nodes[*v].states.iter().map(|s| s.a == *a).collect();
                }
                choice = self.restricted(lambda, &allowed);
            }
            if choice.len() == self.nodes.len() {
                self.improve(&mut choice, lambda, &[]);
                plans.push(choice);
            }
        }
        plans
    }

    /// The states `base` allows (all where it is empty) with each
    /// `(node, assignment)` of `pin` held; `None` where a node has no
    /// state left.
    fn pinned(&self, pin: &[(usize, Assignment)], base: &Allowed) -> Option<Vec<Vec<bool>>> {
        let mut allowed = if base.is_empty() {
            vec![Vec::new(); self.nodes.len()]
        } else {
            base.to_vec()
        };
        for (v, a) in pin {
            let ok: Vec<bool> = self.nodes[*v]
                .states
                .iter()
                .enumerate()
                .map(|(j, s)| s.a == *a && allowed[*v].get(j).is_none_or(|&b| b))
                .collect();
            if !ok.contains(&true) {
                return None;
            }
            allowed[*v] = ok;
        }
        Some(allowed)
    }

    /// Both programmes under `allowed`, each followed by iterated
    /// conditional modes under it: the better.
    fn restricted(&self, lambda: f64, allowed: &Allowed) -> Vec<usize> {
        let mut best = self.dp(lambda, allowed);
        self.improve(&mut best, lambda, allowed);
        let mut other = self.dp_reverse(lambda, allowed);
        self.improve(&mut other, lambda, allowed);
        if self.objective(&other, lambda) < self.objective(&best, lambda) {
            best = other;
        }
        best
    }

    /// A start: the restricted solve, then conditional modes free.
    pub fn start(&self, lambda: f64, allowed: &Allowed) -> Vec<usize> {
        let mut c = self.restricted(lambda, allowed);
        if !allowed.is_empty() {
            self.improve(&mut c, lambda, &[]);
        }
        c
    }
}
