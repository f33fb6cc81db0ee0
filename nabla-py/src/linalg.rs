//! The submodule `nabla._nabla._linalg` (re-exported as `nabla.linalg`):
//! NumPy/JAX linear algebra over `nabla::linalg` at `Dyn`. Every function
//! takes `[.., m, n]` arrays whose leading axes are a batch, in float32 or
//! float64, and runs on tracers: the factorisations are custom ops whose
//! derivative rules are generic, so grad, jvp, vmap and jit go through.

use crate::array::PyArray;
use crate::convert::{axis_index, operands};
use crate::errors::guard;
use crate::ops_more::{arg, last_two_diagonal};
use nabla::dynamic::Dyn;
use nabla::{Array, ArrayValue, Value};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

/// `xᵀ` over the last two axes.
fn mt(x: &Dyn) -> Dyn {
    let nd = x.ndim();
    let mut perm: Vec<usize> = (0..nd).collect();
    perm.swap(nd - 2, nd - 1);
    x.permute(&perm)
}

/// A `ValueError` unless `x` holds matrices.
fn matrices(op: &str, x: &Dyn) -> PyResult<()> {
    if x.ndim() < 2 {
        return Err(PyValueError::new_err(format!(
            "linalg.{op}: needs matrices [.., m, n], found shape {:?}",
            &x.shape_vec()[..]
        )));
    }
    Ok(())
}

/// One matrix function of `a`.
fn unary(op: &str, a: &Bound<'_, PyAny>, f: impl FnOnce(&Dyn) -> Dyn) -> PyResult<PyArray> {
    let a = arg(a)?;
    matrices(op, &a)?;
    guard(|| PyArray::new(f(&a)))
}

/// The solution `x` of `a x = b` (`numpy.linalg.solve`): `a` `[.., n, n]`,
/// `b` `[.., n, k]` or `[n]`; batch axes broadcast. A singular `a` gives
/// non-finite values.
#[pyfunction]
fn solve(a: &Bound<'_, PyAny>, b: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    let (a, b) = operands(a, b)?;
    matrices("solve", &a)?;
    guard(|| PyArray::new(nabla::linalg::solve::forward::<Dyn>(&a, &b)))
}

/// The inverse of `a` `[.., n, n]` (non-finite where `a` is singular).
#[pyfunction]
fn inv(a: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    unary("inv", a, nabla::linalg::inv::forward)
}

/// The determinant of `a` `[.., n, n]`, one value per matrix.
#[pyfunction]
fn det(a: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    unary("det", a, nabla::linalg::det::forward)
}

/// `(sign, logabsdet)` of `a` `[.., n, n]` (`numpy.linalg.slogdet`):
/// `det a = sign * exp(logabsdet)` without overflow; sign 0 and logabsdet
/// -inf where `a` is singular. The sign's derivative is zero.
#[pyfunction]
fn slogdet(a: &Bound<'_, PyAny>) -> PyResult<(PyArray, PyArray)> {
    let a = arg(a)?;
    matrices("slogdet", &a)?;
    let (s, l) = guard(|| nabla::linalg::slogdet::forward::<Dyn>(&a))?;
    Ok((PyArray::new(s), PyArray::new(l)))
}

/// The Cholesky factor of the symmetric part of `a` `[.., n, n]`
/// (`numpy.linalg.cholesky`): lower (`l lᵀ = a`), or upper (`uᵀ u = a`)
/// when `upper`; all NaN where `a` is not positive definite.
#[pyfunction]
#[pyo3(signature = (a, upper = false))]
fn cholesky(a: &Bound<'_, PyAny>, upper: bool) -> PyResult<PyArray> {
    unary("cholesky", a, |a| {
        let l = nabla::linalg::cholesky::forward(a);
        if upper { mt(&l) } else { l }
    })
}

/// `trans` of `solve_triangular`: 0/`"N"` solves `a x = b`, 1/`"T"` and
/// 2/`"C"` (real arrays) `aᵀ x = b`.
fn transposed(trans: &Bound<'_, PyAny>) -> PyResult<bool> {
    if let Ok(t) = trans.extract::<i64>() {
        if let 0..=2 = t {
            return Ok(t != 0);
        }
    } else if let Ok(t) = trans.extract::<String>() {
        match t.as_str() {
            "N" => return Ok(false),
            "T" | "C" => return Ok(true),
            _ => {}
        }
    }
    Err(PyValueError::new_err(
        "solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C'",
    ))
}

