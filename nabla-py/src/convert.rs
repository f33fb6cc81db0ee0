//! Python values to runtime values: arrays, Python scalars (weakly typed:
//! they take the dtype of the array they meet), nested sequences, dtypes
//! and axis arguments.

use crate::array::PyArray;
use crate::errors::guard;
use nabla::dynamic::Dyn;
use nabla::{Array, ArrayValue, DType};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PySequence};

/// A dtype, as Python sees it (`nabla.float32`, `nabla.DType.float32`).
#[pyclass(name = "DType", module = "nabla", frozen, eq, hash)]
#[derive(PartialEq, Eq, Hash, Clone, Copy)]
pub struct PyDType(pub DType);

#[pymethods]
impl PyDType {
    #[classattr]
    fn float32() -> PyDType {
        PyDType(DType::F32)
    }
    #[classattr]
    fn float64() -> PyDType {
        PyDType(DType::F64)
    }
    #[classattr]
    fn int64() -> PyDType {
        PyDType(DType::I64)
    }
    #[classattr]
    fn bool_() -> PyDType {
        PyDType(DType::Bool)
    }
    /// The NumPy name of the dtype (`"float32"`).
    #[getter]
    fn name(&self) -> &'static str {
        dtype_name(self.0)
    }
    fn __repr__(&self) -> String {
        format!("nabla.{}", dtype_repr(self.0))
    }
    fn __str__(&self) -> &'static str {
        dtype_name(self.0)
    }
}

pub fn dtype_name(d: DType) -> &'static str {
    match d {
        DType::F32 => "float32",
        DType::F64 => "float64",
        DType::I64 => "int64",
        DType::Bool => "bool",
    }
}

fn dtype_repr(d: DType) -> &'static str {
    match d {
        DType::Bool => "bool_",
        d => dtype_name(d),
    }
}

/// A dtype argument: a `nabla.DType`, a NumPy-style name (`"float32"`), or
/// a NumPy dtype or scalar type (anything whose `str` or `__name__` is
/// such a name).
pub fn dtype_arg(obj: &Bound<'_, PyAny>) -> PyResult<DType> {
    if let Ok(d) = obj.cast::<PyDType>() {
        return Ok(d.get().0);
    }
    let name: String = if let Ok(s) = obj.extract::<String>() {
        s
    } else if let Ok(n) = obj.getattr("__name__") {
        n.extract()?
    } else {
        obj.str()?.extract()?
    };
    match name.as_str() {
        "float32" | "f32" => Ok(DType::F32),
        "float64" | "f64" | "float" => Ok(DType::F64),
        "int64" | "i64" | "int" => Ok(DType::I64),
        "bool" | "bool_" => Ok(DType::Bool),
        _ => Err(PyTypeError::new_err(format!(
            "dtype {name:?} is not one of nabla's dtypes; use nabla.float32, nabla.float64, nabla.int64 or nabla.bool_"
        ))),
    }
}

/// The default dtype of a Python scalar or nested list: float32 for
/// floats (as JAX), int64 for ints, bool for bools.
fn scalar_dtype(obj: &Bound<'_, PyAny>) -> Option<DType> {
    if obj.is_instance_of::<PyBool>() {
        Some(DType::Bool)
    } else if obj.is_instance_of::<PyInt>() {
        Some(DType::I64)
    } else if obj.is_instance_of::<PyFloat>() {
        Some(DType::F32)
    } else {
        None
    }
}

/// True for Python numbers (which combine with arrays weakly).
pub fn is_scalar(obj: &Bound<'_, PyAny>) -> bool {
    scalar_dtype(obj).is_some()
}

/// The numbers of a nested sequence, as floats and, while every one is an
/// integer that fits, exactly as `i64` too (an int64 array keeps integers
/// beyond 2^53).
struct Numbers {
    floats: Vec<f64>,
    ints: Option<Vec<i64>>,
}

impl Numbers {
    fn push_array(&mut self, a: &Array) {
        self.floats.extend(a.cast(DType::F64).to_vec::<f64>());
        match (&mut self.ints, a.dtype()) {
            (Some(v), DType::I64 | DType::Bool) => v.extend(a.cast(DType::I64).to_vec::<i64>()),
            _ => self.ints = None,
        }
    }
}

/// Flattens a nested sequence of numbers into `out`, returning its shape.
fn flatten(obj: &Bound<'_, PyAny>, out: &mut Numbers, kind: &mut DType) -> PyResult<Vec<usize>> {
    if let Some(d) = scalar_dtype(obj) {
        out.floats.push(obj.extract::<f64>()?);
        match (&mut out.ints, obj.extract::<i64>()) {
            (Some(v), Ok(i)) if d != DType::F32 => v.push(i),
            _ => out.ints = None,
        }
        *kind = widest(*kind, d);
        return Ok(vec![]);
    }
    if obj.is_instance_of::<pyo3::types::PyString>() || obj.is_instance_of::<pyo3::types::PyBytes>()
    {
        return Err(PyTypeError::new_err(format!(
            "nabla.array: cannot make an array from the string {:?}; pass numbers",
            obj.str()?.to_string()
        )));
    }
    if let Some(a) = crate::numpy_interop::from_numpy(obj)? {
        *kind = widest(*kind, a.dtype());
        out.push_array(&a);
        return Ok(a.shape().to_vec());
    }
    if let Ok(a) = obj.cast::<PyArray>() {
        let a = a.borrow().value.to_array();
        *kind = widest(*kind, a.dtype());
        out.push_array(&a);
        return Ok(a.shape().to_vec());
    }
    let seq = obj.cast::<PySequence>().map_err(|_| {
        PyTypeError::new_err(format!(
            "nabla.array: cannot make an array from a {}; pass numbers, nested lists or tuples of numbers, a NumPy array or a nabla.Array",
            obj.get_type().name().map(|n| n.to_string()).unwrap_or_default()
        ))
    })?;
    let n = seq.len()?;
    let mut inner: Option<Vec<usize>> = None;
    for i in 0..n {
        let s = flatten(&seq.get_item(i)?, out, kind)?;
        match &inner {
            None => inner = Some(s),
            Some(prev) if *prev != s => {
                return Err(PyValueError::new_err(format!(
                    "nabla.array: ragged nested sequence (items of shapes {prev:?} and {s:?}); every item of a level must have one shape"
                )));
            }
            _ => {}
        }
    }
    let mut shape = vec![n];
    shape.extend(inner.unwrap_or_default());
    Ok(shape)
}

