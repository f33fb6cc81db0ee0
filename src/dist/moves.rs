//! The collectives that take an array from one layout to another
//! ([`moves`]), and the bytes each sends per rank ([`wire_bytes`]): one
//! formula, read by the planner's cost model and counted by the
//! collectives when they run, so a plan's prediction and the count agree
//! exactly.

use super::layout::{Layout, MeshShape, Spec};
use crate::DType;
use std::sync::atomic::{AtomicU64, Ordering};

static SENT: AtomicU64 = AtomicU64::new(0);

/// The bytes this rank has sent in `nabla::dist`'s collectives since the
/// program started, by [`wire_bytes`]' formula: compare two readings to
/// measure a step, and with a plan's prediction
/// ([`Plan::bytes_per_call`](super::Plan::bytes_per_call)).
///
/// ```
/// let before = nabla::dist::bytes_sent();
/// assert_eq!(nabla::dist::bytes_sent() - before, 0); // nothing ran
/// ```
pub fn bytes_sent() -> u64 {
    SENT.load(Ordering::Relaxed)
}

/// Counts one collective of `ranks` ranks on `bytes` of input.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) fn count(kind: Wire, ranks: usize, bytes: usize) {
    SENT.fetch_add(wire_bytes(kind, ranks, bytes), Ordering::Relaxed);
}

/// A collective (or local step) over one mesh axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Move {
    /// Complete a pending sum over the mesh axis: every rank gets the total.
    AllReduce { mesh: u8 },
    /// Complete a pending sum and keep this rank's block of array axis
    /// `axis` (the mesh axis becomes its innermost split).
    ReduceScatter { mesh: u8, axis: usize },
    /// Undo the innermost split of array axis `axis` over the mesh axis.
    AllGather { mesh: u8, axis: usize },
    /// Move the mesh axis from the innermost split of array axis `from`
    /// to the innermost split of `to`.
    AllToAll { mesh: u8, from: usize, to: usize },
    /// Keep this rank's block of array axis `axis` (the mesh axis becomes
    /// its innermost split); no communication.
    Slice { mesh: u8, axis: usize },
    /// Start a pending sum over the mesh axis: the rank at coordinate 0
    /// keeps the value, the others hold zeros; no communication.
    Split { mesh: u8 },
}

/// The kind of a collective, for [`wire_bytes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(crate) enum Wire {
    AllReduce,
    ReduceScatter,
    AllGather,
    AllToAll,
    Broadcast,
}

/// The bytes one rank sends in a collective of `ranks` ranks whose input
/// on this rank is `bytes` long (ring algorithms): all-gather `b(n−1)`,
/// reduce-scatter and all-to-all `b(n−1)/n`, all-reduce `2b(n−1)/n`,
/// broadcast `b(n−1)/n`.
pub(crate) fn wire_bytes(kind: Wire, ranks: usize, bytes: usize) -> u64 {
    let (b, n) = (bytes as u64, ranks as u64);
    if n <= 1 {
        return 0;
    }
    match kind {
        Wire::AllGather => b * (n - 1),
        Wire::ReduceScatter | Wire::AllToAll | Wire::Broadcast => b * (n - 1) / n,
        Wire::AllReduce => 2 * b * (n - 1) / n,
    }
}

impl Move {
    /// The collective it runs, if any.
    pub fn wire(self) -> Option<Wire> {
        match self {
            Move::AllReduce { .. } => Some(Wire::AllReduce),
            Move::ReduceScatter { .. } => Some(Wire::ReduceScatter),
            Move::AllGather { .. } => Some(Wire::AllGather),
            Move::AllToAll { .. } => Some(Wire::AllToAll),
            Move::Slice { .. } | Move::Split { .. } => None,
        }
    }

    /// Its mesh axis.
    pub fn mesh(self) -> u8 {
        match self {
            Move::AllReduce { mesh }
            | Move::ReduceScatter { mesh, .. }
            | Move::AllGather { mesh, .. }
            | Move::AllToAll { mesh, .. }
            | Move::Slice { mesh, .. }
            | Move::Split { mesh } => mesh,
        }
    }

