//! Sharding rules as factors (GSPMD/Shardy's formulation): each axis of an
//! op's operands and output names a factor, and axes naming the same
//! factor are split the same way. `matmul` is `…ik, …kj → …ij`; an
//! elementwise op shares every factor; a sum drops its axes' factors and
//! leaves a partial sum where they were split; a reshape maps the leading
//! axis of each merged or split group. An axis with no factor must be whole
//! (the axis a cumsum runs along, a gathered axis).
//!
//! One [`Rule`] per op call, built by the constructor of the op's family
//! (`docs/design.md` § Automatic distribution lists which op uses which);
//! an [`Assignment`] of mesh axes to factors fixes every operand's and the
//! output's [`Layout`]. The runtime's propagation (`propagate.rs`) and the
//! planner both read these, so what runs is what was planned.

use super::layout::{Layout, MeshShape};
use std::ops::Range;

/// A factor's index within one [`Rule`].
pub(crate) type Factor = u8;

/// Which pending (partial) sums pass through an op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Linearity {
    /// Nonlinear: every operand's pending sums are completed first.
    None,
    /// Linear in each operand of the bit mask, the others held fixed
    /// (`mul`, `matmul`, `neg`, shape ops): one operand may stay pending
    /// over a mesh axis the op does not otherwise use.
    Each(u8),
    /// Additive (`add`, `sub`, `concat`, `select`): operands pending over
    /// the same mesh axes pass that on.
    Sum,
    /// The operands' values are not read (`zeros_like`): their pending
    /// sums do not matter.
    Shape,
}

/// One op call's factors: for every operand axis and output axis, its
/// factor (or `None`: the axis must be whole), the factors summed away,
/// and what the op does with pending sums.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Rule {
    /// The op's name, for plans and errors.
    pub name: &'static str,
    /// Operand shapes (global).
    pub shapes: Vec<Vec<usize>>,
    /// Output shape (global).
    pub out: Vec<usize>,
    /// Factor of each operand axis.
    pub operands: Vec<Vec<Option<Factor>>>,
    /// Factor of each output axis.
    pub output: Vec<Option<Factor>>,
    /// The number of factors.
    pub factors: u8,
    /// Factors summed over (bit mask): split, they leave the output
    /// pending over their mesh axes.
    pub summed: u32,
    /// What passes pending sums.
    pub linear: Linearity,
    /// Floating-point operations of the whole (unsplit) op.
    pub flops: f64,
}

/// Mesh axes per factor (major first): how one op call is split.
pub(crate) type Assignment = Vec<Vec<u8>>;

fn numel(s: &[usize]) -> f64 {
    s.iter().product::<usize>() as f64
}

impl Rule {
    fn new(name: &'static str, shapes: Vec<Vec<usize>>, out: Vec<usize>) -> Rule {
        Rule {
            name,
            operands: shapes.iter().map(|s| vec![None; s.len()]).collect(),
            output: vec![None; out.len()],
            flops: numel(&out),
            shapes,
            out,
            factors: 0,
            summed: 0,
            linear: Linearity::None,
        }
    }

    fn fresh(&mut self) -> Factor {
        self.factors += 1;
        self.factors - 1
    }

    /// Elementwise with NumPy broadcasting: one factor per output axis,
    /// shared by every operand axis of the same length aligned with it
    /// (a broadcast length-1 axis has none).
    pub fn elementwise(
        name: &'static str,
        shapes: &[&[usize]],
        out: &[usize],
        linear: Linearity,
    ) -> Rule {
        let mut r = Rule::new(
            name,
            shapes.iter().map(|s| s.to_vec()).collect(),
            out.to_vec(),
        );
        for j in 0..out.len() {
            let f = r.fresh();
            r.output[j] = Some(f);
            for (k, s) in shapes.iter().enumerate() {
                let lead = out.len() - s.len();
                if j >= lead && s[j - lead] == out[j] {
                    r.operands[k][j - lead] = Some(f);
                }
            }
        }
        r.linear = linear;
        r
    }

