//! `Staged` as a value type: each method computes the op one level down
//! and appends it to the program being recorded.

use super::Dyn;
use super::fuse::Elem;
use super::methods::dyn_methods;
use super::staged::Staged;
use crate::vocab::arity::FixedArity;
use crate::vocab::custom_op::CustomOp;
use crate::{Array, ArrayValue, Shape, Value};
use nabla_kernels::elementwise::CompareOp;
use nabla_kernels::ops::UnaryOp;
use ndarray::Slice;

impl Value for Staged {
    fn shape_vec(&self) -> Shape {
        self.value.shape_vec()
    }
    fn ndim(&self) -> usize {
        self.value.ndim()
    }
    /// A constant of the program: the result reads only the operand's
    /// shape and dtype, which a recording fixes.
    fn full_like(&self, v: f64) -> Self {
        Staged::constant(self.value.full_like(v))
    }
    fn add_scalar(&self, c: f64) -> Self {
        self.unary_elem(
            || format!("add_scalar[{c}]"),
            move |x| x.add_scalar(c),
            Some(Elem::Unary(UnaryOp::Affine(1.0, c))),
        )
    }
    fn mul_scalar(&self, c: f64) -> Self {
        self.unary_elem(
            || format!("mul_scalar[{c}]"),
            move |x| x.mul_scalar(c),
            Some(Elem::Unary(UnaryOp::Affine(c, 0.0))),
        )
    }
    fn mul_scaled(&self, o: &Self, c: f64) -> Self {
        self.binary(
            o,
            || format!("mul_scaled[{c}]"),
            move |a, b| a.mul_scaled(b, c),
        )
    }
    fn fused_rule<R: crate::ElementwiseRule>(a: &Self, b: &Self, c: &Self) -> Self {
        let y = Dyn::fused_rule::<R>(&a.value, &b.value, &c.value);
        Staged::record(
            y,
            &[a, b, c],
            || format!("fused_rule[{}]", std::any::type_name::<R>()),
            |x| Dyn::fused_rule::<R>(x[0], x[1], x[2]),
        )
    }
    nabla_ops::unary_ops!(dyn_methods staged);
    nabla_ops::binary_ops!(dyn_methods staged);
    fn cmp_mask(&self, o: &Self, op: CompareOp) -> Self {
        self.binary(
            o,
            || format!("cmp_mask[{op:?}]"),
            move |a, b| a.cmp_mask(b, op),
        )
    }
    fn sum_to_shape(&self, shape: &[usize]) -> Self {
        if self.value.shape_vec()[..] == *shape {
            return self.clone();
        }
        let s = shape.to_vec();
        let elem = (shape.iter().product::<usize>() == 1).then_some(Elem::Sum);
        self.unary_elem(
            || format!("sum_to_shape[{shape:?}]"),
            move |x| x.sum_to_shape(&s),
            elem,
        )
    }
    fn broadcast_to(&self, shape: &[usize]) -> Self {
        if self.value.shape_vec()[..] == *shape {
            return self.clone();
        }
        let s = shape.to_vec();
        let elem = (self.value.shape_vec().iter().product::<usize>() == 1).then_some(Elem::Splat);
        self.unary_elem(
            || format!("broadcast_to[{shape:?}]"),
            move |x| x.broadcast_to(&s),
            elem,
        )
    }
    fn stop_gradient(&self) -> Self {
        self.unary(|| "stop_gradient".into(), |x| x.stop_gradient())
    }
    #[track_caller]
    fn item_f64(&self) -> f64 {
        panic!(
            "item: the value depends on the inputs of a function being recorded by jit, so it has no number yet; \
             mark the argument static (static_argnums) or compute on arrays (nabla.where instead of if)"
        )
    }
}

