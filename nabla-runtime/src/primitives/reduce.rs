//! Reduction primitives (`sum`, `max`, `min`, `prod` over axes) and
//! `cumsum`.
//!
//! Rules receive normalised axes (sorted, non-negative). Batching rule (all
//! of them): shift the reduced axes past the batch axis.

use crate::array::norm_axes;
use crate::autograd::unary_node;
use crate::primitives::unary::not_float;
use crate::storage::float_map;
use crate::{Array, ArrayValue};
use nabla_kernels::elementwise::CompareOp;
use nabla_kernels::reduce::{self as kernels, ReduceOp};
use ndarray::IxDyn;

/// The shape of a reduction's result with `keepdim = true`.
///
/// ```
/// use nabla::primitives::reduce::keep_shape;
/// assert_eq!(&keep_shape(&[2, 3, 4], &[0, 2])[..], &[1, 3, 1]);
/// ```
pub fn keep_shape(shape: &[usize], axes: &[usize]) -> crate::Shape {
    shape
        .iter()
        .enumerate()
        .map(|(i, &d)| if axes.contains(&i) { 1 } else { d })
        .collect()
}

#[track_caller]
fn forward(x: &Array, axes: &[usize], keepdim: bool, op: ReduceOp, name: &str) -> Array {
    let y = reduce_kernel(x, axes, keepdim, op, name);
    crate::array::nans::check(name, &[x], &y);
    y
}

#[track_caller]
fn reduce_kernel(x: &Array, axes: &[usize], keepdim: bool, op: ReduceOp, name: &str) -> Array {
    if !x.dtype().is_float() {
        not_float(name, x)
    }
    crate::array::on_gpu!(&*x.data, |g| {
        let r = nabla_kernels::cuda::reduce(g, axes, op);
        if keepdim {
            r.reshape(&keep_shape(x.shape(), axes))
        } else {
            r
        }
    });
    Array::from_data(float_map!(
        &*x.data,
        |a| {
            let r = kernels::reduce(a.view(), axes, op);
            if keepdim {
                r.into_shape_with_order(IxDyn(&keep_shape(x.shape(), axes)))
                    .expect("same size")
            } else {
                r
            }
        },
        not_float(name, x)
    ))
}

/// Reshapes a reduction's output (or cotangent) to its keepdim shape.
fn to_keep<V: ArrayValue>(y: &V, x_shape: &[usize], axes: &[usize], keepdim: bool) -> V {
    if keepdim {
        y.clone()
    } else {
        y.reshape(&keep_shape(x_shape, axes))
    }
}

/// Sum over axes.
pub mod sum {
    use super::*;
    /// Forward.
    ///
    /// ```
    /// use nabla::{primitives::reduce::sum, Array};
    /// let x = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    /// assert_eq!(sum::forward(&x, &[1], false).to_vec::<f64>(), vec![6.0, 15.0]);
    /// assert_eq!(sum::forward(&x, &[1], true).shape(), &[2, 1]);
    /// ```
    #[track_caller]
    pub fn forward(x: &Array, axes: &[usize], keepdim: bool) -> Array {
        super::forward(x, axes, keepdim, ReduceOp::Sum, "sum")
    }
    /// JVP rule: the sum of the tangent.
    ///
    /// ```
    /// use nabla::{primitives::reduce::sum, Array, DType};
    /// let dx = Array::ones(&[2, 3], DType::F64);
    /// assert_eq!(sum::jvp(&dx, &[0], false).to_vec::<f64>(), vec![2.0, 2.0, 2.0]);
    /// ```
    pub fn jvp<V: ArrayValue>(dx: &V, axes: &[usize], keepdim: bool) -> V {
        dx.sum_axes(axes, keepdim)
    }
    /// VJP rule: the cotangent broadcast back over the reduced axes.
    ///
    /// ```
    /// use nabla::{primitives::reduce::sum, Array};
    /// let ct = Array::from_vec(vec![1.0f64, 2.0], &[2]);
    /// let g = sum::vjp(&[2, 3], &[1], false, &ct);
    /// assert_eq!(g.to_vec::<f64>(), vec![1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
    /// ```
    pub fn vjp<V: ArrayValue>(x_shape: &[usize], axes: &[usize], keepdim: bool, ct: &V) -> V {
        // Reduced leading axes (a full sum included) come back by
        // broadcasting alone; others need their length-1 axes first.
        let leading = axes.iter().enumerate().all(|(i, &a)| a == i);
        if leading {
            ct.broadcast_to(x_shape)
        } else {
            to_keep(ct, x_shape, axes, keepdim).broadcast_to(x_shape)
        }
    }
}

