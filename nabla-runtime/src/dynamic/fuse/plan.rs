//! A fusable run of instructions as a graph of compute nodes whose edges
//! read operands at flat offsets: views fold into edges, elementwise
//! kernels with a constant operand become one-operand kernels, dead nodes
//! go, and each node gets a reusable block buffer.

use super::{BLOCK, Desc, Elem};
use crate::DType;
use nabla_kernels::ops::{BinaryOp, UnaryOp};
use std::collections::HashMap;

/// Where an edge reads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Src {
    /// A node of the plan.
    Node(usize),
    /// An operand from outside the run (an index of `Plan::externals`).
    Ext(usize),
    /// A constant with every element equal.
    Scalar(f64),
}

/// How a node reads one operand: element `i` of the read is
/// `src[if bcast { shift } else { i + shift }]` for `i` in `valid`, and
/// zero outside it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Edge {
    pub(super) src: Src,
    pub(super) shift: isize,
    pub(super) valid: (isize, isize),
    pub(super) bcast: bool,
}

impl Edge {
    /// A read of `src` (of `len` elements) over a reader of `n` elements
    /// at `shift`, zero outside `valid`; a one-element source repeats.
    fn new(src: Src, len: usize, shift: isize, valid: (isize, isize)) -> Edge {
        let bcast = len == 1 || matches!(src, Src::Scalar(_));
        Edge {
            src,
            shift: if bcast { 0 } else { shift },
            valid,
            bcast,
        }
    }

    /// This read of a node that itself reads `inner`, as one read of
    /// `inner`'s source.
    fn compose(self, inner: Edge) -> Edge {
        if self.bcast {
            let j = self.shift;
            if j < inner.valid.0 || j >= inner.valid.1 {
                return Edge::new(Src::Scalar(0.0), 1, 0, self.valid);
            }
            let shift = if inner.bcast {
                inner.shift
            } else {
                j + inner.shift
            };
            return Edge {
                src: inner.src,
                shift,
                valid: self.valid,
                bcast: true,
            };
        }
        let valid = (
            self.valid.0.max(inner.valid.0 - self.shift),
            self.valid.1.min(inner.valid.1 - self.shift),
        );
        Edge {
            src: inner.src,
            shift: if inner.bcast {
                inner.shift
            } else {
                self.shift + inner.shift
            },
            valid: (valid.0, valid.1.max(valid.0)),
            bcast: inner.bcast,
        }
    }

    /// True when the read covers every element of a reader of `n`.
    fn whole(&self, n: usize) -> bool {
        self.valid.0 <= 0 && self.valid.1 >= n as isize
    }
}

/// What a node computes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Op {
    Unary(UnaryOp),
    Binary(BinaryOp),
    /// Its one read, as is.
    Copy,
    /// The sum of its read over `Node::domain` elements.
    Sum,
}

/// One computed value of the run.
#[derive(Clone, Debug)]
pub(super) struct Node {
    pub(super) op: Op,
    /// Its elements (1 for a sum).
    pub(super) len: usize,
    /// The elements its edges are read over: `len`, or what a sum adds.
    pub(super) domain: usize,
    pub(super) edges: Vec<Edge>,
    /// Its index in `Plan::outputs` when it is read after the run.
    pub(super) out: Option<usize>,
    /// The block buffer it is computed into.
    pub(super) reg: usize,
    /// Whether another node reads it (else an output computes straight
    /// into its result).
    pub(super) read_in_run: bool,
}

/// A run of instructions ready to replay as one pass.
pub(crate) struct Plan {
    pub(super) nodes: Vec<Node>,
    /// Operands from outside the run: slot and element count.
    pub(super) externals: Vec<(usize, usize)>,
    /// Results read after the run: slot and shape.
    pub(super) outputs: Vec<(usize, crate::Shape)>,
    /// How many block buffers the nodes share.
    pub(super) regs: usize,
    /// Whether an output is a sum.
    pub(super) sums: bool,
    /// The elements the blocks cover: the largest output (or sum domain).
    pub(super) master: usize,
    pub(crate) dtype: DType,
    /// Whether every node is an elementwise kernel reading its operands
    /// at its own index (no view, placement, broadcast or sum): such a run
    /// gains from one pass only as machine code ([`super::groups`]).
    pub(crate) plain: bool,
}

