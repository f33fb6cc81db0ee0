//! A program as the planner sees it: the ops of one call in the order
//! they run, each with its sharding [`Rule`] and the values it reads.
//! Recorded once per argument shape by running the function's generated
//! program at the shape-only value type (`trace.rs`); the distributed run
//! then meets the same ops in the same order and takes each op's planned
//! assignment.

use super::factors::Rule;

/// Where a node's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// Argument leaf `i` of the call.
    Input(usize),
    /// A constant made inside the program (`lift`, `full_like`).
    Constant,
    /// An op on earlier nodes.
    Op,
}

/// One op call (or input) of a recorded program.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    /// Its rule: operand and output shapes, factors, flops.
    pub rule: Rule,
    /// The nodes it reads, one per operand of the rule.
    pub operands: Vec<usize>,
    /// Bytes per element of its output.
    pub elem: usize,
    /// Input, constant or op.
    pub source: Source,
}

/// A recorded program: nodes in the order they run, and the nodes that
/// are its outputs.
#[derive(Clone, Debug, Default)]
pub(crate) struct Graph {
    /// Every value, in program order (operands come before their users).
    pub nodes: Vec<Node>,
    /// The output nodes, in the function's output order.
    pub outputs: Vec<usize>,
    /// `(node, leaf)`: node `node` (a `like_input` op) is laid out like
    /// argument leaf `leaf` (a cotangent returned in its argument's
    /// layout, as `auto(f).sharded()` returns gradients).
    pub pins: Vec<(usize, usize)>,
    /// Whether the outputs stay where the program leaves them (returned
    /// as `DArray`s) instead of being gathered whole on every rank.
    pub keep_outputs: bool,
}

impl Graph {
    /// The input nodes, in argument-leaf order.
    #[cfg(test)]
    pub fn inputs(&self) -> Vec<usize> {
        let mut ins: Vec<(usize, usize)> = self
            .nodes
            .iter()
            .enumerate()
            .filter_map(|(n, node)| match node.source {
                Source::Input(i) => Some((i, n)),
                _ => None,
            })
            .collect();
        ins.sort();
        ins.into_iter().map(|(_, n)| n).collect()
    }

    /// Per node, how many times the outputs gather it whole (none when
    /// the outputs are kept where they are).
    pub fn gathers(&self) -> Vec<usize> {
        let mut n = vec![0; self.nodes.len()];
        if !self.keep_outputs {
            for &o in &self.outputs {
                n[o] += 1;
            }
        }
        n
    }

    /// The nodes that read node `n`, with the operand position.
    pub fn users(&self) -> Vec<Vec<(usize, usize)>> {
        let mut users = vec![Vec::new(); self.nodes.len()];
        for (u, node) in self.nodes.iter().enumerate() {
            for (k, &o) in node.operands.iter().enumerate() {
                users[o].push((u, k));
            }
        }
        users
    }
}
