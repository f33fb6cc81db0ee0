//! `Dyn` as a value type: every method runs the op at the innermost
//! transform among its operands ([`lift!`]).

use super::methods::dyn_methods;
use super::{Dyn, Top, lift, top};
use crate::vocab::arity::FixedArity;
use crate::vocab::custom_op::CustomOp;
use crate::{Array, ArrayValue, Shape, Value};
use nabla_kernels::elementwise::CompareOp;
use ndarray::Slice;

impl Value for Dyn {
    fn shape_vec(&self) -> Shape {
        match self {
            Dyn::Array(a) => Value::shape_vec(a),
            Dyn::Dual(_, d) => d.shape_vec(),
            Dyn::Batched(_, b) => b.shape_vec(),
            Dyn::Rev(_, r) => r.value.shape_vec(),
            Dyn::Staged(_, s) => s.value.shape_vec(),
        }
    }
    fn ndim(&self) -> usize {
        match self {
            Dyn::Array(a) => Value::ndim(a),
            Dyn::Dual(_, d) => d.ndim(),
            Dyn::Batched(_, b) => b.ndim(),
            Dyn::Rev(_, r) => r.value.ndim(),
            Dyn::Staged(_, s) => s.value.ndim(),
        }
    }
    fn full_like(&self, v: f64) -> Self {
        let x = self;
        lift!(x => Value::full_like(x, v))
    }
    fn add_scalar(&self, c: f64) -> Self {
        let x = self;
        lift!(x => Value::add_scalar(x, c))
    }
    fn mul_scalar(&self, c: f64) -> Self {
        let x = self;
        lift!(x => Value::mul_scalar(x, c))
    }
    fn mul_scaled(&self, o: &Self, c: f64) -> Self {
        let x = self;
        lift!(x, o => Value::mul_scaled(x, o, c))
    }
    fn fused_rule<R: crate::ElementwiseRule>(a: &Self, b: &Self, c: &Self) -> Self {
        lift!(a, b, c => Value::fused_rule::<R>(a, b, c))
    }
    nabla_ops::unary_ops!(dyn_methods dyn);
    nabla_ops::binary_ops!(dyn_methods dyn);
    fn cmp_mask(&self, o: &Self, op: CompareOp) -> Self {
        let x = self;
        lift!(x, o => Value::cmp_mask(x, o, op))
    }
    fn sum_to_shape(&self, shape: &[usize]) -> Self {
        let x = self;
        lift!(x => Value::sum_to_shape(x, shape))
    }
    fn broadcast_to(&self, shape: &[usize]) -> Self {
        let x = self;
        lift!(x => Value::broadcast_to(x, shape))
    }
    fn stop_gradient(&self) -> Self {
        let x = self;
        lift!(x => Value::stop_gradient(x))
    }
    #[track_caller]
    fn item_f64(&self) -> f64 {
        match self {
            Dyn::Array(a) => Value::item_f64(a),
            Dyn::Dual(_, d) => d.item_f64(),
            Dyn::Batched(_, b) => b.item_f64(),
            Dyn::Rev(_, r) => r.value.item_f64(),
            Dyn::Staged(_, s) => s.item_f64(),
        }
    }
}

