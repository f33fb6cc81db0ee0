//! Functions built from primitives. They have no derivative rules of their
//! own: their derivatives come from the primitives they call, in every mode.
//! Each is generic over the value traits so that the same definition serves
//! arrays, scalars (where it makes sense) and the interpretation types.

use crate::{ArrayValue, Value};

/// Mean over normalised `axes`.
pub fn mean<V: ArrayValue>(x: &V, axes: &[usize], keepdim: bool) -> V {
    let shape = x.shape_vec();
    let n: usize = axes.iter().map(|&a| shape[a]).product();
    x.sum_axes(axes, keepdim).mul_scalar(1.0 / n as f64)
}

/// Variance over `axes` with `ddof` delta degrees of freedom.
pub fn var<V: ArrayValue>(x: &V, axes: &[usize], keepdim: bool, ddof: usize) -> V {
    let shape = x.shape_vec();
    let n: usize = axes.iter().map(|&a| shape[a]).product();
    let centred = x.sub(&mean(x, axes, true));
    centred
        .square()
        .sum_axes(axes, keepdim)
        .mul_scalar(1.0 / (n as f64 - ddof as f64))
}

/// `log Σ exp x` over `axes`, stabilised by the (constant) maximum.
pub fn logsumexp<V: ArrayValue>(x: &V, axes: &[usize], keepdim: bool) -> V {
    let m = x.max_axes(axes, true).stop_gradient();
    let s = x.sub(&m).exp().sum_axes(axes, true).ln().add(&m);
    if keepdim {
        s
    } else {
        let shape: Vec<usize> = x
            .shape_vec()
            .iter()
            .enumerate()
            .filter(|(i, _)| !axes.contains(i))
            .map(|(_, &d)| d)
            .collect();
        s.reshape(&shape)
    }
}

/// `exp x / Σ exp x` along `axis`.
pub fn softmax<V: ArrayValue>(x: &V, axis: usize) -> V {
    let m = x.max_axes(&[axis], true).stop_gradient();
    let e = x.sub(&m).exp();
    e.div(&e.sum_axes(&[axis], true))
}

/// `x - logsumexp(x)` along `axis`.
pub fn log_softmax<V: ArrayValue>(x: &V, axis: usize) -> V {
    x.sub(&logsumexp(x, &[axis], true))
}

/// Exact GELU: `x · Φ(x)` with the erf form of the normal CDF.
pub fn gelu<V: Value>(x: &V) -> V {
    x.mul(
        &x.mul_scalar(std::f64::consts::FRAC_1_SQRT_2)
            .erf()
            .add_scalar(1.0),
    )
    .mul_scalar(0.5)
}

/// GELU with the tanh approximation.
pub fn gelu_tanh<V: Value>(x: &V) -> V {
    let c = (2.0 / std::f64::consts::PI).sqrt();
    let inner = x.add(&x.powi(3).mul_scalar(0.044715)).mul_scalar(c);
    x.mul(&inner.tanh().add_scalar(1.0)).mul_scalar(0.5)
}

/// SiLU (swish): `x · sigmoid(x)`.
pub fn silu<V: Value>(x: &V) -> V {
    x.mul(&x.sigmoid())
}

/// `ln(1 + e^x)`, computed stably as `relu(x) + ln(1 + e^-|x|)`.
pub fn softplus<V: Value>(x: &V) -> V {
    x.relu().add(&x.abs().neg().exp().ln_1p())
}

/// Mean squared error `mean((pred - target)²)` over all elements.
pub fn mse_loss<V: ArrayValue>(pred: &V, target: &V) -> V {
    let d = pred.sub(target).square();
    let all: Vec<usize> = (0..d.shape_vec().len()).collect();
    mean(&d, &all, false)
}

