//! `Batched<V>`: the batching interpretation type behind `vmap`.
//!
//! A `Batched` value is a value of `V` with an optional batch axis
//! (`bdim`); `None` means the value is the same for every batch entry and is
//! never materialised per entry. Shape queries (`shape_vec`) report the
//! per-example shape, so generic code written for one example runs on a
//! batch unchanged. Each method is the batching rule of its primitive:
//! elementwise ops align the batch axes, reductions and shape ops shift
//! their axis arguments past the batch axis, `matmul` treats the batch axis
//! as a leading batch dimension. Because the rules only use `V`'s own
//! operations, `Batched<Dual<Array>>`, `Dual<Batched<Array>>` and deeper
//! nestings work too.
//!
//! ```
//! use nabla::{Array, ArrayValue, Batched, Value};
//! // sum over the per-example axis of a batch of 3 vectors of length 2
//! let x = Batched::new(Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2]), Some(0));
//! let s = x.sum_axes(&[0], false);
//! assert!(s.shape_vec().is_empty()); // per-example: a scalar
//! assert_eq!(s.value.to_vec::<f64>(), vec![3.0, 7.0, 11.0]);
//! ```

use crate::registry::value_methods;
use crate::{Array, ArrayValue, Value};
use nabla_kernels::elementwise::CompareOp;
use ndarray::Slice;
use std::borrow::Cow;

/// A value with an optional batch axis.
#[derive(Clone, Debug)]
pub struct Batched<V> {
    /// The underlying value, batch axis included.
    pub value: V,
    /// Which axis of `value` is the batch axis (`None`: not batched).
    pub bdim: Option<usize>,
}

impl<V: ArrayValue> Batched<V> {
    /// A batched value (`bdim`: the batch axis of `value`, or `None`).
    ///
    /// ```
    /// use nabla::{Array, Batched, DType, Value};
    /// let b = Batched::new(Array::zeros(&[4, 3], DType::F32), Some(0));
    /// assert_eq!(b.shape_vec()[..], [3]);
    /// ```
    pub fn new(value: V, bdim: Option<usize>) -> Self {
        Batched { value, bdim }
    }

    /// A value shared by every batch entry.
    ///
    /// ```
    /// use nabla::{Array, Batched, Value};
    /// assert_eq!(Batched::unbatched(Array::scalar(1.0f64)).bdim, None);
    /// ```
    pub fn unbatched(value: V) -> Self {
        Batched { value, bdim: None }
    }

    /// The value with the batch axis first (unbatched values unchanged).
    ///
    /// ```
    /// use nabla::{Array, Batched, DType, Value};
    /// let b = Batched::new(Array::zeros(&[3, 5], DType::F32), Some(1));
    /// assert_eq!(b.front().shape_vec()[..], [5, 3]);
    /// ```
    pub fn front(&self) -> V {
        match self.bdim {
            None | Some(0) => self.value.clone(),
            Some(b) => {
                let n = self.value.ndim();
                let mut perm = crate::Shape::from_slice(&[b]);
                perm.extend((0..n).filter(|&i| i != b));
                self.value.permute(&perm)
            }
        }
    }