impl ArrayValue for Dyn {
    fn reshape(&self, shape: &[usize]) -> Self {
        let x = self;
        lift!(x => ArrayValue::reshape(x, shape))
    }
    fn permute(&self, perm: &[usize]) -> Self {
        let x = self;
        lift!(x => ArrayValue::permute(x, perm))
    }
    fn permute_reshape(&self, perm: &[usize], shape: &[usize]) -> Self {
        let x = self;
        lift!(x => ArrayValue::permute_reshape(x, perm, shape))
    }
    fn sum_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        let x = self;
        lift!(x => ArrayValue::sum_axes(x, axes, keepdim))
    }
    fn max_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        let x = self;
        lift!(x => ArrayValue::max_axes(x, axes, keepdim))
    }
    fn min_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        let x = self;
        lift!(x => ArrayValue::min_axes(x, axes, keepdim))
    }
    fn prod_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        let x = self;
        lift!(x => ArrayValue::prod_axes(x, axes, keepdim))
    }
    fn chooser_jvp(&self, y: &Self, axes: &[usize], keepdim: bool, dx: &Self) -> Self {
        let x = self;
        lift!(x, y, dx => ArrayValue::chooser_jvp(x, y, axes, keepdim, dx))
    }
    fn chooser_vjp(&self, y: &Self, axes: &[usize], keepdim: bool, ct: &Self) -> Self {
        let x = self;
        lift!(x, y, ct => ArrayValue::chooser_vjp(x, y, axes, keepdim, ct))
    }
    fn cumsum_axis(&self, axis: usize, reverse: bool) -> Self {
        let x = self;
        lift!(x => ArrayValue::cumsum_axis(x, axis, reverse))
    }
    fn slice(&self, slices: &[Slice]) -> Self {
        let x = self;
        lift!(x => ArrayValue::slice(x, slices))
    }
    fn slice_place(&self, shape: &[usize], slices: &[Slice]) -> Self {
        let x = self;
        lift!(x => ArrayValue::slice_place(x, shape, slices))
    }
    fn index_select(&self, axis: usize, idx: &[usize]) -> Self {
        let x = self;
        lift!(x => ArrayValue::index_select(x, axis, idx))
    }
    fn index_add(&self, shape: &[usize], axis: usize, idx: &[usize]) -> Self {
        let x = self;
        lift!(x => ArrayValue::index_add(x, shape, axis, idx))
    }
    fn concat(parts: &[Self], axis: usize) -> Self {
        match top(parts) {
            Top::Array => {
                let p: Vec<Array> = parts.iter().map(|d| d.concrete().clone()).collect();
                Dyn::Array(ArrayValue::concat(&p, axis))
            }
            Top::Dual(l) => {
                let p: Vec<_> = parts.iter().map(|d| d.dual_at(l)).collect();
                Dyn::Dual(l, Box::new(ArrayValue::concat(&p, axis)))
            }
            Top::Batched(l) => {
                let p: Vec<_> = parts.iter().map(|d| d.batched_at(l)).collect();
                Dyn::Batched(l, Box::new(ArrayValue::concat(&p, axis)))
            }
            Top::Rev(l) => {
                let p: Vec<_> = parts.iter().map(|d| d.rev_at(l)).collect();
                Dyn::Rev(l, Box::new(ArrayValue::concat(&p, axis)))
            }
            Top::Staged(l) => {
                let p: Vec<_> = parts.iter().map(|d| d.staged_at(l)).collect();
                Dyn::Staged(l, Box::new(ArrayValue::concat(&p, axis)))
            }
        }
    }
    fn select(mask: &Array, a: &Self, b: &Self) -> Self {
        lift!(a, b => ArrayValue::select(mask, a, b))
    }
    fn matmul(&self, o: &Self) -> Self {
        let x = self;
        lift!(x, o => ArrayValue::matmul(x, o))
    }
    fn lift(&self, a: &Array) -> Self {
        Dyn::Array(a.clone())
    }
    fn dtype(&self) -> crate::DType {
        match self {
            Dyn::Array(a) => ArrayValue::dtype(a),
            Dyn::Dual(_, d) => d.dtype(),
            Dyn::Batched(_, b) => b.dtype(),
            Dyn::Rev(_, r) => r.value.dtype(),
            Dyn::Staged(_, s) => s.value.dtype(),
        }
    }
    fn device(&self) -> crate::Device {
        match self {
            Dyn::Array(a) => ArrayValue::device(a),
            Dyn::Dual(_, d) => d.device(),
            Dyn::Batched(_, b) => b.device(),
            Dyn::Rev(_, r) => r.value.device(),
            Dyn::Staged(_, s) => s.value.device(),
        }
    }
    crate::vocab::custom_op::apply_custom!(|op, x| apply_custom_dyn::<Op, A>(op, x));
}

/// A custom op on `Dyn` operands, at the innermost transform among them.
#[track_caller]
fn apply_custom_dyn<Op: CustomOp<A>, A: FixedArity>(op: &Op, x: &A::Args<Dyn>) -> Dyn {
    match top((0..A::N).map(|i| A::get(x, i))) {
        Top::Array => Dyn::Array(ArrayValue::apply_custom::<Op, A>(
            op,
            &A::map(x, |_, d: &Dyn| d.concrete().clone()),
        )),
        Top::Dual(l) => Dyn::Dual(
            l,
            Box::new(ArrayValue::apply_custom::<Op, A>(
                op,
                &A::map(x, |_, d: &Dyn| d.dual_at(l)),
            )),
        ),
        Top::Batched(l) => Dyn::Batched(
            l,
            Box::new(ArrayValue::apply_custom::<Op, A>(
                op,
                &A::map(x, |_, d: &Dyn| d.batched_at(l)),
            )),
        ),
        Top::Rev(l) => Dyn::Rev(
            l,
            Box::new(ArrayValue::apply_custom::<Op, A>(
                op,
                &A::map(x, |_, d: &Dyn| d.rev_at(l)),
            )),
        ),
        Top::Staged(l) => Dyn::Staged(
            l,
            Box::new(ArrayValue::apply_custom::<Op, A>(
                op,
                &A::map(x, |_, d: &Dyn| d.staged_at(l)),
            )),
        ),
    }
}
