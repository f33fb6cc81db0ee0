//! `nabla.optim`: the Rust optimizers (`SGD`, `Adam`, `AdamW`) over a list
//! of Python arrays, updated in place as PyTorch's are, with learning-rate
//! schedules and gradient clipping. The update rules are the Rust ones
//! (one fused pass per parameter).

use crate::array::PyArray;
use crate::errors::guard;
use nabla::dynamic::Dyn;
use nabla::optim::{Adam, AdamW, Optimizer, Schedule, Sgd, State};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// A learning rate that changes with the step (`nabla.optim.schedules`).
#[pyclass(name = "Schedule", module = "nabla.optim", frozen)]
#[derive(Clone)]
pub struct PySchedule(Schedule);

#[pymethods]
impl PySchedule {
    /// The learning rate at step `t` (counting from 0).
    fn __call__(&self, t: u64) -> f64 {
        self.0.at(t)
    }
    fn __repr__(&self) -> String {
        format!("{:?}", self.0)
    }
}

/// A constant learning rate.
#[pyfunction]
fn constant(lr: f64) -> PySchedule {
    PySchedule(Schedule::constant(lr))
}

/// From `init` to `end` linearly over `steps`, then `end`.
#[pyfunction]
fn linear(init: f64, end: f64, steps: u64) -> PySchedule {
    PySchedule(Schedule::linear(init, end, steps))
}

/// Cosine decay from `peak` to `end` over `steps`.
#[pyfunction]
#[pyo3(signature = (peak, steps, end = 0.0))]
fn cosine(peak: f64, steps: u64, end: f64) -> PySchedule {
    PySchedule(Schedule::cosine(peak, steps, end))
}

/// Linear warm-up from `init` to `peak` over `warmup` steps, then cosine
/// decay to `end` at `total`.
#[pyfunction]
#[pyo3(signature = (init, peak, warmup, total, end = 0.0))]
fn warmup_cosine(init: f64, peak: f64, warmup: u64, total: u64, end: f64) -> PySchedule {
    PySchedule(Schedule::warmup_cosine(init, peak, warmup, total, end))
}

fn schedule(lr: &Bound<'_, PyAny>) -> PyResult<Schedule> {
    if let Ok(s) = lr.cast::<PySchedule>() {
        return Ok(s.get().0);
    }
    let v: f64 = lr.extract().map_err(|_| {
        PyTypeError::new_err("lr must be a number or a nabla.optim.schedules schedule")
    })?;
    Ok(Schedule::constant(v))
}

enum Rule {
    Sgd(Sgd),
    Adam(Adam),
    AdamW(AdamW),
}

/// An optimizer over `params` (arrays that require grad), as
/// `torch.optim`'s: `step()` after `backward()` updates them in place from
/// their `.grad()`; `step(grads)` uses the given gradients instead (a list
/// like `params`, e.g. from `nabla.grad`).
#[pyclass(name = "Optimizer", module = "nabla.optim", subclass)]
pub struct PyOptimizer {
    rule: Rule,
    params: Vec<Py<PyArray>>,
    state: State,
}

fn arrays(py: Python<'_>, params: &[Py<PyArray>]) -> PyResult<Vec<nabla::Array>> {
    params
        .iter()
        .map(|p| p.borrow(py).concrete("optimizer"))
        .collect()
}

impl PyOptimizer {
    fn new(py: Python<'_>, rule: Rule, params: Vec<Py<PyArray>>) -> PyResult<PyOptimizer> {
        if params.is_empty() {
            return Err(PyValueError::new_err(
                "the optimizer got an empty parameter list",
            ));
        }
        let a = arrays(py, &params)?;
        let state = guard(|| match &rule {
            Rule::Sgd(o) => o.init(&a),
            Rule::Adam(o) => o.init(&a),
            Rule::AdamW(o) => o.init(&a),
        })?;
        Ok(PyOptimizer {
            rule,
            params,
            state,
        })
    }
}

#[pymethods]
impl PyOptimizer {
    /// One update of every parameter, in place.
    #[pyo3(signature = (grads = None))]
    fn step(&mut self, py: Python<'_>, grads: Option<Vec<PyRef<'_, PyArray>>>) -> PyResult<()> {
        let mut a = arrays(py, &self.params)?;
        let grads: Option<Vec<nabla::Array>> = grads
            .map(|g| {
                g.iter()
                    .map(|x| x.concrete("optimizer step"))
                    .collect::<PyResult<_>>()
            })
            .transpose()?;
        let (rule, state) = (&self.rule, &mut self.state);
        guard(|| match (rule, &grads) {
            (Rule::Sgd(o), None) => o.step(&mut a, state),
            (Rule::Adam(o), None) => o.step(&mut a, state),
            (Rule::AdamW(o), None) => o.step(&mut a, state),
            (Rule::Sgd(o), Some(g)) => o.update(&mut a, g, state),
            (Rule::Adam(o), Some(g)) => o.update(&mut a, g, state),
            (Rule::AdamW(o), Some(g)) => o.update(&mut a, g, state),
        })?;
        for (p, v) in self.params.iter().zip(a) {
            p.borrow_mut(py).value = Dyn::Array(v);
        }
        Ok(())
    }

