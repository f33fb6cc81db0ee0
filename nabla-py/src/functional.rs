//! The composites of the Rust library as Python functions (`softmax`,
//! `log_softmax`, `gelu`, `silu`, `softplus`, `mse_loss`,
//! `cross_entropy`): each calls the `#[differentiable]` function's generic
//! forward at `Dyn`, so it runs under every transform.

use crate::array::PyArray;
use crate::convert::{array_from, operands};
use crate::errors::guard;
use nabla::dynamic::Dyn;
use nabla::{ArrayValue, Value};
use pyo3::prelude::*;

fn arg(x: &Bound<'_, PyAny>) -> PyResult<Dyn> {
    array_from(x, None)
}

/// Softmax along `axis`.
#[pyfunction]
#[pyo3(signature = (x, axis = -1))]
pub fn softmax(x: &Bound<'_, PyAny>, axis: isize) -> PyResult<PyArray> {
    let x = arg(x)?;
    guard(|| PyArray::new(nabla::softmax::forward::<Dyn>(&x, axis)))
}

/// Log-softmax along `axis`.
#[pyfunction]
#[pyo3(signature = (x, axis = -1))]
pub fn log_softmax(x: &Bound<'_, PyAny>, axis: isize) -> PyResult<PyArray> {
    let x = arg(x)?;
    guard(|| PyArray::new(nabla::log_softmax::forward::<Dyn>(&x, axis)))
}

macro_rules! composite1 {
    ($($(#[$doc:meta])* $name:ident),*) => {
        $(
            $(#[$doc])*
            #[pyfunction]
            pub fn $name(x: &Bound<'_, PyAny>) -> PyResult<PyArray> {
                let x = arg(x)?;
                guard(|| PyArray::new(nabla::$name::forward::<Dyn>(&x)))
            }
        )*
    };
}
composite1!(
    /// GELU (the erf form).
    gelu,
    /// GELU, tanh approximation.
    gelu_tanh,
    /// `x · sigmoid(x)`.
    silu,
    /// `log(1 + e^x)`, computed stably.
    softplus
);

/// Mean squared error.
#[pyfunction]
pub fn mse_loss(pred: &Bound<'_, PyAny>, target: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    let (p, t) = operands(pred, target)?;
    guard(|| PyArray::new(nabla::mse_loss::forward::<Dyn>(&p, &t)))
}

/// Mean cross-entropy of `logits` `[n, classes]` against integer labels.
#[pyfunction]
pub fn cross_entropy(logits: &Bound<'_, PyAny>, labels: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    let l = arg(logits)?;
    let t = arg(labels)?;
    guard(|| {
        PyArray::new(match &t {
            Dyn::Array(t) => nabla::cross_entropy::forward::<Dyn>(&l, t),
            traced => traced_cross_entropy(&l, traced),
        })
    })
}

/// Cross-entropy against labels that are themselves traced (an input of
/// a function `jit` records, or batched by `vmap`): the log-softmax picked
/// out by a one-hot mask built from the labels, so the recorded program
/// reads each call's labels.
fn traced_cross_entropy(logits: &Dyn, labels: &Dyn) -> Dyn {
    let s = logits.shape_vec();
    let (n, c) = (s[0], s[1]);
    let dtype = logits.dtype();
    let classes = Dyn::Array(nabla::Array::arange(c, dtype).reshape(&[1, c]));
    let one_hot = labels
        .cast(dtype)
        .reshape(&[n, 1])
        .cmp_mask(&classes, nabla::CompareOp::Eq);
    let logp = nabla::log_softmax::forward::<Dyn>(logits, -1);
    one_hot
        .mul(&logp)
        .sum_axes(&[0, 1], false)
        .mul_scalar(-1.0 / n as f64)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    macro_rules! add {
        ($($f:ident),*) => { $(m.add_function(wrap_pyfunction!($f, m)?)?;)* };
    }
    add!(
        softmax,
        log_softmax,
        gelu,
        gelu_tanh,
        silu,
        softplus,
        mse_loss,
        cross_entropy
    );
    Ok(())
}
