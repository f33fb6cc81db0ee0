//! Shape primitives: `reshape`, `permute`, `broadcast_to`, `slice`,
//! `concat`, and the composites built on them (`transpose`, `expand_dims`,
//! `squeeze`, `flatten`, `stack`, `split`, `sum_to_shape`).
//!
//! Reshape, permute and slice share storage with their input (no copy)
//! whenever the layout allows. Batching rule (all of them): the batch axis
//! stays in front; axis arguments shift by one.

use crate::array::norm_axis;
use crate::autograd::{needs_grad, record, unary_node};
use crate::dtype::{Data, any_map};
use crate::{Array, ArrayValue};
use ndarray::{IxDyn, Slice};
use std::ops::Range;

/// Reshape (row-major order).
pub mod reshape {
    use super::*;
    /// The output shape (`shape`), checking the element counts match.
    #[track_caller]
    pub fn out_shape(x: &[usize], shape: &[usize]) -> crate::Shape {
        let (m, n) = (x.iter().product::<usize>(), shape.iter().product::<usize>());
        if m != n {
            panic!(
                "reshape: cannot reshape {x:?} ({m} elements) into {shape:?} ({n} elements); the element counts must match"
            );
        }
        crate::Shape::from_slice(shape)
    }
    /// Forward: shares storage when the input is contiguous (or the
    /// reshape only adds or removes length-1 axes), copies otherwise.
    #[track_caller]
    pub fn forward(x: &Array, shape: &[usize]) -> Array {
        out_shape(x.shape(), shape);
        crate::dtype::on_gpu!(&*x.data, |g| g.reshape(shape));
        Array::from_data(any_map!(&*x.data, |a| reshaped(a, shape)))
    }
    /// `a` in `shape` (element counts already checked).
    fn reshaped<T: Copy>(
        a: &ndarray::ArcArray<T, IxDyn>,
        shape: &[usize],
    ) -> ndarray::ArcArray<T, IxDyn> {
        if let Some(r) = with_unit_axes(a, shape) {
            return r;
        }
        if a.is_standard_layout() {
            return a
                .clone()
                .into_shape_with_order(IxDyn(shape))
                .expect("a row-major array of the same size reshapes");
        }
        if let Some(r) = unit_axes_only(a, shape) {
            return r;
        }
        nabla_kernels::elementwise::contiguous_as(&a.view(), shape).into_shared()
    }
    /// `a` with length-1 axes inserted to give `shape`, when that is all
    /// the reshape does (batching pads an operand's per-example rank this
    /// way before most binary ops): a view of any layout, without
    /// recomputing strides. `None` for any other reshape.
    fn with_unit_axes<T>(
        a: &ndarray::ArcArray<T, IxDyn>,
        shape: &[usize],
    ) -> Option<ndarray::ArcArray<T, IxDyn>> {
        let have = a.shape();
        if shape.len() <= have.len() {
            return None;
        }
        // Match `have` against `shape` in order; every unmatched axis of
        // `shape` must be a 1 (inserted there).
        let mut inserted = crate::Shape::new();
        let mut j = 0;
        for (k, &d) in shape.iter().enumerate() {
            if j < have.len() && have[j] == d {
                j += 1;
            } else if d == 1 {
                inserted.push(k);
            } else {
                return None;
            }
        }
        if j != have.len() {
            return None;
        }
        let mut r = a.clone();
        for &k in &inserted {
            r = r.insert_axis(ndarray::Axis(k));
        }
        Some(r)
    }
    /// A reshape that only inserts or removes length-1 axes, as a view of
    /// any (strided) layout; `None` for any other reshape. Batching pads
    /// operands this way, often on permuted or sliced values.
    fn unit_axes_only<T>(
        a: &ndarray::ArcArray<T, IxDyn>,
        shape: &[usize],
    ) -> Option<ndarray::ArcArray<T, IxDyn>> {
        let non_unit = |s: &[usize]| {
            s.iter()
                .copied()
                .filter(|&d| d != 1)
                .collect::<crate::Shape>()
        };
        if non_unit(a.shape()) != non_unit(shape) {
            return None;
        }
        let mut a = a.clone();
        for ax in (0..a.ndim()).rev() {
            if a.shape()[ax] == 1 {
                a = a.index_axis_move(ndarray::Axis(ax), 0);
            }
        }
        for (ax, &d) in shape.iter().enumerate() {
            if d == 1 {
                a = a.insert_axis(ndarray::Axis(ax));
            }
        }
        Some(a)
    }
    /// JVP rule.
    pub fn jvp<V: ArrayValue>(dx: &V, shape: &[usize]) -> V {
        dx.reshape(shape)
    }
    /// VJP rule: reshape back.
    pub fn vjp<V: ArrayValue>(x_shape: &[usize], ct: &V) -> V {
        ct.reshape(x_shape)
    }
}

