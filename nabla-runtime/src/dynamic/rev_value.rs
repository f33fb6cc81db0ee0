//! `Rev` as a value type: each method computes the op one level down and
//! records the op's VJP rule from [`crate::primitives`].

use super::Dyn;
use super::methods::dyn_methods;
use super::rev::Rev;
use crate::primitives::{binary, index, reduce, shape};
use crate::vocab::arity::FixedArity;
use crate::vocab::custom_op::CustomOp;
use crate::{Array, ArrayValue, Shape, Value};
use nabla_kernels::elementwise::CompareOp;
use ndarray::Slice;

impl Value for Rev {
    fn shape_vec(&self) -> Shape {
        self.value.shape_vec()
    }
    fn ndim(&self) -> usize {
        self.value.ndim()
    }
    fn full_like(&self, v: f64) -> Self {
        Rev::constant(self.value.full_like(v))
    }
    fn add_scalar(&self, c: f64) -> Self {
        self.linear(self.value.add_scalar(c), |ct| ct.clone())
    }
    fn mul_scalar(&self, c: f64) -> Self {
        self.linear(self.value.mul_scalar(c), move |ct| ct.mul_scalar(c))
    }
    fn mul_scaled(&self, o: &Self, c: f64) -> Self {
        let y = self.value.mul_scaled(&o.value, c);
        let (a, b) = (self.value.clone(), o.value.clone());
        Rev::record(y, &[self, o], move |ct, needs| {
            let (ga, gb) = binary::mul_scaled::vjp(&a, &b, ct, c);
            vec![needs[0].then_some(ga), needs[1].then_some(gb)]
        })
    }
    nabla_ops::unary_ops!(dyn_methods rev);
    nabla_ops::binary_ops!(dyn_methods rev);
    fn cmp_mask(&self, o: &Self, op: CompareOp) -> Self {
        Rev::constant(self.value.cmp_mask(&o.value, op))
    }
    fn sum_to_shape(&self, s: &[usize]) -> Self {
        let x_shape = self.value.shape_vec();
        self.linear(self.value.sum_to_shape(s), move |ct| {
            ct.broadcast_to(&x_shape)
        })
    }
    fn broadcast_to(&self, s: &[usize]) -> Self {
        let x_shape = self.value.shape_vec();
        self.linear(self.value.broadcast_to(s), move |ct| {
            shape::broadcast_to::vjp(&x_shape, ct)
        })
    }
    fn stop_gradient(&self) -> Self {
        Rev::constant(self.value.stop_gradient())
    }
    #[track_caller]
    fn item_f64(&self) -> f64 {
        self.value.item_f64()
    }
}

