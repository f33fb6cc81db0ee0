//! Python functions as ops of the runtime: `nabla.custom_op(forward,
//! jvp=, vjp=)` and the op behind `nabla.checkpoint`, both
//! `nabla::dynamic::DynOp`s whose closures call back into Python.

use crate::array::PyArray;
use crate::convert::array_from;
use crate::errors::guard;
use nabla::dynamic::{self, Dyn, DynOp};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

fn arrays<'py>(py: Python<'py>, xs: &[Dyn]) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, xs.iter().map(|x| PyArray::new(x.clone())))
}

fn optional_arrays<'py>(
    py: Python<'py>,
    xs: &[Option<Dyn>],
    like: &[Dyn],
) -> PyResult<Bound<'py, PyTuple>> {
    use nabla::Value;
    PyTuple::new(
        py,
        xs.iter()
            .zip(like)
            .map(|(x, l)| PyArray::new(x.clone().unwrap_or_else(|| l.zeros_like()))),
    )
}

/// A Python result as a list of values: one array, or a tuple/list of
/// them (`None` entries allowed where `allow_none`).
fn values(r: &Bound<'_, PyAny>, allow_none: bool) -> PyResult<Vec<Option<Dyn>>> {
    if r.is_instance_of::<PyTuple>() || r.is_instance_of::<PyList>() {
        r.try_iter()?
            .map(|x| {
                let x = x?;
                if allow_none && x.is_none() {
                    Ok(None)
                } else {
                    array_from(&x, None).map(Some)
                }
            })
            .collect()
    } else {
        Ok(vec![Some(array_from(r, None)?)])
    }
}

/// Calls `f`, turning a Python exception into a panic that the caller's
/// `guard` reports (with the exception's text).
fn call(
    name: &str,
    what: &str,
    f: impl FnOnce(Python<'_>) -> PyResult<Vec<Option<Dyn>>>,
) -> Vec<Option<Dyn>> {
    Python::attach(|py| match f(py) {
        Ok(v) => v,
        Err(e) => panic!("custom op {name}: the {what} raised {e}"),
    })
}

/// An op whose forward and rules are Python functions.
#[pyclass(name = "CustomOp", module = "nabla", frozen)]
pub struct PyCustomOp {
    op: DynOp,
    /// True when the forward returned one array (not a tuple).
    single: Arc<AtomicBool>,
    always_tuple: bool,
}

#[pymethods]
impl PyCustomOp {
    #[pyo3(signature = (*args))]
    fn __call__(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Py<PyAny>> {
        let xs: Vec<Dyn> = args
            .iter()
            .map(|a| array_from(&a, None))
            .collect::<PyResult<_>>()?;
        let op = &self.op;
        let ys = guard(|| op.apply(&xs))?;
        if ys.len() == 1 && !self.always_tuple && self.single.load(Ordering::Relaxed) {
            return Ok(PyArray::new(ys.into_iter().next().expect("one"))
                .into_pyobject(py)?
                .into_any()
                .unbind());
        }
        Ok(PyTuple::new(py, ys.into_iter().map(PyArray::new))?
            .into_any()
            .unbind())
    }

    fn __repr__(&self) -> String {
        format!("<nabla.CustomOp {}>", self.op.name())
    }
}

fn forward_of(name: Arc<str>, f: Py<PyAny>, single: Arc<AtomicBool>) -> Arc<dynamic::ForwardFn> {
    Arc::new(move |xs: &[Dyn]| {
        call(&name, "forward", |py| {
            let r = f.bind(py).call1(arrays(py, xs)?)?;
            let one = !(r.is_instance_of::<PyTuple>() || r.is_instance_of::<PyList>());
            single.store(one, Ordering::Relaxed);
            values(&r, false)
        })
        .into_iter()
        .map(|v| v.expect("no None outputs"))
        .collect()
    })
}

/// A differentiable op from Python functions: `forward(*xs)` returns an
/// array or a tuple of arrays; `jvp(xs, ys, tangents)` returns the
/// outputs' tangents; `vjp(xs, ys, cotangents)` returns one cotangent per
/// input (None for zero). `xs`, `ys`, `tangents` and `cotangents` are
/// tuples (zeros where nothing flows). A mode without a rule
/// differentiates through `forward`.
#[pyfunction]
#[pyo3(signature = (forward, jvp = None, vjp = None, name = None))]
fn custom_op(
    forward: Py<PyAny>,
    jvp: Option<Py<PyAny>>,
    vjp: Option<Py<PyAny>>,
    name: Option<String>,
) -> PyCustomOp {
    let name: Arc<str> = name.unwrap_or_else(|| "custom_op".into()).into();
    let single = Arc::new(AtomicBool::new(true));
    let mut op = DynOp::new(&name, forward_of(name.clone(), forward, single.clone()));
    if let Some(rule) = jvp {
        let n = name.clone();
        op = op.with_jvp(Arc::new(move |xs, ys, ts| {
            call(&n, "JVP rule", |py| {
                let r = rule.bind(py).call1((
                    arrays(py, xs)?,
                    arrays(py, ys)?,
                    optional_arrays(py, ts, xs)?,
                ))?;
                values(&r, false)
            })
            .into_iter()
            .map(|v| v.expect("no None tangents"))
            .collect()
        }));
    }
    if let Some(rule) = vjp {
        let n = name.clone();
        op = op.with_vjp(Arc::new(move |xs, ys, cts| {
            call(&n, "VJP rule", |py| {
                let r = rule.bind(py).call1((
                    arrays(py, xs)?,
                    arrays(py, ys)?,
                    optional_arrays(py, cts, ys)?,
                ))?;
                values(&r, true)
            })
        }));
    }
    PyCustomOp {
        op,
        single,
        always_tuple: false,
    }
}

/// The op of `nabla.checkpoint(f)`: `f` (leaves to a tuple of leaves),
/// whose reverse mode recomputes it.
#[pyfunction]
fn checkpoint_op(f: Py<PyAny>) -> PyCustomOp {
    let single = Arc::new(AtomicBool::new(false));
    let forward = forward_of("checkpoint".into(), f, single.clone());
    PyCustomOp {
        op: dynamic::checkpointed(forward),
        single,
        always_tuple: true,
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyCustomOp>()?;
    m.add_function(wrap_pyfunction!(custom_op, m)?)?;
    m.add_function(wrap_pyfunction!(checkpoint_op, m)?)?;
    Ok(())
}
