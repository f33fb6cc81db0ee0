//! A [`Plan`] as one loop body for a code generator: each result is an
//! expression at the loop's index, intermediates read at a shift are
//! recomputed at that shift (as XLA's loop fusion does), and the range of
//! indices where no read falls outside its source or on a zero-padded
//! edge is where the compiled loop may run.

use super::plan::{Edge, Op, Plan, Src};
use crate::dynamic::loops::{Expr, LoopBody, Sink};
use std::collections::HashMap;

/// At most this many expressions per plan node: recomputing shifted reads
/// may not blow a body up (a chain of stencils reads each level at more
/// shifts).
const GROWTH: usize = 4;

/// `plan` as a loop body and the index range `[lo, hi)` where the body is
/// exact, or `None` when a node reads a sum or a broadcast intermediate,
/// the body would grow too large, or the range is empty.
pub(super) fn lower(plan: &Plan) -> Option<(LoopBody, (isize, isize))> {
    let mut l = Lowering {
        plan,
        exprs: Vec::new(),
        memo: HashMap::new(),
        seen: HashMap::new(),
        range: (0, plan.master as isize),
    };
    let mut sinks = Vec::new();
    for (i, node) in plan.nodes.iter().enumerate() {
        let Some(o) = node.out else { continue };
        if node.op == Op::Sum {
            l.clip(0, node.domain as isize);
            let e = l.edge(&node.edges[0], 0)?;
            sinks.push((e, Sink::Sum(o)));
        } else {
            l.clip(0, node.len as isize);
            let e = l.node(i, 0)?;
            sinks.push((e, Sink::Store(o)));
        }
        if l.exprs.len() > GROWTH * plan.nodes.len() + 16 {
            return None;
        }
    }
    if l.range.0 >= l.range.1 {
        return None;
    }
    let body = LoopBody {
        dtype: plan.dtype,
        inputs: plan.externals.len(),
        exprs: l.exprs,
        sinks,
    };
    Some((body, l.range))
}

struct Lowering<'p> {
    plan: &'p Plan,
    exprs: Vec<Expr>,
    /// (node, shift) -> its expression.
    memo: HashMap<(usize, isize), usize>,
    /// Each expression's index, so equal ones (a load, a constant, a
    /// kernel of the same operands) appear once.
    seen: HashMap<String, usize>,
    range: (isize, isize),
}

impl Lowering<'_> {
    /// Narrows the exact range to indices `i` with `lo <= i < hi`.
    fn clip(&mut self, lo: isize, hi: isize) {
        self.range = (self.range.0.max(lo), self.range.1.min(hi));
    }

    fn push(&mut self, e: Expr) -> usize {
        let key = format!("{e:?}");
        if let Some(&k) = self.seen.get(&key) {
            return k;
        }
        self.seen.insert(key, self.exprs.len());
        self.exprs.push(e);
        self.exprs.len() - 1
    }

    /// Node `m`'s value at index `i + s`.
    fn node(&mut self, m: usize, s: isize) -> Option<usize> {
        if let Some(&k) = self.memo.get(&(m, s)) {
            return Some(k);
        }
        if self.exprs.len() > GROWTH * self.plan.nodes.len() + 16 {
            return None;
        }
        let node = &self.plan.nodes[m];
        self.clip(-s, node.len as isize - s);
        let k = match node.op {
            Op::Unary(op) => {
                let a = self.edge(&node.edges[0], s)?;
                self.push(Expr::Unary(op, a))
            }
            Op::Binary(op) => {
                let a = self.edge(&node.edges[0], s)?;
                let b = self.edge(&node.edges[1], s)?;
                self.push(Expr::Binary(op, a, b))
            }
            Op::Copy => self.edge(&node.edges[0], s)?,
            Op::Sum => return None,
        };
        self.memo.insert((m, s), k);
        Some(k)
    }

    /// The read `e` of a node evaluated at index `i + s`.
    fn edge(&mut self, e: &Edge, s: isize) -> Option<usize> {
        self.clip(e.valid.0 - s, e.valid.1 - s);
        match (e.src, e.bcast) {
            (Src::Scalar(v), _) => Some(self.push(Expr::Const(v))),
            (Src::Ext(k), true) => {
                let len = self.plan.externals[k].1;
                (e.shift >= 0 && (e.shift as usize) < len).then(|| {
                    self.push(Expr::Splat {
                        input: k,
                        index: e.shift as usize,
                    })
                })
            }
            (Src::Ext(k), false) => {
                let len = self.plan.externals[k].1 as isize;
                let offset = s + e.shift;
                self.clip(-offset, len - offset);
                Some(self.push(Expr::Load { input: k, offset }))
            }
            (Src::Node(_), true) => None,
            (Src::Node(m), false) => self.node(m, s + e.shift),
        }
    }
}