    /// [`Batched::front`], borrowing the value when the batch axis already
    /// is first (or absent).
    fn front_ref(&self) -> Cow<'_, V> {
        match self.bdim {
            None | Some(0) => Cow::Borrowed(&self.value),
            Some(_) => Cow::Owned(self.front()),
        }
    }

    /// The batch size, if batched.
    pub fn batch_size(&self) -> Option<usize> {
        self.bdim.map(|b| self.value.shape_vec()[b])
    }

    /// The value moved so the batch axis is at `axis` (materialising an
    /// unbatched value `size` times).
    ///
    /// ```
    /// use nabla::{Array, Batched, DType, Value};
    /// let b = Batched::unbatched(Array::ones(&[2], DType::F64));
    /// assert_eq!(b.materialize(3, 1).shape_vec()[..], [2, 3]);
    /// ```
    pub fn materialize(&self, size: usize, axis: usize) -> V {
        let f = match self.bdim {
            Some(_) => self.front(),
            None => {
                let s = self.value.shape_vec();
                let mut one = crate::Shape::with_capacity(s.len() + 1);
                one.push(1);
                one.extend_from_slice(&s);
                let mut shape = one.clone();
                shape[0] = size;
                self.value.reshape(&one).broadcast_to(&shape)
            }
        };
        if axis == 0 {
            return f;
        }
        let n = f.ndim();
        let mut perm: crate::Shape = (1..n).collect();
        perm.insert(axis, 0);
        f.permute(&perm)
    }

    /// [`Batched::materialize`] followed by a reshape to `shape`, as one
    /// copy for arrays (the batch axis moved by the same pass that lays
    /// out the result).
    pub(crate) fn materialize_as(&self, size: usize, axis: usize, shape: &[usize]) -> V {
        if self.bdim.is_none() || axis == 0 {
            return self.materialize(size, axis).reshape(shape);
        }
        let f = self.front_ref();
        let n = f.ndim();
        let mut perm: crate::Shape = (1..n).collect();
        perm.insert(axis, 0);
        f.permute_reshape(&perm, shape)
    }

    fn with(value: V) -> Self {
        Batched {
            value,
            bdim: Some(0),
        }
    }

    /// The batched value first, with length-1 axes after the batch axis so
    /// its per-example rank is `rank` (borrowed when it already is).
    pub(crate) fn padded_ref(&self, rank: usize) -> Cow<'_, V> {
        let f = self.front_ref();
        let nd = self.ndim();
        if nd >= rank {
            return f;
        }
        // `f` is `[batch, *per-example]`: insert the length-1 axes after
        // the batch axis (one shape query; this runs for most binary ops
        // under `vmap`).
        let fs = f.shape_vec();
        let mut shape = crate::Shape::with_capacity(rank + 1);
        shape.push(fs[0]);
        shape.extend(std::iter::repeat_n(1, rank - nd));
        shape.extend_from_slice(&fs[1..]);
        Cow::Owned(f.reshape(&shape))
    }

    /// Aligns two operands for a broadcasting binary op (borrowing those
    /// that need no change).
    fn align<'a>(&'a self, o: &'a Self) -> (Cow<'a, V>, Cow<'a, V>, Option<usize>) {
        if self.bdim.is_none() && o.bdim.is_none() {
            return (Cow::Borrowed(&self.value), Cow::Borrowed(&o.value), None);
        }
        let r = self.ndim().max(o.ndim());
        (side(self, r), side(o, r), Some(0))
    }

    fn map(&self, f: impl FnOnce(&V) -> V) -> Self {
        Batched {
            value: f(&self.value),
            bdim: self.bdim,
        }
    }

    fn binary(&self, o: &Self, f: impl FnOnce(&V, &V) -> V) -> Self {
        let (a, b, bdim) = self.align(o);
        Batched {
            value: f(&a, &b),
            bdim,
        }
    }

    /// Applies `f` to the value with the batch axis first, shifting axis
    /// arguments by one; unbatched values go through `g` unchanged.
    fn shifted(&self, f: impl FnOnce(&V) -> V, g: impl FnOnce(&V) -> V) -> Self {
        match self.bdim {
            None => Batched::unbatched(g(&self.value)),
            Some(_) => Batched::with(f(&self.front_ref())),
        }
    }
}

/// One operand of a broadcasting binary op: batched ones padded to
/// per-example rank `r` with the batch axis first, unbatched ones as they
/// are.
fn side<V: ArrayValue>(x: &Batched<V>, r: usize) -> Cow<'_, V> {
    if x.bdim.is_some() {
        x.padded_ref(r)
    } else {
        Cow::Borrowed(&x.value)
    }
}