/// Axis permutation.
pub mod permute {
    use super::*;
    /// The output shape, checking that `perm` is a permutation of the axes.
    #[track_caller]
    pub fn out_shape(x: &[usize], perm: &[usize]) -> crate::Shape {
        let mut sorted = crate::Shape::from_slice(perm);
        sorted.sort_unstable();
        if !sorted.iter().copied().eq(0..x.len()) {
            panic!(
                "permute: {perm:?} is not a permutation of the {} axes of an array with shape {x:?}; list each axis 0..{} once",
                x.len(),
                x.len()
            );
        }
        perm.iter().map(|&p| x[p]).collect()
    }
    /// Forward: a strided view, no copy.
    #[track_caller]
    pub fn forward(x: &Array, perm: &[usize]) -> Array {
        out_shape(x.shape(), perm);
        crate::dtype::on_gpu!(&*x.data, |g| g.permute(perm));
        Array::from_data(any_map!(&*x.data, |a| a.clone().permuted_axes(IxDyn(perm))))
    }
    /// `permute` then `reshape` to `shape`, with one copy on the CPU
    /// where the reshape of the permuted view would copy. When it would
    /// not (it only adds or drops length-1 axes, or the permuted view is
    /// already row-major), on a GPU, or when `x` records a tape node, the
    /// two ops run one after the other, so views stay views.
    #[track_caller]
    pub fn forward_as(x: &Array, perm: &[usize], shape: &[usize]) -> Array {
        let ps = out_shape(x.shape(), perm);
        reshape::out_shape(&ps, shape);
        if reshape_keeps_view(x.shape(), x.strides(), perm, shape)
            || needs_grad(&[x])
            || x.device() != crate::Device::Cpu
        {
            return x.permute(perm).reshape(shape);
        }
        Array::from_data(any_map!(&*x.data, |a| {
            nabla_kernels::elementwise::permuted_as(&a.view(), perm, shape)
        }))
    }
    /// Whether reshaping the view of `(shape, strides)` permuted by `perm`
    /// into `target` is again a view: its non-unit axes are `target`'s in
    /// order, or the permuted view is row-major (unit axes aside).
    fn reshape_keeps_view(
        shape: &[usize],
        strides: &[isize],
        perm: &[usize],
        target: &[usize],
    ) -> bool {
        // Row-major, walking the permuted axes from the last.
        let mut want = 1isize;
        let mut row_major = true;
        for &a in perm.iter().rev() {
            if shape[a] != 1 {
                row_major &= strides[a] == want;
                want *= shape[a] as isize;
            }
        }
        if row_major {
            return true;
        }
        // The same non-unit axes, in order.
        let mut t = target.iter().filter(|&&d| d != 1);
        perm.iter()
            .filter(|&&a| shape[a] != 1)
            .all(|&a| t.next() == Some(&shape[a]))
            && t.next().is_none()
    }
    /// The inverse permutation.
    pub fn inverse(perm: &[usize]) -> Vec<usize> {
        let mut inv = vec![0; perm.len()];
        for (i, &p) in perm.iter().enumerate() {
            inv[p] = i;
        }
        inv
    }
    /// JVP rule.
    pub fn jvp<V: ArrayValue>(dx: &V, perm: &[usize]) -> V {
        dx.permute(perm)
    }
    /// VJP rule: the inverse permutation.
    pub fn vjp<V: ArrayValue>(perm: &[usize], ct: &V) -> V {
        ct.permute(&inverse(perm))
    }
}