    /// Clears every parameter's `.grad()`.
    fn zero_grad(&self, py: Python<'_>) -> PyResult<()> {
        for p in &self.params {
            p.borrow(py).concrete("zero_grad")?.zero_grad();
        }
        Ok(())
    }

    /// The parameters, in order.
    #[getter]
    fn params(&self, py: Python<'_>) -> Vec<Py<PyArray>> {
        self.params.iter().map(|p| p.clone_ref(py)).collect()
    }
}

/// SGD with optional momentum, dampening, Nesterov and weight decay
/// (`torch.optim.SGD`).
#[pyfunction]
#[pyo3(name = "SGD", signature = (params, lr, momentum = 0.0, dampening = 0.0, weight_decay = 0.0, nesterov = false))]
fn sgd(
    py: Python<'_>,
    params: Vec<Py<PyArray>>,
    lr: &Bound<'_, PyAny>,
    momentum: f64,
    dampening: f64,
    weight_decay: f64,
    nesterov: bool,
) -> PyResult<PyOptimizer> {
    let s = schedule(lr)?;
    let o = guard(|| {
        Sgd::new(s.at(0))
            .schedule(s)
            .momentum(momentum)
            .dampening(dampening)
            .nesterov(nesterov)
            .weight_decay(weight_decay)
    })?;
    PyOptimizer::new(py, Rule::Sgd(o), params)
}

/// Adam (`torch.optim.Adam`: L2 weight decay added to the gradient).
#[pyfunction]
#[pyo3(name = "Adam", signature = (params, lr = None, betas = (0.9, 0.999), eps = 1e-8, weight_decay = 0.0))]
fn adam(
    py: Python<'_>,
    params: Vec<Py<PyArray>>,
    lr: Option<&Bound<'_, PyAny>>,
    betas: (f64, f64),
    eps: f64,
    weight_decay: f64,
) -> PyResult<PyOptimizer> {
    let s = lr
        .map(schedule)
        .transpose()?
        .unwrap_or(Schedule::constant(1e-3));
    let o = guard(|| {
        Adam::new(s.at(0))
            .schedule(s)
            .betas(betas.0, betas.1)
            .eps(eps)
            .weight_decay(weight_decay)
    })?;
    PyOptimizer::new(py, Rule::Adam(o), params)
}

/// AdamW (`torch.optim.AdamW`: decoupled weight decay, default 0.01).
#[pyfunction]
#[pyo3(name = "AdamW", signature = (params, lr = None, betas = (0.9, 0.999), eps = 1e-8, weight_decay = 0.01))]
fn adamw(
    py: Python<'_>,
    params: Vec<Py<PyArray>>,
    lr: Option<&Bound<'_, PyAny>>,
    betas: (f64, f64),
    eps: f64,
    weight_decay: f64,
) -> PyResult<PyOptimizer> {
    let s = lr
        .map(schedule)
        .transpose()?
        .unwrap_or(Schedule::constant(1e-3));
    let o = guard(|| {
        AdamW::new(s.at(0))
            .schedule(s)
            .betas(betas.0, betas.1)
            .eps(eps)
            .weight_decay(weight_decay)
    })?;
    PyOptimizer::new(py, Rule::AdamW(o), params)
}

/// Scales the `.grad()` of `params` so their joint L2 norm is at most
/// `max_norm` (`torch.nn.utils.clip_grad_norm_`); returns the norm before.
#[pyfunction]
fn clip_grad_norm_(py: Python<'_>, params: Vec<Py<PyArray>>, max_norm: f64) -> PyResult<f64> {
    let a = arrays(py, &params)?;
    guard(|| nabla::optim::clip_leaf_grad_norm(&a, max_norm))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let o = PyModule::new(m.py(), "_optim")?;
    o.add_class::<PyOptimizer>()?;
    o.add_class::<PySchedule>()?;
    macro_rules! add {
        ($($f:ident),*) => { $(o.add_function(wrap_pyfunction!($f, &o)?)?;)* };
    }
    add!(
        sgd,
        adam,
        adamw,
        clip_grad_norm_,
        constant,
        linear,
        cosine,
        warmup_cosine
    );
    m.add_submodule(&o)?;
    Ok(())
}
