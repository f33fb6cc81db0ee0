//! NumPy/JAX functions over the runtime's composites: `pad`, `einsum`,
//! `take_along_axis`, `scatter_add`, `tril`, `triu`, `cumprod`, `sort`
//! and `diagonal`. Each calls the composite's generic forward at `Dyn`, so
//! it runs on tracers (grad, jvp, vmap, jit) like the other op functions.

use crate::array::PyArray;
use crate::convert::{array_from, axis_index};
use crate::errors::guard;
use nabla::dynamic::Dyn;
use nabla::{ArrayValue, DType, Value};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

pub fn arg(x: &Bound<'_, PyAny>) -> PyResult<Dyn> {
    array_from(x, None)
}

/// Integer indices (`nondiff` arguments of the composites): an int64
/// `nabla.Array`, a NumPy integer array or nested lists of ints, concrete
/// or traced (batched by `vmap`, or an input of a function `jit`
/// records). Traced indices are read when the op runs: a recorded program
/// gathers with each call's indices.
pub fn index_arg(op: &str, obj: &Bound<'_, PyAny>) -> PyResult<Dyn> {
    let v = arg(obj)?;
    if v.dtype() != DType::I64 {
        return Err(PyTypeError::new_err(format!(
            "{op}: indices must be integers (int64), found {:?}; pass ints, an int NumPy array or a nabla.int64 array",
            v.dtype()
        )));
    }
    Ok(v)
}

/// The value flattened to one axis.
fn flat(x: &Dyn) -> PyResult<Dyn> {
    let n: usize = x.shape_vec().iter().product();
    guard(|| x.reshape(&[n]))
}

/// `x` (flattened when `axis` is None) and the axis to work on.
fn along(op: &str, x: &Bound<'_, PyAny>, axis: Option<isize>) -> PyResult<(Dyn, isize)> {
    let x = arg(x)?;
    match axis {
        None => Ok((flat(&x)?, 0)),
        Some(a) => {
            axis_index(op, a, x.ndim())?;
            Ok((x, a))
        }
    }
}

/// NumPy's `pad_width` forms: `n`, `(n,)`, `(before, after)`,
/// `((before, after),)` (every axis alike) or one pair per axis.
fn pad_pairs(pad_width: &Bound<'_, PyAny>, ndim: usize) -> PyResult<Vec<(usize, usize)>> {
    let bad = || {
        PyValueError::new_err(format!(
            "pad: pad_width must be an int, (before, after), or one (before, after) pair per axis ({ndim} axes), \
             all non-negative"
        ))
    };
    let pairs: Vec<(isize, isize)> = if let Ok(n) = pad_width.extract::<isize>() {
        vec![(n, n); ndim]
    } else if let Ok(v) = pad_width.extract::<Vec<isize>>() {
        match v[..] {
            [n] => vec![(n, n); ndim],
            [b, a] => vec![(b, a); ndim],
            _ => return Err(bad()),
        }
    } else if let Ok(v) = pad_width.extract::<Vec<Vec<isize>>>() {
        let v: Vec<(isize, isize)> = v
            .iter()
            .map(|p| match p[..] {
                [n] => Ok((n, n)),
                [b, a] => Ok((b, a)),
                _ => Err(bad()),
            })
            .collect::<PyResult<_>>()?;
        match v.len() {
            1 => vec![v[0]; ndim],
            n if n == ndim => v,
            _ => return Err(bad()),
        }
    } else {
        return Err(bad());
    };
    if pairs.iter().any(|&(b, a)| b < 0 || a < 0) {
        return Err(bad());
    }
    Ok(pairs
        .into_iter()
        .map(|(b, a)| (b as usize, a as usize))
        .collect())
}

/// `x` padded with `constant_values` (`numpy.pad` in mode `"constant"`):
/// `pad_width` is an int, `(before, after)` for every axis, or one
/// `(before, after)` pair per axis.
#[pyfunction]
#[pyo3(signature = (x, pad_width, mode = "constant", constant_values = 0.0))]
pub fn pad(
    x: &Bound<'_, PyAny>,
    pad_width: &Bound<'_, PyAny>,
    mode: &str,
    constant_values: f64,
) -> PyResult<PyArray> {
    if mode != "constant" {
        return Err(PyValueError::new_err(format!(
            "pad: mode {mode:?} is not supported; only mode=\"constant\" (with constant_values) is"
        )));
    }
    let x = arg(x)?;
    let pads = pad_pairs(pad_width, x.ndim())?;
    guard(|| PyArray::new(nabla::pad::forward::<Dyn>(&x, &pads, constant_values)))
}

