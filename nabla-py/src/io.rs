//! `nabla.io`: safetensors files, the format `safetensors.torch` reads and
//! writes. Errors are Python's: `OSError` for the file system, `ValueError`
//! for a malformed file or an unsupported dtype.

use crate::array::PyArray;
use nabla::dynamic::Dyn;
use nabla::io::Error;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::BTreeMap;

fn to_py(e: Error) -> PyErr {
    match e {
        Error::Io { .. } => PyOSError::new_err(e.to_string()),
        other => PyValueError::new_err(other.to_string()),
    }
}

/// Writes `arrays` (a dict of name to array) to the safetensors file at
/// `path`.
#[pyfunction]
fn save(
    py: Python<'_>,
    arrays: BTreeMap<String, PyRef<'_, PyArray>>,
    path: std::path::PathBuf,
) -> PyResult<()> {
    let named: Vec<(String, nabla::Array)> = arrays
        .iter()
        .map(|(k, v)| Ok((k.clone(), v.concrete("nabla.io.save")?.detach())))
        .collect::<PyResult<_>>()?;
    py.detach(|| nabla::io::save_arrays(named, &path))
        .map_err(to_py)
}

/// Every tensor of the safetensors file at `path`: a dict of name to
/// array.
#[pyfunction]
fn load_file<'py>(py: Python<'py>, path: std::path::PathBuf) -> PyResult<Bound<'py, PyDict>> {
    let map = py.detach(|| nabla::io::load_file(&path)).map_err(to_py)?;
    let out = PyDict::new(py);
    for (k, v) in map {
        out.set_item(k, PyArray::new(Dyn::Array(v)))?;
    }
    Ok(out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let io = PyModule::new(m.py(), "_io")?;
    io.add_function(wrap_pyfunction!(save, &io)?)?;
    io.add_function(wrap_pyfunction!(load_file, &io)?)?;
    m.add_submodule(&io)?;
    Ok(())
}