/// NumPy broadcast to a larger shape.
pub mod broadcast_to {
    use super::*;
    /// The output shape (`shape`), checking that `x` broadcasts to it.
    #[track_caller]
    pub fn out_shape(x: &[usize], shape: &[usize]) -> crate::Shape {
        if !nabla_kernels::elementwise::broadcasts_to(x, shape) {
            panic!(
                "broadcast_to: shape {x:?} cannot be broadcast to {shape:?}; each trailing dimension must match or be 1"
            );
        }
        crate::Shape::from_slice(shape)
    }
    /// Forward (materialises the result).
    #[track_caller]
    pub fn forward(x: &Array, shape: &[usize]) -> Array {
        out_shape(x.shape(), shape);
        crate::dtype::on_gpu!(&*x.data, |g| g.broadcast_to(shape));
        let d = IxDyn(shape);
        Array::from_data(any_map!(&*x.data, |a| match a.first() {
            // One element (a reduction's cotangent): a fill, not a copy
            // through ndarray's element iterator.
            Some(v) if a.len() == 1 => ndarray::ArcArray::from_elem(d.clone(), *v),
            _ => nabla_kernels::elementwise::contiguous(&a.broadcast(d.clone()).expect("checked"))
                .into_shared(),
        }))
    }
    /// JVP rule.
    pub fn jvp<V: ArrayValue>(dx: &V, shape: &[usize]) -> V {
        dx.broadcast_to(shape)
    }
    /// VJP rule: sum back to the input shape.
    pub fn vjp<V: ArrayValue>(x_shape: &[usize], ct: &V) -> V {
        ct.sum_to_shape(x_shape)
    }
}

/// Strided slicing, one [`Slice`] per axis.
pub mod slice {
    use super::*;
    /// Forward: a view of the same storage.
    #[track_caller]
    pub fn forward(x: &Array, slices: &[Slice]) -> Array {
        crate::dtype::on_gpu!(&*x.data, |g| g.slice(slices));
        Array::from_data(any_map!(&*x.data, |a| {
            let mut v = a.clone();
            v.slice_each_axis_inplace(|ax| slices[ax.axis.index()]);
            v
        }))
    }
    /// JVP rule.
    pub fn jvp<V: ArrayValue>(dx: &V, slices: &[Slice]) -> V {
        dx.slice(slices)
    }
    /// VJP rule: zeros with the cotangent placed at the slice.
    pub fn vjp<V: ArrayValue>(x_shape: &[usize], slices: &[Slice], ct: &V) -> V {
        ct.slice_place(x_shape, slices)
    }
}

/// The VJP of slicing: zeros of a shape with a value placed at a slice. Its
/// own VJP is the slice.
pub mod slice_place {
    use super::*;
    /// Forward.
    #[track_caller]
    pub fn forward(x: &Array, shape: &[usize], slices: &[Slice]) -> Array {
        if !x.dtype().is_float() {
            crate::primitives::unary::not_float("slice_place", x)
        }
        crate::dtype::on_gpu!(&*x.data, |g| nabla_kernels::cuda::slice_place(
            shape, slices, g
        ));
        Array::from_data(crate::dtype::float_map!(
            &*x.data,
            |a| nabla_kernels::index::slice_place(shape, slices, a.view()),
            crate::primitives::unary::not_float("slice_place", x)
        ))
    }
    /// JVP rule.
    pub fn jvp<V: ArrayValue>(dx: &V, shape: &[usize], slices: &[Slice]) -> V {
        dx.slice_place(shape, slices)
    }
    /// VJP rule: the slice of the cotangent.
    pub fn vjp<V: ArrayValue>(slices: &[Slice], ct: &V) -> V {
        ct.slice(slices)
    }
}