    /// The layout after this move.
    pub fn apply(self, l: &mut Layout) {
        match self {
            Move::AllReduce { mesh } => l.partial &= !(1 << mesh),
            Move::ReduceScatter { mesh, axis } => {
                l.partial &= !(1 << mesh);
                l.dims[axis].push(mesh);
            }
            Move::AllGather { axis, .. } => {
                l.dims[axis].pop();
            }
            Move::AllToAll { mesh, from, to } => {
                l.dims[from].pop();
                l.dims[to].push(mesh);
            }
            Move::Slice { mesh, axis } => l.dims[axis].push(mesh),
            Move::Split { mesh } => l.partial |= 1 << mesh,
        }
    }
}

/// The moves from `from` to `to` for an array of global `shape` on
/// `mesh`, in order: pending sums completed (reduce-scatter where the
/// target splits an axis next over the same mesh axis; over two or more
/// other mesh axes, a reduce-scatter over the largest onto the longest
/// axis it divides, then all-reduces of the smaller blocks over the rest,
/// the split undone below; else all-reduce), splits undone innermost
/// first (all-to-all where the freed mesh axis is the next split another
/// axis needs, else all-gather), then new splits taken locally.
pub(crate) fn moves(from: &Layout, to: &Layout, shape: &[usize], mesh: &MeshShape) -> Vec<Move> {
    let mut cur = from.clone();
    let mut out = Vec::new();
    let prefix = |a: &[u8], b: &[u8]| a.len() <= b.len() && a == &b[..a.len()];
    let mut step = |m: Move, cur: &mut Layout| {
        m.apply(cur);
        out.push(m);
    };
    // 1. Pending sums the target does not keep.
    let mut reduce = Vec::new();
    for m in 0..8u8 {
        let bit = 1 << m;
        if cur.partial & bit == 0 || to.partial & bit != 0 {
            continue;
        }
        let split_elsewhere = cur.split_mask() & bit != 0;
        let scatter = (0..to.dims.len()).find(|&k| {
            let want = &to.dims[k];
            !split_elsewhere
                && prefix(&cur.dims[k], want)
                && want.get(cur.dims[k].len()) == Some(&m)
        });
        match scatter {
            Some(axis) => step(Move::ReduceScatter { mesh: m, axis }, &mut cur),
            None => reduce.push(m),
        }
    }
    if reduce.len() >= 2 {
        // The largest mesh axis first: the others then reduce blocks
        // that much smaller.
        reduce.sort_by_key(|&m| std::cmp::Reverse(mesh.size(m as usize)));
        let first = reduce[0];
        let n = mesh.size(first as usize);
        let local = cur.local_shape(shape, mesh);
        let axis = (0..local.len())
            .filter(|&k| local[k] >= n && local[k].is_multiple_of(n))
            .max_by_key(|&k| (local[k], std::cmp::Reverse(k)));
        if let Some(axis) = axis {
            step(Move::ReduceScatter { mesh: first, axis }, &mut cur);
            reduce.remove(0);
        }
    }
    reduce.sort();
    for m in reduce {
        step(Move::AllReduce { mesh: m }, &mut cur);
    }
    // 2. Splits the target does not have, innermost first.
    for k in 0..cur.dims.len() {
        while !prefix(&cur.dims[k], &to.dims[k]) {
            let m = *cur.dims[k].last().expect("a non-prefix is non-empty");
            let target = (0..to.dims.len()).find(|&j| {
                j != k
                    && prefix(&cur.dims[j], &to.dims[j])
                    && to.dims[j].get(cur.dims[j].len()) == Some(&m)
            });
            match target {
                Some(j) => step(
                    Move::AllToAll {
                        mesh: m,
                        from: k,
                        to: j,
                    },
                    &mut cur,
                ),
                None => step(Move::AllGather { mesh: m, axis: k }, &mut cur),
            }
        }
    }
    // 3. Splits to take, outermost first.
    for k in 0..cur.dims.len() {
        while cur.dims[k].len() < to.dims[k].len() {
            let m = to.dims[k][cur.dims[k].len()];
            step(Move::Slice { mesh: m, axis: k }, &mut cur);
        }
    }
    // 4. Pending sums the target starts.
    for m in 0..8u8 {
        if to.partial & (1 << m) != 0 && cur.partial & (1 << m) == 0 {
            step(Move::Split { mesh: m }, &mut cur);
        }
    }
    debug_assert_eq!(&cur, to, "moves from {from:?} must reach {to:?}");
    out
}

