//! Norms and normalisations: `norm`, `layer_norm`, `rms_norm`, written as
//! `#[differentiable]` code.

use crate::Array;
use nabla_macros::differentiable;

/// The last `n` axes of an array of rank `ndim` (the normalised axes of
/// `layer_norm` with an `n`-axis weight).
#[doc(hidden)]
#[track_caller]
pub fn trailing_axes(op: &str, ndim: usize, n: usize) -> Vec<isize> {
    assert!(
        n >= 1 && n <= ndim,
        "{op}: a weight of rank {n} normalises the last {n} axes, but the input has rank {ndim}; give an input \
         with at least {n} axes whose last ones match the weight"
    );
    (ndim - n..ndim).map(|a| a as isize).collect()
}

/// The vector `ord`-norm of the entries over `axes` (taken together as one
/// vector): `ord = 2` is `√Σx²` (the Frobenius norm over two axes), `1` is
/// `Σ|x|`, `f64::INFINITY` is `max|x|`, `f64::NEG_INFINITY` is `min|x|`,
/// other `p > 0` give `(Σ|x|^p)^(1/p)`. Matrix norms (spectral, nuclear)
/// are not this function. The derivative at `x = 0` is NaN for `ord = 2`,
/// as in JAX.
///
/// ```
/// # use nabla::*;
/// let x = Array::from_vec(vec![3.0f64, -4.0], &[2]);
/// assert_eq!(nabla::norm(&x, 2.0, &[0], false).item(), 5.0);
/// assert_eq!(nabla::norm(&x, 1.0, &[0], false).item(), 7.0);
/// assert_eq!(nabla::norm(&x, f64::INFINITY, &[0], false).item(), 4.0);
/// ```
#[differentiable(crate = crate)]
pub fn norm(x: &Array, #[nondiff] ord: f64, axes: &[isize], keepdim: bool) -> Array {
    let ord = crate::composite::norms::checked_ord(ord);
    if ord == 2.0 {
        x.square().sum_axes(axes, keepdim).sqrt()
    } else if ord == 1.0 {
        x.abs().sum_axes(axes, keepdim)
    } else if ord == f64::INFINITY {
        x.abs().max_axes(axes, keepdim)
    } else if ord == f64::NEG_INFINITY {
        x.abs().min_axes(axes, keepdim)
    } else {
        x.abs().powf(ord).sum_axes(axes, keepdim).powf(1.0 / ord)
    }
}

/// `ord`, after checking it is a norm order `norm` computes.
#[doc(hidden)]
#[track_caller]
pub fn checked_ord(ord: f64) -> f64 {
    assert!(
        ord > 0.0 || ord == f64::NEG_INFINITY,
        "norm: ord = {ord} is not supported; use 1, 2, another p > 0, f64::INFINITY or f64::NEG_INFINITY"
    );
    ord
}

/// Layer normalisation (`torch.nn.functional.layer_norm` with an affine
/// weight and bias): over the last `weight.ndim()` axes,
/// `(x − mean) / √(var + eps) · weight + bias`, the variance biased.
///
/// ```
/// # use nabla::*;
/// let x = Array::from_vec(vec![1.0f64, 3.0], &[1, 2]);
/// let (w, b) = (Array::ones(&[2], DType::F64), Array::zeros(&[2], DType::F64));
/// let y = nabla::layer_norm(&x, &w, &b, 0.0);
/// assert_eq!(y.to_vec::<f64>(), vec![-1.0, 1.0]);
/// ```
#[differentiable(crate = crate)]
pub fn layer_norm(x: &Array, weight: &Array, bias: &Array, #[nondiff] eps: f64) -> Array {
    let axes = crate::composite::norms::trailing_axes("layer_norm", x.ndim(), weight.ndim());
    if axes.len() == 1 && crate::composite::rows::enabled() {
        crate::composite::rows::normalize_rows(x, eps) * weight + bias
    } else {
        let centred = x - &x.mean_axes(&axes, true);
        let var = centred.square().mean_axes(&axes, true);
        centred * (var + eps).rsqrt() * weight + bias
    }
}

/// Root-mean-square normalisation (`torch.nn.functional.rms_norm`): over
/// the last `weight.ndim()` axes, `x / √(mean(x²) + eps) · weight`.
///
/// ```
/// # use nabla::*;
/// let x = Array::from_vec(vec![3.0f64, 4.0], &[1, 2]);
/// let y = nabla::rms_norm(&x, &Array::ones(&[2], DType::F64), 0.0);
/// let r = (12.5f64).sqrt();
/// assert_eq!(y.to_vec::<f64>(), vec![3.0 / r, 4.0 / r]);
/// ```
#[differentiable(crate = crate)]
pub fn rms_norm(x: &Array, weight: &Array, #[nondiff] eps: f64) -> Array {
    let axes = crate::composite::norms::trailing_axes("rms_norm", x.ndim(), weight.ndim());
    x * &(x.square().mean_axes(&axes, true) + eps).rsqrt() * weight
}
