//! `nabla.Array`: a runtime value (an array, or a tracer inside a
//! transform) with NumPy's attributes and PyTorch's autograd methods.
//! Operators are in `operators.rs`, indexing in `indexing.rs`.

use crate::convert::{PyDType, array_from, dtype_arg, dtype_name};
use crate::errors::guard;
use nabla::dynamic::Dyn;
use nabla::{ArrayValue, DType, Value};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyTuple};

/// An n-dimensional array of Nabla's runtime (`float32`, `float64`,
/// `int64` or `bool`). Inside `grad`, `vmap` and the other transforms, a
/// function's arguments are arrays that trace the transform.
#[pyclass(name = "Array", module = "nabla")]
pub struct PyArray {
    pub value: Dyn,
}

impl PyArray {
    pub fn new(value: Dyn) -> PyArray {
        PyArray { value }
    }

    /// The concrete array, or a `TypeError` naming `op` for a tracer.
    pub fn concrete(&self, op: &str) -> PyResult<nabla::Array> {
        match &self.value {
            Dyn::Array(a) => Ok(a.clone()),
            _ => Err(PyTypeError::new_err(format!(
                "{op}: this array is traced by a transform (grad, vmap, jvp, ...), so it has no concrete value here; \
                 call {op} outside the transformed function, or return the value from it"
            ))),
        }
    }
}

/// A Python number from element `i` of a concrete array.
fn element(py: Python<'_>, a: &nabla::Array, i: usize) -> PyResult<Py<PyAny>> {
    Ok(match a.dtype() {
        DType::F32 => a.to_vec::<f32>()[i].into_pyobject(py)?.into_any().unbind(),
        DType::F64 => a.to_vec::<f64>()[i].into_pyobject(py)?.into_any().unbind(),
        DType::I64 => a.to_vec::<i64>()[i].into_pyobject(py)?.into_any().unbind(),
        DType::Bool => a.to_vec::<bool>()[i]
            .into_pyobject(py)?
            .to_owned()
            .into_any()
            .unbind(),
    })
}

/// Nested lists of Python numbers.
fn to_list(py: Python<'_>, flat: &[Py<PyAny>], shape: &[usize]) -> PyResult<Py<PyAny>> {
    if shape.is_empty() {
        return Ok(flat[0].clone_ref(py));
    }
    let step: usize = shape[1..].iter().product();
    let items: PyResult<Vec<Py<PyAny>>> = (0..shape[0])
        .map(|i| to_list(py, &flat[i * step..(i + 1) * step], &shape[1..]))
        .collect();
    Ok(PyList::new(py, items?)?.into_any().unbind())
}

#[pymethods]
impl PyArray {
    /// `nabla.Array(data, dtype=None, requires_grad=False)`: the same as
    /// `nabla.array`.
    #[new]
    #[pyo3(signature = (data, dtype = None, requires_grad = false))]
    fn py_new(
        data: &Bound<'_, PyAny>,
        dtype: Option<&Bound<'_, PyAny>>,
        requires_grad: bool,
    ) -> PyResult<Self> {
        let dtype = dtype.map(dtype_arg).transpose()?;
        let v = array_from(data, dtype)?;
        let a = PyArray::new(v);
        if requires_grad { a.with_grad() } else { Ok(a) }
    }

