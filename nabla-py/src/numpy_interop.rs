//! NumPy arrays in and out (the `numpy` crate): `nabla.asarray(ndarray)`
//! and `np.asarray(nabla_array)` (`Array.__array__`). NumPy is optional:
//! without it installed, nothing here runs.

use nabla::{Array, DType};
use numpy::{PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::prelude::*;

/// True when `obj` is a NumPy array (checked by its type's module, so
/// NumPy is not imported for other objects).
fn is_ndarray(obj: &Bound<'_, PyAny>) -> bool {
    let ty = obj.get_type();
    ty.module().is_ok_and(|m| m == "numpy") && ty.name().is_ok_and(|n| n == "ndarray")
}

/// True for a NumPy scalar (`np.float32(1.0)`, `np.int64(3)`, ...).
fn is_numpy_scalar(obj: &Bound<'_, PyAny>) -> bool {
    let ty = obj.get_type();
    ty.module().is_ok_and(|m| m == "numpy")
        && obj.hasattr("dtype").unwrap_or(false)
        && !is_ndarray(obj)
}

/// The array behind a NumPy array (copied into Nabla's storage), or `None`
/// when `obj` is not one. Other dtypes (int32, float16, ...) are converted
/// by NumPy to the nearest of Nabla's four.
pub fn from_numpy(obj: &Bound<'_, PyAny>) -> PyResult<Option<Array>> {
    if is_numpy_scalar(obj) {
        let arr = obj.py().import("numpy")?.call_method1("asarray", (obj,))?;
        return from_numpy(&arr);
    }
    if !is_ndarray(obj) {
        return Ok(None);
    }
    macro_rules! take {
        ($t:ty) => {
            if let Ok(a) = obj.cast::<PyArrayDyn<$t>>() {
                let shape = a.shape().to_vec();
                let v: Vec<$t> = a.readonly().as_array().iter().copied().collect();
                return Ok(Some(Array::from_vec(v, &shape)));
            }
        };
    }
    take!(f32);
    take!(f64);
    take!(i64);
    take!(bool);
    let kind: String = obj.getattr("dtype")?.getattr("kind")?.extract()?;
    let target = match kind.as_str() {
        "i" | "u" => "int64",
        "b" => "bool",
        _ => "float64",
    };
    let converted = obj.call_method1("astype", (target,))?;
    from_numpy(&converted)
}

/// A NumPy array holding a copy of `a`.
pub fn to_numpy<'py>(py: Python<'py>, a: &Array) -> PyResult<Bound<'py, PyAny>> {
    let shape = a.shape().to_vec();
    macro_rules! give {
        ($t:ty) => {{
            let nd = ndarray::ArrayD::from_shape_vec(shape, a.to_vec::<$t>())
                .expect("the shape matches the element count");
            Ok(PyArrayDyn::<$t>::from_owned_array(py, nd).into_any())
        }};
    }
    match a.dtype() {
        DType::F32 => give!(f32),
        DType::F64 => give!(f64),
        DType::I64 => give!(i64),
        DType::Bool => give!(bool),
    }
}