/// Joining arrays along an existing axis.
pub mod concat {
    use super::*;
    /// Forward.
    #[track_caller]
    pub fn forward(parts: &[Array], axis: usize) -> Array {
        check(parts, axis);
        #[cfg(feature = "cuda")]
        {
            let refs: Vec<&Array> = parts.iter().collect();
            if let Some(g) = crate::device::gpu_operands("concat", &refs) {
                return Array::from_data(Data::Cuda(nabla_kernels::cuda::concat(&g, axis)));
            }
        }
        macro_rules! join {
            ($variant:ident) => {{
                let views: Vec<_> = parts
                    .iter()
                    .map(|p| match &*p.data {
                        Data::$variant(a) => a.view(),
                        _ => unreachable!("dtypes checked"),
                    })
                    .collect();
                Data::$variant(
                    ndarray::concatenate(ndarray::Axis(axis), &views)
                        .expect("shapes checked")
                        .into_shared(),
                )
            }};
        }
        Array::from_data(match &*parts[0].data {
            Data::F32(_) => join!(F32),
            Data::F64(_) => join!(F64),
            Data::I64(_) => join!(I64),
            Data::Bool(_) => join!(Bool),
            #[cfg(feature = "cuda")]
            Data::Cuda(_) => unreachable!("device arrays concatenated above"),
        })
    }
    #[track_caller]
    fn check(parts: &[Array], axis: usize) {
        if parts.is_empty() {
            panic!("concat: needs at least one array");
        }
        let first = &parts[0];
        for p in parts {
            let same_rest = p.ndim() == first.ndim()
                && p.shape()
                    .iter()
                    .zip(first.shape())
                    .enumerate()
                    .all(|(i, (a, b))| i == axis || a == b);
            if p.dtype() != first.dtype() || !same_rest {
                let shapes: Vec<_> = parts
                    .iter()
                    .map(|p| format!("{} {:?}", p.dtype(), p.shape()))
                    .collect();
                panic!(
                    "concat: arrays [{}] cannot be joined along axis {axis}; all must share the dtype and every \
                     dimension except axis {axis}",
                    shapes.join(", ")
                );
            }
        }
    }
    /// The slices of the result that each part came from.
    pub fn part_slices(sizes: &[usize], ndim: usize, axis: usize) -> Vec<Vec<Slice>> {
        let mut start = 0;
        sizes
            .iter()
            .map(|&n| {
                let s = (0..ndim)
                    .map(|i| {
                        if i == axis {
                            Slice::new(start as isize, Some((start + n) as isize), 1)
                        } else {
                            Slice::from(..)
                        }
                    })
                    .collect();
                start += n;
                s
            })
            .collect()
    }
    /// JVP rule: concatenate the tangents.
    pub fn jvp<V: ArrayValue>(dxs: &[V], axis: usize) -> V {
        V::concat(dxs, axis)
    }
    /// VJP rule: the cotangent's slice for part `i`.
    pub fn vjp<V: ArrayValue>(sizes: &[usize], axis: usize, i: usize, ct: &V) -> V {
        let nd = ct.ndim();
        ct.slice(&part_slices(sizes, nd, axis)[i])
    }
}

impl Array {
    /// Same elements, new shape (row-major). Shares storage when contiguous.
    ///
    /// ```
    /// # use nabla_runtime::{Array, DType};
    /// assert_eq!(Array::arange(6, DType::F32).reshape(&[2, 3]).shape(), &[2, 3]);
    /// ```
    #[track_caller]
    pub fn reshape(&self, shape: &[usize]) -> Array {
        if shape == self.shape() {
            return self.clone();
        }
        let y = reshape::forward(self, shape);
        unary_node(y, "reshape", self, |_| {
            let xs = self.shape().to_vec();
            move |ct| reshape::vjp(&xs, ct)
        })
    }

    /// Reorders the axes: axis `i` of the result is axis `perm[i]` of `self`.
    ///
    /// ```
    /// # use nabla_runtime::{Array, DType};
    /// assert_eq!(Array::zeros(&[2, 3, 4], DType::F32).permute(&[2, 0, 1]).shape(), &[4, 2, 3]);
    /// ```
    #[track_caller]
    pub fn permute(&self, perm: &[usize]) -> Array {
        let y = permute::forward(self, perm);
        unary_node(y, "permute", self, |_| {
            let p = perm.to_vec();
            move |ct| permute::vjp(&p, ct)
        })
    }

