//! Functions built from primitives, written as `#[differentiable]` Rust:
//! the library is its own first user. They have no derivative rules of
//! their own; the macro generates their forward, JVP and VJP code from the
//! primitives they call, exactly as for user functions.
//!
//! Each is a function value: `nabla::softmax(&x, -1)` calls it on arrays,
//! `nabla::softmax::forward::<V>(..)` is the generic variant, and
//! differentiable user code calls it like any other function.
//!
//! ```
//! use nabla::Array;
//! let x = Array::from_vec(vec![1.0f64, 2.0, 3.0], &[3]);
//! let p = nabla::softmax(&x, -1);
//! assert!((p.sum().item() - 1.0).abs() < 1e-15);
//! ```

pub mod contract;
pub mod gather;
pub mod norms;
pub mod rows;
pub mod scan;
pub mod window;

pub use contract::einsum;
pub use norms::{layer_norm, norm, rms_norm};
pub use scan::{cumprod, sort};
pub use window::{avg_pool2d, conv, max_pool2d};

pub use gather::{embedding, pad, scatter_add, take_along_axis, tril, triu};

use crate::Array;
use crate::array::norm_axes;
use nabla_macros::differentiable;

/// The shape of a reduction over `axes` (negative axes allowed).
///
/// ```
/// use nabla::composite::reduced_shape;
/// assert_eq!(reduced_shape([2, 3, 4], &[-1], false), vec![2, 3]);
/// assert_eq!(reduced_shape([2, 3, 4], &[0, 2], true), vec![1, 3, 1]);
/// ```
pub fn reduced_shape(shape: impl AsRef<[usize]>, axes: &[isize], keepdim: bool) -> Vec<usize> {
    let shape = shape.as_ref();
    let ax = norm_axes("reduce", axes, shape.len());
    crate::primitives::reduce::keep_shape(shape, &ax)
        .into_iter()
        .enumerate()
        .filter(|(i, _)| keepdim || !ax.contains(i))
        .map(|(_, d)| d)
        .collect()
}

/// `axis` after checking it against `ndim` (panics naming `op`).
///
/// ```
/// use nabla::composite::checked_axis;
/// assert_eq!(checked_axis("softmax", -1, 3), 2);
/// assert!(std::panic::catch_unwind(|| checked_axis("softmax", 3, 3)).is_err());
/// ```
#[track_caller]
pub fn checked_axis(op: &str, axis: isize, ndim: usize) -> isize {
    crate::array::norm_axis(op, axis, ndim) as isize
}

/// The number of elements a reduction over `axes` combines.
///
/// ```
/// use nabla::composite::reduced_count;
/// assert_eq!(reduced_count([2, 3, 4], &[0, -1]), 8);
/// ```
pub fn reduced_count(shape: impl AsRef<[usize]>, axes: &[isize]) -> usize {
    let shape = shape.as_ref();
    norm_axes("reduce", axes, shape.len())
        .iter()
        .map(|&a| shape[a])
        .product()
}

/// All axes of an array, as the `&[isize]` the reductions take.
///
/// ```
/// use nabla::composite::all_axes;
/// assert_eq!(all_axes([2, 3, 4]), vec![0, 1, 2]);
/// ```
pub fn all_axes(shape: impl AsRef<[usize]>) -> Vec<isize> {
    (0..shape.as_ref().len() as isize).collect()
}

pub use crate::primitives::reduce::mean;

/// `log Σ exp x` over `axes`, stabilised by the (constant) maximum.
///
/// ```
/// # use nabla::*;
/// let x = Array::from_vec(vec![1000.0f64, 1000.0], &[2]);
/// assert!((nabla::logsumexp_axes(&x, &[0], false).item() - (1000.0 + 2f64.ln())).abs() < 1e-9);
/// ```
#[differentiable(crate = crate)]
pub fn logsumexp_axes(x: &Array, axes: &[isize], keepdim: bool) -> Array {
    let m = crate::stop_gradient(&x.max_axes(axes, true));
    let s = (x - &m).exp().sum_axes(axes, true).ln() + &m;
    s.reshape(&crate::composite::reduced_shape(x.shape(), axes, keepdim))
}