impl Plan {
    /// The plan of `members`, or `None` when the run would not gain from
    /// one pass (only views) or reads an intermediate at offsets too far
    /// apart for a block's halo.
    pub(crate) fn new(
        members: &[Desc],
        slot_type: &dyn Fn(usize) -> (crate::Shape, DType),
        constant: &dyn Fn(usize) -> Option<f64>,
        read_outside: &dyn Fn(usize, &[usize]) -> bool,
    ) -> Option<Plan> {
        let written: Vec<usize> = members.iter().map(|m| m.0).collect();
        let node_of: HashMap<usize, usize> =
            written.iter().enumerate().map(|(i, &k)| (k, i)).collect();
        let mut externals: Vec<(usize, usize)> = Vec::new();
        let mut outputs: Vec<(usize, crate::Shape)> = Vec::new();
        let mut nodes: Vec<Node> = Vec::with_capacity(members.len());
        for (slot, elem, ops, shape, _) in members {
            let n: usize = shape.iter().product();
            let len_of = |k: usize| slot_type(k).0.iter().product::<usize>();
            let mut source = |k: usize| -> (Src, usize) {
                if let Some(&i) = node_of.get(&k) {
                    return (Src::Node(i), len_of(k));
                }
                if let Some(v) = constant(k) {
                    return (Src::Scalar(v), 1);
                }
                let at = externals.iter().position(|e| e.0 == k).unwrap_or_else(|| {
                    externals.push((k, len_of(k)));
                    externals.len() - 1
                });
                (Src::Ext(at), len_of(k))
            };
            let whole = (0, n as isize);
            let (op, domain, edges) = match elem.expect("a member fuses") {
                Elem::Unary(u) => {
                    let (s, l) = source(ops[0]);
                    (Op::Unary(u), n, vec![Edge::new(s, l, 0, whole)])
                }
                Elem::Binary(b) => {
                    let (s0, l0) = source(ops[0]);
                    let (s1, l1) = source(ops[1]);
                    let edges = vec![Edge::new(s0, l0, 0, whole), Edge::new(s1, l1, 0, whole)];
                    (Op::Binary(b), n, edges)
                }
                Elem::Window(off) => {
                    let (s, l) = source(ops[0]);
                    (Op::Copy, n, vec![Edge::new(s, l, off as isize, whole)])
                }
                Elem::Place(off) => {
                    let (s, l) = source(ops[0]);
                    let valid = (off as isize, (off + l) as isize);
                    (Op::Copy, n, vec![Edge::new(s, l, -(off as isize), valid)])
                }
                Elem::Splat => {
                    let (s, _) = source(ops[0]);
                    (Op::Copy, n, vec![Edge::new(s, 1, 0, whole)])
                }
                Elem::Sum => {
                    let (s, l) = source(ops[0]);
                    (Op::Sum, l, vec![Edge::new(s, l, 0, (0, l as isize))])
                }
            };
            let out = read_outside(*slot, &written).then(|| {
                outputs.push((*slot, shape.clone()));
                outputs.len() - 1
            });
            let (op, edges) = simplify(op, &edges, domain);
            nodes.push(Node {
                op,
                len: n,
                domain,
                edges,
                out,
                reg: 0,
                read_in_run: false,
            });
        }
        fold_copies(&mut nodes);
        let mut nodes = drop_dead(nodes);
        compose_affine(&mut nodes);
        absorb_negations(&mut nodes);
        let mut nodes = drop_dead(nodes);
        let mut read = vec![false; nodes.len()];
        for e in nodes.iter().flat_map(|n| &n.edges) {
            if let Src::Node(m) = e.src {
                read[m] = true;
            }
        }
        for (n, r) in nodes.iter_mut().zip(read) {
            n.read_in_run = r;
        }
        let plain = nodes.iter().all(|n| {
            n.op != Op::Sum
                && n.edges
                    .iter()
                    .all(|e| e.shift == 0 && !e.bcast && e.whole(n.len))
        });
        if nodes.iter().all(|n| n.op == Op::Copy) || !halos_fit(&nodes) {
            return None;
        }
        let (nodes, externals) = used_externals(nodes, externals);
        let (nodes, regs) = assign_regs(nodes);
        let master = nodes
            .iter()
            .filter(|n| n.out.is_some())
            .map(|n| n.domain)
            .max()
            .unwrap_or(0);
        let sums = nodes.iter().any(|n| n.op == Op::Sum && n.out.is_some());
        Some(Plan {
            sums,
            nodes,
            externals,
            outputs,
            regs,
            master,
            dtype: members[0].4,
            plain,
        })
    }
}