    /// Broadcasts to `shape` NumPy-style.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// let x = Array::from_vec(vec![1.0f32, 2.0], &[2]);
    /// assert_eq!(x.broadcast_to(&[3, 2]).to_vec::<f32>(), vec![1.0, 2.0, 1.0, 2.0, 1.0, 2.0]);
    /// ```
    #[track_caller]
    pub fn broadcast_to(&self, shape: &[usize]) -> Array {
        if shape == self.shape() {
            return self.clone();
        }
        let y = broadcast_to::forward(self, shape);
        unary_node(y, "broadcast_to", self, |_| {
            let xs = self.shape().to_vec();
            move |ct| broadcast_to::vjp(&xs, ct)
        })
    }

    /// Sums a broadcast array back to `shape` (the adjoint of
    /// [`Array::broadcast_to`]).
    ///
    /// ```
    /// # use nabla_runtime::{Array, DType};
    /// let g = Array::ones(&[3, 2], DType::F64).sum_to_shape(&[1, 2]);
    /// assert_eq!(g.to_vec::<f64>(), vec![3.0, 3.0]);
    /// ```
    #[track_caller]
    pub fn sum_to_shape(&self, shape: &[usize]) -> Array {
        if self.shape() == shape {
            return self.clone();
        }
        let Some(lead) = self.ndim().checked_sub(shape.len()) else {
            panic!(
                "sum_to_shape: {:?} has fewer dimensions than the target {shape:?}",
                self.shape()
            )
        };
        let axes: Vec<usize> = (0..self.ndim())
            .filter(|&i| i < lead || (shape[i - lead] == 1 && self.shape()[i] != 1))
            .collect();
        let s = if axes.is_empty() {
            self.clone()
        } else {
            self.sum_norm(&axes, false)
        };
        s.reshape(shape)
    }

    /// Strided slice, one [`Slice`] per axis (a view: no copy).
    #[track_caller]
    pub(crate) fn slice_raw(&self, slices: &[Slice]) -> Array {
        let y = slice::forward(self, slices);
        unary_node(y, "slice", self, |_| {
            let (xs, sl) = (self.shape().to_vec(), slices.to_vec());
            move |ct| slice::vjp(&xs, &sl, ct)
        })
    }

    /// Zeros of `shape` with `self` placed at `slices`.
    #[track_caller]
    pub(crate) fn slice_place_raw(&self, shape: &[usize], slices: &[Slice]) -> Array {
        let y = slice_place::forward(self, shape, slices);
        unary_node(y, "slice_place", self, |_| {
            let sl = slices.to_vec();
            move |ct| slice_place::vjp(&sl, ct)
        })
    }

    /// Slices the leading axes by ranges; remaining axes are kept whole.
    ///
    /// ```
    /// # use nabla_runtime::{Array, DType};
    /// let x = Array::arange(12, DType::F64).reshape(&[3, 4]);
    /// assert_eq!(x.slice(&[0..3, 1..3]).shape(), &[3, 2]);
    /// assert_eq!(x.slice(&[1..2]).to_vec::<f64>(), vec![4.0, 5.0, 6.0, 7.0]);
    /// ```
    #[track_caller]
    pub fn slice(&self, ranges: &[Range<usize>]) -> Array {
        if ranges.len() > self.ndim() {
            panic!(
                "slice: {} ranges given for an array with shape {:?}; give at most one per axis",
                ranges.len(),
                self.shape()
            );
        }
        let slices: Vec<Slice> = (0..self.ndim())
            .map(|i| match ranges.get(i) {
                Some(r) => {
                    let n = self.shape()[i];
                    if r.start > r.end || r.end > n {
                        panic!(
                            "slice: range {r:?} is out of bounds for axis {i} of length {n} (shape {:?}); use start <= end <= {n}",
                            self.shape()
                        );
                    }
                    Slice::new(r.start as isize, Some(r.end as isize), 1)
                }
                None => Slice::from(..),
            })
            .collect();
        self.slice_raw(&slices)
    }

    /// Slices one axis by a range (`x[1:]` is `x.slice_axis(0, 1..n)`).
    ///
    /// ```
    /// # use nabla_runtime::{Array, DType};
    /// let x = Array::arange(5, DType::F64);
    /// assert_eq!(x.slice_axis(0, 1..5).to_vec::<f64>(), vec![1.0, 2.0, 3.0, 4.0]);
    /// ```
    #[track_caller]
    pub fn slice_axis(&self, axis: isize, range: Range<usize>) -> Array {
        let ax = norm_axis("slice_axis", axis, self.ndim());
        let mut ranges: Vec<Range<usize>> = self.shape()[..ax].iter().map(|&n| 0..n).collect();
        ranges.push(range);
        self.slice(&ranges)
    }