/// `log Σ exp x` over all elements.
///
/// ```
/// # use nabla::*;
/// assert_eq!(nabla::logsumexp(&Array::from_vec(vec![0.0f64, 0.0], &[2])).item(), 2f64.ln());
/// ```
#[differentiable(crate = crate)]
pub fn logsumexp(x: &Array) -> Array {
    // `sum` of the whole `exp(x − m)`: one fused map-reduce pass forward
    // and one pass back (which recomputes the `exp`), nothing stored.
    let axes = crate::composite::all_axes(x.shape());
    let m = crate::stop_gradient(&x.max_axes(&axes, false));
    crate::sum(&(x - &m).exp()).ln() + &m
}

/// `exp x / Σ exp x` along `axis`.
///
/// ```
/// # use nabla::*;
/// let p = nabla::softmax(&Array::from_vec(vec![0.0f64, 0.0], &[2]), -1);
/// assert_eq!(p.to_vec::<f64>(), vec![0.5, 0.5]);
/// ```
#[differentiable(crate = crate)]
pub fn softmax(x: &Array, axis: isize) -> Array {
    let axis = crate::composite::checked_axis("softmax", axis, x.ndim());
    if axis + 1 == x.ndim() as isize && crate::composite::rows::enabled() {
        crate::composite::rows::softmax_rows(x, 1.0, false)
    } else {
        let m = crate::stop_gradient(&x.max_axes(&[axis], true));
        let e = (x - &m).exp();
        &e / &e.sum_axes(&[axis], true)
    }
}

/// `x - logsumexp(x)` along `axis`.
///
/// ```
/// # use nabla::*;
/// let p = nabla::log_softmax(&Array::from_vec(vec![0.0f64, 0.0], &[2]), -1);
/// assert_eq!(p.to_vec::<f64>()[0], 0.5f64.ln());
/// ```
#[differentiable(crate = crate)]
pub fn log_softmax(x: &Array, axis: isize) -> Array {
    let axis = crate::composite::checked_axis("log_softmax", axis, x.ndim());
    x - &logsumexp_axes(x, &[axis], true)
}

/// Variance over `axes` with `ddof` delta degrees of freedom (`ddof = 0`
/// is NumPy's default).
///
/// ```
/// # use nabla::*;
/// let x = Array::from_vec(vec![1.0f64, 3.0], &[2]);
/// assert_eq!(nabla::var_axes(&x, &[0], false, 0).item(), 1.0);
/// ```
#[differentiable(crate = crate)]
pub fn var_axes(x: &Array, axes: &[isize], keepdim: bool, ddof: usize) -> Array {
    let n = crate::composite::reduced_count(x.shape(), axes) as f64;
    let c = x - &x.mean_axes(axes, true);
    c.square().sum_axes(axes, keepdim) / (n - ddof as f64)
}

/// Exact GELU: `x · Φ(x)` with the erf form of the normal CDF.
///
/// ```
/// # use nabla::*;
/// assert_eq!(nabla::gelu(&Array::scalar(0.0f64)).item(), 0.0);
/// ```
#[differentiable(crate = crate)]
pub fn gelu(x: &Array) -> Array {
    let phi = 1.0 + (x * std::f64::consts::FRAC_1_SQRT_2).erf();
    x * &phi * 0.5
}

/// GELU with the tanh approximation.
///
/// ```
/// # use nabla::*;
/// assert_eq!(nabla::gelu_tanh(&Array::scalar(0.0f64)).item(), 0.0);
/// ```
#[differentiable(crate = crate)]
pub fn gelu_tanh(x: &Array) -> Array {
    let c = (2.0 / std::f64::consts::PI).sqrt();
    let inner = (x + &(x.powi(3) * 0.044715)) * c;
    x * &(1.0 + inner.tanh()) * 0.5
}

/// SiLU (swish): `x · sigmoid(x)`.
///
/// ```
/// # use nabla::*;
/// assert_eq!(nabla::silu(&Array::scalar(0.0f64)).item(), 0.0);
/// ```
#[differentiable(crate = crate)]
pub fn silu(x: &Array) -> Array {
    x * &x.sigmoid()
}

/// `ln(1 + e^x)`, computed stably as `relu(x) + ln(1 + e^-|x|)`.
///
/// ```
/// # use nabla::*;
/// assert_eq!(nabla::softplus(&Array::scalar(1000.0f64)).item(), 1000.0);
/// ```
#[differentiable(crate = crate)]
pub fn softplus(x: &Array) -> Array {
    x.relu() + (-x.abs()).exp().ln_1p()
}