fn widest(a: DType, b: DType) -> DType {
    let rank = |d| match d {
        DType::Bool => 0,
        DType::I64 => 1,
        DType::F32 => 2,
        DType::F64 => 3,
    };
    if rank(b) > rank(a) { b } else { a }
}

/// An array from a Python value: a `nabla.Array` (shared), a NumPy array or
/// anything with `__array__`, a number or a nested sequence.
pub fn array_from(obj: &Bound<'_, PyAny>, dtype: Option<DType>) -> PyResult<Dyn> {
    if let Ok(a) = obj.cast::<PyArray>() {
        let v = a.borrow().value.clone();
        return match dtype {
            Some(d) if d != v.dtype() => guard(|| v.cast(d)),
            _ => Ok(v),
        };
    }
    if let Some(a) = crate::numpy_interop::from_numpy(obj)? {
        return Ok(match dtype {
            Some(d) if d != a.dtype() => Dyn::Array(a.cast(d)),
            _ => Dyn::Array(a),
        });
    }
    let mut values = Numbers {
        floats: Vec::new(),
        ints: Some(Vec::new()),
    };
    let mut kind = DType::Bool;
    let shape = flatten(obj, &mut values, &mut kind)?;
    if values.floats.is_empty() {
        kind = DType::F32;
    }
    let target = dtype.unwrap_or(kind);
    if let (DType::I64, Some(ints)) = (target, values.ints) {
        return Ok(Dyn::Array(Array::from_vec(ints, &shape)));
    }
    let a = Array::from_vec(values.floats, &shape);
    Ok(Dyn::Array(if target == DType::F64 {
        a
    } else {
        a.cast(target)
    }))
}

/// An operand that meets `like`: an array as it is, a Python number as a
/// scalar of `like`'s dtype (weak typing, as in JAX and NumPy), anything
/// else through [`array_from`].
pub fn operand(obj: &Bound<'_, PyAny>, like: &Dyn) -> PyResult<Dyn> {
    if let Ok(a) = obj.cast::<PyArray>() {
        return Ok(a.borrow().value.clone());
    }
    if is_scalar(obj) {
        let v: f64 = obj.extract()?;
        let d = match (like.dtype(), scalar_dtype(obj)) {
            (DType::I64 | DType::Bool, Some(DType::F32)) => DType::F32,
            (d, _) => d,
        };
        return Ok(Dyn::Array(Array::full(&[], v, d)));
    }
    array_from(obj, None)
}

/// The two operands of a binary op, Python numbers taking the other's
/// dtype; arrays of different float dtypes promote to the wider.
pub fn operands(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<(Dyn, Dyn)> {
    let (a, b) = if is_scalar(a) && !is_scalar(b) {
        let b = array_from(b, None)?;
        (operand(a, &b)?, b)
    } else {
        let a = array_from(a, None)?;
        (a.clone(), operand(b, &a)?)
    };
    promote(a, b)
}

/// Casts the narrower of two arrays to the wider dtype.
pub fn promote(a: Dyn, b: Dyn) -> PyResult<(Dyn, Dyn)> {
    let (da, db) = (a.dtype(), b.dtype());
    if da == db {
        return Ok((a, b));
    }
    let w = widest(da, db);
    guard(|| {
        let a = if da == w { a } else { a.cast(w) };
        let b = if db == w { b } else { b.cast(w) };
        (a, b)
    })
}

/// Axis arguments (`None`: all; an int; a tuple of ints; negative from
/// the end), checked and sorted for `ndim` axes.
pub fn axes_arg(op: &str, axis: Option<&Bound<'_, PyAny>>, ndim: usize) -> PyResult<Vec<usize>> {
    let raw: Vec<isize> = match axis {
        None => return Ok((0..ndim).collect()),
        Some(a) if a.is_none() => return Ok((0..ndim).collect()),
        Some(a) => {
            if let Ok(i) = a.extract::<isize>() {
                vec![i]
            } else {
                a.extract::<Vec<isize>>().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "{op}: axis must be None, an int or a tuple of ints"
                    ))
                })?
            }
        }
    };
    let mut out = Vec::with_capacity(raw.len());
    for a in raw {
        out.push(axis_index(op, a, ndim)?);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// One axis (negative from the end), checked against `ndim`.
pub fn axis_index(op: &str, a: isize, ndim: usize) -> PyResult<usize> {
    let n = ndim as isize;
    if a < -n || a >= n {
        return Err(PyValueError::new_err(format!(
            "{op}: axis {a} is out of range for an array of {ndim} axes; use an axis in -{ndim}..{ndim}"
        )));
    }
    Ok(if a < 0 { (a + n) as usize } else { a as usize })
}

/// A shape argument: an int or a sequence of ints.
pub fn shape_arg(obj: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    if let Ok(n) = obj.extract::<usize>() {
        return Ok(vec![n]);
    }
    obj.extract::<Vec<usize>>()
        .map_err(|_| PyTypeError::new_err("shape must be an int or a tuple of non-negative ints"))
}
