//! A checking value type for the tests: `Checked` runs every op on an
//! `Array` and records it as a `Traced` node in lockstep, and panics
//! (naming the op) where the node's shape or dtype differs from the
//! array's. Like `Traced` it overrides only the required methods, so it
//! meets the same op sequence.

use super::super::registry_methods::registry_methods;
use super::Traced;
use crate::compose::FixedArity;
use crate::custom::CustomOp;
use crate::{Array, ArrayValue, CompareOp, DType, Device, Shape, Value};
use ndarray::Slice;

/// An array and its recorded node.
#[derive(Clone, Debug)]
pub(super) struct Checked {
    pub a: Array,
    pub t: Traced,
}

impl Checked {
    #[track_caller]
    pub fn new(op: &str, a: Array, t: Traced) -> Checked {
        assert_eq!(
            (a.shape(), a.dtype()),
            (&t.shape[..], t.dtype),
            "{op}: the recorded node {} differs from the array",
            t.node
        );
        Checked { a, t }
    }

    fn unary_op(&self, name: &'static str, f: impl Fn(&Array) -> Array) -> Checked {
        Checked::new(name, f(&self.a), self.t.unary_op(name, &f))
    }

    fn binary_op(
        &self,
        o: &Checked,
        name: &'static str,
        f: impl Fn(&Array, &Array) -> Array,
    ) -> Checked {
        Checked::new(name, f(&self.a, &o.a), self.t.binary_op(&o.t, name, &f))
    }
}

/// `Checked::new(name, a-side, t-side)` for a method of trait `$tr`
/// called on both sides.
macro_rules! both {
    ($name:literal, $tr:ident, $self:ident . $m:ident($($arg:expr),*)) => {
        Checked::new($name, <Array as $tr>::$m(&$self.a $(, $arg)*), <Traced as $tr>::$m(&$self.t $(, $arg)*))
    };
}

impl Value for Checked {
    fn shape_vec(&self) -> Shape {
        self.t.shape_vec()
    }
    fn full_like(&self, v: f64) -> Self {
        both!("full_like", Value, self.full_like(v))
    }
    fn add_scalar(&self, c: f64) -> Self {
        both!("add_scalar", Value, self.add_scalar(c))
    }
    fn mul_scalar(&self, c: f64) -> Self {
        both!("mul_scalar", Value, self.mul_scalar(c))
    }
    nabla_ops::unary_ops!(registry_methods);
    nabla_ops::binary_ops!(registry_methods);
    fn cmp_mask(&self, o: &Self, op: CompareOp) -> Self {
        Checked::new(
            "cmp_mask",
            Value::cmp_mask(&self.a, &o.a, op),
            Value::cmp_mask(&self.t, &o.t, op),
        )
    }
    fn sum_to_shape(&self, shape: &[usize]) -> Self {
        both!("sum_to_shape", Value, self.sum_to_shape(shape))
    }
    fn broadcast_to(&self, shape: &[usize]) -> Self {
        both!("broadcast_to", Value, self.broadcast_to(shape))
    }
    fn stop_gradient(&self) -> Self {
        both!("stop_gradient", Value, self.stop_gradient())
    }
    fn item_f64(&self) -> f64 {
        Value::item_f64(&self.a)
    }
}

impl ArrayValue for Checked {
    fn reshape(&self, shape: &[usize]) -> Self {
        both!("reshape", ArrayValue, self.reshape(shape))
    }
    fn permute(&self, perm: &[usize]) -> Self {
        both!("permute", ArrayValue, self.permute(perm))
    }
    fn sum_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        both!("sum_axes", ArrayValue, self.sum_axes(axes, keepdim))
    }
    fn max_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        both!("max_axes", ArrayValue, self.max_axes(axes, keepdim))
    }
    fn min_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        both!("min_axes", ArrayValue, self.min_axes(axes, keepdim))
    }
    fn prod_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        both!("prod_axes", ArrayValue, self.prod_axes(axes, keepdim))
    }
    fn chooser_jvp(&self, y: &Self, axes: &[usize], keepdim: bool, dx: &Self) -> Self {
        let a = ArrayValue::chooser_jvp(&self.a, &y.a, axes, keepdim, &dx.a);
        Checked::new(
            "chooser_jvp",
            a,
            self.t.chooser_jvp(&y.t, axes, keepdim, &dx.t),
        )
    }
    fn chooser_vjp(&self, y: &Self, axes: &[usize], keepdim: bool, ct: &Self) -> Self {
        let a = ArrayValue::chooser_vjp(&self.a, &y.a, axes, keepdim, &ct.a);
        Checked::new(
            "chooser_vjp",
            a,
            self.t.chooser_vjp(&y.t, axes, keepdim, &ct.t),
        )
    }
    fn cumsum_axis(&self, axis: usize, reverse: bool) -> Self {
        both!("cumsum_axis", ArrayValue, self.cumsum_axis(axis, reverse))
    }
    fn slice(&self, slices: &[Slice]) -> Self {
        both!("slice", ArrayValue, self.slice(slices))
    }
    fn slice_place(&self, shape: &[usize], slices: &[Slice]) -> Self {
        both!("slice_place", ArrayValue, self.slice_place(shape, slices))
    }
    fn index_select(&self, axis: usize, idx: &[usize]) -> Self {
        both!("index_select", ArrayValue, self.index_select(axis, idx))
    }
    fn index_add(&self, shape: &[usize], axis: usize, idx: &[usize]) -> Self {
        both!("index_add", ArrayValue, self.index_add(shape, axis, idx))
    }
    fn concat(parts: &[Self], axis: usize) -> Self {
        let a: Vec<Array> = parts.iter().map(|p| p.a.clone()).collect();
        let t: Vec<Traced> = parts.iter().map(|p| p.t.clone()).collect();
        Checked::new(
            "concat",
            <Array as ArrayValue>::concat(&a, axis),
            Traced::concat(&t, axis),
        )
    }
    fn select(mask: &Array, a: &Self, b: &Self) -> Self {
        Checked::new(
            "select",
            <Array as ArrayValue>::select(mask, &a.a, &b.a),
            Traced::select(mask, &a.t, &b.t),
        )
    }
    fn matmul(&self, o: &Self) -> Self {
        Checked::new(
            "matmul",
            ArrayValue::matmul(&self.a, &o.a),
            ArrayValue::matmul(&self.t, &o.t),
        )
    }
    fn lift(&self, a: &Array) -> Self {
        both!("lift", ArrayValue, self.lift(a))
    }
    fn dtype(&self) -> DType {
        ArrayValue::dtype(&self.a)
    }
    fn device(&self) -> Device {
        ArrayValue::device(&self.a)
    }
    fn apply_custom<Op: CustomOp<A>, A: FixedArity>(op: &Op, x: &A::Args<Self>) -> Self {
        let a = <Array as ArrayValue>::apply_custom::<Op, A>(op, &A::map(x, |_, c| c.a.clone()));
        let t = Traced::apply_custom::<Op, A>(op, &A::map(x, |_, c| c.t.clone()));
        Checked::new(Op::NAME, a, t)
    }
}
