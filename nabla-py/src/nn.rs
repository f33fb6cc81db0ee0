//! `nabla._nabla._nn`: what the Python modules of `nabla.nn` need from the
//! Rust layers: their parameters initialised exactly as the Rust layers
//! initialise them (named as PyTorch's state dicts), and the fused
//! attention softmax.

use crate::array::PyArray;
use crate::errors::guard;
use nabla::dynamic::Dyn;
use nabla::nn::models::{Cnn, CnnConfig, Gpt, GptConfig, MlpClassifier};
use nabla::nn::{Conv2d, Embedding, LayerNorm, Linear};
use nabla::random::Key;
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A required entry of the config dict.
fn get<'py, T: FromPyObjectOwned<'py>>(cfg: &Bound<'py, PyDict>, k: &str) -> PyResult<T> {
    match cfg.get_item(k)? {
        Some(v) => v.extract().map_err(Into::into),
        None => Err(PyKeyError::new_err(format!(
            "init_params: the config needs {k:?}"
        ))),
    }
}

/// The initial parameters of `kind` (`"linear"`, `"embedding"`,
/// `"layer_norm"`, `"conv2d"`, `"mlp_classifier"`, `"cnn"`, `"gpt"`) with settings `cfg`, drawn
/// from `seed` as the Rust constructor draws them: name to array.
#[pyfunction]
fn init_params<'py>(
    py: Python<'py>,
    kind: &str,
    cfg: &Bound<'py, PyDict>,
    seed: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let key = Key::new(seed);
    let named = match kind {
        "linear" => {
            let (i, o, b) = (get(cfg, "inputs")?, get(cfg, "outputs")?, get(cfg, "bias")?);
            guard(|| nabla::tree::named_leaves(&Linear::new(i, o, b, key)))?
        }
        "embedding" => {
            let (n, d) = (get(cfg, "num")?, get(cfg, "dim")?);
            guard(|| nabla::tree::named_leaves(&Embedding::new(n, d, key)))?
        }
        "layer_norm" => {
            let d = get(cfg, "dim")?;
            guard(|| nabla::tree::named_leaves(&LayerNorm::new(d)))?
        }
        "conv2d" => {
            let (i, o) = (get(cfg, "inputs")?, get(cfg, "outputs")?);
            let k: [usize; 2] = get(cfg, "kernel")?;
            guard(|| nabla::tree::named_leaves(&Conv2d::new(i, o, k, key)))?
        }
        "cnn" => {
            let c = CnnConfig {
                channels: get(cfg, "channels")?,
                height: get(cfg, "height")?,
                width: get(cfg, "width")?,
                features: get(cfg, "features")?,
                classes: get(cfg, "classes")?,
            };
            guard(|| nabla::tree::named_leaves(&Cnn::new(&c, key)))?
        }
        "mlp_classifier" => {
            let w: Vec<usize> = get(cfg, "widths")?;
            guard(|| nabla::tree::named_leaves(&MlpClassifier::new(&w, key)))?
        }
        "gpt" => {
            let c = GptConfig {
                vocab: get(cfg, "vocab")?,
                context: get(cfg, "context")?,
                layers: get(cfg, "layers")?,
                heads: get(cfg, "heads")?,
                embd: get(cfg, "embd")?,
            };
            guard(|| nabla::tree::named_leaves(&Gpt::new(&c, key)))?
        }
        _ => {
            return Err(PyValueError::new_err(format!(
                "init_params: unknown kind {kind:?}; use linear, embedding, layer_norm, conv2d, mlp_classifier, cnn or gpt"
            )));
        }
    };
    let out = PyDict::new(py);
    for (n, a) in named {
        out.set_item(n, PyArray::new(Dyn::Array(a)))?;
    }
    Ok(out)
}

/// Softmax over the last axis of `scores · scale`, the upper triangle
/// masked out when `causal`.
#[pyfunction]
#[pyo3(signature = (scores, scale, causal = false))]
fn attention_softmax(scores: &Bound<'_, PyAny>, scale: f64, causal: bool) -> PyResult<PyArray> {
    let s = crate::convert::array_from(scores, None)?;
    guard(|| {
        PyArray::new(nabla::composite::rows::attention_softmax::forward::<Dyn>(
            &s, scale, causal,
        ))
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let nn = PyModule::new(m.py(), "_nn")?;
    nn.add_function(wrap_pyfunction!(init_params, &nn)?)?;
    nn.add_function(wrap_pyfunction!(attention_softmax, &nn)?)?;
    m.add_submodule(&nn)?;
    Ok(())
}
