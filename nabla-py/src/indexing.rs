//! `x[...]`: NumPy's basic indexing (ints, slices with steps, `None`,
//! `...`) and one advanced index per call (an integer array or list along
//! one axis, or a boolean mask of the array's shape). Every form runs on
//! tracers too: they are the `slice`, `reshape` and `index_select`
//! primitives.

use crate::array::PyArray;
use crate::array::ToArrayChecked;
use crate::convert::array_from;
use crate::errors::guard;
use nabla::dynamic::Dyn;
use nabla::{ArrayValue, DType, Value};
use ndarray::Slice;
use pyo3::exceptions::{PyIndexError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyEllipsis, PySlice, PyTuple};

/// A Python slice: `start:stop:step`, bounds omitted or negative.
#[derive(Clone, Copy)]
struct PySlice3 {
    start: Option<isize>,
    stop: Option<isize>,
    step: isize,
}

const ALL: PySlice3 = PySlice3 {
    start: None,
    stop: None,
    step: 1,
};

/// One parsed index item.
enum Item {
    Int(isize),
    Range(PySlice3),
    NewAxis,
    Ellipsis,
    /// Integer indices (any shape; traced ones gather at run time).
    Take(Dyn),
    Mask(nabla::Array),
}

fn parse(obj: &Bound<'_, PyAny>) -> PyResult<Item> {
    if obj.is_none() {
        return Ok(Item::NewAxis);
    }
    if obj.is_instance_of::<PyEllipsis>() {
        return Ok(Item::Ellipsis);
    }
    if let Ok(s) = obj.cast::<PySlice>() {
        let get = |name: &str| -> PyResult<Option<isize>> {
            let v = s.getattr(name)?;
            if v.is_none() {
                Ok(None)
            } else {
                v.extract().map(Some)
            }
        };
        let step = get("step")?.unwrap_or(1);
        if step == 0 {
            return Err(PyTypeError::new_err("slice step cannot be zero"));
        }
        return Ok(Item::Range(PySlice3 {
            start: get("start")?,
            stop: get("stop")?,
            step,
        }));
    }
    if !obj.is_instance_of::<pyo3::types::PyBool>()
        && let Ok(i) = obj.extract::<isize>()
    {
        return Ok(Item::Int(i));
    }
    let a = array_from(obj, None)?;
    match a.dtype() {
        // A mask's result shape depends on its values: it must be concrete.
        DType::Bool => Ok(Item::Mask(a.to_array_checked("boolean indexing")?)),
        DType::I64 => Ok(Item::Take(a)),
        d => Err(PyTypeError::new_err(format!(
            "index arrays must be int64 or bool, not {}; cast with .astype(nabla.int64)",
            crate::convert::dtype_name(d)
        ))),
    }
}

/// Clamps a Python slice to an axis of length `n` as NumPy does, giving
/// ndarray's `Slice` (which counts negative bounds from the end and, for
/// a negative step, walks the range `start..end` backwards).
fn clamp(s: PySlice3, n: usize) -> Slice {
    let n = n as isize;
    let norm = |v: isize| if v < 0 { (v + n).max(0) } else { v.min(n) };
    if s.step > 0 {
        let start = s.start.map_or(0, norm);
        let end = s.stop.map_or(n, norm).max(start);
        Slice::new(start, Some(end), s.step)
    } else {
        // Elements start, start+step, ... while above stop: the range
        // lo..=hi walked backwards.
        let hi = s
            .start
            .map_or(n - 1, |v| if v < 0 { v + n } else { v.min(n - 1) });
        let lo = s
            .stop
            .map_or(0, |e| (if e < 0 { e + n } else { e }) + 1)
            .max(0);
        if hi < lo {
            Slice::new(0, Some(0), 1)
        } else {
            Slice::new(lo, Some(hi + 1), s.step)
        }
    }
}