    /// A reduction of `axes`: a sum drops their factors into `summed`; a
    /// max, min or product needs them whole.
    pub fn reduce(
        name: &'static str,
        shape: &[usize],
        axes: &[usize],
        keepdim: bool,
        sum: bool,
    ) -> Rule {
        let out: Vec<usize> = (0..shape.len())
            .filter_map(|k| {
                if !axes.contains(&k) {
                    Some(shape[k])
                } else if keepdim {
                    Some(1)
                } else {
                    None
                }
            })
            .collect();
        let mut r = Rule::new(name, vec![shape.to_vec()], out);
        r.flops = numel(shape);
        let mut j = 0;
        for k in 0..shape.len() {
            let reduced = axes.contains(&k);
            if reduced && sum {
                let f = r.fresh();
                r.operands[0][k] = Some(f);
                r.summed |= 1 << f;
            } else if !reduced {
                let f = r.fresh();
                r.operands[0][k] = Some(f);
                r.output[j] = Some(f);
            }
            if !reduced || keepdim {
                j += 1;
            }
        }
        r.linear = if sum {
            Linearity::Each(1)
        } else {
            Linearity::None
        };
        r
    }

    /// `matmul` with NumPy's rules: `…ik, …kj → …ij` (batch axes
    /// broadcast; a 1-D operand is a vector).
    pub fn matmul(a: &[usize], b: &[usize], out: &[usize]) -> Rule {
        let mut r = Rule::new("matmul", vec![a.to_vec(), b.to_vec()], out.to_vec());
        let k = r.fresh();
        r.summed |= 1 << k;
        let (an, bn) = (a.len(), b.len());
        r.operands[0][an - 1] = Some(k);
        r.operands[1][if bn == 1 { 0 } else { bn - 2 }] = Some(k);
        let mut oj = out.len();
        if bn >= 2 {
            let j = r.fresh();
            r.operands[1][bn - 1] = Some(j);
            oj -= 1;
            r.output[oj] = Some(j);
        }
        if an >= 2 {
            let i = r.fresh();
            r.operands[0][an - 2] = Some(i);
            oj -= 1;
            r.output[oj] = Some(i);
        }
        // Batch axes, right-aligned, shared where the lengths agree.
        let (ab, bb) = (an.saturating_sub(2), bn.saturating_sub(2));
        for (o, &len) in out.iter().enumerate().take(oj) {
            let f = r.fresh();
            r.output[o] = Some(f);
            let back = oj - o;
            if back <= ab && a[ab - back] == len {
                r.operands[0][ab - back] = Some(f);
            }
            if back <= bb && b[bb - back] == len {
                r.operands[1][bb - back] = Some(f);
            }
        }
        let kk = a[an - 1] as f64;
        r.flops = 2.0 * kk * numel(out);
        r.linear = Linearity::Each(0b11);
        r
    }

    /// A reshape: consecutive axes are grouped where their products agree;
    /// the leading axis of a group keeps its split when the group's
    /// leading output axis is as divisible, every other axis is whole.
    pub fn reshape(from: &[usize], to: &[usize]) -> Rule {
        let mut r = Rule::new("reshape", vec![from.to_vec()], to.to_vec());
        r.flops = 0.0;
        let (mut i, mut j) = (0, 0);
        while i < from.len() && j < to.len() {
            let (i0, j0) = (i, j);
            let (mut p, mut q) = (from[i], to[j]);
            i += 1;
            j += 1;
            while p != q {
                if p < q {
                    p *= from[i];
                    i += 1;
                } else {
                    q *= to[j];
                    j += 1;
                }
            }
            if from[i0] > 1 && to[j0] > 1 {
                let f = r.fresh();
                r.operands[0][i0] = Some(f);
                r.output[j0] = Some(f);
            }
        }
        r.linear = Linearity::Each(1);
        r
    }