/// `op` on `edges` rewritten where a constant operand allows: `x * 1`,
/// `x + 0`, `powi(x, 1)` are copies; a binary kernel with one constant
/// operand becomes the unary kernel it equals exactly (`x * c`, `x ± c`,
/// `c - x`: `Affine`; `c / x`: `RDiv`).
fn simplify(op: Op, edges: &[Edge], n: usize) -> (Op, Vec<Edge>) {
    match op {
        Op::Unary(UnaryOp::Powi(1)) | Op::Unary(UnaryOp::Affine(1.0, 0.0)) => {
            return (Op::Copy, edges.to_vec());
        }
        Op::Binary(b) => {
            let constant = |e: &Edge| match e.src {
                Src::Scalar(c) if e.whole(n) => Some(c),
                _ => None,
            };
            let (c, x, first) = match (constant(&edges[0]), constant(&edges[1])) {
                (None, Some(c)) => (c, edges[0], false),
                (Some(c), None) => (c, edges[1], true),
                _ => return (op, edges.to_vec()),
            };
            let unary = match (b, first) {
                (BinaryOp::Mul, _) if c == 1.0 => return (Op::Copy, vec![x]),
                // `+ -0.0` keeps every product, a `-0.0` included.
                (BinaryOp::Mul, _) => UnaryOp::Affine(c, -0.0),
                (BinaryOp::Add, _) => UnaryOp::Affine(1.0, c),
                (BinaryOp::Sub, false) => UnaryOp::Affine(1.0, -c),
                (BinaryOp::Sub, true) => UnaryOp::Affine(-1.0, c),
                (BinaryOp::Div, true) => UnaryOp::RDiv(c),
                _ => return (op, edges.to_vec()),
            };
            return (Op::Unary(unary), vec![x]);
        }
        _ => {}
    }
    (op, edges.to_vec())
}

/// Reads of copies that are not outputs read the copies' sources instead
/// (copies come before their readers, so one step per read suffices).
fn fold_copies(nodes: &mut [Node]) {
    for i in 0..nodes.len() {
        for e in 0..nodes[i].edges.len() {
            let edge = nodes[i].edges[e];
            if let Src::Node(c) = edge.src
                && nodes[c].op == Op::Copy
                && nodes[c].out.is_none()
            {
                nodes[i].edges[e] = edge.compose(nodes[c].edges[0]);
            }
        }
    }
}

