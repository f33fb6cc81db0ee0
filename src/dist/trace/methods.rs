//! `Traced` as a value type: each required method of `Value` and
//! `ArrayValue` checks its operands' shapes and appends one node with the
//! method's rule (`rules.rs`). The provided methods keep their defaults.

use super::super::graph::Source;
use super::super::registry_methods::registry_methods;
use super::super::rules;
use super::{Traced, shapes};
use crate::compose::FixedArity;
use crate::custom::CustomOp;
use crate::{Array, ArrayValue, CompareOp, DType, Device, Shape, Value};
use ndarray::Slice;

impl Traced {
    /// A registry unary op (`registry_methods!`): same shape and dtype.
    #[track_caller]
    pub(super) fn unary_op(&self, name: &'static str, _f: impl Fn(&Array) -> Array) -> Traced {
        self.unary(rules::unary(name, &self.shape))
    }

    /// A registry binary op (`registry_methods!`): broadcast, one dtype.
    #[track_caller]
    pub(super) fn binary_op(
        &self,
        o: &Traced,
        name: &'static str,
        _f: impl Fn(&Array, &Array) -> Array,
    ) -> Traced {
        shapes::same_dtype(name, self, o);
        shapes::broadcast(name, &self.shape, &o.shape);
        Traced::op(
            rules::binary(name, &self.shape, &o.shape),
            &[self, o],
            self.dtype,
            Source::Op,
        )
    }

    /// An op of this value alone, keeping its dtype.
    #[track_caller]
    fn unary(&self, rule: super::Rule) -> Traced {
        Traced::op(rule, &[self], self.dtype, Source::Op)
    }

    #[track_caller]
    fn reduce(&self, name: &'static str, axes: &[usize], keepdim: bool) -> Traced {
        shapes::axes(name, &self.shape, axes);
        self.unary(rules::reduce(name, &self.shape, axes, keepdim))
    }

    #[track_caller]
    fn chooser(
        &self,
        name: &'static str,
        y: &Traced,
        axes: &[usize],
        keepdim: bool,
        last: &Traced,
    ) -> Traced {
        shapes::axes(name, &self.shape, axes);
        let rule = rules::chooser(name, &self.shape, &y.shape, axes, keepdim, &last.shape);
        Traced::op(rule, &[self, y, last], self.dtype, Source::Op)
    }
}

impl Value for Traced {
    fn shape_vec(&self) -> Shape {
        Shape::from_slice(&self.shape)
    }
    /// A constant of the program: it reads only the operand's shape.
    #[track_caller]
    fn full_like(&self, _v: f64) -> Self {
        Traced::op(
            rules::full_like(&self.shape),
            &[self],
            self.dtype,
            Source::Constant,
        )
    }
    #[track_caller]
    fn add_scalar(&self, _c: f64) -> Self {
        self.unary(rules::unary("add_scalar", &self.shape))
    }
    #[track_caller]
    fn mul_scalar(&self, _c: f64) -> Self {
        self.unary(rules::unary("mul_scalar", &self.shape))
    }
    nabla_ops::unary_ops!(registry_methods);
    nabla_ops::binary_ops!(registry_methods);
    #[track_caller]
    fn cmp_mask(&self, o: &Self, _op: CompareOp) -> Self {
        shapes::broadcast("cmp_mask", &self.shape, &o.shape);
        Traced::op(
            rules::binary("cmp", &self.shape, &o.shape),
            &[self, o],
            self.dtype,
            Source::Op,
        )
    }
    #[track_caller]
    fn sum_to_shape(&self, shape: &[usize]) -> Self {
        shapes::sum_to(&self.shape, shape);
        self.unary(rules::sum_to_shape(&self.shape, shape))
    }
    #[track_caller]
    fn broadcast_to(&self, shape: &[usize]) -> Self {
        crate::primitives::shape::broadcast_to::out_shape(&self.shape, shape);
        self.unary(rules::broadcast_to(&self.shape, shape))
    }
    #[track_caller]
    fn stop_gradient(&self) -> Self {
        self.unary(rules::unary("stop_gradient", &self.shape))
    }
    /// `0.0`, recording nothing: plans are made from shapes.
    fn item_f64(&self) -> f64 {
        0.0
    }
}