pub fn getitem(x: &Dyn, key: &Bound<'_, PyAny>) -> PyResult<Dyn> {
    let items: Vec<Item> = if let Ok(t) = key.cast::<PyTuple>() {
        t.iter().map(|k| parse(&k)).collect::<PyResult<_>>()?
    } else {
        vec![parse(key)?]
    };
    let shape = x.shape_vec();
    let consumed = items
        .iter()
        .map(|i| match i {
            Item::Int(_) | Item::Range(_) | Item::Take(..) => 1,
            Item::Mask(m) => m.ndim(),
            Item::NewAxis | Item::Ellipsis => 0,
        })
        .sum::<usize>();
    if consumed > shape.len() {
        return Err(PyIndexError::new_err(format!(
            "too many indices: {consumed} for an array of shape {:?}",
            &shape[..]
        )));
    }
    if items
        .iter()
        .filter(|i| matches!(i, Item::Take(..) | Item::Mask(_)))
        .count()
        > 1
    {
        return Err(PyIndexError::new_err(
            "one integer-array or boolean index per indexing operation; index in two steps (x[i][:, j])",
        ));
    }
    // Expand the ellipsis (or pad at the end) with full slices.
    let mut full: Vec<Item> = Vec::new();
    let mut seen_ellipsis = false;
    for it in items {
        if let Item::Ellipsis = it {
            if seen_ellipsis {
                return Err(PyIndexError::new_err(
                    "an index can only have one ellipsis ('...')",
                ));
            }
            seen_ellipsis = true;
            full.extend((0..shape.len() - consumed).map(|_| Item::Range(ALL)));
        } else {
            full.push(it);
        }
    }
    if !seen_ellipsis {
        full.extend((0..shape.len() - consumed).map(|_| Item::Range(ALL)));
    }
    let x = x.clone();
    guard(move || apply(&x, full, &shape))?
}

fn apply(x: &Dyn, items: Vec<Item>, shape: &[usize]) -> PyResult<Dyn> {
    // Pass 1: slices and ints (as length-1 slices), the result shape, and
    // where the advanced index lands.
    let mut slices = Vec::with_capacity(shape.len());
    let mut out_shape: Vec<usize> = Vec::new();
    let mut advanced: Option<(usize, Item)> = None;
    let mut axis = 0;
    for it in items {
        match it {
            Item::NewAxis => out_shape.push(1),
            Item::Int(i) => {
                let n = shape[axis] as isize;
                if i < -n || i >= n {
                    return Err(PyIndexError::new_err(format!(
                        "index {i} is out of bounds for axis {axis} with size {n}"
                    )));
                }
                let i = if i < 0 { i + n } else { i };
                slices.push(Slice::new(i, Some(i + 1), 1));
                axis += 1;
            }
            Item::Range(s) => {
                let s = clamp(s, shape[axis]);
                let len = s.end.unwrap_or(0).saturating_sub(s.start).max(0) as usize;
                let step = s.step.unsigned_abs();
                out_shape.push(len.div_ceil(step));
                slices.push(s);
                axis += 1;
            }
            Item::Take(idx) => {
                slices.push(Slice::new(0, None, 1));
                advanced = Some((out_shape.len(), Item::Take(idx)));
                out_shape.push(shape[axis]);
                axis += 1;
            }
            Item::Mask(m) => {
                let k = m.ndim();
                if m.shape() != &shape[axis..axis + k] {
                    return Err(PyIndexError::new_err(format!(
                        "boolean index of shape {:?} does not match the indexed axes {:?}",
                        m.shape(),
                        &shape[axis..axis + k]
                    )));
                }
                for a in axis..axis + k {
                    slices.push(Slice::new(0, None, 1));
                    let _ = a;
                }
                advanced = Some((out_shape.len(), Item::Mask(m)));
                out_shape.push(shape[axis..axis + k].iter().product());
                axis += k;
            }
            Item::Ellipsis => unreachable!("expanded"),
        }
    }
    let sliced = if slices
        .iter()
        .all(|s| s.start == 0 && s.end.is_none() && s.step == 1)
    {
        x.clone()
    } else {
        x.slice(&slices)
    };
    let mut y = sliced.reshape(&out_shape);
    if let Some((at, it)) = advanced {
        let n = out_shape[at];
        match it {
            Item::Take(idx) => {
                if let Dyn::Array(i) = &idx {
                    let bad = i
                        .to_vec::<i64>()
                        .into_iter()
                        .find(|&v| v < -(n as i64) || v >= n as i64);
                    if let Some(v) = bad {
                        return Err(PyIndexError::new_err(format!(
                            "index {v} is out of bounds for axis {at} with size {n}"
                        )));
                    }
                }
                y = y.take(at, &idx);
            }
            Item::Mask(m) => {
                let v: Vec<usize> = m
                    .to_vec::<bool>()
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| **b)
                    .map(|(i, _)| i)
                    .collect();
                let mut s: Vec<usize> = out_shape[..at].to_vec();
                s.push(v.len());
                s.extend_from_slice(&out_shape[at + 1..]);
                y = y.index_select(at, &v).reshape(&s);
            }
            _ => unreachable!("advanced items only"),
        }
    }
    Ok(y)
}

#[pymethods]
impl PyArray {
    fn __getitem__(&self, key: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        getitem(&self.value, key).map(PyArray::new)
    }
}
