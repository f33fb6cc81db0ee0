//! `DArray` as a value type of the generic programs: every method builds
//! the op's sharding rule (`rules.rs`), takes the planned or cheapest
//! assignment (`propagate.rs`), moves the operands to the layouts it
//! needs and runs the op on the blocks. Only the required methods are
//! written; the provided ones decompose into them, as for the recorder
//! (`trace.rs`), so a plan and a run meet the same ops.

use super::darray::DArray;
use super::factors::Rule;
use super::layout::Layout;
use super::propagate::assignment;
use super::registry_methods::registry_methods;
use super::rules;
use crate::compose::FixedArity;
use crate::custom::CustomOp;
use crate::{Array, ArrayValue, CompareOp, DType, Device, Shape, Value};
use ndarray::Slice;

fn width(d: DType) -> usize {
    if d == DType::F32 { 4 } else { 8 }
}

impl DArray {
    /// Runs one op: `rule` over `operands` on `mesh`; `local` computes
    /// this rank's output block from the moved operand blocks, given the
    /// output's layout and block shape.
    #[track_caller]
    fn apply(
        rule: Rule,
        operands: &[&DArray],
        like: &DArray,
        local: impl FnOnce(&[Array], &Layout, &[usize]) -> Array,
    ) -> DArray {
        let mesh = like.mesh;
        if let Some(o) = operands.iter().find(|o| o.mesh != mesh) {
            panic!(
                "nabla::dist: `{}` got DArrays on two meshes ({} and {}); reshard them onto one mesh first (dist::distribute(&x.to_global(), &mesh, &spec))",
                rule.name,
                mesh.shape(),
                o.mesh.shape()
            );
        }
        let ms = mesh.shape();
        let from: Vec<&Layout> = operands.iter().map(|d| &d.layout).collect();
        let a = assignment(&rule, &from, width(like.local.dtype()), &ms);
        let (targets, out) = rule.targets(&a, &from);
        let blocks: Vec<Array> = operands
            .iter()
            .zip(&targets)
            .map(|(d, t)| d.moved(t).local)
            .collect();
        let shape = out.local_shape(&rule.out, &ms);
        let y = local(&blocks, &out, &shape);
        debug_assert_eq!(y.shape(), &shape[..], "{}: the block's shape", rule.name);
        DArray {
            local: y,
            shape: Shape::from_slice(&rule.out),
            layout: out,
            mesh,
        }
    }

    /// This value laid out as `to`: a `like_input` op (under a plan, its
    /// assignment is the argument's split, priced by the planner), then
    /// the layout itself (the same blocks, named as `to` names them).
    #[track_caller]
    pub(crate) fn like_input(&self, to: &Layout) -> DArray {
        let rule = rules::unary("like_input", &self.shape);
        DArray::apply(rule, &[self], self, |b, _, _| b[0].clone()).moved(to)
    }

    #[track_caller]
    fn unary_op(&self, name: &'static str, f: impl FnOnce(&Array) -> Array) -> DArray {
        DArray::apply(rules::unary(name, &self.shape), &[self], self, |b, _, _| {
            f(&b[0])
        })
    }

    #[track_caller]
    fn binary_op(
        &self,
        o: &DArray,
        name: &'static str,
        f: impl FnOnce(&Array, &Array) -> Array,
    ) -> DArray {
        let rule = rules::binary(name, &self.shape, &o.shape);
        DArray::apply(rule, &[self, o], self, |b, _, _| f(&b[0], &b[1]))
    }
}

/// The length of `s` on an axis of length `d` (ndarray's rules: negative
/// ends count from the end, a negative step walks backwards).
fn slice_len(d: usize, s: &Slice) -> usize {
    let fix = |i: isize| {
        if i < 0 {
            (d as isize + i).max(0) as usize
        } else {
            (i as usize).min(d)
        }
    };
    let start = fix(s.start);
    let end = s.end.map_or(d, fix);
    let step = s.step.unsigned_abs();
    if end <= start {
        0
    } else {
        (end - start).div_ceil(step)
    }
}

/// `slices` with the axes `rule` keeps whole-length in the output taken
/// whole (their blocks are shorter than the global lengths).
fn local_slices(rule: &Rule, slices: &[Slice]) -> Vec<Slice> {
    rule.output
        .iter()
        .zip(slices)
        .map(|(f, s)| if f.is_some() { Slice::from(..) } else { *s })
        .collect()
}