/// The bytes one rank sends to move an array of global `shape` and
/// `dtype` from `from` to `to` on a mesh of shape `mesh`: what
/// [`DArray::reshard`](super::DArray) sends, by the formula the
/// collectives count ([`bytes_sent`]).
///
/// ```
/// use nabla::{DType, dist::{self, MeshShape, Spec}};
/// let mesh = MeshShape::new(&[("d", 4)]);
/// let rows = Spec::new(&[Some("d"), None]);
/// let whole = Spec::new(&[None, None]);
/// // An all-gather of [2, 8] f64 blocks over 4 ranks: 3 blocks of 128 bytes sent.
/// assert_eq!(dist::reshard_cost(&[8, 8], DType::F64, &mesh, &rows, &whole), 384);
/// ```
#[track_caller]
pub fn reshard_cost(
    shape: &[usize],
    dtype: DType,
    mesh: &MeshShape,
    from: &Spec,
    to: &Spec,
) -> u64 {
    let elem = if dtype == DType::F32 { 4 } else { 8 };
    let (a, b) = (
        from.resolve(shape, mesh, "reshard_cost"),
        to.resolve(shape, mesh, "reshard_cost"),
    );
    reshard_bytes(&a, &b, shape, elem, mesh)
}

/// The bytes one rank sends to take an array of global `shape` with
/// `elem` bytes per element from `from` to `to`.
pub(crate) fn reshard_bytes(
    from: &Layout,
    to: &Layout,
    shape: &[usize],
    elem: usize,
    mesh: &MeshShape,
) -> u64 {
    let mut cur = from.clone();
    let mut total = 0;
    for m in moves(from, to, shape, mesh) {
        if let Some(w) = m.wire() {
            let local: usize = cur.local_shape(shape, mesh).iter().product();
            total += wire_bytes(w, mesh.size(m.mesh() as usize), local * elem);
        }
        m.apply(&mut cur);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(dims: &[&[u8]], partial: u8) -> Layout {
        Layout {
            dims: dims.iter().map(|d| d.to_vec()).collect(),
            partial,
        }
    }

    #[test]
    fn the_cheapest_collective_for_each_change() {
        let mesh = MeshShape::new(&[("a", 2), ("b", 4)]);
        // Pending over a, target split on a: reduce-scatter.
        assert_eq!(
            moves(&l(&[&[], &[]], 1), &l(&[&[0], &[]], 0), &[8, 8], &mesh),
            vec![Move::ReduceScatter { mesh: 0, axis: 0 }]
        );
        // Pending over a, target replicated: all-reduce.
        assert_eq!(
            moves(&l(&[&[]], 1), &l(&[&[]], 0), &[8], &mesh),
            vec![Move::AllReduce { mesh: 0 }]
        );
        // Split moves from axis 0 to axis 1: all-to-all.
        assert_eq!(
            moves(&l(&[&[1], &[]], 0), &l(&[&[], &[1]], 0), &[8, 8], &mesh),
            vec![Move::AllToAll {
                mesh: 1,
                from: 0,
                to: 1
            }]
        );
        // Gathers innermost first, then slices.
        assert_eq!(
            moves(&l(&[&[0, 1], &[]], 0), &l(&[&[0], &[]], 0), &[8, 8], &mesh),
            vec![Move::AllGather { mesh: 1, axis: 0 }]
        );
        assert_eq!(
            moves(&l(&[&[], &[]], 0), &l(&[&[1], &[0]], 0), &[8, 8], &mesh),
            vec![
                Move::Slice { mesh: 1, axis: 0 },
                Move::Slice { mesh: 0, axis: 1 }
            ]
        );
        // Pending over both axes: reduce-scatter over the larger (b),
        // all-reduce the quarter blocks over a, gather b back: 896 bytes
        // against 1280 for an all-reduce per axis.
        let both = moves(&l(&[&[], &[]], 0b11), &l(&[&[], &[]], 0), &[8, 8], &mesh);
        assert_eq!(
            both,
            vec![
                Move::ReduceScatter { mesh: 1, axis: 0 },
                Move::AllReduce { mesh: 0 },
                Move::AllGather { mesh: 1, axis: 0 }
            ]
        );
        assert_eq!(
            reshard_bytes(&l(&[&[], &[]], 0b11), &l(&[&[], &[]], 0), &[8, 8], 8, &mesh),
            384 + 128 + 384
        );
        // Bytes: an [8, 8] f64 all-gathered over b (4 ranks) from [2, 8] blocks.
        assert_eq!(
            reshard_bytes(&l(&[&[1], &[]], 0), &l(&[&[], &[]], 0), &[8, 8], 8, &mesh),
            16 * 8 * 3
        );
    }
}