/// An affine kernel of an affine kernel's result, read by nothing else,
/// becomes one affine kernel where that is exact: a negation of anything
/// affine, anything affine of a negation, and `a2 * (a1 * x) + b2` where
/// `a1` or `a2` is a power of two (up to the sign of zero results).
fn compose_affine(nodes: &mut [Node]) {
    let mut readers = vec![0usize; nodes.len()];
    for e in nodes.iter().flat_map(|n| &n.edges) {
        if let Src::Node(m) = e.src {
            readers[m] += 1;
        }
    }
    let affine = |op: Op| match op {
        Op::Unary(UnaryOp::Affine(a, b)) => Some((a, b)),
        Op::Unary(UnaryOp::Neg()) => Some((-1.0, -0.0)),
        _ => None,
    };
    let pow2 = |a: f64| a.is_normal() && a.to_bits() & ((1u64 << 52) - 1) == 0;
    for i in 0..nodes.len() {
        let (Some((a2, b2)), [edge]) = (affine(nodes[i].op), &nodes[i].edges[..]) else {
            continue;
        };
        let Src::Node(j) = edge.src else { continue };
        let Some((a1, b1)) = affine(nodes[j].op) else {
            continue;
        };
        if edge.bcast || !edge.whole(nodes[i].len) || readers[j] != 1 || nodes[j].out.is_some() {
            continue;
        }
        let (a, b) = if (a2, b2) == (-1.0, 0.0) {
            (-a1, -b1)
        } else if b1 == 0.0 && (pow2(a1) || pow2(a2)) {
            (a1 * a2, b2)
        } else {
            continue;
        };
        nodes[i].op = Op::Unary(UnaryOp::Affine(a, b));
        nodes[i].edges = vec![edge.compose(nodes[j].edges[0])];
        readers[j] = 0;
    }
}

/// `-p * q` (or `/`) read only by sums and differences reads `p` and
/// flips them instead: `a + -(p q)` is `a - p q` and `a - -(p q)` is
/// `a + p q`, exactly, which saves the negation's pass.
fn absorb_negations(nodes: &mut [Node]) {
    let mut readers: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        for e in &n.edges {
            if let Src::Node(m) = e.src {
                readers[m].push(i);
            }
        }
    }
    for i in 0..nodes.len() {
        if !matches!(nodes[i].op, Op::Binary(BinaryOp::Mul | BinaryOp::Div))
            || nodes[i].out.is_some()
        {
            continue;
        }
        let negated = nodes[i].edges.iter().position(|e| match e.src {
            Src::Node(j) => {
                nodes[j].op == Op::Unary(UnaryOp::Neg())
                    && readers[j] == [i]
                    && nodes[j].out.is_none()
                    && !e.bcast
                    && e.whole(nodes[i].len)
            }
            _ => false,
        });
        let Some(k) = negated else { continue };
        // Each reader has the product as exactly one operand: the second
        // of a sum or difference, or the first of a sum.
        let flips = readers[i].iter().all(|&r| {
            let at: Vec<usize> = (0..nodes[r].edges.len())
                .filter(|&e| nodes[r].edges[e].src == Src::Node(i))
                .collect();
            matches!(
                (nodes[r].op, &at[..]),
                (Op::Binary(BinaryOp::Add), [_]) | (Op::Binary(BinaryOp::Sub), [1])
            )
        });
        if readers[i].is_empty() || !flips {
            continue;
        }
        let Src::Node(j) = nodes[i].edges[k].src else {
            continue;
        };
        nodes[i].edges[k] = nodes[i].edges[k].compose(nodes[j].edges[0]);
        for &r in &readers[i].clone() {
            let node = &mut nodes[r];
            node.op = match node.op {
                Op::Binary(BinaryOp::Add) => {
                    if node.edges[0].src == Src::Node(i) {
                        node.edges.swap(0, 1);
                    }
                    Op::Binary(BinaryOp::Sub)
                }
                _ => Op::Binary(BinaryOp::Add),
            };
        }
        readers[j].clear();
    }
}

/// The nodes an output needs, renumbered.
fn drop_dead(nodes: Vec<Node>) -> Vec<Node> {
    let mut live: Vec<bool> = nodes.iter().map(|n| n.out.is_some()).collect();
    for i in (0..nodes.len()).rev() {
        if live[i] {
            for e in &nodes[i].edges {
                if let Src::Node(m) = e.src {
                    live[m] = true;
                }
            }
        }
    }
    let mut new_index = vec![usize::MAX; nodes.len()];
    let mut kept = Vec::new();
    for (i, mut node) in nodes.into_iter().enumerate() {
        if !live[i] {
            continue;
        }
        for e in &mut node.edges {
            if let Src::Node(m) = e.src {
                e.src = Src::Node(new_index[m]);
            }
        }
        new_index[i] = kept.len();
        kept.push(node);
    }
    kept
}