mod chooser;
pub(crate) use chooser::{composite_jvp, composite_vjp, pass_jvp, pass_vjp};
pub use chooser::{max, min};

/// For every element of `x`, the product of the *other* elements of its
/// reduced slice (`∂y/∂x`), in `x`'s shape. Exact at zeros and to every
/// order: the reduced axes are flattened to the last one, and the exclusive
/// prefix and suffix products are built by log-depth scans of `mul`s
/// (Hillis–Steele doubling), so no division appears and the result
/// differentiates again like any product. Costs `2·⌈log₂ m⌉` passes for a
/// slice of `m` elements.
fn others_product<V: ArrayValue>(x: &V, axes: &[usize]) -> V {
    let shape = x.shape_vec();
    let m: usize = axes.iter().map(|&a| shape[a]).product();
    if m == 0 {
        return x.zeros_like();
    }
    let kept: Vec<usize> = (0..shape.len()).filter(|a| !axes.contains(a)).collect();
    let perm: Vec<usize> = kept.iter().chain(axes).copied().collect();
    let mut flat: Vec<usize> = kept.iter().map(|&a| shape[a]).collect();
    let permuted_shape: Vec<usize> = perm.iter().map(|&a| shape[a]).collect();
    flat.push(m);
    let last = flat.len() - 1;
    let xs = x.permute(&perm).reshape(&flat);
    // `v[.., lo..hi]` along the last axis.
    let part = |v: &V, lo: usize, hi: usize| -> V {
        let mut sl = vec![ndarray::Slice::from(..); last];
        sl.push(ndarray::Slice::from(lo..hi));
        v.slice(&sl)
    };
    // Inclusive prefix (`from_left`) or suffix products.
    let scan = |from_left: bool| -> V {
        let mut s = xs.clone();
        let mut d = 1;
        while d < m {
            let ones = part(&s, 0, d).ones_like();
            let shifted = if from_left {
                V::concat(&[ones, part(&s, 0, m - d)], last)
            } else {
                V::concat(&[part(&s, d, m), ones], last)
            };
            s = s.mul(&shifted);
            d *= 2;
        }
        s
    };
    let one = part(&xs, 0, 1).ones_like();
    let before = V::concat(&[one.clone(), part(&scan(true), 0, m - 1)], last);
    let after = V::concat(&[part(&scan(false), 1, m), one], last);
    before
        .mul(&after)
        .reshape(&permuted_shape)
        .permute(&crate::primitives::shape::permute::inverse(&perm))
}

/// Product over axes. The rules are exact at zeros (see `others_product`).
pub mod prod {
    use super::*;
    /// Forward.
    ///
    /// ```
    /// use nabla::{primitives::reduce::prod, Array};
    /// let x = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]);
    /// assert_eq!(prod::forward(&x, &[0], false).to_vec::<f64>(), vec![3.0, 8.0]);
    /// ```
    #[track_caller]
    pub fn forward(x: &Array, axes: &[usize], keepdim: bool) -> Array {
        super::forward(x, axes, keepdim, ReduceOp::Prod, "prod")
    }
    /// JVP rule: `Σ ẋ · ∏(others)`.
    ///
    /// ```
    /// use nabla::{primitives::reduce::prod, Array};
    /// let x = Array::from_vec(vec![2.0f64, 3.0, 4.0], &[3]);
    /// let dx = Array::from_vec(vec![1.0f64, 0.0, 0.0], &[3]);
    /// let y = prod::forward(&x, &[0], false);
    /// assert_eq!(prod::jvp(&x, &y, &[0], false, &dx).item(), 12.0); // ∂(xyz)/∂x = yz
    /// ```
    pub fn jvp<V: ArrayValue>(x: &V, _y: &V, axes: &[usize], keepdim: bool, dx: &V) -> V {
        dx.mul(&others_product(x, axes)).sum_axes(axes, keepdim)
    }
    /// VJP rule: `ȳ · ∏(others)`.
    ///
    /// ```
    /// use nabla::{primitives::reduce::prod, Array};
    /// let x = Array::from_vec(vec![2.0f64, 0.0, 4.0], &[3]); // exact at zeros
    /// let y = prod::forward(&x, &[0], false);
    /// let g = prod::vjp(&x, &y, &[0], false, &Array::scalar(1.0f64));
    /// assert_eq!(g.to_vec::<f64>(), vec![0.0, 8.0, 0.0]);
    /// ```
    pub fn vjp<V: ArrayValue>(x: &V, _y: &V, axes: &[usize], keepdim: bool, ct: &V) -> V {
        to_keep(ct, &x.shape_vec(), axes, keepdim).mul(&others_product(x, axes))
    }
}