impl Value for DArray {
    fn shape_vec(&self) -> Shape {
        self.shape.clone()
    }
    #[track_caller]
    fn full_like(&self, v: f64) -> Self {
        DArray::apply(rules::full_like(&self.shape), &[self], self, |b, _, _| {
            Value::full_like(&b[0], v)
        })
    }
    #[track_caller]
    fn add_scalar(&self, c: f64) -> Self {
        self.unary_op("add_scalar", |x| Value::add_scalar(x, c))
    }
    #[track_caller]
    fn mul_scalar(&self, c: f64) -> Self {
        self.unary_op("mul_scalar", |x| Value::mul_scalar(x, c))
    }
    nabla_ops::unary_ops!(registry_methods);
    nabla_ops::binary_ops!(registry_methods);
    #[track_caller]
    fn cmp_mask(&self, o: &Self, op: CompareOp) -> Self {
        self.binary_op(o, "cmp", |a, b| Value::cmp_mask(a, b, op))
    }
    #[track_caller]
    fn sum_to_shape(&self, shape: &[usize]) -> Self {
        let rule = rules::sum_to_shape(&self.shape, shape);
        DArray::apply(rule, &[self], self, |b, _, s| Value::sum_to_shape(&b[0], s))
    }
    #[track_caller]
    fn broadcast_to(&self, shape: &[usize]) -> Self {
        let rule = rules::broadcast_to(&self.shape, shape);
        DArray::apply(rule, &[self], self, |b, _, s| Value::broadcast_to(&b[0], s))
    }
    #[track_caller]
    fn stop_gradient(&self) -> Self {
        self.unary_op("stop_gradient", Value::stop_gradient)
    }
    #[track_caller]
    fn item_f64(&self) -> f64 {
        self.to_global().item_f64()
    }
}

