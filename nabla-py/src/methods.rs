//! Methods of `nabla.Array` that PyTorch and NumPy users reach for
//! (`x.sum(axis=0)`, `x.reshape(2, 3)`, `x.exp()`), each the module
//! function of the same name.

use crate::array::PyArray;
use crate::ops;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

macro_rules! reductions {
    ($($(#[$doc:meta])* $name:ident),*) => {
        #[pymethods]
        impl PyArray {
            $(
                $(#[$doc])*
                #[pyo3(signature = (axis = None, keepdims = false))]
                fn $name(slf: &Bound<'_, Self>, axis: Option<&Bound<'_, PyAny>>, keepdims: bool) -> PyResult<PyArray> {
                    ops::$name(slf.as_any(), axis, keepdims)
                }
            )*
        }
    };
}

reductions!(
    /// `nabla.sum(x, axis, keepdims)`.
    sum,
    /// `nabla.mean(x, axis, keepdims)`.
    mean,
    /// `nabla.max(x, axis, keepdims)`.
    max,
    /// `nabla.min(x, axis, keepdims)`.
    min,
    /// `nabla.prod(x, axis, keepdims)`.
    prod
);

macro_rules! elementwise {
    ($($(#[$doc:meta])* $name:ident => $func:path),*) => {
        #[pymethods]
        impl PyArray {
            $(
                $(#[$doc])*
                fn $name(slf: &Bound<'_, Self>) -> PyResult<PyArray> {
                    $func(slf.py(), slf.as_any())
                }
            )*
        }
    };
}

elementwise!(
    /// `nabla.exp(x)`.
    exp => ops::unary::exp,
    /// `nabla.log(x)`.
    log => ops::unary::log,
    /// `nabla.sin(x)`.
    sin => ops::unary::sin,
    /// `nabla.cos(x)`.
    cos => ops::unary::cos,
    /// `nabla.tanh(x)`.
    tanh => ops::unary::tanh,
    /// `nabla.sqrt(x)`.
    sqrt => ops::unary::sqrt,
    /// `nabla.abs(x)`.
    abs => ops::unary::abs,
    /// `nabla.sigmoid(x)`.
    sigmoid => ops::unary::sigmoid,
    /// `nabla.relu(x)`.
    relu => ops::unary::relu,
    /// `nabla.square(x)`.
    square => ops::unary::square
);

#[pymethods]
impl PyArray {
    /// `nabla.var(x, axis, keepdims, ddof)`.
    #[pyo3(signature = (axis = None, keepdims = false, ddof = 0))]
    fn var(
        slf: &Bound<'_, Self>,
        axis: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
        ddof: usize,
    ) -> PyResult<PyArray> {
        ops::var(slf.as_any(), axis, keepdims, ddof)
    }

    /// `nabla.std(x, axis, keepdims, ddof)`.
    #[pyo3(signature = (axis = None, keepdims = false, ddof = 0))]
    fn std(
        slf: &Bound<'_, Self>,
        axis: Option<&Bound<'_, PyAny>>,
        keepdims: bool,
        ddof: usize,
    ) -> PyResult<PyArray> {
        ops::std_(slf.as_any(), axis, keepdims, ddof)
    }

    /// `nabla.argmax(x, axis)`.
    #[pyo3(signature = (axis = None))]
    fn argmax(slf: &Bound<'_, Self>, axis: Option<isize>) -> PyResult<PyArray> {
        ops::argmax(slf.as_any(), axis)
    }

    /// `nabla.argmin(x, axis)`.
    #[pyo3(signature = (axis = None))]
    fn argmin(slf: &Bound<'_, Self>, axis: Option<isize>) -> PyResult<PyArray> {
        ops::argmin(slf.as_any(), axis)
    }

    /// `nabla.cumsum(x, axis)`.
    #[pyo3(signature = (axis = None))]
    fn cumsum(slf: &Bound<'_, Self>, axis: Option<isize>) -> PyResult<PyArray> {
        ops::cumsum(slf.as_any(), axis)
    }

    /// `x.reshape(2, 3)` or `x.reshape((2, 3))`; one entry may be -1.
    #[pyo3(signature = (*shape))]
    fn reshape(slf: &Bound<'_, Self>, shape: &Bound<'_, PyTuple>) -> PyResult<PyArray> {
        ops::reshape(slf.as_any(), shape)
    }

    /// The elements as one axis.
    fn flatten(slf: &Bound<'_, Self>) -> PyResult<PyArray> {
        let py = slf.py();
        ops::reshape(slf.as_any(), &PyTuple::new(py, [-1isize])?)
    }

    /// Axes permuted (`x.transpose(1, 0)`), reversed when none are given.
    #[pyo3(signature = (*axes))]
    fn transpose(slf: &Bound<'_, Self>, axes: &Bound<'_, PyTuple>) -> PyResult<PyArray> {
        let axes = if axes.is_empty() {
            None
        } else {
            Some(ops::dims_arg(axes)?)
        };
        ops::transpose(slf.as_any(), axes)
    }

    /// Length-1 axes removed (only `axis` when given).
    #[pyo3(signature = (axis = None))]
    fn squeeze(slf: &Bound<'_, Self>, axis: Option<&Bound<'_, PyAny>>) -> PyResult<PyArray> {
        ops::squeeze(slf.as_any(), axis)
    }

    /// `nabla.matmul(x, other)`.
    fn matmul(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        ops::matmul(slf.py(), slf.as_any(), other)
    }

    /// `nabla.dot(x, other)`.
    fn dot(slf: &Bound<'_, Self>, other: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        ops::dot(slf.as_any(), other)
    }

    /// A NumPy array holding a copy of the values (`torch.Tensor.numpy`).
    fn numpy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        use crate::array::ToArrayChecked;
        let a = self.value.to_array_checked("numpy")?;
        crate::numpy_interop::to_numpy(py, &a)
    }
}