/// Cumulative sum along an axis (`reverse` sums from the end).
pub mod cumsum {
    use super::*;
    /// Forward.
    ///
    /// ```
    /// use nabla::{primitives::reduce::cumsum, Array};
    /// let x = Array::from_vec(vec![1.0f64, 2.0, 3.0], &[3]);
    /// assert_eq!(cumsum::forward(&x, 0, false).to_vec::<f64>(), vec![1.0, 3.0, 6.0]);
    /// assert_eq!(cumsum::forward(&x, 0, true).to_vec::<f64>(), vec![6.0, 5.0, 3.0]);
    /// ```
    #[track_caller]
    pub fn forward(x: &Array, axis: usize, reverse: bool) -> Array {
        if !x.dtype().is_float() {
            not_float("cumsum", x)
        }
        crate::array::on_gpu!(&*x.data, |g| nabla_kernels::cuda::cumsum(g, axis, reverse));
        Array::from_data(float_map!(
            &*x.data,
            |a| kernels::cumsum(a.view(), axis, reverse),
            not_float("cumsum", x)
        ))
    }
    /// JVP rule: cumsum of the tangent.
    ///
    /// ```
    /// use nabla::{primitives::reduce::cumsum, Array, DType};
    /// let dx = Array::ones(&[3], DType::F64);
    /// assert_eq!(cumsum::jvp(&dx, 0, false).to_vec::<f64>(), vec![1.0, 2.0, 3.0]);
    /// ```
    pub fn jvp<V: ArrayValue>(dx: &V, axis: usize, reverse: bool) -> V {
        dx.cumsum_axis(axis, reverse)
    }
    /// VJP rule: cumsum of the cotangent in the other direction.
    ///
    /// ```
    /// use nabla::{primitives::reduce::cumsum, Array, DType};
    /// let ct = Array::ones(&[3], DType::F64);
    /// assert_eq!(cumsum::vjp(0, false, &ct).to_vec::<f64>(), vec![3.0, 2.0, 1.0]);
    /// ```
    pub fn vjp<V: ArrayValue>(axis: usize, reverse: bool, ct: &V) -> V {
        ct.cumsum_axis(axis, !reverse)
    }
}

impl Array {
    /// Primitive sum over normalised axes (records on the tape).
    #[track_caller]
    pub(crate) fn sum_norm(&self, axes: &[usize], keepdim: bool) -> Array {
        let y = sum::forward(self, axes, keepdim);
        unary_node(y, "sum", self, |_| {
            let (shape, axes) = (self.shape().to_vec(), axes.to_vec());
            move |ct| sum::vjp(&shape, &axes, keepdim, ct)
        })
    }

    #[track_caller]
    fn chooser_norm(&self, axes: &[usize], keepdim: bool, is_max: bool) -> Array {
        let y = if is_max {
            max::forward(self, axes, keepdim)
        } else {
            min::forward(self, axes, keepdim)
        };
        let (xr, yr, axes) = (self.detach(), y.detach(), axes.to_vec());
        let vjp = if is_max {
            max::vjp::<Array>
        } else {
            min::vjp::<Array>
        };
        unary_node(y, if is_max { "max" } else { "min" }, self, |_| {
            move |ct| vjp(&xr, &yr, &axes, keepdim, ct)
        })
    }

    #[track_caller]
    pub(crate) fn max_norm(&self, axes: &[usize], keepdim: bool) -> Array {
        check_not_empty("max", self.shape(), axes);
        self.chooser_norm(axes, keepdim, true)
    }

    #[track_caller]
    pub(crate) fn min_norm(&self, axes: &[usize], keepdim: bool) -> Array {
        check_not_empty("min", self.shape(), axes);
        self.chooser_norm(axes, keepdim, false)
    }