/// Einstein summation of two operands (`numpy.einsum`), e.g.
/// `einsum("bij,bjk->bik", a, b)`: letters index axes; an index absent
/// from the output is summed. Without `->` the output holds the indices
/// that occur once, in alphabetical order.
#[pyfunction]
#[pyo3(signature = (subscripts, *operands))]
pub fn einsum(subscripts: &str, operands: &Bound<'_, PyTuple>) -> PyResult<PyArray> {
    if operands.len() != 2 {
        return Err(PyValueError::new_err(format!(
            "einsum: {} operands given; nabla's einsum contracts exactly two (chain calls for more)",
            operands.len()
        )));
    }
    let (a, b) = crate::convert::operands(&operands.get_item(0)?, &operands.get_item(1)?)?;
    let spec: String = subscripts.chars().filter(|c| !c.is_whitespace()).collect();
    guard(|| PyArray::new(nabla::einsum::forward::<Dyn>(&spec, &a, &b)))
}

/// `out[.., i, ..] = x[.., indices[.., i, ..], ..]` along `axis`
/// (`numpy.take_along_axis`); `indices` are integers with `x`'s rank
/// (1-D, over the flattened `x`, when `axis` is None).
#[pyfunction]
#[pyo3(signature = (x, indices, axis))]
pub fn take_along_axis(
    x: &Bound<'_, PyAny>,
    indices: &Bound<'_, PyAny>,
    axis: Option<isize>,
) -> PyResult<PyArray> {
    let (x, a) = along("take_along_axis", x, axis)?;
    let idx = index_arg("take_along_axis", indices)?;
    guard(|| {
        PyArray::new(match &idx {
            Dyn::Array(idx) => nabla::take_along_axis::forward::<Dyn>(&x, idx, a),
            traced => {
                // The flat positions, computed when the op runs, gathered
                // from the flattened `x`.
                let shape = x.shape_vec();
                let a = if a < 0 { a + shape.len() as isize } else { a } as usize;
                let positions = traced.along_axis_positions(&shape, a);
                x.reshape(&[shape.iter().product()])
                    .take_named("take_along_axis", 0, &positions)
            }
        })
    })
}

/// Slabs of `x` along `axis` summed into zeros with `out_size` slabs, slab
/// `k` going to position `indices[k]`; repeated indices accumulate (JAX's
/// `zeros.at[indices].add(x)`, PyTorch's `index_add` into zeros).
#[pyfunction]
#[pyo3(signature = (x, axis, indices, out_size))]
pub fn scatter_add(
    x: &Bound<'_, PyAny>,
    axis: isize,
    indices: &Bound<'_, PyAny>,
    out_size: usize,
) -> PyResult<PyArray> {
    let x = arg(x)?;
    let ax = axis_index("scatter_add", axis, x.ndim())?;
    let idx = index_arg("scatter_add", indices)?;
    guard(|| {
        PyArray::new(match &idx {
            Dyn::Array(idx) => nabla::scatter_add::forward::<Dyn>(&x, axis, idx, out_size),
            traced => {
                // The transpose of a gather along `axis`, with the indices
                // read when the op runs.
                let mut shape = x.shape_vec();
                let (n, len) = (traced.shape_vec(), shape[ax]);
                if n.len() != 1 || n[0] != len {
                    panic!(
                        "scatter_add: indices of shape {n:?} need one entry per slab of axis {ax} of the input (shape {shape:?})"
                    );
                }
                shape[ax] = out_size;
                x.take_add_named("scatter_add", &shape, ax, traced)
            }
        })
    })
}

/// The lower triangle of the last two axes (`numpy.tril`): entries with
/// `j - i <= k` kept, the rest zero.
#[pyfunction]
#[pyo3(signature = (x, k = 0))]
pub fn tril(x: &Bound<'_, PyAny>, k: isize) -> PyResult<PyArray> {
    let x = arg(x)?;
    guard(|| PyArray::new(nabla::tril::forward::<Dyn>(&x, k)))
}