    /// Swaps the two axes of a matrix.
    ///
    /// ```
    /// # use nabla_runtime::{Array, DType};
    /// assert_eq!(Array::zeros(&[2, 3], DType::F32).transpose().shape(), &[3, 2]);
    /// ```
    #[track_caller]
    pub fn transpose(&self) -> Array {
        if self.ndim() != 2 {
            panic!(
                "transpose: expects a 2-D array, got shape {:?}; use swapaxes(a, b) or permute(..) for other ranks",
                self.shape()
            );
        }
        self.permute(&[1, 0])
    }

    /// Swaps two axes.
    ///
    /// ```
    /// # use nabla_runtime::{Array, DType};
    /// assert_eq!(Array::zeros(&[2, 3, 4], DType::F32).swapaxes(-1, -2).shape(), &[2, 4, 3]);
    /// ```
    #[track_caller]
    pub fn swapaxes(&self, a: isize, b: isize) -> Array {
        let (a, b) = (
            norm_axis("swapaxes", a, self.ndim()),
            norm_axis("swapaxes", b, self.ndim()),
        );
        let mut perm: Vec<usize> = (0..self.ndim()).collect();
        perm.swap(a, b);
        self.permute(&perm)
    }

    /// Inserts a length-1 axis at `axis` (which may be `ndim`).
    ///
    /// ```
    /// # use nabla_runtime::{Array, DType};
    /// assert_eq!(Array::zeros(&[2, 3], DType::F32).expand_dims(1).shape(), &[2, 1, 3]);
    /// assert_eq!(Array::zeros(&[2, 3], DType::F32).expand_dims(-1).shape(), &[2, 3, 1]);
    /// ```
    #[track_caller]
    pub fn expand_dims(&self, axis: isize) -> Array {
        let ax = norm_axis("expand_dims", axis, self.ndim() + 1);
        let mut shape = self.shape().to_vec();
        shape.insert(ax, 1);
        self.reshape(&shape)
    }

    /// Removes the length-1 axis `axis`.
    ///
    /// ```
    /// # use nabla_runtime::{Array, DType};
    /// assert_eq!(Array::zeros(&[2, 1, 3], DType::F32).squeeze(1).shape(), &[2, 3]);
    /// ```
    #[track_caller]
    pub fn squeeze(&self, axis: isize) -> Array {
        let ax = norm_axis("squeeze", axis, self.ndim());
        if self.shape()[ax] != 1 {
            panic!(
                "squeeze: axis {axis} of shape {:?} has length {}, not 1; only length-1 axes can be removed",
                self.shape(),
                self.shape()[ax]
            );
        }
        let mut shape = self.shape().to_vec();
        shape.remove(ax);
        self.reshape(&shape)
    }

    /// All elements as one axis.
    ///
    /// ```
    /// # use nabla_runtime::{Array, DType};
    /// assert_eq!(Array::zeros(&[2, 3], DType::F32).flatten().shape(), &[6]);
    /// ```
    #[track_caller]
    pub fn flatten(&self) -> Array {
        self.reshape(&[self.numel()])
    }

    /// Splits along `axis` into pieces of the given sizes (which must sum to
    /// the axis length).
    ///
    /// ```
    /// # use nabla_runtime::{Array, DType};
    /// let parts = Array::arange(5, DType::F64).split(&[2, 3], 0);
    /// assert_eq!(parts[1].to_vec::<f64>(), vec![2.0, 3.0, 4.0]);
    /// ```
    #[track_caller]
    pub fn split(&self, sizes: &[usize], axis: isize) -> Vec<Array> {
        let ax = norm_axis("split", axis, self.ndim());
        let total: usize = sizes.iter().sum();
        if total != self.shape()[ax] {
            panic!(
                "split: sizes {sizes:?} add up to {total} but axis {axis} of shape {:?} has length {}; make them add up",
                self.shape(),
                self.shape()[ax]
            );
        }
        concat::part_slices(sizes, self.ndim(), ax)
            .iter()
            .map(|s| self.slice_raw(s))
            .collect()
    }
}