impl ArrayValue for Traced {
    #[track_caller]
    fn reshape(&self, shape: &[usize]) -> Self {
        crate::primitives::shape::reshape::out_shape(&self.shape, shape);
        self.unary(rules::reshape(&self.shape, shape))
    }
    #[track_caller]
    fn permute(&self, perm: &[usize]) -> Self {
        crate::primitives::shape::permute::out_shape(&self.shape, perm);
        self.unary(rules::permute(&self.shape, perm))
    }
    #[track_caller]
    fn sum_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        self.reduce("sum_axes", axes, keepdim)
    }
    #[track_caller]
    fn max_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        self.reduce("max_axes", axes, keepdim)
    }
    #[track_caller]
    fn min_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        self.reduce("min_axes", axes, keepdim)
    }
    #[track_caller]
    fn prod_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        self.reduce("prod_axes", axes, keepdim)
    }
    #[track_caller]
    fn chooser_jvp(&self, y: &Self, axes: &[usize], keepdim: bool, dx: &Self) -> Self {
        self.chooser("chooser_jvp", y, axes, keepdim, dx)
    }
    #[track_caller]
    fn chooser_vjp(&self, y: &Self, axes: &[usize], keepdim: bool, ct: &Self) -> Self {
        self.chooser("chooser_vjp", y, axes, keepdim, ct)
    }
    #[track_caller]
    fn cumsum_axis(&self, axis: usize, _reverse: bool) -> Self {
        shapes::axes("cumsum", &self.shape, &[axis]);
        self.unary(rules::cumsum(&self.shape, axis))
    }
    #[track_caller]
    fn slice(&self, slices: &[Slice]) -> Self {
        let out = shapes::slice("slice", &self.shape, slices);
        self.unary(rules::slice(&self.shape, slices, &out))
    }
    #[track_caller]
    fn slice_place(&self, shape: &[usize], slices: &[Slice]) -> Self {
        let region = shapes::slice("slice_place", shape, slices);
        if region != self.shape {
            panic!(
                "slice_place: a value of shape {:?} does not fill the region {slices:?} of shape {shape:?} \
                 (which has shape {region:?}); place a value of the region's shape",
                self.shape
            );
        }
        self.unary(rules::slice_place(&self.shape, shape, slices))
    }
    #[track_caller]
    fn index_select(&self, axis: usize, idx: &[usize]) -> Self {
        let out = shapes::index_select(&self.shape, axis, idx);
        self.unary(rules::along_axis("index_select", &self.shape, &out, axis))
    }
    #[track_caller]
    fn index_add(&self, shape: &[usize], axis: usize, idx: &[usize]) -> Self {
        shapes::index_add(&self.shape, shape, axis, idx);
        self.unary(rules::along_axis("index_add", &self.shape, shape, axis))
    }
    #[track_caller]
    fn concat(parts: &[Self], axis: usize) -> Self {
        shapes::concat(parts, axis);
        let shapes: Vec<&[usize]> = parts.iter().map(|p| &p.shape[..]).collect();
        let refs: Vec<&Traced> = parts.iter().collect();
        Traced::op(
            rules::concat(&shapes, axis),
            &refs,
            parts[0].dtype,
            Source::Op,
        )
    }
    /// The mask's values are not read; it must not widen the output.
    #[track_caller]
    fn select(mask: &Array, a: &Self, b: &Self) -> Self {
        shapes::same_dtype("where", a, b);
        shapes::select(mask, &a.shape, &b.shape);
        Traced::op(
            rules::select(&a.shape, &b.shape),
            &[a, b],
            a.dtype,
            Source::Op,
        )
    }
    #[track_caller]
    fn matmul(&self, o: &Self) -> Self {
        crate::primitives::linalg::matmul::out_shape(&self.shape, &o.shape);
        shapes::same_dtype("matmul", self, o);
        Traced::op(
            rules::matmul(&self.shape, &o.shape),
            &[self, o],
            self.dtype,
            Source::Op,
        )
    }
    /// A constant node of `a`'s shape in this value's dtype (as `Array`'s
    /// `lift` casts).
    fn lift(&self, a: &Array) -> Self {
        Traced::push(
            self.recording,
            rules::constant(a.shape()),
            Vec::new(),
            self.dtype,
            Source::Constant,
        )
    }
    fn dtype(&self) -> DType {
        self.dtype
    }
    /// Always the CPU: a recording has no storage.
    fn device(&self) -> Device {
        Device::Cpu
    }
    /// Runs `op.forward` once on zero arrays of the operands' dtypes for
    /// the output's shape and dtype. An op declared batch-wise over its
    /// leading axes (`shard = last(k)`) runs on one element of that batch
    /// (what a rank's block would be if the batch were split all the
    /// way), and the output's batch axes are the operands' again: the
    /// recording then costs the same for any batch (a 12-layer GPT's
    /// softmax rows would otherwise be computed in full, seconds of a
    /// plan). Other ops run on zeros of the full shapes.
    #[track_caller]
    fn apply_custom<Op: CustomOp<A>, A: FixedArity>(op: &Op, x: &A::Args<Self>) -> Self {
        let xs: Vec<&Traced> = (0..A::N).map(|i| A::get(x, i)).collect();
        let shapes: Vec<&[usize]> = xs.iter().map(|t| &t.shape[..]).collect();
        // The batch axes (those `rules::custom` shares) and their lengths.
        let batch: Vec<usize> = match Op::WHOLE_LAST {
            Some(k) => shapes
                .first()
                .map_or(Vec::new(), |s| s[..s.len().saturating_sub(k)].to_vec()),
            None => Vec::new(),
        };
        let shrink = |s: &[usize]| -> Vec<usize> {
            s.iter()
                .enumerate()
                .map(|(i, &d)| {
                    if batch.get(i) == Some(&d) && d > 0 {
                        1
                    } else {
                        d
                    }
                })
                .collect()
        };
        let zeros: Vec<Array> = xs
            .iter()
            .map(|t| Array::zeros(&shrink(&t.shape), t.dtype))
            .collect();
        let y = crate::no_grad(|| op.forward(&A::from_fn(|i| zeros[i].clone())));
        let out: Vec<usize> = y
            .shape()
            .iter()
            .enumerate()
            .map(|(i, &d)| match batch.get(i) {
                Some(&b) if d == 1 && b > 0 => b,
                _ => d,
            })
            .collect();
        Traced::op(
            rules::custom(Op::NAME, Op::WHOLE_LAST, &shapes, &out),
            &xs,
            y.dtype(),
            Source::Op,
        )
    }
}
