//! Memory per rank: a value is live from the op that makes it to its last
//! user (inputs throughout, outputs to the end), and a plan needs the
//! peak over program order of the bytes of the blocks live at once. The
//! solver prices memory with a Lagrangian penalty, `λ` per byte weighted
//! by how long the value lives; [`super::Planner`] bisects on `λ`.

use super::super::graph::{Graph, Source};

/// Each node's live steps `start..=end` in program order.
pub(crate) fn lifetimes(g: &Graph) -> Vec<(usize, usize)> {
    let n = g.nodes.len();
    let mut life: Vec<(usize, usize)> = (0..n).map(|v| (v, v)).collect();
    for (v, node) in g.nodes.iter().enumerate() {
        for &u in &node.operands {
            life[u].1 = life[u].1.max(v);
        }
        if let Source::Input(_) = node.source {
            life[v] = (0, n.saturating_sub(1));
        }
    }
    for &o in &g.outputs {
        life[o].1 = n - 1;
    }
    life
}

/// The penalty's weight of each node: the fraction of the program it is
/// live for.
pub(crate) fn weights(g: &Graph) -> Vec<f64> {
    let n = g.nodes.len().max(1) as f64;
    lifetimes(g)
        .iter()
        .map(|&(s, e)| (e - s + 1) as f64 / n)
        .collect()
}

/// The peak over program order of the live bytes, given each node's
/// bytes per rank.
pub(crate) fn peak(g: &Graph, bytes: &[u64]) -> u64 {
    let n = g.nodes.len();
    let mut diff = vec![0i128; n + 1];
    for (v, &(s, e)) in lifetimes(g).iter().enumerate() {
        diff[s] += bytes[v] as i128;
        diff[e + 1] -= bytes[v] as i128;
    }
    let (mut live, mut top) = (0i128, 0i128);
    for d in &diff[..n] {
        live += d;
        top = top.max(live);
    }
    top as u64
}