fn shift(axes: &[usize]) -> crate::Shape {
    axes.iter().map(|a| a + 1).collect()
}

impl<V: ArrayValue> Value for Batched<V> {
    fn ndim(&self) -> usize {
        self.value.ndim() - usize::from(self.bdim.is_some())
    }
    fn shape_vec(&self) -> crate::Shape {
        let mut s = self.value.shape_vec();
        if let Some(b) = self.bdim {
            s.remove(b);
        }
        s
    }
    fn full_like(&self, v: f64) -> Self {
        self.map(|x| x.full_like(v))
    }
    nabla_ops::unary_ops!(value_methods batched);
    nabla_ops::binary_ops!(value_methods batched);
    fn add_scalar(&self, c: f64) -> Self {
        self.map(|v| v.add_scalar(c))
    }
    fn mul_scaled(&self, o: &Self, c: f64) -> Self {
        self.binary(o, |a, b| a.mul_scaled(b, c))
    }
    fn fused_rule<R: crate::ElementwiseRule>(a: &Self, b: &Self, c: &Self) -> Self {
        if a.bdim.is_none() && b.bdim.is_none() && c.bdim.is_none() {
            return Batched::unbatched(V::fused_rule::<R>(&a.value, &b.value, &c.value));
        }
        if a.bdim.is_none() || b.bdim.is_none() {
            // A batch of tangents (or cotangents) against one `x`: op by op,
            // so the derivative is computed once, not once per example.
            return R::eval(a, b, c);
        }
        // Batch axes first, per-example ranks padded, as for a binary op.
        let r = a.ndim().max(b.ndim()).max(c.ndim());
        Batched::with(V::fused_rule::<R>(&side(a, r), &side(b, r), &side(c, r)))
    }
    fn add_mul_scaled(self, a: &Self, b: &Self, c: f64) -> Self {
        // One batch axis for all three and one shape: the inner op (in place
        // on arrays); otherwise the composition aligns them.
        let same = self.bdim == a.bdim && a.bdim == b.bdim;
        if same
            && self.value.shape_vec() == a.value.shape_vec()
            && a.value.shape_vec() == b.value.shape_vec()
        {
            let bdim = self.bdim;
            return Batched {
                value: self.value.add_mul_scaled(&a.value, &b.value, c),
                bdim,
            };
        }
        if self.bdim.is_some() {
            // Batch axes first and per-example ranks padded, as for any
            // binary op; when the product broadcasts to the accumulator's
            // shape it is added into it (in place once `self` is dropped).
            let r = [self.ndim(), a.ndim(), b.ndim()]
                .into_iter()
                .max()
                .unwrap_or(0);
            let (pa, pb) = (side(a, r), side(b, r));
            let acc = self.padded_ref(r).into_owned();
            drop(self);
            let target = acc.shape_vec();
            let fits = |o: &V| nabla_kernels::elementwise::broadcasts_to(&o.shape_vec(), &target);
            if fits(&pa) && fits(&pb) {
                return Batched::with(acc.add_mul_scaled(&pa, &pb, c));
            }
            return Batched::with(acc).add(&a.mul_scaled(b, c));
        }
        self.add(&a.mul_scaled(b, c))
    }
    fn mul_scalar(&self, c: f64) -> Self {
        self.map(|v| v.mul_scalar(c))
    }
    fn cmp_mask(&self, o: &Self, op: CompareOp) -> Self {
        self.binary(o, |a, b| a.cmp_mask(b, op))
    }
    fn sum_to_shape(&self, shape: &[usize]) -> Self {
        let s = self.shape_vec();
        if s[..] == *shape {
            return self.clone();
        }
        if self.bdim.is_none() {
            return self.map(|v| v.sum_to_shape(shape));
        }
        // Sum the per-example axes that broadcasting created, never the batch.
        let lead = s.len() - shape.len();
        let axes: crate::Shape = (0..s.len())
            .filter(|&i| i < lead || (shape[i - lead] == 1 && s[i] != 1))
            .map(|i| i + 1)
            .collect();
        let mut target = crate::Shape::from_slice(&[self.batch_size().expect("batched")]);
        target.extend_from_slice(shape);
        Batched::with(self.front_ref().sum_axes(&axes, false).reshape(&target))
    }
    fn broadcast_to(&self, shape: &[usize]) -> Self {
        match self.bdim {
            None => Batched::unbatched(self.value.broadcast_to(shape)),
            Some(_) => {
                let mut target = crate::Shape::from_slice(&[self.batch_size().expect("batched")]);
                target.extend_from_slice(shape);
                Batched::with(self.padded_ref(shape.len()).broadcast_to(&target))
            }
        }
    }
    fn stop_gradient(&self) -> Self {
        self.map(|v| v.stop_gradient())
    }
    #[track_caller]
    fn item_f64(&self) -> f64 {
        if self.bdim.is_some() {
            panic!(
                "item() under vmap: the value differs across the batch, so a data-dependent decision (an `if` on it) \
                 cannot be taken once for the whole batch; compute both branches and combine them with nabla::where_, \
                 or loop over the batch instead of vmap"
            );
        }
        self.value.item_f64()
    }
}

