//! Array creation: `array`, `asarray`, `zeros`, `ones`, `full`, `arange`,
//! `linspace`, `eye`, the global generator (`randn`, `rand`, `seed`) and
//! explicit keys (`nabla.random.key/split/normal/uniform`).

use crate::array::PyArray;
use crate::convert::{PyDType, array_from, dtype_arg, shape_arg};
use crate::errors::guard;
use nabla::dynamic::Dyn;
use nabla::{Array, DType};
use pyo3::prelude::*;

fn dtype_or(d: Option<&Bound<'_, PyAny>>, default: DType) -> PyResult<DType> {
    match d {
        Some(d) if !d.is_none() => dtype_arg(d),
        _ => Ok(default),
    }
}

fn made(a: Array, requires_grad: bool) -> PyResult<PyArray> {
    let p = PyArray::new(Dyn::Array(a));
    if requires_grad { p.with_grad() } else { Ok(p) }
}

/// An array from data (numbers, nested lists, NumPy arrays, arrays).
#[pyfunction]
#[pyo3(signature = (data, dtype = None, requires_grad = false))]
pub fn array(
    data: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
) -> PyResult<PyArray> {
    let d = match dtype {
        Some(d) if !d.is_none() => Some(dtype_arg(d)?),
        _ => None,
    };
    let p = PyArray::new(array_from(data, d)?);
    if requires_grad { p.with_grad() } else { Ok(p) }
}

/// Like `array`, but returns a `nabla.Array` argument itself.
#[pyfunction]
#[pyo3(signature = (data, dtype = None))]
pub fn asarray(data: &Bound<'_, PyAny>, dtype: Option<&Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
    let py = data.py();
    if let Ok(a) = data.cast::<PyArray>() {
        let same = match dtype {
            Some(d) if !d.is_none() => dtype_arg(d)? == a.borrow().value_dtype(),
            _ => true,
        };
        if same {
            return Ok(a.clone().into_any().unbind());
        }
    }
    Ok(array(data, dtype, false)?
        .into_pyobject(py)?
        .into_any()
        .unbind())
}

impl PyArray {
    fn value_dtype(&self) -> DType {
        nabla::ArrayValue::dtype(&self.value)
    }
}

/// Zeros of `shape`.
#[pyfunction]
#[pyo3(signature = (shape, dtype = None, requires_grad = false))]
pub fn zeros(
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
) -> PyResult<PyArray> {
    full_impl(shape, 0.0, dtype, requires_grad)
}

/// Ones of `shape`.
#[pyfunction]
#[pyo3(signature = (shape, dtype = None, requires_grad = false))]
pub fn ones(
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
) -> PyResult<PyArray> {
    full_impl(shape, 1.0, dtype, requires_grad)
}

/// `fill_value` everywhere in `shape`.
#[pyfunction]
#[pyo3(signature = (shape, fill_value, dtype = None, requires_grad = false))]
pub fn full(
    shape: &Bound<'_, PyAny>,
    fill_value: f64,
    dtype: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
) -> PyResult<PyArray> {
    full_impl(shape, fill_value, dtype, requires_grad)
}

fn full_impl(
    shape: &Bound<'_, PyAny>,
    v: f64,
    dtype: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
) -> PyResult<PyArray> {
    let s = shape_arg(shape)?;
    let d = dtype_or(dtype, DType::F32)?;
    made(guard(|| Array::full(&s, v, d))?, requires_grad)
}

/// `start, start + step, ...` below `stop` (`arange(n)`: `0..n`).
#[pyfunction]
#[pyo3(signature = (start, stop = None, step = None, dtype = None))]
pub fn arange(
    start: &Bound<'_, PyAny>,
    stop: Option<&Bound<'_, PyAny>>,
    step: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    // Any float argument makes a float array, as in NumPy.
    let floats = [Some(start), stop, step]
        .iter()
        .flatten()
        .any(|v| v.is_instance_of::<pyo3::types::PyFloat>());
    let start: f64 = start.extract()?;
    let stop: Option<f64> = stop.map(|v| v.extract()).transpose()?;
    let step: f64 = step.map(|v| v.extract()).transpose()?.unwrap_or(1.0);
    let (lo, hi) = match stop {
        Some(s) => (start, s),
        None => (0.0, start),
    };
    if step == 0.0 {
        return Err(pyo3::exceptions::PyValueError::new_err(
            "arange: step must not be zero",
        ));
    }
    let d = dtype_or(dtype, if floats { DType::F32 } else { DType::I64 })?;
    let n = ((hi - lo) / step).ceil().max(0.0) as usize;
    let v: Vec<f64> = (0..n).map(|i| lo + step * i as f64).collect();
    made(guard(|| Array::from_vec(v, &[n]).cast(d))?, false)
}

