//! The extension module `nabla._nabla`: Nabla's `Array` and its operations
//! for Python. The Python package `nabla` (python/nabla/) re-exports it.

use pyo3::prelude::*;

/// An n-dimensional array of Nabla's runtime.
#[pyclass(name = "Array", module = "nabla", frozen)]
struct PyArray(nabla::Array);

/// A dtype, as Python sees it (`nabla.float32`, `nabla.float64`).
#[pyclass(name = "DType", module = "nabla", frozen, eq)]
#[derive(PartialEq)]
struct PyDType(nabla::DType);

#[pymethods]
impl PyArray {
    /// An array from a flat list of numbers and a shape.
    #[new]
    #[pyo3(signature = (values, shape, dtype = None))]
    fn new(values: Vec<f64>, shape: Vec<usize>, dtype: Option<&PyDType>) -> PyResult<Self> {
        let n: usize = shape.iter().product();
        if n != values.len() {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "Array: {} values for shape {shape:?} ({n} elements)",
                values.len()
            )));
        }
        let a = nabla::Array::from_vec(values, &shape);
        Ok(Self(match dtype {
            Some(d) => a.cast(d.0),
            None => a,
        }))
    }

    /// The shape, a tuple.
    #[getter]
    fn shape(&self) -> Vec<usize> {
        self.0.shape().to_vec()
    }

    /// The elements in row-major order, as floats.
    fn tolist(&self) -> Vec<f64> {
        self.0.cast(nabla::DType::F64).to_vec::<f64>()
    }

    /// Elementwise sine.
    fn sin(&self) -> Self {
        Self(self.0.sin())
    }

    /// The sum of all elements.
    fn sum(&self) -> Self {
        Self(self.0.sum())
    }

    fn __add__(&self, other: &PyArray) -> Self {
        Self(&self.0 + &other.0)
    }

    fn __mul__(&self, other: &PyArray) -> Self {
        Self(&self.0 * &other.0)
    }

    fn __repr__(&self) -> String {
        format!("{}", self.0)
    }
}

#[pymodule]
fn _nabla(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<PyArray>()?;
    m.add_class::<PyDType>()?;
    m.add("float32", PyDType(nabla::DType::F32))?;
    m.add("float64", PyDType(nabla::DType::F64))?;
    Ok(())
}