/// Mean squared error `mean((pred - target)²)` over all elements.
///
/// ```
/// # use nabla::*;
/// let (p, t) = (Array::from_vec(vec![1.0f64, 2.0], &[2]), Array::from_vec(vec![0.0f64, 0.0], &[2]));
/// assert_eq!(nabla::mse_loss(&p, &t).item(), 2.5);
/// ```
#[differentiable(crate = crate)]
pub fn mse_loss(pred: &Array, target: &Array) -> Array {
    (pred - target).square().mean()
}

/// Mean cross-entropy of `logits` `[.., C]` (classes on the last axis, as
/// optax's; PyTorch puts them on axis 1) against `targets`: either class
/// indices `[..]` (an `I64` array, as `torch.nn.functional.cross_entropy`
/// takes them) or probabilities `[.., C]` (one-hot or soft labels, in the
/// logits' dtype). The targets carry no gradient; for a gradient with
/// respect to soft labels write `-(log_softmax(logits, -1) * p)` and sum.
///
/// ```
/// # use nabla::*;
/// let logits = Array::from_vec(vec![0.0f64, 0.0, 2.0, 0.0], &[2, 2]);
/// let labels = Array::from_vec(vec![0i64, 0], &[2]);
/// let onehot = Array::from_vec(vec![1.0f64, 0.0, 1.0, 0.0], &[2, 2]);
/// let want = (2f64.ln() + (1.0 + (-2f64).exp()).ln()) / 2.0;
/// assert!((nabla::cross_entropy(&logits, &labels).item() - want).abs() < 1e-15);
/// assert!((nabla::cross_entropy(&logits, &onehot).item() - want).abs() < 1e-15);
/// ```
#[differentiable(crate = crate)]
pub fn cross_entropy(logits: &Array, #[nondiff] targets: &Array) -> Array {
    let lp = log_softmax(logits, -1);
    let per = if targets.dtype() == crate::DType::I64 {
        let column = crate::composite::label_column(logits.shape(), targets);
        crate::take_along_axis(&lp, &column, -1).sum_axes(&[-1], false)
    } else {
        let probs = crate::composite::label_probabilities(logits.shape(), targets);
        (lp * probs).sum_axes(&[-1], false)
    };
    -per.mean()
}

/// The probabilities `cross_entropy` was given as `targets`, checked: a
/// float array of the logits' shape. Float targets of shape `[..]` are
/// class indices of the wrong dtype, and any other dtype is neither form;
/// both panic naming the dtype and shape expected.
#[doc(hidden)]
#[track_caller]
pub fn label_probabilities(logits: impl AsRef<[usize]>, targets: &Array) -> Array {
    let logits = logits.as_ref();
    let lead = &logits[..logits.len().saturating_sub(1)];
    let (dtype, shape) = (targets.dtype(), targets.shape());
    if dtype.is_float() && shape == lead {
        panic!(
            "cross_entropy: targets of dtype {dtype} and shape {shape:?} look like class indices, \
             which must be i64: convert them with `targets.cast(DType::I64)` (or build them from \
             i64 values); float targets are probabilities of the logits' shape {logits:?}"
        );
    }
    assert!(
        dtype.is_float() && shape == logits,
        "cross_entropy: targets of dtype {dtype} and shape {shape:?} match neither form: give \
         class indices as an i64 array of shape {lead:?} (`.cast(DType::I64)`), or \
         probabilities in the logits' dtype and shape {logits:?}"
    );
    targets.clone()
}

/// Class indices `[..]` as the `[.., 1]` column `take_along_axis` reads
/// from logits of shape `logits`.
#[doc(hidden)]
#[track_caller]
pub fn label_column(logits: impl AsRef<[usize]>, labels: &Array) -> Array {
    let logits = logits.as_ref();
    let lead = &logits[..logits.len().saturating_sub(1)];
    assert!(
        labels.shape() == lead,
        "cross_entropy: class indices of shape {:?} do not match logits of shape {logits:?}; \
         give one index per row ({lead:?}), or probabilities of the logits' shape",
        labels.shape()
    );
    let mut col = lead.to_vec();
    col.push(1);
    labels.reshape(&col)
}