    #[track_caller]
    pub(crate) fn prod_norm(&self, axes: &[usize], keepdim: bool) -> Array {
        let y = prod::forward(self, axes, keepdim);
        unary_node(y, "prod", self, |y| {
            let (xr, yr, axes) = (self.detach(), y.detach(), axes.to_vec());
            move |ct| {
                use crate::Value as _;
                // The tape never differentiates through `xr` (detached), so where
                // it has no zeros the one-pass `ȳ · y / x` equals the exact rule.
                let zeros = xr.cmp_mask(&xr.zeros_like(), CompareOp::Eq).sum();
                if zeros.item_f64() == 0.0 {
                    let shape = xr.shape_vec();
                    to_keep(ct, &shape, &axes, keepdim)
                        .mul(&to_keep(&yr, &shape, &axes, keepdim).div(&xr))
                } else {
                    prod::vjp(&xr, &yr, &axes, keepdim, ct)
                }
            }
        })
    }

    #[track_caller]
    pub(crate) fn cumsum_norm(&self, axis: usize, reverse: bool) -> Array {
        let y = cumsum::forward(self, axis, reverse);
        unary_node(y, "cumsum", self, |_| {
            move |ct| cumsum::vjp(axis, reverse, ct)
        })
    }

    /// Sum of all elements (a 0-d array).
    ///
    /// ```
    /// # use nabla::Array;
    /// assert_eq!(Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3]).sum().item(), 6.0);
    /// ```
    #[track_caller]
    pub fn sum(&self) -> Array {
        let all: Vec<usize> = (0..self.ndim()).collect();
        self.sum_norm(&all, false)
    }

    /// Sum over `axes` (negative axes count from the end).
    ///
    /// ```
    /// # use nabla::Array;
    /// let x = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]);
    /// assert_eq!(x.sum_axes(&[1], false).to_vec::<f64>(), vec![3.0, 7.0]);
    /// assert_eq!(x.sum_axes(&[-2], true).shape(), &[1, 2]);
    /// ```
    #[track_caller]
    pub fn sum_axes(&self, axes: &[isize], keepdim: bool) -> Array {
        self.sum_norm(&norm_axes("sum", axes, self.ndim()), keepdim)
    }

    /// Largest element.
    ///
    /// ```
    /// # use nabla::Array;
    /// assert_eq!(Array::from_vec(vec![1.0f32, 5.0, 3.0], &[3]).max().item(), 5.0);
    /// ```
    #[track_caller]
    pub fn max(&self) -> Array {
        let all: Vec<usize> = (0..self.ndim()).collect();
        self.max_norm(&all, false)
    }

    /// Maximum over `axes`.
    ///
    /// ```
    /// # use nabla::Array;
    /// let x = Array::from_vec(vec![1.0f64, 4.0, 3.0, 2.0], &[2, 2]);
    /// assert_eq!(x.max_axes(&[1], false).to_vec::<f64>(), vec![4.0, 3.0]);
    /// ```
    #[track_caller]
    pub fn max_axes(&self, axes: &[isize], keepdim: bool) -> Array {
        self.max_norm(&norm_axes("max", axes, self.ndim()), keepdim)
    }

    /// Smallest element.
    ///
    /// ```
    /// # use nabla::Array;
    /// assert_eq!(Array::from_vec(vec![1.0f32, 5.0, 3.0], &[3]).min().item(), 1.0);
    /// ```
    #[track_caller]
    pub fn min(&self) -> Array {
        let all: Vec<usize> = (0..self.ndim()).collect();
        self.min_norm(&all, false)
    }

    /// Minimum over `axes`.
    ///
    /// ```
    /// # use nabla::Array;
    /// let x = Array::from_vec(vec![1.0f64, 4.0, 3.0, 2.0], &[2, 2]);
    /// assert_eq!(x.min_axes(&[0], false).to_vec::<f64>(), vec![1.0, 2.0]);
    /// ```
    #[track_caller]
    pub fn min_axes(&self, axes: &[isize], keepdim: bool) -> Array {
        self.min_norm(&norm_axes("min", axes, self.ndim()), keepdim)
    }

    /// Product of all elements.
    ///
    /// ```
    /// # use nabla::Array;
    /// assert_eq!(Array::from_vec(vec![2.0f64, 3.0], &[2]).prod().item(), 6.0);
    /// ```
    #[track_caller]
    pub fn prod(&self) -> Array {
        let all: Vec<usize> = (0..self.ndim()).collect();
        self.prod_norm(&all, false)
    }