    /// A permutation of the axes: output axis `j` is operand axis `perm[j]`.
    pub fn permute(shape: &[usize], perm: &[usize]) -> Rule {
        let out: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
        let mut r = Rule::new("permute", vec![shape.to_vec()], out);
        r.flops = 0.0;
        for (j, &p) in perm.iter().enumerate() {
            let f = r.fresh();
            r.operands[0][p] = Some(f);
            r.output[j] = Some(f);
        }
        r.linear = Linearity::Each(1);
        r
    }

    /// `broadcast_to`: the output's new leading axes and stretched
    /// length-1 axes are the output's own factors (each rank fills its
    /// block); the others are shared.
    pub fn broadcast(from: &[usize], to: &[usize]) -> Rule {
        let mut r = Rule::elementwise("broadcast_to", &[from], to, Linearity::Each(1));
        r.flops = 0.0;
        r
    }

    /// `sum_to_shape`, the transpose of a broadcast: the summed axes'
    /// factors go into `summed`.
    pub fn sum_to(from: &[usize], to: &[usize]) -> Rule {
        let mut r = Rule::new("sum_to_shape", vec![from.to_vec()], to.to_vec());
        r.flops = numel(from);
        let lead = from.len() - to.len();
        for k in 0..from.len() {
            let f = r.fresh();
            r.operands[0][k] = Some(f);
            if k >= lead && to[k - lead] == from[k] {
                r.output[k - lead] = Some(f);
            } else {
                r.summed |= 1 << f;
            }
        }
        r.linear = Linearity::Each(1);
        r
    }

    /// An op that reads or writes along some axes (a slice, a cumsum,
    /// an index along an axis): the axes in `whole` must be whole in the
    /// operand and the output; the rest are shared position by position.
    pub fn along(
        name: &'static str,
        shape: &[usize],
        out: &[usize],
        whole: &[usize],
        linear: Linearity,
    ) -> Rule {
        let mut r = Rule::new(name, vec![shape.to_vec()], out.to_vec());
        for k in 0..shape.len() {
            if !whole.contains(&k) {
                let f = r.fresh();
                r.operands[0][k] = Some(f);
                r.output[k] = Some(f);
            }
        }
        r.linear = linear;
        r
    }

    /// `concat` along `axis`: that axis whole everywhere, the others shared.
    pub fn concat(shapes: &[&[usize]], axis: usize, out: &[usize]) -> Rule {
        let mut r = Rule::new(
            "concat",
            shapes.iter().map(|s| s.to_vec()).collect(),
            out.to_vec(),
        );
        r.flops = 0.0;
        for j in 0..out.len() {
            if j == axis {
                continue;
            }
            let f = r.fresh();
            r.output[j] = Some(f);
            for k in 0..shapes.len() {
                r.operands[k][j] = Some(f);
            }
        }
        r.linear = Linearity::Sum;
        r
    }

    /// No rule fits (custom ops, `linalg`): every operand and the output
    /// whole on every rank.
    pub fn replicated(name: &'static str, shapes: &[&[usize]], out: &[usize]) -> Rule {
        Rule::new(
            name,
            shapes.iter().map(|s| s.to_vec()).collect(),
            out.to_vec(),
        )
    }

    /// A value with no operands (an input, a constant): every axis its own
    /// factor, free to be split.
    pub fn source(name: &'static str, out: &[usize]) -> Rule {
        let mut r = Rule::new(name, Vec::new(), out.to_vec());
        r.flops = 0.0;
        for j in 0..out.len() {
            let f = r.fresh();
            r.output[j] = Some(f);
        }
        r.linear = Linearity::Shape;
        r
    }