/// True when every node is read at offsets (relative to the block being
/// computed) that span at most half a block, so a block's halo stays
/// small; a long node read at one fixed element (a repeat) does not fit.
fn halos_fit(nodes: &[Node]) -> bool {
    let mut span: Vec<Option<(isize, isize)>> =
        nodes.iter().map(|n| n.out.map(|_| (0, 0))).collect();
    for i in (0..nodes.len()).rev() {
        let Some((a, b)) = span[i] else { continue };
        if b - a > (BLOCK / 2) as isize {
            return false;
        }
        for e in &nodes[i].edges {
            let Src::Node(m) = e.src else { continue };
            if e.bcast {
                if nodes[m].len > 1 {
                    return false;
                }
                continue;
            }
            let r = (a + e.shift, b + e.shift);
            span[m] = Some(span[m].map_or(r, |(x, y)| (x.min(r.0), y.max(r.1))));
        }
    }
    true
}

/// Keeps the externals some edge reads, renumbering the edges.
fn used_externals(
    mut nodes: Vec<Node>,
    externals: Vec<(usize, usize)>,
) -> (Vec<Node>, Vec<(usize, usize)>) {
    let mut new_index = vec![usize::MAX; externals.len()];
    let mut kept = Vec::new();
    for node in &mut nodes {
        for e in &mut node.edges {
            if let Src::Ext(k) = e.src {
                if new_index[k] == usize::MAX {
                    new_index[k] = kept.len();
                    kept.push(externals[k]);
                }
                e.src = Src::Ext(new_index[k]);
            }
        }
    }
    (nodes, kept)
}

/// Gives each node a block buffer, reusing the buffer of a node once its
/// last reader has run (a node's own buffer never is one it reads).
fn assign_regs(mut nodes: Vec<Node>) -> (Vec<Node>, usize) {
    let mut last = vec![None; nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        for e in &n.edges {
            if let Src::Node(m) = e.src {
                last[m] = Some(i);
            }
        }
    }
    let mut free: Vec<usize> = Vec::new();
    let mut regs = 0;
    for i in 0..nodes.len() {
        if nodes[i].op == Op::Sum {
            continue;
        }
        nodes[i].reg = free.pop().unwrap_or_else(|| {
            regs += 1;
            regs - 1
        });
        let mut done: Vec<usize> = nodes[i]
            .edges
            .iter()
            .filter_map(|e| match e.src {
                Src::Node(m) if last[m] == Some(i) && nodes[m].op != Op::Sum => Some(m),
                _ => None,
            })
            .collect();
        done.dedup();
        free.extend(done.into_iter().map(|m| nodes[m].reg));
        if last[i].is_none() {
            free.push(nodes[i].reg);
        }
    }
    (nodes, regs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_place_of_a_window_reads_the_source_inside_both() {
        // place(window(x, 1), 2) over 10 elements, of a window of 5.
        let window = Edge::new(Src::Ext(0), 10, 1, (0, 5));
        let place = Edge::new(Src::Node(0), 5, -2, (2, 7));
        let e = place.compose(window);
        assert_eq!(e.src, Src::Ext(0));
        assert_eq!((e.shift, e.valid, e.bcast), (-1, (2, 7), false));
    }

    #[test]
    fn a_repeat_of_a_placed_scalar_keeps_its_range() {
        let splat = Edge::new(Src::Scalar(3.0), 1, 0, (0, 4));
        let place = Edge::new(Src::Node(0), 4, -1, (1, 5));
        let e = place.compose(splat);
        assert_eq!((e.src, e.valid, e.bcast), (Src::Scalar(3.0), (1, 5), true));
    }
}