impl ArrayValue for Staged {
    fn reshape(&self, shape: &[usize]) -> Self {
        if self.value.shape_vec()[..] == *shape {
            return self.clone();
        }
        let s = shape.to_vec();
        self.unary_elem(
            || format!("reshape[{shape:?}]"),
            move |x| x.reshape(&s),
            Some(Elem::Window(0)),
        )
    }
    fn permute(&self, perm: &[usize]) -> Self {
        let p = perm.to_vec();
        self.unary(|| format!("permute[{perm:?}]"), move |x| x.permute(&p))
    }
    fn permute_reshape(&self, perm: &[usize], shape: &[usize]) -> Self {
        let (p, s) = (perm.to_vec(), shape.to_vec());
        self.unary(
            || format!("permute_reshape[{perm:?}, {shape:?}]"),
            move |x| x.permute_reshape(&p, &s),
        )
    }
    fn sum_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        let a = axes.to_vec();
        let all = (0..self.value.ndim()).all(|k| axes.contains(&k));
        self.unary_elem(
            || format!("sum[{axes:?}, {keepdim}]"),
            move |x| x.sum_axes(&a, keepdim),
            all.then_some(Elem::Sum),
        )
    }
    fn max_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        let a = axes.to_vec();
        self.unary(
            || format!("max[{axes:?}, {keepdim}]"),
            move |x| x.max_axes(&a, keepdim),
        )
    }
    fn min_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        let a = axes.to_vec();
        self.unary(
            || format!("min[{axes:?}, {keepdim}]"),
            move |x| x.min_axes(&a, keepdim),
        )
    }
    fn prod_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        let a = axes.to_vec();
        self.unary(
            || format!("prod[{axes:?}, {keepdim}]"),
            move |x| x.prod_axes(&a, keepdim),
        )
    }
    fn chooser_jvp(&self, y: &Self, axes: &[usize], keepdim: bool, dx: &Self) -> Self {
        let a = axes.to_vec();
        let v = self.value.chooser_jvp(&y.value, axes, keepdim, &dx.value);
        Staged::record(
            v,
            &[self, y, dx],
            || format!("chooser_jvp[{axes:?}, {keepdim}]"),
            move |x| x[0].chooser_jvp(x[1], &a, keepdim, x[2]),
        )
    }
    fn chooser_vjp(&self, y: &Self, axes: &[usize], keepdim: bool, ct: &Self) -> Self {
        let a = axes.to_vec();
        let v = self.value.chooser_vjp(&y.value, axes, keepdim, &ct.value);
        Staged::record(
            v,
            &[self, y, ct],
            || format!("chooser_vjp[{axes:?}, {keepdim}]"),
            move |x| x[0].chooser_vjp(x[1], &a, keepdim, x[2]),
        )
    }
    fn cumsum_axis(&self, axis: usize, reverse: bool) -> Self {
        self.unary(
            || format!("cumsum[{axis}, {reverse}]"),
            move |x| x.cumsum_axis(axis, reverse),
        )
    }
    fn slice(&self, slices: &[Slice]) -> Self {
        let s = slices.to_vec();
        let elem = super::fuse::run_offset(&self.value.shape_vec(), slices).map(Elem::Window);
        self.unary_elem(|| format!("slice{slices:?}"), move |x| x.slice(&s), elem)
    }
    fn slice_place(&self, shape: &[usize], slices: &[Slice]) -> Self {
        let (sh, s) = (shape.to_vec(), slices.to_vec());
        let elem = super::fuse::run_offset(shape, slices).map(Elem::Place);
        self.unary_elem(
            || format!("slice_place[{shape:?}]{slices:?}"),
            move |x| x.slice_place(&sh, &s),
            elem,
        )
    }
    fn index_select(&self, axis: usize, idx: &[usize]) -> Self {
        let i = idx.to_vec();
        self.unary(
            || format!("index_select[{axis}, {} indices]", idx.len()),
            move |x| x.index_select(axis, &i),
        )
    }
    fn index_add(&self, shape: &[usize], axis: usize, idx: &[usize]) -> Self {
        let (sh, i) = (shape.to_vec(), idx.to_vec());
        self.unary(
            || format!("index_add[{shape:?}, {axis}, {} indices]", idx.len()),
            move |x| x.index_add(&sh, axis, &i),
        )
    }
    fn concat(parts: &[Self], axis: usize) -> Self {
        let values: Vec<Dyn> = parts.iter().map(|p| p.value.clone()).collect();
        let refs: Vec<&Staged> = parts.iter().collect();
        Staged::record(
            Dyn::concat(&values, axis),
            &refs,
            || format!("concat[{axis}]"),
            move |x| {
                let v: Vec<Dyn> = x.iter().map(|d| (*d).clone()).collect();
                Dyn::concat(&v, axis)
            },
        )
    }
    fn select(mask: &Array, a: &Self, b: &Self) -> Self {
        let m = mask.clone();
        a.binary(b, || "select".into(), move |x, y| Dyn::select(&m, x, y))
    }
    fn matmul(&self, o: &Self) -> Self {
        self.binary(o, || "matmul".into(), |a, b| a.matmul(b))
    }
    fn lift(&self, a: &Array) -> Self {
        Staged::constant(Dyn::Array(a.clone()))
    }
    fn dtype(&self) -> crate::DType {
        self.value.dtype()
    }
    fn device(&self) -> crate::Device {
        self.value.device()
    }
    crate::vocab::custom_op::apply_custom!(|op, x| apply_custom_staged::<Op, A>(op, x));
}

/// A custom op, recorded as one instruction.
#[track_caller]
fn apply_custom_staged<Op: CustomOp<A>, A: FixedArity>(op: &Op, x: &A::Args<Staged>) -> Staged {
    let values: Vec<Dyn> = (0..A::N).map(|i| A::get(x, i).value.clone()).collect();
    let y = Dyn::apply_custom::<Op, A>(op, &A::from_fn(|i| values[i].clone()));
    let refs: Vec<&Staged> = (0..A::N).map(|i| A::get(x, i)).collect();
    let op = op.clone();
    Staged::record(
        y,
        &refs,
        || Op::NAME.to_string(),
        move |x| Dyn::apply_custom::<Op, A>(&op, &A::from_fn(|i| x[i].clone())),
    )
}