    /// Whether `a` is a valid split: no mesh axis on two factors, every
    /// axis of a split factor divisible by its parts, and no split of a
    /// factor an operand or output axis cannot take.
    pub fn valid(&self, a: &Assignment, mesh: &MeshShape) -> bool {
        let mut used = 0u16;
        for f in a {
            for &m in f {
                if used & (1 << m) != 0 {
                    return false;
                }
                used |= 1 << m;
            }
        }
        let ok = |shape: &[usize], axes: &[Option<Factor>]| {
            axes.iter().zip(shape).all(|(f, &d)| match f {
                Some(f) => {
                    let parts: usize = a[*f as usize]
                        .iter()
                        .map(|&m| mesh.size(m as usize))
                        .product();
                    d.is_multiple_of(parts)
                }
                None => true,
            })
        };
        self.shapes
            .iter()
            .zip(&self.operands)
            .all(|(s, o)| ok(s, o))
            && ok(&self.out, &self.output)
    }

    /// The layout operand `k` must have under `a` (nothing pending).
    pub fn operand_layout(&self, k: usize, a: &Assignment) -> Layout {
        Layout {
            dims: self.operands[k]
                .iter()
                .map(|f| f.map(|f| a[f as usize].clone()).unwrap_or_default())
                .collect(),
            partial: 0,
        }
    }

    /// The output's layout under `a`, pending over the summed factors'
    /// mesh axes and over `carried`.
    pub fn output_layout(&self, a: &Assignment, carried: u8) -> Layout {
        let mut partial = carried;
        for (f, axes) in a.iter().enumerate() {
            if self.summed & (1 << f) != 0 {
                for &m in axes {
                    partial |= 1 << m;
                }
            }
        }
        Layout {
            dims: self
                .output
                .iter()
                .map(|f| f.map(|f| a[f as usize].clone()).unwrap_or_default())
                .collect(),
            partial,
        }
    }

    /// The mesh axes `a` uses, as a bit mask.
    fn used(a: &Assignment) -> u8 {
        a.iter().flatten().fold(0, |m, &x| m | 1 << x)
    }

    /// Given each operand's pending mesh axes, which each operand must
    /// complete before the op (one mask per operand) and which the output
    /// carries on.
    pub fn pending(&self, pending: &[u8], a: &Assignment) -> (Vec<u8>, u8) {
        let n = pending.len();
        match self.linear {
            Linearity::Shape => (vec![0; n], 0),
            Linearity::None => (pending.to_vec(), 0),
            Linearity::Sum => {
                let common = pending.iter().fold(u8::MAX, |c, &p| c & p) & !Self::used(a);
                let common = if n == 0 { 0 } else { common };
                (pending.iter().map(|&p| p & !common).collect(), common)
            }
            Linearity::Each(mask) => {
                let used = Self::used(a);
                let mut reduce = pending.to_vec();
                let mut carried = 0u8;
                for m in 0..8u8 {
                    let bit = 1 << m;
                    let holders: Vec<usize> = (0..n).filter(|&k| pending[k] & bit != 0).collect();
                    if let [k] = holders[..]
                        && mask & (1 << k) != 0
                        && used & bit == 0
                    {
                        reduce[k] &= !bit;
                        carried |= bit;
                    }
                }
                (reduce, carried)
            }
        }
    }

    /// What each operand must become before the op runs under `a`, given
    /// the operands' layouts (`from`), and the output's layout: the
    /// operands take the assignment's splits, complete the pending sums
    /// the op cannot carry, and keep the others. The runtime moves each
    /// operand with [`moves`](super::moves::moves) to its target; the
    /// planner prices the same moves.
    pub fn targets(&self, a: &Assignment, from: &[&Layout]) -> (Vec<Layout>, Layout) {
        let pending: Vec<u8> = from.iter().map(|l| l.partial).collect();
        let (reduce, carried) = self.pending(&pending, a);
        let targets = (0..from.len())
            .map(|k| {
                let mut t = self.operand_layout(k, a);
                t.partial = if self.linear == Linearity::Shape {
                    from[k].partial
                } else {
                    pending[k] & !reduce[k]
                };
                t
            })
            .collect();
        (targets, self.output_layout(a, carried))
    }

