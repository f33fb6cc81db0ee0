//! [`Planner::greedy`]: the plan of the choices `spmd` makes at run time
//! (`propagate::choose`: each op takes the operands' own splits that move
//! the fewest bytes), from the fixed argument layouts, priced like any
//! plan. `auto(..).sharded()` measures it against the solver's plan and
//! keeps the faster (the solver's model prices bytes and flops, not
//! every cost of a block's shape).

use super::*;
use crate::dist::propagate::choose;

impl Planner {
    /// The greedy plan of `g` with every argument leaf fixed
    /// ([`Planner::fix_inputs`]); `None` when a leaf is not fixed.
    pub(crate) fn greedy(&self, g: &Graph) -> Option<Plan> {
        let fixed = self.fixed_assignments(g);
        let mut assign: Vec<Assignment> = Vec::with_capacity(g.nodes.len());
        let mut outs: Vec<Layout> = Vec::with_capacity(g.nodes.len());
        for (v, node) in g.nodes.iter().enumerate() {
            let rule = &node.rule;
            let from: Vec<&Layout> = node.operands.iter().map(|&u| &outs[u]).collect();
            let a = match (node.source, &fixed[v]) {
                (Source::Input(_), None) => return None,
                (_, Some(a)) => a.clone(),
                _ => choose(rule, &from, node.elem, &self.mesh),
            };
            let (_, out) = rule.targets(&a, &from);
            outs.push(out);
            assign.push(a);
        }
        let bytes: Vec<u64> = (0..g.nodes.len())
            .map(|v| {
                let n = &g.nodes[v];
                (outs[v]
                    .local_shape(&n.rule.out, &self.mesh)
                    .iter()
                    .product::<usize>()
                    * n.elem) as u64
            })
            .collect();
        let memory = memory::peak(g, &bytes);
        Some(self.finish(g, &assign, memory, 0.0))
    }
}