impl ArrayValue for Rev {
    fn reshape(&self, s: &[usize]) -> Self {
        let x_shape = self.value.shape_vec();
        self.linear(self.value.reshape(s), move |ct| {
            shape::reshape::vjp(&x_shape, ct)
        })
    }
    fn permute(&self, p: &[usize]) -> Self {
        let perm = p.to_vec();
        self.linear(self.value.permute(p), move |ct| {
            shape::permute::vjp(&perm, ct)
        })
    }
    fn sum_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        let (x_shape, ax) = (self.value.shape_vec(), axes.to_vec());
        self.linear(self.value.sum_axes(axes, keepdim), move |ct| {
            reduce::sum::vjp(&x_shape, &ax, keepdim, ct)
        })
    }
    fn max_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        let ax = axes.to_vec();
        self.unary(self.value.max_axes(axes, keepdim), move |x, y, ct| {
            reduce::max::vjp(x, y, &ax, keepdim, ct)
        })
    }
    fn min_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        let ax = axes.to_vec();
        self.unary(self.value.min_axes(axes, keepdim), move |x, y, ct| {
            reduce::min::vjp(x, y, &ax, keepdim, ct)
        })
    }
    fn prod_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        let ax = axes.to_vec();
        self.unary(self.value.prod_axes(axes, keepdim), move |x, y, ct| {
            reduce::prod::vjp(x, y, &ax, keepdim, ct)
        })
    }
    /// Linear in `dx`, with weights that are piecewise constant in `x`:
    /// the transpose is [`ArrayValue::chooser_vjp`] at the same point.
    fn chooser_jvp(&self, y: &Self, axes: &[usize], keepdim: bool, dx: &Self) -> Self {
        let out = self.value.chooser_jvp(&y.value, axes, keepdim, &dx.value);
        let (x, yy, ax) = (self.value.clone(), y.value.clone(), axes.to_vec());
        dx.linear(out, move |ct| x.chooser_vjp(&yy, &ax, keepdim, ct))
    }
    /// The transpose of [`Self::chooser_jvp`].
    fn chooser_vjp(&self, y: &Self, axes: &[usize], keepdim: bool, ct: &Self) -> Self {
        let out = self.value.chooser_vjp(&y.value, axes, keepdim, &ct.value);
        let (x, yy, ax) = (self.value.clone(), y.value.clone(), axes.to_vec());
        ct.linear(out, move |c| x.chooser_jvp(&yy, &ax, keepdim, c))
    }
    fn cumsum_axis(&self, axis: usize, reverse: bool) -> Self {
        self.linear(self.value.cumsum_axis(axis, reverse), move |ct| {
            reduce::cumsum::vjp(axis, reverse, ct)
        })
    }
    fn slice(&self, s: &[Slice]) -> Self {
        let (x_shape, sl) = (self.value.shape_vec(), s.to_vec());
        self.linear(self.value.slice(s), move |ct| {
            shape::slice::vjp(&x_shape, &sl, ct)
        })
    }
    fn slice_place(&self, sh: &[usize], s: &[Slice]) -> Self {
        let sl = s.to_vec();
        self.linear(self.value.slice_place(sh, s), move |ct| {
            shape::slice_place::vjp(&sl, ct)
        })
    }
    fn index_select(&self, axis: usize, idx: &[usize]) -> Self {
        let (x_shape, ix) = (self.value.shape_vec(), idx.to_vec());
        self.linear(self.value.index_select(axis, idx), move |ct| {
            index::index_select::vjp(&x_shape, axis, &ix, ct)
        })
    }
    fn index_add(&self, sh: &[usize], axis: usize, idx: &[usize]) -> Self {
        let ix = idx.to_vec();
        self.linear(self.value.index_add(sh, axis, idx), move |ct| {
            index::index_add::vjp(axis, &ix, ct)
        })
    }
    fn concat(parts: &[Self], axis: usize) -> Self {
        let values: Vec<Dyn> = parts.iter().map(|p| p.value.clone()).collect();
        let sizes: Vec<usize> = values.iter().map(|v| v.shape_vec()[axis]).collect();
        let inputs: Vec<&Rev> = parts.iter().collect();
        Rev::record(Dyn::concat(&values, axis), &inputs, move |ct, needs| {
            (0..needs.len())
                .map(|i| needs[i].then(|| shape::concat::vjp(&sizes, axis, i, ct)))
                .collect()
        })
    }
    fn select(mask: &Array, a: &Self, b: &Self) -> Self {
        let y = Dyn::select(mask, &a.value, &b.value);
        let (m, a_shape, b_shape) = (mask.clone(), a.value.shape_vec(), b.value.shape_vec());
        Rev::record(y, &[a, b], move |ct, needs| {
            vec![
                needs[0].then(|| index::select::vjp_0(&m, &a_shape, ct)),
                needs[1].then(|| index::select::vjp_1(&m, &b_shape, ct)),
            ]
        })
    }
    fn matmul(&self, o: &Self) -> Self {
        let y = self.value.matmul(&o.value);
        let (a, b) = (self.value.clone(), o.value.clone());
        Rev::record(y, &[self, o], move |ct, needs| {
            vec![
                // The entry points' rules: NumPy's 1-D promotions included.
                needs[0].then(|| crate::entry::matmul::vjp_0(&a, &b, ct)),
                needs[1].then(|| crate::entry::matmul::vjp_1(&a, &b, ct)),
            ]
        })
    }
    fn lift(&self, a: &Array) -> Self {
        Rev::constant(Dyn::Array(a.clone()))
    }
    fn dtype(&self) -> crate::DType {
        self.value.dtype()
    }
    fn device(&self) -> crate::Device {
        self.value.device()
    }
    crate::vocab::custom_op::apply_custom!(|op, x| apply_custom_rev::<Op, A>(op, x));
}

/// A custom op on the tape: the op one level down, its VJP rule recorded.
#[track_caller]
fn apply_custom_rev<Op: CustomOp<A>, A: FixedArity>(op: &Op, x: &A::Args<Rev>) -> Rev {
    let values: Vec<Dyn> = (0..A::N).map(|i| A::get(x, i).value.clone()).collect();
    let args = A::from_fn(|i| values[i].clone());
    let y = Dyn::apply_custom::<Op, A>(op, &args);
    let inputs: Vec<&Rev> = (0..A::N).map(|i| A::get(x, i)).collect();
    let (op, yy) = (op.clone(), y.clone());
    Rev::record(y, &inputs, move |ct, needs| {
        let args = A::from_fn(|i| values[i].clone());
        let cts = op.vjp::<Dyn>(&args, &yy, ct);
        (0..A::N)
            .map(|i| needs[i].then(|| A::get(&cts, i).clone()))
            .collect()
    })
}