/// Every method of the registry's `composite_methods!` list exists on
/// `Array` (the macro lowers `x.softmax(..)` to the composite of that name
/// and expects the method for plain calls): a compile-time check.
macro_rules! composite_methods_exist {
    ($($m:ident)*) => {
        const _: () = {
            #[allow(dead_code)]
            fn exists() {
                $(let _ = Array::$m;)*
            }
        };
    };
}
nabla_ops::composite_methods!(composite_methods_exist);

impl Array {
    /// Mean of all elements.
    ///
    /// ```
    /// # use nabla::Array;
    /// assert_eq!(Array::from_vec(vec![1.0f64, 2.0, 3.0], &[3]).mean().item(), 2.0);
    /// ```
    #[track_caller]
    pub fn mean(&self) -> Array {
        if !self.dtype().is_float() {
            crate::primitives::unary::not_float("mean", self)
        }
        let all: Vec<usize> = (0..self.ndim()).collect();
        mean(self, &all, false)
    }

    /// Mean over `axes`.
    ///
    /// ```
    /// # use nabla::Array;
    /// let x = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]);
    /// assert_eq!(x.mean_axes(&[1], false).to_vec::<f64>(), vec![1.5, 3.5]);
    /// ```
    #[track_caller]
    pub fn mean_axes(&self, axes: &[isize], keepdim: bool) -> Array {
        if !self.dtype().is_float() {
            crate::primitives::unary::not_float("mean", self)
        }
        mean(self, &norm_axes("mean", axes, self.ndim()), keepdim)
    }

    /// Variance over `axes` (see [`var_axes`](const@var_axes)).
    ///
    /// ```
    /// # use nabla::Array;
    /// assert_eq!(Array::from_vec(vec![1.0f64, 3.0], &[2]).var_axes(&[0], false, 0).item(), 1.0);
    /// ```
    #[track_caller]
    pub fn var_axes(&self, axes: &[isize], keepdim: bool, ddof: usize) -> Array {
        var_axes(self, axes, keepdim, ddof)
    }

    /// `log Σ exp` over `axes`, computed stably.
    ///
    /// ```
    /// # use nabla::Array;
    /// assert_eq!(Array::from_vec(vec![0.0f64, 0.0], &[2]).logsumexp_axes(&[0], false).item(), 2f64.ln());
    /// ```
    #[track_caller]
    pub fn logsumexp_axes(&self, axes: &[isize], keepdim: bool) -> Array {
        logsumexp_axes(self, axes, keepdim)
    }

    /// Softmax along `axis`.
    ///
    /// ```
    /// # use nabla::Array;
    /// assert_eq!(Array::from_vec(vec![1.0f64, 1.0], &[2]).softmax(-1).to_vec::<f64>(), vec![0.5, 0.5]);
    /// ```
    #[track_caller]
    pub fn softmax(&self, axis: isize) -> Array {
        softmax(self, axis)
    }

    /// Log-softmax along `axis`.
    ///
    /// ```
    /// # use nabla::Array;
    /// let p = Array::from_vec(vec![1.0f64, 1.0], &[2]).log_softmax(-1);
    /// assert!((p.to_vec::<f64>()[0] - 0.5f64.ln()).abs() < 1e-15);
    /// ```
    #[track_caller]
    pub fn log_softmax(&self, axis: isize) -> Array {
        log_softmax(self, axis)
    }

    /// Exact (erf) GELU.
    ///
    /// ```
    /// # use nabla::Array;
    /// assert_eq!(Array::scalar(0.0f64).gelu().item(), 0.0);
    /// ```
    pub fn gelu(&self) -> Array {
        gelu(self)
    }

    /// GELU, tanh approximation.
    ///
    /// ```
    /// # use nabla::Array;
    /// assert_eq!(Array::scalar(0.0f64).gelu_tanh().item(), 0.0);
    /// ```
    pub fn gelu_tanh(&self) -> Array {
        gelu_tanh(self)
    }

    /// SiLU / swish.
    ///
    /// ```
    /// # use nabla::Array;
    /// assert_eq!(Array::scalar(0.0f64).silu().item(), 0.0);
    /// ```
    pub fn silu(&self) -> Array {
        silu(self)
    }

    /// `ln(1 + e^x)`, stable for large `|x|`.
    ///
    /// ```
    /// # use nabla::Array;
    /// assert_eq!(Array::scalar(1000.0f64).softplus().item(), 1000.0);
    /// ```
    pub fn softplus(&self) -> Array {
        softplus(self)
    }
}
