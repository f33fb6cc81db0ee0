//! The run-time transform machinery (`nabla::dynamic`) for the Python
//! side: levels, the tracers of each transform, and pullbacks. The
//! transforms themselves (pytrees, `argnums`, `in_axes`) are in
//! python/nabla/_transforms.py; every derivative they compute is a rule of
//! the Rust runtime.

use crate::array::PyArray;
use crate::errors::guard;
use nabla::dynamic::{self, Dyn, Program, Pullback};
use pyo3::prelude::*;

/// A fresh transform level (higher than every earlier one).
#[pyfunction]
fn new_level() -> u64 {
    dynamic::new_level()
}

/// A forward-mode tracer of `level`.
#[pyfunction]
#[pyo3(signature = (level, primal, tangent = None))]
fn dual(level: u64, primal: PyRef<'_, PyArray>, tangent: Option<PyRef<'_, PyArray>>) -> PyArray {
    PyArray::new(Dyn::dual(
        level,
        primal.value.clone(),
        tangent.map(|t| t.value.clone()),
    ))
}

/// The primal and tangent (None: zero) of `x` at forward-mode `level`.
#[pyfunction]
fn split_dual(level: u64, x: PyRef<'_, PyArray>) -> (PyArray, Option<PyArray>) {
    let (p, t) = x.value.split_dual(level);
    (PyArray::new(p), t.map(PyArray::new))
}

/// A batching tracer of `level` with batch axis `axis` (None: unbatched).
#[pyfunction]
fn batched(level: u64, x: PyRef<'_, PyArray>, axis: Option<usize>) -> PyArray {
    PyArray::new(Dyn::batched(level, x.value.clone(), axis))
}

/// `x` at batching `level` with the batch axis at `axis`.
#[pyfunction]
fn unbatch(level: u64, x: PyRef<'_, PyArray>, size: usize, axis: usize) -> PyResult<PyArray> {
    let v = x.value.clone();
    guard(|| PyArray::new(v.unbatch(level, size, axis)))
}

/// Input `index` of the reverse-mode transform at `level`.
#[pyfunction]
fn rev_leaf(level: u64, x: PyRef<'_, PyArray>, index: usize) -> PyArray {
    PyArray::new(dynamic::rev_leaf(level, x.value.clone(), index))
}

/// The pullback of a traced function.
#[pyclass(name = "Pullback", module = "nabla", frozen)]
struct PyPullback(Pullback);

#[pymethods]
impl PyPullback {
    /// One cotangent per output (None: zero) to one per input.
    fn __call__(
        &self,
        py: Python<'_>,
        cts: Vec<Option<PyRef<'_, PyArray>>>,
    ) -> PyResult<Vec<PyArray>> {
        let cts: Vec<Option<Dyn>> = cts
            .into_iter()
            .map(|c| c.map(|c| c.value.clone()))
            .collect();
        let pb = &self.0;
        let out = py.detach(|| guard(|| pb.call(&cts)))?;
        Ok(out.into_iter().map(PyArray::new).collect())
    }
}

/// The outputs of a function traced at reverse-mode `level` and its
/// pullback to the leaves whose values were `inputs`.
#[pyfunction]
fn pullback(
    level: u64,
    outputs: Vec<PyRef<'_, PyArray>>,
    inputs: Vec<PyRef<'_, PyArray>>,
) -> (Vec<PyArray>, PyPullback) {
    let outs: Vec<Dyn> = outputs.iter().map(|o| o.value.clone()).collect();
    let ins: Vec<Dyn> = inputs.iter().map(|o| o.value.clone()).collect();
    let (values, pb) = dynamic::pullback(level, &outs, &ins);
    (
        values.into_iter().map(PyArray::new).collect(),
        PyPullback(pb),
    )
}

/// A recorded function (`nabla.jit`'s cache entry): replays without
/// running Python. `str(program)` lists its instructions.
#[pyclass(name = "Program", module = "nabla", frozen)]
pub struct PyProgram(Program);

impl PyProgram {
    /// The outputs on `inputs` (GIL released for large work).
    pub fn run_values(&self, py: Python<'_>, ins: Vec<Dyn>) -> PyResult<Vec<Dyn>> {
        let p = &self.0;
        let work: usize = ins.iter().map(crate::ops::numel).sum::<usize>() * p.len().max(1);
        crate::errors::guard_heavy(py, work, || p.run(&ins))
    }
}

#[pymethods]
impl PyProgram {
    /// The outputs on new inputs of the recorded shapes and dtypes.
    fn run(&self, py: Python<'_>, inputs: Vec<PyRef<'_, PyArray>>) -> PyResult<Vec<PyArray>> {
        let ins: Vec<Dyn> = inputs.iter().map(|x| x.value.clone()).collect();
        let out = self.run_values(py, ins)?;
        Ok(out.into_iter().map(PyArray::new).collect())
    }

    /// The number of instructions (after dead code is dropped).
    fn __len__(&self) -> usize {
        self.0.len()
    }

    fn __str__(&self) -> String {
        self.0.to_string()
    }

    fn __repr__(&self) -> String {
        self.0.to_string()
    }
}

/// Runs `fun` (a list of arrays to a list of arrays) once on `inputs`,
/// recording it: its outputs and the program that replays it.
#[pyfunction]
fn record(
    fun: &Bound<'_, PyAny>,
    inputs: Vec<PyRef<'_, PyArray>>,
) -> PyResult<(Vec<PyArray>, PyProgram)> {
    let ins: Vec<Dyn> = inputs.iter().map(|x| x.value.clone()).collect();
    let mut failed: Option<PyErr> = None;
    let (outs, program) = dynamic::record(
        |xs| {
            let args: Vec<PyArray> = xs.iter().cloned().map(PyArray::new).collect();
            let called = fun.call1((args,)).and_then(|r| {
                r.extract::<Vec<PyRef<'_, PyArray>>>()
                    .map(|v| v.iter().map(|a| a.value.clone()).collect::<Vec<Dyn>>())
            });
            match called {
                Ok(v) => v,
                Err(e) => {
                    failed = Some(e);
                    Vec::new()
                }
            }
        },
        &ins,
    );
    if let Some(e) = failed {
        return Err(e);
    }
    Ok((
        outs.into_iter().map(PyArray::new).collect(),
        PyProgram(program),
    ))
}

/// A hashable summary of the leaves' shapes (per example under `vmap`)
/// and dtypes: `jit`'s cache key, computed in one call.
#[pyfunction]
fn signature<'py>(
    py: Python<'py>,
    leaves: Vec<PyRef<'_, PyArray>>,
) -> Bound<'py, pyo3::types::PyBytes> {
    let mut key: Vec<u8> = Vec::with_capacity(leaves.len() * 16);
    for x in &leaves {
        crate::jit_cache::leaf_key(&x.value, &mut key);
    }
    pyo3::types::PyBytes::new(py, &key)
}

/// The tracer of `level` dropped: a forward- or reverse-mode tracer's
/// primal, anything else as it is (`has_aux` outputs).
#[pyfunction]
fn lower(level: u64, x: PyRef<'_, PyArray>) -> PyArray {
    PyArray::new(x.value.lower(level))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let t = PyModule::new(py, "_trace")?;
    t.add_class::<PyPullback>()?;
    t.add_class::<PyProgram>()?;
    macro_rules! add {
        ($($f:ident),*) => { $(t.add_function(wrap_pyfunction!($f, &t)?)?;)* };
    }
    add!(
        new_level, dual, split_dual, batched, unbatch, rev_leaf, pullback, record, lower, signature
    );
    m.add_submodule(&t)?;
    Ok(())
}