    /// The shape, a tuple of ints (per example inside `vmap`).
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.value.shape_vec().iter())
    }

    /// The element type.
    #[getter]
    fn dtype(&self) -> PyDType {
        PyDType(self.value.dtype())
    }

    /// The number of axes.
    #[getter]
    fn ndim(&self) -> usize {
        self.value.ndim()
    }

    /// The number of elements.
    #[getter]
    fn size(&self) -> usize {
        self.value.shape_vec().iter().product()
    }

    /// The axes reversed (`x.T`).
    #[getter(T)]
    fn transposed(&self) -> PyResult<Self> {
        let n = self.value.ndim();
        let perm: Vec<usize> = (0..n).rev().collect();
        let v = self.value.clone();
        guard(|| PyArray::new(v.permute(&perm)))
    }

    /// The one element as a Python number.
    fn item(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let a = self.value.to_array_checked("item")?;
        if a.numel() != 1 {
            return Err(PyValueError::new_err(format!(
                "item: the array has shape {:?} ({} elements); item() needs exactly one element",
                a.shape(),
                a.numel()
            )));
        }
        element(py, &a, 0)
    }

    /// The elements as nested Python lists.
    fn tolist(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let a = self.value.to_array_checked("tolist")?;
        let flat: PyResult<Vec<Py<PyAny>>> = (0..a.numel()).map(|i| element(py, &a, i)).collect();
        to_list(py, &flat?, a.shape())
    }

    /// A copy converted to `dtype`.
    fn astype(&self, dtype: &Bound<'_, PyAny>) -> PyResult<Self> {
        let d = dtype_arg(dtype)?;
        let v = self.value.clone();
        guard(|| PyArray::new(v.cast(d)))
    }

    fn __len__(&self) -> PyResult<usize> {
        self.value
            .shape_vec()
            .first()
            .copied()
            .ok_or_else(|| PyTypeError::new_err("len() of a 0-d array; use .item() or .size"))
    }

    fn __float__(&self) -> PyResult<f64> {
        let a = self.value.to_array_checked("float()")?;
        if a.numel() != 1 {
            return Err(PyTypeError::new_err(format!(
                "float(): only one-element arrays convert to a Python float; this one has shape {:?}",
                a.shape()
            )));
        }
        Ok(a.cast(DType::F64).to_vec::<f64>()[0])
    }

    fn __int__(&self) -> PyResult<i64> {
        let a = self.value.to_array_checked("int()")?;
        if a.numel() != 1 {
            return Err(PyTypeError::new_err(format!(
                "int(): only one-element arrays convert to a Python int; this one has shape {:?}",
                a.shape()
            )));
        }
        // Exact for int64 and bool; floats truncate toward zero, as int(float).
        Ok(a.cast(DType::I64).to_vec::<i64>()[0])
    }

    fn __bool__(&self) -> PyResult<bool> {
        let a = self.value.to_array_checked("bool()")?;
        if a.numel() != 1 {
            return Err(PyValueError::new_err(format!(
                "the truth value of an array of shape {:?} is ambiguous; use nabla.any or nabla.all",
                a.shape()
            )));
        }
        Ok(a.cast(DType::F64).to_vec::<f64>()[0] != 0.0)
    }

    fn __repr__(&self) -> String {
        match &self.value {
            Dyn::Array(a) => {
                let body = format!("{a}").replace('\n', "\n      ");
                let mut s = format!("Array({body}, dtype={})", dtype_name(a.dtype()));
                if a.is_tracked() {
                    s.insert_str(s.len() - 1, ", requires_grad=True");
                }
                s
            }
            t => format!(
                "Traced<shape={:?}, dtype={}> (inside a transform at level {})",
                &t.shape_vec()[..],
                dtype_name(t.dtype()),
                t.level()
            ),
        }
    }

    fn __str__(&self) -> String {
        match &self.value {
            Dyn::Array(a) => format!("{a}"),
            _ => self.__repr__(),
        }
    }

    /// The array as a NumPy array: `np.asarray(x)` is a read-only view of
    /// the host memory (no copy; the view keeps the storage alive), and
    /// `copy=True` (`np.array(x)`) or another `dtype` a writable copy.
    #[pyo3(signature = (dtype = None, copy = None))]
    fn __array__<'py>(
        &self,
        py: Python<'py>,
        dtype: Option<&Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let a = self.value.to_array_checked("__array__")?;
        let view = match copy {
            Some(true) => None,
            _ => crate::numpy_interop::view_numpy(py, &a)?,
        };
        let Some(view) = view else {
            if copy == Some(false) {
                return Err(PyValueError::new_err(
                    "__array__: copy=False, but this array is on a GPU and NumPy needs a host copy; \
                     allow a copy",
                ));
            }
            let out = crate::numpy_interop::to_numpy(py, &a)?;
            return match dtype {
                Some(d) if !d.is_none() => out.call_method1("astype", (d,)),
                _ => Ok(out),
            };
        };
        match dtype {
            Some(d) if !d.is_none() => {
                let kw = pyo3::types::PyDict::new(py);
                kw.set_item("copy", false)?;
                let out = view.call_method("astype", (d,), Some(&kw))?;
                if copy == Some(false) && !out.is(&view) {
                    return Err(PyValueError::new_err(format!(
                        "__array__: copy=False, but converting {} to dtype {d} needs a copy; allow a copy",
                        dtype_name(a.dtype())
                    )));
                }
                Ok(out)
            }
            _ => Ok(view),
        }
    }

    // --- Imperative autograd (PyTorch's names). ---

    /// True for an array whose gradient `backward()` computes.
    #[getter]
    fn requires_grad(&self) -> bool {
        matches!(&self.value, Dyn::Array(a) if a.is_tracked())
    }

    /// Makes this array a leaf that accumulates `.grad()` (in place, like
    /// `torch.Tensor.requires_grad_`); returns it.
    #[pyo3(signature = (flag = true))]
    fn requires_grad_(mut slf: PyRefMut<'_, Self>, flag: bool) -> PyResult<PyRefMut<'_, Self>> {
        let a = slf.concrete("requires_grad_")?;
        slf.value = Dyn::Array(if flag {
            guard(|| a.detach().requires_grad())?
        } else {
            a.detach()
        });
        Ok(slf)
    }

    /// True for a user-created array (not the result of a recorded op).
    #[getter]
    fn is_leaf(&self) -> bool {
        !matches!(&self.value, Dyn::Array(a) if a.is_tracked() && !a.is_leaf())
    }

    /// Back-propagates from this one-element array to every leaf that
    /// requires grad, accumulating into their `.grad()`.
    fn backward(&self, py: Python<'_>) -> PyResult<()> {
        let a = self.concrete("backward")?;
        py.detach(|| guard(|| a.backward()))
    }

    /// The gradient accumulated by `backward()`, or `None`.
    fn grad(&self) -> Option<PyArray> {
        match &self.value {
            Dyn::Array(a) => a.try_grad().map(|g| PyArray::new(Dyn::Array(g))),
            _ => None,
        }
    }

    /// Clears the accumulated gradient.
    fn zero_grad(&self) {
        if let Dyn::Array(a) = &self.value {
            a.zero_grad();
        }
    }

    /// The same values, cut from the tape (and from every transform).
    fn detach(&self) -> PyResult<PyArray> {
        let v = self.value.clone();
        guard(|| {
            PyArray::new(match v {
                Dyn::Array(a) => Dyn::Array(a.detach()),
                t => t.stop_gradient(),
            })
        })
    }
}

impl PyArray {
    /// This array as a leaf that requires grad.
    pub fn with_grad(self) -> PyResult<PyArray> {
        let a = self.concrete("requires_grad")?;
        guard(|| PyArray::new(Dyn::Array(a.requires_grad())))
    }
}

/// Reading a concrete array out of a value, as a Python error when it is
/// a batching tracer.
pub trait ToArrayChecked {
    fn to_array_checked(&self, op: &str) -> PyResult<nabla::Array>;
}

impl ToArrayChecked for Dyn {
    fn to_array_checked(&self, op: &str) -> PyResult<nabla::Array> {
        let v = self.clone();
        let op = op.to_string();
        // A value batched by `vmap` has no concrete array (JAX's
        // concretization error is a TypeError too).
        guard(move || v.primal_array(&op))
            .map_err(|e| PyTypeError::new_err(e.to_string().replace("ValueError: ", "")))
    }
}