/// The solution of `t x = b` with `t` the lower (`lower`) or upper
/// triangle of `a` `[.., n, n]` (the other triangle is not read), as
/// `jax.scipy.linalg.solve_triangular`: `trans` solves with `tᵀ`,
/// `unit_diagonal` takes the diagonal as ones. `b` is `[.., n, k]`, or
/// `[.., n]` (one vector per matrix); batch axes broadcast.
#[pyfunction]
#[pyo3(signature = (a, b, trans = None, lower = false, unit_diagonal = false))]
fn solve_triangular(
    a: &Bound<'_, PyAny>,
    b: &Bound<'_, PyAny>,
    trans: Option<&Bound<'_, PyAny>>,
    lower: bool,
    unit_diagonal: bool,
) -> PyResult<PyArray> {
    let t = match trans {
        Some(t) if !t.is_none() => transposed(t)?,
        _ => false,
    };
    let (a, b) = operands(a, b)?;
    matrices("solve_triangular", &a)?;
    let (sa, sb) = (a.shape_vec(), b.shape_vec());
    let n = sa[sa.len() - 1];
    let vector = sb.len() + 1 == sa.len();
    let rows = if vector {
        sb.last()
    } else {
        sb.get(sb.len().wrapping_sub(2))
    };
    if sa[sa.len() - 2] != n || sb.is_empty() || rows != Some(&n) {
        return Err(PyValueError::new_err(format!(
            "solve_triangular: a {:?} must be [.., n, n] and b {:?} [.., n, k] or [.., n]",
            &sa[..],
            &sb[..]
        )));
    }
    // The batch axes broadcast: a and b are brought to one batch shape.
    let (ab, bb) = (
        &sa[..sa.len() - 2],
        &sb[..sb.len() - if vector { 1 } else { 2 }],
    );
    let batch = broadcast(ab, bb).ok_or_else(|| {
        PyValueError::new_err(format!(
            "solve_triangular: the batch axes of a {:?} and b {:?} do not broadcast",
            &sa[..],
            &sb[..]
        ))
    })?;
    guard(|| {
        let with = |tail: &[usize]| -> Vec<usize> { batch.iter().chain(tail).copied().collect() };
        let mut a = a.broadcast_to(&with(&[n, n]));
        let bm = if vector {
            b.reshape(&with(&[n, 1]))
        } else {
            b.broadcast_to(&with(&sb[sb.len() - 2..]))
        };
        let eye = Array::eye(n, a.dtype()).to_device(a.device());
        if unit_diagonal {
            // The diagonal replaced by ones: a ∘ (1 - I) + I.
            let off = Array::ones(&[n, n], a.dtype()).to_device(a.device()) - &eye;
            a = a.mul(&a.lift(&off)).add(&a.lift(&eye));
        }
        let (a, lower) = if t { (mt(&a), !lower) } else { (a, lower) };
        let x = nabla::linalg::triangular_solve::forward(&a, &bm, lower);
        PyArray::new(if vector { x.reshape(&with(&[n])) } else { x })
    })
}

/// NumPy's broadcast of two shapes, None when they do not broadcast.
fn broadcast(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            let da = if i + a.len() >= n {
                a[i + a.len() - n]
            } else {
                1
            };
            let db = if i + b.len() >= n {
                b[i + b.len() - n]
            } else {
                1
            };
            match (da, db) {
                (x, y) if x == y => Some(x),
                (1, y) => Some(y),
                (x, 1) => Some(x),
                _ => None,
            }
        })
        .collect()
}

/// `(eigenvalues, eigenvectors)` of the symmetric part of `a` `[.., n, n]`
/// (`numpy.linalg.eigh`): eigenvalues ascending, eigenvectors in the
/// columns. Eigenvector derivatives are infinite where eigenvalues repeat;
/// for eigenvalues alone use `eigvalsh`.
#[pyfunction]
fn eigh(a: &Bound<'_, PyAny>) -> PyResult<(PyArray, PyArray)> {
    let a = arg(a)?;
    matrices("eigh", &a)?;
    let (w, v) = guard(|| nabla::linalg::eigh::forward::<Dyn>(&a))?;
    Ok((PyArray::new(w), PyArray::new(v)))
}