/// The upper triangle of the last two axes (`numpy.triu`): entries with
/// `j - i >= k` kept, the rest zero.
#[pyfunction]
#[pyo3(signature = (x, k = 0))]
pub fn triu(x: &Bound<'_, PyAny>, k: isize) -> PyResult<PyArray> {
    let x = arg(x)?;
    guard(|| PyArray::new(nabla::triu::forward::<Dyn>(&x, k)))
}

/// Cumulative product along `axis` (over the flattened array when None),
/// as `numpy.cumprod`; exact at zeros and differentiable to every order.
#[pyfunction]
#[pyo3(signature = (x, axis = None))]
pub fn cumprod(x: &Bound<'_, PyAny>, axis: Option<isize>) -> PyResult<PyArray> {
    let (x, a) = along("cumprod", x, axis)?;
    guard(|| PyArray::new(nabla::cumprod::forward::<Dyn>(&x, a)))
}

/// `x` sorted ascending along `axis` (flattened when None), as
/// `numpy.sort`; stable. Derivatives follow each element to its sorted
/// position. Costs O(n²) per sorted slice of n elements.
#[pyfunction]
#[pyo3(signature = (x, axis = -1))]
pub fn sort(x: &Bound<'_, PyAny>, axis: Option<isize>) -> PyResult<PyArray> {
    let (x, a) = along("sort", x, axis)?;
    guard(|| PyArray::new(nabla::sort::forward::<Dyn>(&x, a)))
}

/// The diagonal `offset` of the last two axes of `x` (moved there first):
/// `[.., n]`.
pub fn last_two_diagonal(x: &Dyn, offset: isize) -> PyResult<Dyn> {
    let s = x.shape_vec();
    let nd = s.len();
    if nd < 2 {
        return Err(PyValueError::new_err(format!(
            "diagonal: needs at least two axes, found shape {:?}",
            &s[..]
        )));
    }
    let (m, n) = (s[nd - 2], s[nd - 1]);
    let all = ndarray::Slice::from(..);
    let mut slices = vec![all; nd];
    let k = offset.unsigned_abs();
    if offset > 0 {
        slices[nd - 1] = ndarray::Slice::from(k.min(n)..);
    } else if offset < 0 {
        slices[nd - 2] = ndarray::Slice::from(k.min(m)..);
    }
    guard(|| {
        let y = if offset == 0 {
            x.clone()
        } else {
            x.slice(&slices)
        };
        nabla::linalg::diagonal::forward::<Dyn>(&y)
    })
}

/// The diagonal `offset` of the plane of `axis1` and `axis2`
/// (`numpy.diagonal`): those axes are removed and the diagonal appended
/// as the last axis.
#[pyfunction]
#[pyo3(signature = (x, offset = 0, axis1 = 0, axis2 = 1))]
pub fn diagonal(
    x: &Bound<'_, PyAny>,
    offset: isize,
    axis1: isize,
    axis2: isize,
) -> PyResult<PyArray> {
    let x = arg(x)?;
    let n = x.ndim();
    let (a1, a2) = (
        axis_index("diagonal", axis1, n)?,
        axis_index("diagonal", axis2, n)?,
    );
    if a1 == a2 {
        return Err(PyValueError::new_err(
            "diagonal: axis1 and axis2 cannot be the same axis",
        ));
    }
    let perm: Vec<usize> = (0..n)
        .filter(|&i| i != a1 && i != a2)
        .chain([a1, a2])
        .collect();
    let moved = if perm.iter().copied().eq(0..n) {
        x
    } else {
        guard(|| x.permute(&perm))?
    };
    Ok(PyArray::new(last_two_diagonal(&moved, offset)?))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    macro_rules! add {
        ($($f:ident),*) => { $(m.add_function(wrap_pyfunction!($f, m)?)?;)* };
    }
    add!(
        pad,
        einsum,
        take_along_axis,
        scatter_add,
        tril,
        triu,
        cumprod,
        sort,
        diagonal
    );
    Ok(())
}
