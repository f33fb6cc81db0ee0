//! The functions of the `nabla` module that compute on arrays: every
//! elementwise op of the registry under its JAX/NumPy name (generated from
//! `nabla-ops`, so a new op appears here by itself), reductions, shape ops,
//! `where`, and the composites (`softmax`, `logsumexp`, ...). Each accepts
//! arrays, Python numbers and nested lists, and runs on tracers.

use crate::array::PyArray;
use crate::convert::{array_from, axes_arg, axis_index, operands, shape_arg};
use crate::errors::{guard, guard_heavy};
use nabla::dynamic::Dyn;
use nabla::{ArrayValue, DType, Value};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

fn arg(x: &Bound<'_, PyAny>) -> PyResult<Dyn> {
    array_from(x, None)
}

/// The element count of a value (per example under `vmap`).
pub fn numel(x: &Dyn) -> usize {
    x.shape_vec().iter().product()
}

/// Registry callback: one Python function per elementwise op.
macro_rules! py_unary {
    ($(
        $(#[$doc:meta])*
        $name:ident $kind:ident ($($p:ident: $pt:ty),*) {
            method: $method:ident, func: $func:ident,
            $($body:tt)*
        }
    )*) => {
        pub mod unary {
            use super::*;
            $(
                $(#[$doc])*
                #[pyfunction]
                pub fn $func(py: Python<'_>, x: &Bound<'_, PyAny> $(, $p: $pt)*) -> PyResult<PyArray> {
                    let x = arg(x)?;
                    guard_heavy(py, numel(&x), || PyArray::new(Value::$method(&x $(, $p)*)))
                }
            )*
            pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
                $(m.add_function(wrap_pyfunction!($func, m)?)?;)*
                Ok(())
            }
        }
    };
}

macro_rules! py_binary {
    ($(
        $(#[$doc:meta])*
        $name:ident $kind:ident {
            method: $method:ident, func: $func:ident,
            $($body:tt)*
        }
    )*) => {
        pub mod binary {
            use super::*;
            $(
                $(#[$doc])*
                #[pyfunction]
                pub fn $func(py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<PyArray> {
                    let (a, b) = operands(a, b)?;
                    guard_heavy(py, numel(&a).max(numel(&b)), || PyArray::new(Value::$method(&a, &b)))
                }
            )*
            pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
                $(m.add_function(wrap_pyfunction!($func, m)?)?;)*
                Ok(())
            }
        }
    };
}

nabla_ops::unary_ops!(py_unary);
nabla_ops::binary_ops!(py_binary);

/// A reduction over `axis` (None: all axes).
fn reduce(
    op: &str,
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
    f: impl FnOnce(&Dyn, &[usize], bool) -> Dyn + Send,
) -> PyResult<PyArray> {
    let py = x.py();
    let x = arg(x)?;
    let axes = axes_arg(op, axis, x.ndim())?;
    guard_heavy(py, numel(&x), || PyArray::new(f(&x, &axes, keepdims)))
}

/// Sum over `axis` (all axes when None).
#[pyfunction]
#[pyo3(signature = (x, axis = None, keepdims = false))]
pub fn sum(
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
) -> PyResult<PyArray> {
    reduce("sum", x, axis, keepdims, |x, a, k| x.sum_axes(a, k))
}

/// Mean over `axis`.
#[pyfunction]
#[pyo3(signature = (x, axis = None, keepdims = false))]
pub fn mean(
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
) -> PyResult<PyArray> {
    reduce("mean", x, axis, keepdims, |x, a, k| {
        nabla::primitives::reduce::mean(x, a, k)
    })
}

/// Maximum over `axis`.
#[pyfunction]
#[pyo3(signature = (x, axis = None, keepdims = false))]
pub fn max(
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
) -> PyResult<PyArray> {
    reduce("max", x, axis, keepdims, |x, a, k| x.max_axes(a, k))
}

/// Minimum over `axis`.
#[pyfunction]
#[pyo3(signature = (x, axis = None, keepdims = false))]
pub fn min(
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
) -> PyResult<PyArray> {
    reduce("min", x, axis, keepdims, |x, a, k| x.min_axes(a, k))
}

/// Product over `axis`.
#[pyfunction]
#[pyo3(signature = (x, axis = None, keepdims = false))]
pub fn prod(
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
) -> PyResult<PyArray> {
    reduce("prod", x, axis, keepdims, |x, a, k| x.prod_axes(a, k))
}

/// Variance over `axis` (`ddof` subtracted from the count).
#[pyfunction]
#[pyo3(signature = (x, axis = None, keepdims = false, ddof = 0))]
pub fn var(
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
    ddof: usize,
) -> PyResult<PyArray> {
    reduce("var", x, axis, keepdims, |x, a, k| variance(x, a, k, ddof))
}

/// Standard deviation over `axis`.
#[pyfunction]
#[pyo3(name = "std", signature = (x, axis = None, keepdims = false, ddof = 0))]
pub fn std_(
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
    ddof: usize,
) -> PyResult<PyArray> {
    reduce("std", x, axis, keepdims, |x, a, k| {
        variance(x, a, k, ddof).sqrt()
    })
}

fn variance(x: &Dyn, axes: &[usize], keepdims: bool, ddof: usize) -> Dyn {
    let s = x.shape_vec();
    let n: usize = axes.iter().map(|&a| s[a]).product();
    let m = nabla::primitives::reduce::mean(x, axes, true);
    let d = x.sub(&m);
    d.square()
        .sum_axes(axes, keepdims)
        .mul_scalar(1.0 / (n as f64 - ddof as f64))
}

/// `log(sum(exp(x)))` over `axis`, computed stably.
#[pyfunction]
#[pyo3(signature = (x, axis = None, keepdims = false))]
pub fn logsumexp(
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
) -> PyResult<PyArray> {
    reduce("logsumexp", x, axis, keepdims, |x, a, k| {
        let axes: Vec<isize> = a.iter().map(|&i| i as isize).collect();
        nabla::logsumexp_axes::forward::<Dyn>(x, &axes, k)
    })
}

/// Cumulative sum along `axis` (of the flattened array when None, as
/// NumPy).
#[pyfunction]
#[pyo3(signature = (x, axis = None))]
pub fn cumsum(x: &Bound<'_, PyAny>, axis: Option<isize>) -> PyResult<PyArray> {
    let x = arg(x)?;
    match axis {
        Some(axis) => {
            let a = axis_index("cumsum", axis, x.ndim())?;
            guard(|| PyArray::new(x.cumsum_axis(a, false)))
        }
        None => guard(|| {
            let n = numel(&x);
            PyArray::new(x.reshape(&[n]).cumsum_axis(0, false))
        }),
    }
}

/// Index of the largest element along `axis` (flattened when None).
#[pyfunction]
#[pyo3(signature = (x, axis = None))]
pub fn argmax(x: &Bound<'_, PyAny>, axis: Option<isize>) -> PyResult<PyArray> {
    arg_reduce("argmax", x, axis, |x, a| x.argmax(a))
}

/// Index of the smallest element along `axis` (flattened when None).
#[pyfunction]
#[pyo3(signature = (x, axis = None))]
pub fn argmin(x: &Bound<'_, PyAny>, axis: Option<isize>) -> PyResult<PyArray> {
    arg_reduce("argmin", x, axis, |x, a| x.argmin(a))
}

fn arg_reduce(
    op: &str,
    x: &Bound<'_, PyAny>,
    axis: Option<isize>,
    f: impl FnOnce(&Dyn, usize) -> Dyn,
) -> PyResult<PyArray> {
    let x = arg(x)?;
    let (x, a) = match axis {
        Some(a) => {
            let a = axis_index(op, a, x.ndim())?;
            (x, a)
        }
        None => {
            let n: usize = x.shape_vec().iter().product();
            (guard(|| x.reshape(&[n]))?, 0)
        }
    };
    guard(|| PyArray::new(f(&x, a)))
}

/// Matrix product (NumPy's `matmul` broadcasting).
#[pyfunction]
pub fn matmul(py: Python<'_>, a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    let (a, b) = operands(a, b)?;
    py.detach(|| guard(|| PyArray::new(a.matmul(&b))))
}

/// Inner product of vectors, or matmul for higher ranks.
#[pyfunction]
pub fn dot(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    let (a, b) = operands(a, b)?;
    guard(|| PyArray::new(nabla::dot(&a, &b)))
}

/// Outer product of two vectors.
#[pyfunction]
pub fn outer(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    let (a, b) = operands(a, b)?;
    guard(|| PyArray::new(nabla::outer(&a, &b)))
}

/// The same elements in a new shape (one entry may be -1).
#[pyfunction]
#[pyo3(signature = (x, *shape))]
pub fn reshape(x: &Bound<'_, PyAny>, shape: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<PyArray> {
    let x = arg(x)?;
    let s = dims_arg(shape)?;
    let n: usize = x.shape_vec().iter().product();
    let s = resolve(&s, n, &x.shape_vec())?;
    guard(|| PyArray::new(x.reshape(&s)))
}

/// `reshape(x, (2, 3))` and `reshape(x, 2, 3)` alike.
pub fn dims_arg(shape: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<Vec<isize>> {
    if shape.len() == 1 {
        let only = shape.get_item(0)?;
        if let Ok(v) = only.extract::<Vec<isize>>() {
            return Ok(v);
        }
    }
    shape.extract()
}

/// A shape with one `-1` filled in from the element count.
pub fn resolve(s: &[isize], n: usize, from: &[usize]) -> PyResult<Vec<usize>> {
    let known: usize = s.iter().filter(|&&d| d >= 0).map(|&d| d as usize).product();
    let holes = s.iter().filter(|&&d| d < 0).count();
    let bad = || {
        PyValueError::new_err(format!(
            "reshape: cannot reshape an array of shape {from:?} ({n} elements) to {s:?}"
        ))
    };
    if holes > 1 {
        return Err(bad());
    }
    let out: Vec<usize> = s
        .iter()
        .map(|&d| {
            if d < 0 {
                n.checked_div(known).unwrap_or(0)
            } else {
                d as usize
            }
        })
        .collect();
    if out.iter().product::<usize>() != n {
        return Err(bad());
    }
    Ok(out)
}

/// Permutes the axes (reversed when `axes` is None).
#[pyfunction]
#[pyo3(signature = (x, axes = None))]
pub fn transpose(x: &Bound<'_, PyAny>, axes: Option<Vec<isize>>) -> PyResult<PyArray> {
    let x = arg(x)?;
    let n = x.ndim();
    let perm: Vec<usize> = match axes {
        None => (0..n).rev().collect(),
        Some(a) => a
            .iter()
            .map(|&i| axis_index("transpose", i, n))
            .collect::<PyResult<_>>()?,
    };
    guard(|| PyArray::new(x.permute(&perm)))
}

/// Swaps two axes.
#[pyfunction]
pub fn swapaxes(x: &Bound<'_, PyAny>, axis1: isize, axis2: isize) -> PyResult<PyArray> {
    let x = arg(x)?;
    let n = x.ndim();
    let (a, b) = (
        axis_index("swapaxes", axis1, n)?,
        axis_index("swapaxes", axis2, n)?,
    );
    let mut perm: Vec<usize> = (0..n).collect();
    perm.swap(a, b);
    guard(|| PyArray::new(x.permute(&perm)))
}

/// Moves axis `source` to position `destination`.
#[pyfunction]
pub fn moveaxis(x: &Bound<'_, PyAny>, source: isize, destination: isize) -> PyResult<PyArray> {
    let x = arg(x)?;
    let n = x.ndim();
    let (s, d) = (
        axis_index("moveaxis", source, n)?,
        axis_index("moveaxis", destination, n)?,
    );
    let mut perm: Vec<usize> = (0..n).filter(|&i| i != s).collect();
    perm.insert(d, s);
    guard(|| PyArray::new(x.permute(&perm)))
}

/// Inserts a length-1 axis at `axis`.
#[pyfunction]
pub fn expand_dims(x: &Bound<'_, PyAny>, axis: isize) -> PyResult<PyArray> {
    let x = arg(x)?;
    let mut s = x.shape_vec().to_vec();
    let a = axis_index("expand_dims", axis, s.len() + 1)?;
    s.insert(a, 1);
    guard(|| PyArray::new(x.reshape(&s)))
}

/// Removes length-1 axes (all of them when `axis` is None).
#[pyfunction]
#[pyo3(signature = (x, axis = None))]
pub fn squeeze(x: &Bound<'_, PyAny>, axis: Option<&Bound<'_, PyAny>>) -> PyResult<PyArray> {
    let x = arg(x)?;
    let s = x.shape_vec();
    let drop: Vec<usize> = match axis {
        None => (0..s.len()).filter(|&i| s[i] == 1).collect(),
        Some(a) => axes_arg("squeeze", Some(a), s.len())?,
    };
    for &d in &drop {
        if s[d] != 1 {
            return Err(PyValueError::new_err(format!(
                "squeeze: axis {d} has length {} (shape {:?}); only length-1 axes can be removed",
                s[d],
                &s[..]
            )));
        }
    }
    let out: Vec<usize> = (0..s.len())
        .filter(|i| !drop.contains(i))
        .map(|i| s[i])
        .collect();
    guard(|| PyArray::new(x.reshape(&out)))
}

/// The array broadcast to `shape`.
#[pyfunction]
pub fn broadcast_to(x: &Bound<'_, PyAny>, shape: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    let x = arg(x)?;
    let s = shape_arg(shape)?;
    guard(|| PyArray::new(Value::broadcast_to(&x, &s)))
}

/// Joins arrays along an existing axis.
#[pyfunction]
#[pyo3(signature = (arrays, axis = 0))]
pub fn concatenate(arrays: Vec<Bound<'_, PyAny>>, axis: isize) -> PyResult<PyArray> {
    let parts = same_dtype(&arrays)?;
    let n = parts.first().map_or(1, |p| p.ndim());
    let a = axis_index("concatenate", axis, n)?;
    guard(|| PyArray::new(Dyn::concat(&parts, a)))
}

/// Joins arrays along a new axis.
#[pyfunction]
#[pyo3(signature = (arrays, axis = 0))]
pub fn stack(arrays: Vec<Bound<'_, PyAny>>, axis: isize) -> PyResult<PyArray> {
    let parts = same_dtype(&arrays)?;
    let s = parts
        .first()
        .map(|p| p.shape_vec().to_vec())
        .unwrap_or_default();
    let a = axis_index("stack", axis, s.len() + 1)?;
    let mut s1 = s.clone();
    s1.insert(a, 1);
    guard(|| {
        let parts: Vec<Dyn> = parts.iter().map(|p| p.reshape(&s1)).collect();
        PyArray::new(Dyn::concat(&parts, a))
    })
}

fn same_dtype(arrays: &[Bound<'_, PyAny>]) -> PyResult<Vec<Dyn>> {
    if arrays.is_empty() {
        return Err(PyValueError::new_err("need at least one array to join"));
    }
    let parts: Vec<Dyn> = arrays.iter().map(arg).collect::<PyResult<_>>()?;
    let wide = parts.iter().map(|p| p.dtype()).fold(DType::Bool, |a, b| {
        let r = |d| {
            [DType::Bool, DType::I64, DType::F32, DType::F64]
                .iter()
                .position(|&x| x == d)
        };
        if r(b) > r(a) { b } else { a }
    });
    guard(|| {
        parts
            .into_iter()
            .map(|p| if p.dtype() == wide { p } else { p.cast(wide) })
            .collect()
    })
}

/// Elements of `x` where `cond` holds, of `y` elsewhere.
#[pyfunction]
#[pyo3(name = "where")]
pub fn where_(
    cond: &Bound<'_, PyAny>,
    x: &Bound<'_, PyAny>,
    y: &Bound<'_, PyAny>,
) -> PyResult<PyArray> {
    let c = arg(cond)?;
    let (x, y) = operands(x, y)?;
    guard(|| {
        PyArray::new(match &c {
            Dyn::Batched(..) => {
                // A mask batched by vmap: the blend, with the mask as a
                // constant of every other transform.
                let m = c.cast(x.dtype()).stop_gradient();
                y.add(&m.mul(&x.sub(&y)))
            }
            _ => {
                let mask = c.to_array().cast(DType::Bool);
                let shape = broadcast_shapes(
                    &broadcast_shapes(mask.shape(), &x.shape_vec()),
                    &y.shape_vec(),
                );
                let mask = Value::broadcast_to(&mask, &shape);
                Dyn::select(
                    &mask,
                    &Value::broadcast_to(&x, &shape),
                    &Value::broadcast_to(&y, &shape),
                )
            }
        })
    })
}

/// NumPy's broadcast of two shapes (panics, inside a guard, naming them
/// when they do not broadcast).
fn broadcast_shapes(a: &[usize], b: &[usize]) -> Vec<usize> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            let da = if i + a.len() >= n { a[i + a.len() - n] } else { 1 };
            let db = if i + b.len() >= n { b[i + b.len() - n] } else { 1 };
            match (da, db) {
                (x, y) if x == y => x,
                (1, y) => y,
                (x, 1) => x,
                _ => panic!(
                    "where: shapes {a:?} and {b:?} do not broadcast; give the mask and both branches \
                     broadcastable shapes"
                ),
            }
        })
        .collect()
}

/// The gradient of nothing: the value with every derivative cut.
#[pyfunction]
pub fn stop_gradient(x: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    let x = arg(x)?;
    guard(|| PyArray::new(x.stop_gradient()))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    unary::register(m)?;
    binary::register(m)?;
    macro_rules! add {
        ($($f:ident),*) => { $(m.add_function(wrap_pyfunction!($f, m)?)?;)* };
    }
    add!(
        sum,
        mean,
        max,
        min,
        prod,
        var,
        std_,
        logsumexp,
        cumsum,
        argmax,
        argmin,
        matmul,
        dot,
        outer,
        reshape,
        transpose,
        swapaxes,
        moveaxis,
        expand_dims,
        squeeze,
        broadcast_to,
        concatenate,
        stack,
        where_,
        stop_gradient
    );
    Ok(())
}