/// The eigenvalues (ascending) of the symmetric part of `a` `[.., n, n]`
/// (`numpy.linalg.eigvalsh`); their derivatives stay finite where
/// eigenvalues repeat.
#[pyfunction]
fn eigvalsh(a: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    unary("eigvalsh", a, nabla::linalg::eigvalsh::forward)
}

/// The reduced QR factorisation of `a` `[.., m, n]` (`numpy.linalg.qr`):
/// `(q, r)`, `q` `[.., m, k]` with orthonormal columns, `r` `[.., k, n]`
/// upper triangular, `k = min(m, n)`; `mode="r"` gives `r` alone.
/// Derivatives need `m >= n`.
#[pyfunction]
#[pyo3(signature = (a, mode = "reduced"))]
fn qr(py: Python<'_>, a: &Bound<'_, PyAny>, mode: &str) -> PyResult<Py<PyAny>> {
    if mode != "reduced" && mode != "r" {
        return Err(PyValueError::new_err(format!(
            "linalg.qr: mode {mode:?} is not supported; use 'reduced' or 'r'"
        )));
    }
    let a = arg(a)?;
    matrices("qr", &a)?;
    let (q, r) = guard(|| nabla::linalg::qr::forward::<Dyn>(&a))?;
    Ok(if mode == "r" {
        PyArray::new(r).into_pyobject(py)?.into_any().unbind()
    } else {
        (PyArray::new(q), PyArray::new(r))
            .into_pyobject(py)?
            .into_any()
            .unbind()
    })
}

/// The diagonal `offset` of the last two axes (`numpy.linalg.diagonal`):
/// `[.., k]`.
#[pyfunction]
#[pyo3(signature = (x, offset = 0))]
fn diagonal(x: &Bound<'_, PyAny>, offset: isize) -> PyResult<PyArray> {
    let x = arg(x)?;
    Ok(PyArray::new(last_two_diagonal(&x, offset)?))
}

/// The sum of the diagonal `offset` of the last two axes, one value per
/// matrix (`numpy.linalg.trace`).
#[pyfunction]
#[pyo3(signature = (x, offset = 0))]
fn trace(x: &Bound<'_, PyAny>, offset: isize) -> PyResult<PyArray> {
    let x = arg(x)?;
    let d = last_two_diagonal(&x, offset)?;
    let last = d.ndim() - 1;
    guard(|| PyArray::new(d.sum_axes(&[last], false)))
}

/// A norm order: None, a number (`inf` included), `"fro"` or `"nuc"`.
enum Order {
    Default,
    P(f64),
    Fro,
    Nuc,
}

fn order(ord: Option<&Bound<'_, PyAny>>) -> PyResult<Order> {
    let Some(o) = ord.filter(|o| !o.is_none()) else {
        return Ok(Order::Default);
    };
    if let Ok(s) = o.extract::<String>() {
        return match s.as_str() {
            "fro" => Ok(Order::Fro),
            "nuc" => Ok(Order::Nuc),
            _ => Err(PyValueError::new_err(format!("norm: invalid ord {s:?}"))),
        };
    }
    o.extract::<f64>().map(Order::P).map_err(|_| {
        PyTypeError::new_err("norm: ord must be None, a number, inf, -inf, 'fro' or 'nuc'")
    })
}