    /// Every valid assignment on `mesh`: each mesh axis unused or on one
    /// factor (several on one factor in mesh order). The planner's
    /// strategies for this op.
    pub fn assignments(&self, mesh: &MeshShape) -> Vec<Assignment> {
        let nf = self.factors as usize;
        let mut out = Vec::new();
        let mut choice = vec![0usize; mesh.len()]; // 0: unused, f + 1: factor f
        loop {
            let mut a = vec![Vec::new(); nf];
            for (m, &c) in choice.iter().enumerate() {
                if c > 0 && mesh.size(m) > 1 {
                    a[c - 1].push(m as u8);
                }
            }
            let trivial = choice
                .iter()
                .enumerate()
                .any(|(m, &c)| c > 0 && mesh.size(m) == 1);
            if !trivial && self.valid(&a, mesh) {
                out.push(a);
            }
            // Next choice (odometer over nf + 1 values per mesh axis).
            let mut m = 0;
            loop {
                if m == choice.len() {
                    return out;
                }
                choice[m] += 1;
                if choice[m] <= nf {
                    break;
                }
                choice[m] = 0;
                m += 1;
            }
        }
    }
}

/// The axes a slice keeps whole-length (`0..len`) and those it cuts.
pub(crate) fn cut_axes(shape: &[usize], ranges: &[Range<usize>]) -> Vec<usize> {
    (0..shape.len())
        .filter(|&k| !(ranges[k].start == 0 && ranges[k].end == shape[k]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matmul_factors_and_partial_sums() {
        let r = Rule::matmul(&[4, 6], &[6, 8], &[4, 8]);
        assert_eq!(r.factors, 3);
        let mesh = MeshShape::new(&[("model", 2)]);
        // Split the contraction: both operands split on k, output pending.
        let k = r.operands[0][1].unwrap() as usize;
        let mut a = vec![Vec::new(); 3];
        a[k] = vec![0];
        assert_eq!(r.operand_layout(0, &a).dims, vec![vec![], vec![0]]);
        assert_eq!(r.operand_layout(1, &a).dims, vec![vec![0], vec![]]);
        assert_eq!(r.output_layout(&a, 0).partial, 1);
        // Every axis of the mesh on one factor, or none: 1 + 3 strategies.
        assert_eq!(r.assignments(&mesh).len(), 4);
    }

    #[test]
    fn reshape_keeps_the_leading_axis_of_each_group() {
        let r = Rule::reshape(&[8, 3], &[2, 4, 3]);
        assert_eq!(r.operands[0], vec![Some(0), Some(1)]);
        assert_eq!(r.output, vec![Some(0), None, Some(1)]);
        let r = Rule::reshape(&[2, 4, 3], &[8, 3]);
        assert_eq!(r.operands[0], vec![Some(0), None, Some(1)]);
    }

    #[test]
    fn pending_sums_pass_linear_ops_only() {
        let add = Rule::elementwise("add", &[&[4], &[4]], &[4], Linearity::Sum);
        let a = vec![Vec::new()];
        assert_eq!(add.pending(&[1, 1], &a), (vec![0, 0], 1));
        assert_eq!(add.pending(&[1, 0], &a), (vec![1, 0], 0));
        let mul = Rule::elementwise("mul", &[&[4], &[4]], &[4], Linearity::Each(0b11));
        assert_eq!(mul.pending(&[1, 0], &a), (vec![0, 0], 1));
        assert_eq!(mul.pending(&[1, 1], &a), (vec![1, 1], 0));
        let sin = Rule::elementwise("sin", &[&[4]], &[4], Linearity::None);
        assert_eq!(sin.pending(&[1], &a), (vec![1], 0));
    }
}