/// Joins arrays along an existing axis (`jnp.concatenate`).
///
/// ```
/// # use nabla_runtime::{concat, Array, DType};
/// let c = concat(&[Array::zeros(&[2, 3], DType::F32), Array::ones(&[2, 2], DType::F32)], 1);
/// assert_eq!(c.shape(), &[2, 5]);
/// ```
#[track_caller]
pub fn concat<A: std::borrow::Borrow<Array>>(parts: &[A], axis: isize) -> Array {
    let parts: Vec<Array> = parts.iter().map(|p| p.borrow().clone()).collect();
    let nd = parts.first().map(|p| p.ndim()).unwrap_or(0);
    let ax = norm_axis("concat", axis, nd);
    concat_norm(&parts, ax)
}

#[track_caller]
pub(crate) fn concat_norm(parts: &[Array], axis: usize) -> Array {
    let y = concat::forward(parts, axis);
    let refs: Vec<&Array> = parts.iter().collect();
    if !needs_grad(&refs) {
        return y;
    }
    let sizes: Vec<usize> = parts.iter().map(|p| p.shape()[axis]).collect();
    let want: Vec<bool> = parts.iter().map(|p| p.is_tracked()).collect();
    record(
        y,
        "concat",
        &refs,
        Box::new(move |ct| {
            (0..sizes.len())
                .map(|i| want[i].then(|| concat::vjp(&sizes, axis, i, ct)))
                .collect()
        }),
    )
}

/// Joins arrays along a new axis (`jnp.stack`).
///
/// ```
/// # use nabla_runtime::{stack, Array, DType};
/// let s = stack(&[Array::zeros(&[2, 3], DType::F32), Array::ones(&[2, 3], DType::F32)], 0);
/// assert_eq!(s.shape(), &[2, 2, 3]);
/// ```
#[track_caller]
pub fn stack<A: std::borrow::Borrow<Array>>(parts: &[A], axis: isize) -> Array {
    let nd = parts.first().map(|p| p.borrow().ndim()).unwrap_or(0);
    let ax = norm_axis("stack", axis, nd + 1);
    let expanded: Vec<Array> = parts
        .iter()
        .map(|p| p.borrow().expand_dims(ax as isize))
        .collect();
    concat_norm(&expanded, ax)
}

/// `x + slice_place(ct)` (see [`ArrayValue::add_into_slice`]): in place
/// when nothing is recorded on the tape and both are host float arrays of
/// one dtype — one pass over the region instead of a zero-filled full array
/// and a full add. `x` is taken by value, so its buffer is reused when no
/// one else holds it (copy-on-write otherwise: values never change under
/// another holder).
pub(crate) fn add_into_slice(mut x: Array, slices: &[Slice], ct: &Array) -> Array {
    if !needs_grad(&[&x, ct]) {
        let done = match (std::sync::Arc::make_mut(&mut x.data), &*ct.data) {
            (Data::F64(a), Data::F64(c)) => add_region(a, slices, c),
            (Data::F32(a), Data::F32(c)) => add_region(a, slices, c),
            _ => false,
        };
        if done {
            return x;
        }
    }
    let shape = x.shape().to_vec();
    crate::Value::add(&x, &ArrayValue::slice_place(ct, &shape, slices))
}

/// Adds `c` into the region of `a` that `slices` selects; false (nothing
/// done) when the shapes do not match.
fn add_region<T: Copy + std::ops::AddAssign>(
    a: &mut ndarray::ArcArray<T, IxDyn>,
    slices: &[Slice],
    c: &ndarray::ArcArray<T, IxDyn>,
) -> bool {
    if slices.len() != a.ndim() {
        return false;
    }
    let mut region = a.slice_each_axis_mut(|ax| slices[ax.axis.index()]);
    if region.shape() != c.shape() {
        return false;
    }
    region.zip_mut_with(c, |r, &v| *r += v);
    true
}

#[cfg(test)]
mod tests {
    use crate::{Array, dtype::Data};

