//! A plan as a table: the totals, each input's spec, each op that
//! communicates (its operands' layouts before and after, the collectives,
//! the bytes and the time), and the gathers of the outputs.

use super::super::moves::Move;
use super::{Edge, Plan};
use std::fmt;

/// Bytes with a binary unit.
fn bytes(b: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = b as f64;
    let mut u = 0;
    while x >= 1024.0 && u + 1 < units.len() {
        x /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{x:.1} {}", units[u])
    }
}

/// Seconds with a unit that keeps them readable.
fn secs(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

impl Plan {
    fn collectives(&self, e: &Edge) -> String {
        let name = |m: usize| self.mesh.name(m).to_string();
        let parts: Vec<String> = e
            .moves
            .iter()
            .map(|&m| match m {
                Move::AllReduce { mesh } => format!("all-reduce({})", name(mesh as usize)),
                Move::ReduceScatter { mesh, axis } => {
                    format!("reduce-scatter({}, axis {axis})", name(mesh as usize))
                }
                Move::AllGather { mesh, axis } => {
                    format!("all-gather({}, axis {axis})", name(mesh as usize))
                }
                Move::AllToAll { mesh, from, to } => {
                    format!("all-to-all({}, axis {from}→{to})", name(mesh as usize))
                }
                Move::Slice { mesh, axis } => {
                    format!("slice({}, axis {axis})", name(mesh as usize))
                }
                Move::Split { mesh } => format!("split({})", name(mesh as usize)),
            })
            .collect();
        parts.join(" + ")
    }

    fn edge_row(&self, f: &mut fmt::Formatter<'_>, what: &str, e: &Edge) -> fmt::Result {
        writeln!(
            f,
            "  {what:<34} {:>18} → {:<18} {:<34} {:>10} {:>10}",
            e.from.spec(&self.mesh).to_string(),
            e.to.spec(&self.mesh).to_string(),
            self.collectives(e),
            bytes(e.bytes),
            secs(e.time_s)
        )
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "plan for {}: {} per call modelled (compute {}, communication {}); lower bound {}, gap {:.1}%",
            self.mesh,
            secs(self.time_s()),
            secs(self.compute_s()),
            secs(self.comm_s()),
            secs(self.lower_bound_s),
            100.0 * self.gap()
        )?;
        let limit = match self.limit {
            Some(l) if self.fits() => format!(" (limit {}: fits)", bytes(l)),
            Some(l) => format!(
                " (limit {}: DOES NOT FIT; the smallest plan found)",
                bytes(l)
            ),
            None => String::new(),
        };
        writeln!(
            f,
            "sends {} per rank per call; memory {} per rank{limit}",
            bytes(self.bytes_per_call()),
            bytes(self.memory)
        )?;
        writeln!(f, "inputs:")?;
        for n in self.inputs() {
            writeln!(
                f,
                "  {:<12} {:<20} {}",
                n.name,
                format!("{:?}", n.shape),
                n.out.spec(&self.mesh)
            )?;
        }
        writeln!(f, "ops that communicate:")?;
        let mut quiet = 0;
        for n in self.nodes.iter().filter(|n| n.input.is_none()) {
            let talks: Vec<usize> = (0..n.edges.len())
                .filter(|&k| n.edges[k].moves.iter().any(|m| m.wire().is_some()))
                .collect();
            if talks.is_empty() {
                quiet += 1;
            }
            for k in talks {
                let e = &n.edges[k];
                let what = format!("{} ← {}", n.name, self.nodes[n.operands[k]].name);
                self.edge_row(f, &what, e)?;
            }
        }
        writeln!(f, "  ({quiet} other ops communicate nothing)")?;
        // Ops with a non-scalar result and no factors have no sharding
        // rule (custom ops without `shard = last(k)`): whole on every rank.
        let mut whole: Vec<(&str, usize)> = Vec::new();
        for n in self.nodes.iter().filter(|n| n.input.is_none()) {
            if n.assignment.is_empty() && n.shape.iter().product::<usize>() > 1 {
                match whole.iter_mut().find(|(op, _)| *op == n.op) {
                    Some((_, c)) => *c += 1,
                    None => whole.push((&n.op, 1)),
                }
            }
        }
        if !whole.is_empty() {
            let list: Vec<String> = whole.iter().map(|(op, c)| format!("{op} ×{c}")).collect();
            writeln!(
                f,
                "replicated (no sharding rule fits; whole on every rank): {}",
                list.join(", ")
            )?;
        }
        writeln!(f, "outputs (gathered to the caller):")?;
        for (o, e) in &self.outputs {
            self.edge_row(f, &self.nodes[*o].name, e)?;
        }
        Ok(())
    }
}