/// The vector or matrix norm of `x` (`numpy.linalg.norm`): over `axis`
/// (one axis: a vector norm of order `ord`, default 2; two axes: a matrix
/// norm, `'fro'` by default, also `1`, `-1`, `inf`, `-inf`); with `axis`
/// None, the 2-norm of the flattened `x` when `ord` is None, else the
/// vector (1-D) or matrix (2-D) norm. Spectral and nuclear norms (`2`,
/// `-2`, `'nuc'` over two axes) and `ord=0` are not supported.
#[pyfunction]
#[pyo3(signature = (x, ord = None, axis = None, keepdims = false))]
fn norm(
    x: &Bound<'_, PyAny>,
    ord: Option<&Bound<'_, PyAny>>,
    axis: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
) -> PyResult<PyArray> {
    let x = arg(x)?;
    let ord = order(ord)?;
    let nd = x.ndim();
    let axes: Vec<usize> = match axis.filter(|a| !a.is_none()) {
        None => match (&ord, nd) {
            (Order::Default, _) => (0..nd).collect(),
            (_, 1) => vec![0],
            (_, 2) => vec![0, 1],
            _ => {
                return Err(PyValueError::new_err(format!(
                    "norm: ord given without axis needs a 1-D or 2-D array, found {nd} axes"
                )));
            }
        },
        Some(a) => {
            // Kept in the given order: a matrix norm's (row, column) axes.
            let raw: Vec<isize> = match a.extract::<isize>() {
                Ok(i) => vec![i],
                Err(_) => a.extract().map_err(|_| {
                    PyTypeError::new_err("norm: axis must be None, an int or a tuple of ints")
                })?,
            };
            let out: Vec<usize> = raw
                .iter()
                .map(|&i| axis_index("norm", i, nd))
                .collect::<PyResult<_>>()?;
            if out.len() == 2 && out[0] == out[1] || out.is_empty() || out.len() > 2 {
                return Err(PyValueError::new_err(
                    "norm: axis must name one axis (vector norm) or two different axes (matrix norm)",
                ));
            }
            out
        }
    };
    let vector_over_all = matches!(ord, Order::Default) && axis.is_none_or(|a| a.is_none());
    let signed: Vec<isize> = axes.iter().map(|&a| a as isize).collect();
    if axes.len() == 1 || vector_over_all {
        let p = match ord {
            Order::Default => 2.0,
            Order::P(p) if p != 0.0 => p,
            Order::P(_) => {
                return Err(PyValueError::new_err(
                    "norm: ord=0 (the count of non-zeros) is not supported",
                ));
            }
            Order::Fro | Order::Nuc => {
                return Err(PyValueError::new_err(
                    "norm: 'fro' and 'nuc' are matrix norms; give two axes",
                ));
            }
        };
        return guard(|| PyArray::new(nabla::norm::forward::<Dyn>(&x, p, &signed, keepdims)));
    }
    let (r, c) = (axes[0], axes[1]);
    let inf = f64::INFINITY;
    // Matrix norms 1 / inf: the extreme column / row sum of |x|.
    let (sum_axis, pick_axis, largest) = match ord {
        Order::Default | Order::Fro => {
            return guard(|| PyArray::new(nabla::norm::forward::<Dyn>(&x, 2.0, &signed, keepdims)));
        }
        Order::P(1.0) => (r, c, true),
        Order::P(-1.0) => (r, c, false),
        Order::P(p) if p == inf => (c, r, true),
        Order::P(p) if p == -inf => (c, r, false),
        _ => {
            return Err(PyValueError::new_err(
                "norm: the matrix norms 2, -2 and 'nuc' need singular values, which nabla does not compute; \
                 use 'fro', 1, -1, inf or -inf",
            ));
        }
    };
    guard(|| {
        let sums = x.abs().sum_axes(&[sum_axis], true);
        let y = if largest {
            sums.max_axes(&[pick_axis], true)
        } else {
            sums.min_axes(&[pick_axis], true)
        };
        PyArray::new(if keepdims {
            y
        } else {
            let s = x.shape_vec();
            let out: Vec<usize> = (0..nd)
                .filter(|&i| i != r && i != c)
                .map(|i| s[i])
                .collect();
            y.reshape(&out)
        })
    })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let linalg = PyModule::new(m.py(), "_linalg")?;
    macro_rules! add {
        ($($f:ident),*) => { $(linalg.add_function(wrap_pyfunction!($f, &linalg)?)?;)* };
    }
    add!(
        solve,
        inv,
        det,
        slogdet,
        cholesky,
        solve_triangular,
        eigh,
        eigvalsh,
        qr,
        diagonal,
        trace,
        norm
    );
    m.add_submodule(&linalg)?;
    Ok(())
}