impl<V: ArrayValue> ArrayValue for Batched<V> {
    fn reshape(&self, shape: &[usize]) -> Self {
        let b = self.batch_size();
        self.shifted(
            |v| {
                let mut s = crate::Shape::from_slice(&[b.expect("batched")]);
                s.extend_from_slice(shape);
                v.reshape(&s)
            },
            |v| v.reshape(shape),
        )
    }
    fn permute(&self, perm: &[usize]) -> Self {
        self.shifted(
            |v| {
                let mut p = crate::Shape::from_slice(&[0]);
                p.extend(perm.iter().map(|a| a + 1));
                v.permute(&p)
            },
            |v| v.permute(perm),
        )
    }
    fn sum_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        self.shifted(
            |v| v.sum_axes(&shift(axes), keepdim),
            |v| v.sum_axes(axes, keepdim),
        )
    }
    fn max_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        self.shifted(
            |v| v.max_axes(&shift(axes), keepdim),
            |v| v.max_axes(axes, keepdim),
        )
    }
    fn min_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        self.shifted(
            |v| v.min_axes(&shift(axes), keepdim),
            |v| v.min_axes(axes, keepdim),
        )
    }
    /// With `x` batched: every operand with the batch axis first, the rule
    /// over the shifted axes (one pass on arrays). With `x` shared by the
    /// batch (a batch of tangents against one point), the composite, whose
    /// weights are computed once.
    fn chooser_jvp(&self, y: &Self, axes: &[usize], keepdim: bool, dx: &Self) -> Self {
        match self.batch_size() {
            Some(n) => Batched::with(self.front().chooser_jvp(
                &y.materialize(n, 0),
                &shift(axes),
                keepdim,
                &dx.materialize(n, 0),
            )),
            None => crate::primitives::reduce::composite_jvp(self, y, axes, keepdim, dx),
        }
    }
    /// As [`Self::chooser_jvp`].
    fn chooser_vjp(&self, y: &Self, axes: &[usize], keepdim: bool, ct: &Self) -> Self {
        match self.batch_size() {
            Some(n) => Batched::with(self.front().chooser_vjp(
                &y.materialize(n, 0),
                &shift(axes),
                keepdim,
                &ct.materialize(n, 0),
            )),
            None => crate::primitives::reduce::composite_vjp(self, y, axes, keepdim, ct),
        }
    }
    fn prod_axes(&self, axes: &[usize], keepdim: bool) -> Self {
        self.shifted(
            |v| v.prod_axes(&shift(axes), keepdim),
            |v| v.prod_axes(axes, keepdim),
        )
    }
    fn cumsum_axis(&self, axis: usize, reverse: bool) -> Self {
        self.shifted(
            |v| v.cumsum_axis(axis + 1, reverse),
            |v| v.cumsum_axis(axis, reverse),
        )
    }
    fn slice(&self, slices: &[Slice]) -> Self {
        self.shifted(
            |v| {
                let mut s = vec![Slice::from(..)];
                s.extend_from_slice(slices);
                v.slice(&s)
            },
            |v| v.slice(slices),
        )
    }
    fn add_into_slice(self, slices: &[Slice], ct: &Self) -> Self {
        match (self.bdim, ct.bdim) {
            // Both batched, the accumulator's batch axis leading: the inner
            // op with a full slice for the batch axis (in place on arrays).
            (Some(0), Some(_)) => {
                let mut s = vec![Slice::from(..)];
                s.extend_from_slice(slices);
                Batched::with(self.value.add_into_slice(&s, &ct.front_ref()))
            }
            (None, None) => Batched::unbatched(self.value.add_into_slice(slices, &ct.value)),
            _ => {
                let shape = self.shape_vec();
                self.add(&ct.slice_place(&shape, slices))
            }
        }
    }
    fn slice_place(&self, shape: &[usize], slices: &[Slice]) -> Self {
        let b = self.batch_size();
        self.shifted(
            |v| {
                let mut sh = crate::Shape::from_slice(&[b.expect("batched")]);
                sh.extend_from_slice(shape);
                let mut s = vec![Slice::from(..)];
                s.extend_from_slice(slices);
                v.slice_place(&sh, &s)
            },
            |v| v.slice_place(shape, slices),
        )
    }
    fn index_select(&self, axis: usize, idx: &[usize]) -> Self {
        self.shifted(
            |v| v.index_select(axis + 1, idx),
            |v| v.index_select(axis, idx),
        )
    }
    fn index_add(&self, shape: &[usize], axis: usize, idx: &[usize]) -> Self {
        let b = self.batch_size();
        self.shifted(
            |v| {
                let mut sh = crate::Shape::from_slice(&[b.expect("batched")]);
                sh.extend_from_slice(shape);
                v.index_add(&sh, axis + 1, idx)
            },
            |v| v.index_add(shape, axis, idx),
        )
    }
    fn concat(parts: &[Self], axis: usize) -> Self {
        match parts.iter().find_map(|p| p.batch_size()) {
            None => Batched::unbatched(V::concat(
                &parts.iter().map(|p| p.value.clone()).collect::<Vec<_>>(),
                axis,
            )),
            Some(n) => {
                let vals: Vec<V> = parts.iter().map(|p| p.materialize(n, 0)).collect();
                Batched::with(V::concat(&vals, axis + 1))
            }
        }
    }
    fn select(mask: &Array, a: &Self, b: &Self) -> Self {
        a.binary(b, |x, y| V::select(mask, x, y))
    }
    fn matmul(&self, o: &Self) -> Self {
        if self.bdim.is_none() && o.bdim.is_none() {
            return Batched::unbatched(self.value.matmul(&o.value));
        }
        // NumPy's 1-D promotions per example, then the batch axis is a
        // leading batch dimension of the rank ≥ 2 product.
        crate::primitives::linalg::matmul::promoted(self, o, |a, b| {
            let r = a.ndim().max(b.ndim());
            Batched::with(side(a, r).matmul(&side(b, r)))
        })
    }
    fn dtype(&self) -> crate::DType {
        self.value.dtype()
    }
    fn device(&self) -> crate::Device {
        self.value.device()
    }
    fn lift(&self, a: &Array) -> Self {
        Batched::unbatched(self.value.lift(a))
    }
    crate::vocab::custom_op::apply_custom!(|op, x| crate::custom::apply_batched::<Op, A, V>(op, x));
}
