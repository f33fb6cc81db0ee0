//! NumPy arrays in and out (the `numpy` crate): `nabla.asarray(ndarray)`
//! (a copy: Nabla arrays are values, and a NumPy array can be written
//! after; `nabla.from_dlpack(ndarray)` shares instead) and
//! `np.asarray(nabla_array)` (`Array.__array__`: a read-only view of the
//! host memory, no copy). NumPy is optional: without it installed,
//! nothing here runs.

use nabla::{Array, DType, Device};
use numpy::{PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::prelude::*;

/// The base object of NumPy arrays viewing a Nabla array's memory: holds
/// the array, so the storage outlives every view.
#[pyclass(frozen, name = "_HostStorage", module = "nabla._nabla")]
pub struct HostStorage {
    _array: Array,
}

/// A read-only NumPy array viewing host array `a`'s elements in place
/// (NumPy strides from Nabla's, of any sign, 0 on broadcast axes); `None`
/// for an array on a GPU.
pub fn view_numpy<'py>(py: Python<'py>, a: &Array) -> PyResult<Option<Bound<'py, PyAny>>> {
    if a.device() != Device::Cpu {
        return Ok(None);
    }
    let a = a.detach();
    let keep = Bound::new(py, HostStorage { _array: a.clone() })?.into_any();
    macro_rules! view {
        ($t:ty) => {{
            let v = a.host_view::<$t>().expect("a host array of its dtype");
            // SAFETY: `keep` (the NumPy array's base) holds a clone of `a`,
            // so the storage `v` points into lives as long as the NumPy
            // array, and Nabla never moves or writes storage while it is
            // shared (in-place updates copy first).
            let np = unsafe { PyArrayDyn::<$t>::borrow_from_array(&v, keep) };
            let ro = np.readwrite().make_nonwriteable();
            (*ro).clone().into_any()
        }};
    }
    Ok(Some(match a.dtype() {
        DType::F32 => view!(f32),
        DType::F64 => view!(f64),
        DType::I64 => view!(i64),
        DType::Bool => view!(bool),
    }))
}

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