    fn ptr(a: &Array) -> *const f64 {
        match &*a.data {
            Data::F64(x) => x.as_ptr(),
            _ => unreachable!("f64 only here"),
        }
    }

    #[test]
    fn inserting_or_removing_unit_axes_of_a_strided_array_is_a_view() {
        let x = Array::from_vec((0..24).map(f64::from).collect(), &[2, 3, 4]);
        let p = x.permute(&[2, 0, 1]); // [4, 2, 3], not contiguous
        let copied = Array::from_vec(p.to_vec::<f64>(), &[4, 2, 3]);
        for shape in [&[4usize, 1, 2, 3][..], &[1, 4, 2, 1, 3, 1], &[4, 2, 3]] {
            let r = p.reshape(shape);
            assert_eq!(r.shape(), shape);
            assert_eq!(r.to_vec::<f64>(), copied.to_vec::<f64>(), "{shape:?}");
            assert_eq!(ptr(&r), ptr(&x), "{shape:?} shares storage");
            // And back, removing the unit axes again.
            let back = r.reshape(&[4, 2, 3]);
            assert_eq!(back.to_vec::<f64>(), copied.to_vec::<f64>());
        }
        // Any other reshape of a strided array copies, in row-major order.
        let flat = p.reshape(&[24]);
        assert_eq!(flat.to_vec::<f64>(), copied.to_vec::<f64>());
        // Inserting unit axes around existing ones, contiguous or not.
        let u = x.reshape(&[2, 1, 12]);
        for (base, shape) in [
            (&u, &[1usize, 2, 1, 1, 12, 1][..]),
            (&u, &[2, 1, 1, 12]),
            (&p, &[1, 4, 1, 2, 3]),
        ] {
            let r = base.reshape(shape);
            assert_eq!(r.shape(), shape);
            assert_eq!(r.to_vec::<f64>(), base.to_vec::<f64>(), "{shape:?}");
            assert_eq!(ptr(&r), ptr(&x), "{shape:?} shares storage");
        }
    }

    #[test]
    fn permute_reshape_is_permute_then_reshape() {
        use crate::ArrayValue;
        let x = Array::from_vec((0..24).map(f64::from).collect(), &[2, 3, 4]);
        for base in [x.clone(), x.permute(&[1, 2, 0]).reshape(&[2, 3, 4])] {
            for perm in [[0usize, 1, 2], [2, 0, 1], [1, 2, 0], [0, 2, 1]] {
                let want = base.permute(&perm).reshape(&[6, 4]);
                let got = ArrayValue::permute_reshape(&base, &perm, &[6, 4]);
                assert_eq!(got.shape(), &[6, 4]);
                assert_eq!(got.to_vec::<f64>(), want.to_vec::<f64>(), "{perm:?}");
            }
        }
        // Wherever permute-then-reshape is a view, so is the result: into
        // the permuted shape itself, with length-1 axes added, and from a
        // permutation that leaves the layout row-major.
        for (src, perm, shape) in [
            (&x, &[2usize, 0, 1][..], &[4usize, 2, 3][..]),
            (&x, &[2, 0, 1], &[4, 1, 2, 3, 1]),
            (&x.reshape(&[2, 1, 12]), &[1, 0, 2], &[6, 4]),
        ] {
            let got = ArrayValue::permute_reshape(src, perm, shape);
            assert_eq!(ptr(&got), ptr(&x), "{perm:?} into {shape:?}");
            let want = src.permute(perm).reshape(shape);
            assert_eq!(got.shape(), shape);
            assert_eq!(got.to_vec::<f64>(), want.to_vec::<f64>());
        }
        // With a tape: the gradient flows back through both steps.
        let w = x.clone().requires_grad();
        let y = ArrayValue::permute_reshape(&w, &[2, 0, 1], &[4, 6]);
        let weights = Array::from_vec((0..24).map(|i| f64::from(i) * 0.5).collect(), &[4, 6]);
        (y * weights.clone()).sum().backward();
        let want = weights.reshape(&[4, 2, 3]).permute(&[1, 2, 0]);
        assert_eq!(w.grad().to_vec::<f64>(), want.to_vec::<f64>());
    }
}