/// Mean cross-entropy between `logits` `[N, C]` and one-hot (or
/// probability) `targets` `[N, C]`.
pub fn cross_entropy<V: ArrayValue>(logits: &V, targets: &V) -> V {
    let nd = logits.shape_vec().len();
    let lp = log_softmax(logits, nd - 1);
    let per = lp.mul(targets).sum_axes(&[nd - 1], false).neg();
    let all: Vec<usize> = (0..per.shape_vec().len()).collect();
    mean(&per, &all, false)
}

use crate::Array;
use crate::array::{norm_axes, norm_axis};

impl Array {
    /// Mean of all elements.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::from_vec(vec![1.0f64, 2.0, 3.0], &[3]).mean().item(), 2.0);
    /// ```
    #[track_caller]
    pub fn mean(&self) -> Array {
        let all: Vec<usize> = (0..self.ndim()).collect();
        mean(self, &all, false)
    }

    /// Mean over `axes`.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// let x = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]);
    /// assert_eq!(x.mean_axes(&[1], false).to_vec::<f64>(), vec![1.5, 3.5]);
    /// ```
    #[track_caller]
    pub fn mean_axes(&self, axes: &[isize], keepdim: bool) -> Array {
        mean(self, &norm_axes("mean", axes, self.ndim()), keepdim)
    }

    /// Variance over `axes` with `ddof` delta degrees of freedom (`ddof = 0`
    /// is NumPy's default).
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// let x = Array::from_vec(vec![1.0f64, 3.0], &[2]);
    /// assert_eq!(x.var_axes(&[0], false, 0).item(), 1.0);
    /// ```
    #[track_caller]
    pub fn var_axes(&self, axes: &[isize], keepdim: bool, ddof: usize) -> Array {
        var(self, &norm_axes("var", axes, self.ndim()), keepdim, ddof)
    }

    /// `log Σ exp` over `axes`, computed stably.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// let x = Array::from_vec(vec![1000.0f64, 1000.0], &[2]);
    /// assert!((x.logsumexp_axes(&[0], false).item() - (1000.0 + 2f64.ln())).abs() < 1e-9);
    /// ```
    #[track_caller]
    pub fn logsumexp_axes(&self, axes: &[isize], keepdim: bool) -> Array {
        logsumexp(self, &norm_axes("logsumexp", axes, self.ndim()), keepdim)
    }

    /// Softmax along `axis`.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// let p = Array::from_vec(vec![1.0f64, 1.0], &[2]).softmax(-1);
    /// assert_eq!(p.to_vec::<f64>(), vec![0.5, 0.5]);
    /// ```
    #[track_caller]
    pub fn softmax(&self, axis: isize) -> Array {
        softmax(self, norm_axis("softmax", axis, self.ndim()))
    }

    /// Log-softmax along `axis`.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// let p = Array::from_vec(vec![1.0f64, 1.0], &[2]).log_softmax(-1);
    /// assert!((p.to_vec::<f64>()[0] - 0.5f64.ln()).abs() < 1e-15);
    /// ```
    #[track_caller]
    pub fn log_softmax(&self, axis: isize) -> Array {
        log_softmax(self, norm_axis("log_softmax", axis, self.ndim()))
    }

    /// Exact (erf) GELU.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::scalar(0.0f64).gelu().item(), 0.0);
    /// ```
    #[track_caller]
    pub fn gelu(&self) -> Array {
        gelu(self)
    }

    /// GELU, tanh approximation.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::scalar(0.0f64).gelu_tanh().item(), 0.0);
    /// ```
    #[track_caller]
    pub fn gelu_tanh(&self) -> Array {
        gelu_tanh(self)
    }

    /// SiLU / swish.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::scalar(0.0f64).silu().item(), 0.0);
    /// ```
    #[track_caller]
    pub fn silu(&self) -> Array {
        silu(self)
    }

    /// `ln(1 + e^x)`, stable for large `|x|`.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::scalar(1000.0f64).softplus().item(), 1000.0);
    /// ```
    #[track_caller]
    pub fn softplus(&self) -> Array {
        softplus(self)
    }
}