/// `num` evenly spaced values from `start` to `stop` (inclusive).
#[pyfunction]
#[pyo3(signature = (start, stop, num = 50, dtype = None))]
pub fn linspace(
    start: f64,
    stop: f64,
    num: usize,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let d = dtype_or(dtype, DType::F32)?;
    made(guard(|| Array::linspace(start, stop, num, d))?, false)
}

/// The `n × n` identity.
#[pyfunction]
#[pyo3(signature = (n, dtype = None))]
pub fn eye(n: usize, dtype: Option<&Bound<'_, PyAny>>) -> PyResult<PyArray> {
    let d = dtype_or(dtype, DType::F32)?;
    made(guard(|| Array::eye(n, d))?, false)
}

/// Standard normal draws of `shape` from this thread's stream
/// (`nabla.seed` resets it).
#[pyfunction]
#[pyo3(signature = (shape, dtype = None, requires_grad = false))]
pub fn randn(
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
) -> PyResult<PyArray> {
    let s = shape_arg(shape)?;
    let d = dtype_or(dtype, DType::F32)?;
    made(guard(|| nabla::randn(&s, d))?, requires_grad)
}

/// Uniform draws in `[0, 1)` of `shape` from this thread's stream.
#[pyfunction]
#[pyo3(signature = (shape, dtype = None, requires_grad = false))]
pub fn rand(
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
    requires_grad: bool,
) -> PyResult<PyArray> {
    let s = shape_arg(shape)?;
    let d = dtype_or(dtype, DType::F32)?;
    made(guard(|| nabla::rand(&s, d))?, requires_grad)
}

/// Seeds the calling thread's stream and the seed new threads start from
/// (`torch.manual_seed`; see `nabla::manual_seed`).
#[pyfunction]
pub fn seed(seed: u64) {
    nabla::manual_seed(seed);
}

/// An explicit random key (`jax.random.key`): draws from it depend on the
/// key alone.
#[pyclass(name = "Key", module = "nabla.random", frozen, eq, hash)]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PyKey(pub nabla::random::Key);

#[pymethods]
impl PyKey {
    fn __repr__(&self) -> String {
        format!("{:?}", self.0)
    }
}

/// A key from a seed.
#[pyfunction]
pub fn key(seed: u64) -> PyKey {
    PyKey(nabla::random::Key::new(seed))
}

/// `num` independent keys from one.
#[pyfunction]
#[pyo3(signature = (key, num = 2))]
pub fn split(key: &PyKey, num: usize) -> Vec<PyKey> {
    key.0.split(num).into_iter().map(PyKey).collect()
}

/// Standard normal draws from `key`.
#[pyfunction]
#[pyo3(signature = (key, shape, dtype = None))]
pub fn normal(
    key: &PyKey,
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let s = shape_arg(shape)?;
    let d = dtype_or(dtype, DType::F32)?;
    made(guard(|| key.0.normal(&s, d))?, false)
}

/// Uniform draws in `[0, 1)` from `key`.
#[pyfunction]
#[pyo3(signature = (key, shape, dtype = None))]
pub fn uniform(
    key: &PyKey,
    shape: &Bound<'_, PyAny>,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let s = shape_arg(shape)?;
    let d = dtype_or(dtype, DType::F32)?;
    made(guard(|| key.0.uniform(&s, d))?, false)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    macro_rules! add {
        ($($f:ident),*) => { $(m.add_function(wrap_pyfunction!($f, m)?)?;)* };
    }
    add!(
        array, asarray, zeros, ones, full, arange, linspace, eye, randn, rand, seed
    );
    let py = m.py();
    let random = PyModule::new(py, "random")?;
    random.add_class::<PyKey>()?;
    random.add_function(wrap_pyfunction!(key, &random)?)?;
    random.add_function(wrap_pyfunction!(split, &random)?)?;
    random.add_function(wrap_pyfunction!(normal, &random)?)?;
    random.add_function(wrap_pyfunction!(uniform, &random)?)?;
    m.add_submodule(&random)?;
    let _ = PyDType(DType::F32);
    Ok(())
}
