//! `Array` as a value type of the generic rules.

use crate::Array;
use crate::registry::value_methods;
use crate::vocab::arity::FixedArity;
use crate::vocab::custom_op::CustomOp;
use crate::vocab::value::{ArrayValue, Shape, Value};
use nabla_kernels::elementwise::CompareOp;
use ndarray::Slice;

impl Value for Array {
    #[track_caller]
    fn shape_vec(&self) -> Shape {
        Shape::from_slice(self.shape())
    }
    #[track_caller]
    fn ndim(&self) -> usize {
        self.shape().len()
    }
    #[track_caller]
    fn full_like(&self, v: f64) -> Self {
        Array::full_like(self, v)
    }
    #[track_caller]
    fn add_scalar(&self, c: f64) -> Self {
        self.affine(1.0, c)
    }
    #[track_caller]
    fn mul_scalar(&self, c: f64) -> Self {
        self.affine(c, 0.0)
    }
    #[track_caller]
    fn fused_rule<R: crate::ElementwiseRule>(a: &Self, b: &Self, c: &Self) -> Self {
        crate::primitives::fused::rule::<R>(a, b, c)
    }
    #[track_caller]
    fn mul_scaled(&self, o: &Self, c: f64) -> Self {
        Array::mul_scaled(self, o, c)
    }
    #[track_caller]
    fn add_mul_scaled(self, a: &Self, b: &Self, c: f64) -> Self {
        crate::primitives::binary::add_mul_scaled(self, a, b, c)
    }
    nabla_ops::unary_ops!(value_methods array);
    nabla_ops::binary_ops!(value_methods array);
    #[track_caller]
    fn cmp_mask(&self, o: &Self, op: CompareOp) -> Self {
        let (a, b) = (self.detach(), o.detach());
        let m = match op {
            CompareOp::Gt => a.gt(&b),
            CompareOp::Ge => a.ge(&b),
            CompareOp::Lt => a.lt(&b),
            CompareOp::Le => a.le(&b),
            CompareOp::Eq => a.eq(&b),
            CompareOp::Ne => a.ne(&b),
        };
        m.cast(self.dtype())
    }
    #[track_caller]
    fn sum_to_shape(&self, shape: &[usize]) -> Self {
        Array::sum_to_shape(self, shape)
    }
    #[track_caller]
    fn broadcast_to(&self, shape: &[usize]) -> Self {
        Array::broadcast_to(self, shape)
    }
    #[track_caller]
    fn stop_gradient(&self) -> Self {
        self.detach()
    }
    #[track_caller]
    fn item_f64(&self) -> f64 {
        self.item()
    }
}

impl ArrayValue for Array {
    #[track_caller]
    fn reshape(&self, shape: &[usize]) -> Self {
        Array::reshape(self, shape)
    }
    #[track_caller]
    fn permute(&self, perm: &[usize]) -> Self {
        Array::permute(self, perm)
    }
    #[track_caller]
    fn permute_reshape(&self, perm: &[usize], shape: &[usize]) -> Self {
        crate::primitives::shape::permute::forward_as(self, perm, shape)
    }
    #[track_caller]
    fn sum_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        self.sum_norm(axes, keepdim)
    }
    #[track_caller]
    fn max_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        self.max_norm(axes, keepdim)
    }
    #[track_caller]
    fn min_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        self.min_norm(axes, keepdim)
    }
    #[track_caller]
    fn prod_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        self.prod_norm(axes, keepdim)
    }
    #[track_caller]
    fn chooser_jvp(&self, y: &Self, axes: &[usize], keepdim: bool, dx: &Self) -> Self {
        use crate::primitives::reduce::{composite_jvp, pass_jvp};
        pass_jvp(self, y, axes, dx).unwrap_or_else(|| composite_jvp(self, y, axes, keepdim, dx))
    }
    #[track_caller]
    fn chooser_vjp(&self, y: &Self, axes: &[usize], keepdim: bool, ct: &Self) -> Self {
        use crate::primitives::reduce::{composite_vjp, pass_vjp};
        pass_vjp(self, y, axes, ct).unwrap_or_else(|| composite_vjp(self, y, axes, keepdim, ct))
    }
    #[track_caller]
    fn cumsum_axis(&self, axis: usize, reverse: bool) -> Self {
        self.cumsum_norm(axis, reverse)
    }
    #[track_caller]
    fn slice(&self, slices: &[Slice]) -> Self {
        self.slice_raw(slices)
    }
    #[track_caller]
    fn slice_place(&self, shape: &[usize], slices: &[Slice]) -> Self {
        self.slice_place_raw(shape, slices)
    }
    #[track_caller]
    fn add_into_slice(self, slices: &[Slice], ct: &Self) -> Self {
        crate::primitives::shape::add_into_slice(self, slices, ct)
    }
    #[track_caller]
    fn index_select(&self, axis: usize, idx: &[usize]) -> Self {
        self.index_select_norm(axis, idx)
    }
    #[track_caller]
    fn index_add(&self, shape: &[usize], axis: usize, idx: &[usize]) -> Self {
        self.index_add_norm(shape, axis, idx)
    }
    #[track_caller]
    fn concat(parts: &[Self], axis: usize) -> Self {
        crate::primitives::shape::concat_norm(parts, axis)
    }
    #[track_caller]
    fn select(mask: &Array, a: &Self, b: &Self) -> Self {
        crate::primitives::index::where_(mask, a, b)
    }
    #[track_caller]
    fn matmul(&self, o: &Self) -> Self {
        Array::matmul(self, o)
    }
    #[track_caller]
    fn dtype(&self) -> crate::DType {
        Array::dtype(self)
    }
    fn device(&self) -> crate::Device {
        Array::device(self)
    }
    #[track_caller]
    fn lift(&self, a: &Array) -> Self {
        if a.grad.is_none() && a.dtype() == self.dtype() && a.device() == self.device() {
            // Already a constant of this kind: one reference-count increment
            // instead of three clones (Jacobian bases are lifted per call).
            return a.clone();
        }
        a.detach().cast(self.dtype()).to_device(self.device())
    }
    crate::vocab::custom_op::apply_custom!(|op, x| apply_array::<Op, A>(op, x));
}

/// `Array`: run the forward, and record the VJP rule if an input is tracked.
fn apply_array<Op: CustomOp<A>, A: FixedArity>(op: &Op, x: &A::Args<Array>) -> Array {
    let y = crate::no_grad(|| op.forward(x));
    let inputs: Vec<&Array> = (0..A::N).map(|i| A::get(x, i)).collect();
    crate::array::nans::check(Op::NAME, &inputs, &y);
    if !crate::autograd::needs_grad(&inputs) {
        return y.detach();
    }
    let xr: Vec<Array> = inputs.iter().map(|a| a.detach()).collect();
    let yr = y.detach();
    let want: Vec<bool> = inputs.iter().map(|a| a.is_tracked()).collect();
    let op = op.clone();
    crate::autograd::record(
        y.detach(),
        Op::NAME,
        &inputs,
        Box::new(move |ct: &Array| {
            let _rule = crate::array::nans::rule_scope(Op::NAME);
            let args = A::from_fn(|i| xr[i].clone());
            let cts = op.vjp::<Array>(&args, &yr, ct);
            (0..A::N)
                .map(|i| want[i].then(|| A::get(&cts, i).clone()))
                .collect()
        }),
    )
}