    /// Product over `axes`.
    ///
    /// ```
    /// # use nabla::Array;
    /// let x = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]);
    /// assert_eq!(x.prod_axes(&[1], false).to_vec::<f64>(), vec![2.0, 12.0]);
    /// ```
    #[track_caller]
    pub fn prod_axes(&self, axes: &[isize], keepdim: bool) -> Array {
        self.prod_norm(&norm_axes("prod", axes, self.ndim()), keepdim)
    }

    /// Cumulative sum along `axis`.
    ///
    /// ```
    /// # use nabla::Array;
    /// let x = Array::from_vec(vec![1.0f64, 2.0, 3.0], &[3]);
    /// assert_eq!(x.cumsum(0).to_vec::<f64>(), vec![1.0, 3.0, 6.0]);
    /// ```
    #[track_caller]
    pub fn cumsum(&self, axis: isize) -> Array {
        self.cumsum_norm(crate::array::norm_axis("cumsum", axis, self.ndim()), false)
    }

    /// Index of the largest element along `axis` (an `I64` array; first
    /// wins ties). Not differentiable.
    ///
    /// ```
    /// # use nabla::Array;
    /// let x = Array::from_vec(vec![1.0f64, 4.0, 3.0, 2.0], &[2, 2]);
    /// assert_eq!(x.argmax(1).to_vec::<i64>(), vec![1, 0]);
    /// ```
    #[track_caller]
    pub fn argmax(&self, axis: isize) -> Array {
        let ax = crate::array::norm_axis("argmax", axis, self.ndim());
        if !self.dtype().is_float() {
            not_float("argmax", self)
        }
        check_not_empty("argmax", self.shape(), &[ax]);
        crate::array::on_gpu!(&*self.data, |g| nabla_kernels::cuda::arg_reduce(
            g, ax, true
        ));
        Array::from_data(crate::storage::Data::I64(match &*self.data {
            crate::storage::Data::F32(a) => kernels::arg_reduce(a.view(), ax, true).into(),
            crate::storage::Data::F64(a) => kernels::arg_reduce(a.view(), ax, true).into(),
            _ => not_float("argmax", self),
        }))
    }

    /// Index of the smallest element along `axis` (an `I64` array).
    ///
    /// ```
    /// # use nabla::Array;
    /// let x = Array::from_vec(vec![1.0f64, 4.0, 3.0, 2.0], &[2, 2]);
    /// assert_eq!(x.argmin(1).to_vec::<i64>(), vec![0, 1]);
    /// ```
    #[track_caller]
    pub fn argmin(&self, axis: isize) -> Array {
        let ax = crate::array::norm_axis("argmin", axis, self.ndim());
        if !self.dtype().is_float() {
            not_float("argmin", self)
        }
        check_not_empty("argmin", self.shape(), &[ax]);
        crate::array::on_gpu!(&*self.data, |g| nabla_kernels::cuda::arg_reduce(
            g, ax, false
        ));
        Array::from_data(crate::storage::Data::I64(match &*self.data {
            crate::storage::Data::F32(a) => kernels::arg_reduce(a.view(), ax, false).into(),
            crate::storage::Data::F64(a) => kernels::arg_reduce(a.view(), ax, false).into(),
            _ => not_float("argmin", self),
        }))
    }
}

/// Mean over normalised `axes` (generic: `sum · 1/n`, at any value type).
///
/// ```
/// use nabla::Array;
/// let x = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
/// let m = nabla::primitives::reduce::mean(&x, &[1], false);
/// assert_eq!(m.to_vec::<f64>(), vec![2.0, 5.0]);
/// ```
pub fn mean<V: ArrayValue>(x: &V, axes: &[usize], keepdim: bool) -> V {
    let shape = x.shape_vec();
    let n: usize = axes.iter().map(|&a| shape[a]).product();
    x.sum_axes(axes, keepdim).mul_scalar(1.0 / n as f64)
}

/// Panics unless every axis of `axes` has elements: the max, min, argmax
/// and argmin of nothing are undefined (NumPy raises too), while sums and
/// products of nothing are their identities.
#[track_caller]
fn check_not_empty(op: &str, shape: &[usize], axes: &[usize]) {
    if let Some(&ax) = axes.iter().find(|&&a| shape[a] == 0) {
        panic!(
            "{op}: axis {ax} of shape {shape:?} is empty, and the {op} of no elements is undefined; reduce \
             over non-empty axes only (check numel() first, or use sum, which gives 0)"
        );
    }
}
