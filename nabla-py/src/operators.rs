//! Python operators on `nabla.Array`: arithmetic (with Python numbers
//! weakly typed), `@`, `**`, comparisons (bool arrays) and in-place
//! updates, which keep a leaf that requires grad a leaf (PyTorch's
//! `w -= lr * w.grad()`).

use crate::array::PyArray;
use crate::convert::{operand, promote};
use crate::errors::{guard, guard_heavy};
use crate::ops::numel;
use nabla::dynamic::Dyn;
use nabla::{ArrayValue, CompareOp, DType, Value};
use pyo3::basic::CompareOp as PyCompareOp;
use pyo3::prelude::*;

/// `self op other` with both as arrays of one dtype.
fn binary(
    a: &Dyn,
    other: &Bound<'_, PyAny>,
    f: impl FnOnce(&Dyn, &Dyn) -> Dyn + Send,
) -> PyResult<PyArray> {
    let b = operand(other, a)?;
    let (a, b) = promote(a.clone(), b)?;
    let work = numel(&a).max(numel(&b));
    guard_heavy(other.py(), work, || PyArray::new(f(&a, &b)))
}

/// `other op self`.
fn reflected(
    a: &Dyn,
    other: &Bound<'_, PyAny>,
    f: impl FnOnce(&Dyn, &Dyn) -> Dyn + Send,
) -> PyResult<PyArray> {
    let b = operand(other, a)?;
    let (a, b) = promote(a.clone(), b)?;
    let work = numel(&a).max(numel(&b));
    guard_heavy(other.py(), work, || PyArray::new(f(&b, &a)))
}

/// `x ** p`: `powi` for whole Python numbers, `powf` for other numbers,
/// the elementwise `pow` for arrays.
pub fn power(x: &Dyn, p: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    if crate::convert::is_scalar(p) {
        let e: f64 = p.extract()?;
        let x = x.clone();
        return guard(|| {
            PyArray::new(if e.fract() == 0.0 && e.abs() <= i32::MAX as f64 {
                x.powi(e as i32)
            } else {
                x.powf(e)
            })
        });
    }
    binary(x, p, |a, b| a.pow(b))
}

/// The 0/1 mask of a comparison, as a bool array.
fn compare(a: &Dyn, other: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<PyArray> {
    binary(a, other, |a, b| {
        let (a, b) = as_float(a, b);
        a.cmp_mask(&b, op).cast(DType::Bool)
    })
}

/// Integer and bool operands compared as float64 (exact for them).
fn as_float(a: &Dyn, b: &Dyn) -> (Dyn, Dyn) {
    match a.dtype() {
        DType::F32 | DType::F64 => (a.clone(), b.clone()),
        _ => (a.cast(DType::F64), b.cast(DType::F64)),
    }
}

#[pymethods]
impl PyArray {
    fn __add__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        binary(&self.value, o, |a, b| a.add(b))
    }
    fn __radd__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        reflected(&self.value, o, |a, b| a.add(b))
    }
    fn __sub__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        binary(&self.value, o, |a, b| a.sub(b))
    }
    fn __rsub__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        reflected(&self.value, o, |a, b| a.sub(b))
    }
    fn __mul__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        binary(&self.value, o, |a, b| a.mul(b))
    }
    fn __rmul__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        reflected(&self.value, o, |a, b| a.mul(b))
    }
    fn __truediv__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        binary(&self.value, o, |a, b| a.div(b))
    }
    fn __rtruediv__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        reflected(&self.value, o, |a, b| a.div(b))
    }
    fn __matmul__(&self, py: Python<'_>, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        let b = operand(o, &self.value)?;
        let (a, b) = promote(self.value.clone(), b)?;
        py.detach(|| guard(|| PyArray::new(a.matmul(&b))))
    }
    fn __rmatmul__(&self, o: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        reflected(&self.value, o, |a, b| a.matmul(b))
    }
    fn __pow__(
        &self,
        o: &Bound<'_, PyAny>,
        modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyArray> {
        let _ = modulo;
        power(&self.value, o)
    }
    fn __rpow__(
        &self,
        o: &Bound<'_, PyAny>,
        modulo: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyArray> {
        let _ = modulo;
        reflected(&self.value, o, |a, b| a.pow(b))
    }
    fn __neg__(&self) -> PyResult<PyArray> {
        let v = self.value.clone();
        guard(|| PyArray::new(v.neg()))
    }
    fn __pos__(&self) -> PyArray {
        PyArray::new(self.value.clone())
    }
    fn __abs__(&self) -> PyResult<PyArray> {
        let v = self.value.clone();
        guard(|| PyArray::new(v.abs()))
    }
    fn __richcmp__(&self, o: &Bound<'_, PyAny>, op: PyCompareOp) -> PyResult<PyArray> {
        let op = match op {
            PyCompareOp::Lt => CompareOp::Lt,
            PyCompareOp::Le => CompareOp::Le,
            PyCompareOp::Gt => CompareOp::Gt,
            PyCompareOp::Ge => CompareOp::Ge,
            PyCompareOp::Eq => CompareOp::Eq,
            PyCompareOp::Ne => CompareOp::Ne,
        };
        compare(&self.value, o, op)
    }

    // In place: a leaf that requires grad keeps its identity and `.grad()`
    // (the update is not recorded); anything else is rebound to the result.
    fn __iadd__(&mut self, o: &Bound<'_, PyAny>) -> PyResult<()> {
        self.update(o, |a, b| *a += b, |a, b| a.add(b))
    }
    fn __isub__(&mut self, o: &Bound<'_, PyAny>) -> PyResult<()> {
        self.update(o, |a, b| *a -= b, |a, b| a.sub(b))
    }
    fn __imul__(&mut self, o: &Bound<'_, PyAny>) -> PyResult<()> {
        self.update(o, |a, b| *a *= b, |a, b| a.mul(b))
    }
    fn __itruediv__(&mut self, o: &Bound<'_, PyAny>) -> PyResult<()> {
        self.update(o, |a, b| *a /= b, |a, b| a.div(b))
    }
}

impl PyArray {
    fn update(
        &mut self,
        o: &Bound<'_, PyAny>,
        in_place: impl FnOnce(&mut nabla::Array, &nabla::Array),
        op: impl FnOnce(&Dyn, &Dyn) -> Dyn,
    ) -> PyResult<()> {
        let b = operand(o, &self.value)?;
        let dtype = self.value.dtype();
        let b = if b.dtype() != dtype {
            guard(|| b.cast(dtype))?
        } else {
            b
        };
        match (&mut self.value, &b) {
            (Dyn::Array(a), Dyn::Array(b)) => {
                let mut a2 = a.clone();
                guard(|| in_place(&mut a2, b))?;
                *a = a2;
            }
            (v, _) => {
                let v2 = v.clone();
                *v = guard(|| op(&v2, &b))?;
            }
        }
        Ok(())
    }
}