impl ArrayValue for DArray {
    #[track_caller]
    fn reshape(&self, shape: &[usize]) -> Self {
        let rule = rules::reshape(&self.shape, shape);
        DArray::apply(rule, &[self], self, |b, _, s| ArrayValue::reshape(&b[0], s))
    }
    #[track_caller]
    fn permute(&self, perm: &[usize]) -> Self {
        let rule = rules::permute(&self.shape, perm);
        DArray::apply(rule, &[self], self, |b, _, _| {
            ArrayValue::permute(&b[0], perm)
        })
    }
    #[track_caller]
    fn sum_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        let rule = rules::reduce("sum_axes", &self.shape, axes, keepdim);
        DArray::apply(rule, &[self], self, |b, _, _| {
            ArrayValue::sum_axes(&b[0], axes, keepdim)
        })
    }
    #[track_caller]
    fn max_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        let rule = rules::reduce("max_axes", &self.shape, axes, keepdim);
        DArray::apply(rule, &[self], self, |b, _, _| {
            ArrayValue::max_axes(&b[0], axes, keepdim)
        })
    }
    #[track_caller]
    fn min_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        let rule = rules::reduce("min_axes", &self.shape, axes, keepdim);
        DArray::apply(rule, &[self], self, |b, _, _| {
            ArrayValue::min_axes(&b[0], axes, keepdim)
        })
    }
    #[track_caller]
    fn prod_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        let rule = rules::reduce("prod_axes", &self.shape, axes, keepdim);
        DArray::apply(rule, &[self], self, |b, _, _| {
            ArrayValue::prod_axes(&b[0], axes, keepdim)
        })
    }
    #[track_caller]
    fn chooser_jvp(&self, y: &Self, axes: &[usize], keepdim: bool, dx: &Self) -> Self {
        let rule = rules::chooser(
            "chooser_jvp",
            &self.shape,
            &y.shape,
            axes,
            keepdim,
            &dx.shape,
        );
        DArray::apply(rule, &[self, y, dx], self, |b, _, _| {
            ArrayValue::chooser_jvp(&b[0], &b[1], axes, keepdim, &b[2])
        })
    }
    #[track_caller]
    fn chooser_vjp(&self, y: &Self, axes: &[usize], keepdim: bool, ct: &Self) -> Self {
        let rule = rules::chooser(
            "chooser_vjp",
            &self.shape,
            &y.shape,
            axes,
            keepdim,
            &ct.shape,
        );
        DArray::apply(rule, &[self, y, ct], self, |b, _, _| {
            ArrayValue::chooser_vjp(&b[0], &b[1], axes, keepdim, &b[2])
        })
    }
    #[track_caller]
    fn cumsum_axis(&self, axis: usize, reverse: bool) -> Self {
        let rule = rules::cumsum(&self.shape, axis);
        DArray::apply(rule, &[self], self, |b, _, _| {
            ArrayValue::cumsum_axis(&b[0], axis, reverse)
        })
    }
    #[track_caller]
    fn slice(&self, slices: &[Slice]) -> Self {
        let out: Vec<usize> = self
            .shape
            .iter()
            .zip(slices)
            .map(|(&d, s)| slice_len(d, s))
            .collect();
        let rule = rules::slice(&self.shape, slices, &out);
        let local = local_slices(&rule, slices);
        DArray::apply(rule, &[self], self, |b, _, _| {
            ArrayValue::slice(&b[0], &local)
        })
    }
    #[track_caller]
    fn slice_place(&self, shape: &[usize], slices: &[Slice]) -> Self {
        let rule = rules::slice_place(&self.shape, shape, slices);
        let local = local_slices(&rule, slices);
        DArray::apply(rule, &[self], self, |b, _, s| {
            ArrayValue::slice_place(&b[0], s, &local)
        })
    }
    #[track_caller]
    fn index_select(&self, axis: usize, idx: &[usize]) -> Self {
        let mut out = self.shape.to_vec();
        out[axis] = idx.len();
        let rule = rules::along_axis("index_select", &self.shape, &out, axis);
        DArray::apply(rule, &[self], self, |b, _, _| {
            ArrayValue::index_select(&b[0], axis, idx)
        })
    }
    #[track_caller]
    fn index_add(&self, shape: &[usize], axis: usize, idx: &[usize]) -> Self {
        let rule = rules::along_axis("index_add", &self.shape, shape, axis);
        DArray::apply(rule, &[self], self, |b, _, s| {
            ArrayValue::index_add(&b[0], s, axis, idx)
        })
    }
    #[track_caller]
    fn concat(parts: &[Self], axis: usize) -> Self {
        let shapes: Vec<&[usize]> = parts.iter().map(|p| &p.shape[..]).collect();
        let rule = rules::concat(&shapes, axis);
        let ops: Vec<&DArray> = parts.iter().collect();
        DArray::apply(rule, &ops, &parts[0], |b, _, _| {
            <Array as ArrayValue>::concat(b, axis)
        })
    }
    #[track_caller]
    fn select(mask: &Array, a: &Self, b: &Self) -> Self {
        let rule = rules::select(&a.shape, &b.shape);
        let full = mask.broadcast_to(&rule.out);
        DArray::apply(rule, &[a, b], a, |x, out, _| {
            let m = a.mesh.block(&full, out);
            <Array as ArrayValue>::select(&m, &x[0], &x[1])
        })
    }
    #[track_caller]
    fn matmul(&self, o: &Self) -> Self {
        let rule = rules::matmul(&self.shape, &o.shape);
        DArray::apply(rule, &[self, o], self, |b, _, _| {
            ArrayValue::matmul(&b[0], &b[1])
        })
    }
    fn lift(&self, a: &Array) -> Self {
        let rule = rules::constant(a.shape());
        let x = self.local.lift(a);
        DArray::apply(rule, &[], self, |_, out, _| self.mesh.block(&x, out))
    }
    fn dtype(&self) -> DType {
        self.local.dtype()
    }
    fn device(&self) -> Device {
        self.local.device()
    }
    #[track_caller]
    fn apply_custom<Op: CustomOp<A>, A: FixedArity>(op: &Op, x: &A::Args<Self>) -> Self {
        let ops: Vec<&DArray> = (0..A::len(x)).map(|i| A::get(x, i)).collect();
        let like = ops[0];
        let mesh = like.mesh;
        let ms = mesh.shape();
        let shapes: Vec<&[usize]> = ops.iter().map(|d| &d.shape[..]).collect();
        // The output's leading (batch) axes are the first operand's; the
        // rest is known once the op has run on the blocks.
        let batch = Op::WHOLE_LAST.map_or(0, |k| shapes[0].len().saturating_sub(k));
        let lead = rules::custom(Op::NAME, Op::WHOLE_LAST, &shapes, &shapes[0][..batch]);
        let from: Vec<&Layout> = ops.iter().map(|d| &d.layout).collect();
        let a = assignment(&lead, &from, width(like.local.dtype()), &ms);
        let (targets, mut out) = lead.targets(&a, &from);
        let blocks: Vec<Array> = ops
            .iter()
            .zip(&targets)
            .map(|(d, t)| d.moved(t).local)
            .collect();
        let y =
            <Array as ArrayValue>::apply_custom::<Op, A>(op, &A::from_fn(|i| blocks[i].clone()));
        let mut shape: Vec<usize> = shapes[0][..batch].to_vec();
        shape.extend_from_slice(&y.shape()[batch.min(y.ndim())..]);
        out.dims.resize(shape.len(), Vec::new());
        DArray {
            local: y,
            shape: Shape::from_slice(&shape),
            layout: out,
            mesh,
        }
    }
}
