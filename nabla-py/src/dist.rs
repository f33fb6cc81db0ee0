//! The submodule `nabla._nabla._dist` (re-exported as `nabla.dist`), built
//! with the crate feature `mpi`: MPI over `nabla::dist`. The collectives
//! are run-time custom ops ([`DynOp`]) whose rules are collectives again
//! (an all-reduce's transpose is an all-reduce, an all-gather's a
//! reduce-scatter), so `grad`, `jvp` and `jit` go through them; the
//! forward runs on concrete arrays.

use crate::array::PyArray;
use crate::errors::guard;
use crate::ops_more::arg;
use nabla::dist::{self, Comm, Reduce};
use nabla::dynamic::{Dyn, DynOp};
use nabla::{Array, Value};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::sync::{Arc, Mutex};

/// MPI for this process, between `init` and `finalize` (held for its
/// `Drop`, which calls `MPI_Finalize`).
struct Running(#[allow(dead_code)] dist::Mpi);
// SAFETY: `nabla::dist` calls MPI from one thread at a time (it asks for
// `MPI_THREAD_SERIALIZED` and locks every call); the guard itself is only
// dropped under the mutex below.
unsafe impl Send for Running {}

static MPI: Mutex<Option<Running>> = Mutex::new(None);

/// Starts MPI (once per process; later calls do nothing). Run plainly the
/// world is one rank; under `mpirun -n N`, `N`.
#[pyfunction]
fn init() -> PyResult<()> {
    let mut mpi = MPI.lock().unwrap_or_else(|e| e.into_inner());
    if mpi.is_none() {
        *mpi = Some(Running(guard(dist::init)?));
        crate::errors::guard_before_current_hook();
    }
    Ok(())
}

/// Ends every rank of the job (`MPI_Abort`): `nabla.dist` calls it when an
/// exception reaches the top of a rank, so the others do not wait for it.
#[pyfunction]
fn abort(code: i32) {
    dist::abort(code)
}

/// Ends MPI (`MPI_Finalize`); `nabla.dist` registers it to run at exit.
#[pyfunction]
fn finalize() {
    MPI.lock().unwrap_or_else(|e| e.into_inner()).take();
}

/// A `RuntimeError` unless `init` ran.
fn running() -> PyResult<()> {
    if MPI.lock().unwrap_or_else(|e| e.into_inner()).is_none() {
        return Err(PyRuntimeError::new_err(
            "nabla.dist: MPI is not started; call nabla.dist.init() first",
        ));
    }
    Ok(())
}

/// This process's rank in the world.
#[pyfunction]
fn rank() -> PyResult<usize> {
    running()?;
    Ok(dist::rank())
}

/// The number of ranks in the world.
#[pyfunction]
fn world_size() -> PyResult<usize> {
    running()?;
    Ok(dist::world_size())
}

/// Waits until every rank reaches it.
#[pyfunction]
fn barrier(py: Python<'_>) -> PyResult<()> {
    running()?;
    py.detach(|| guard(|| Comm::world().barrier()))
}

/// The collective `f` on a concrete array (what every rule reaches: under
/// `vmap` a collective runs once per example).
fn concrete(op: &str, x: &Dyn, f: impl Fn(&Array) -> Array) -> Dyn {
    if !x.is_concrete() {
        panic!(
            "nabla.dist.{op}: this collective has no derivative rule (all_reduce with op=\"max\"); \
             differentiate through \"sum\" or \"mean\", or stop the gradient before it"
        )
    }
    Dyn::from(f(&x.to_array()))
}

type Lin = Arc<dyn Fn(&Array) -> Array + Send + Sync>;

/// A collective as a run-time op with no derivative rules: its forward on
/// concrete arrays.
fn forward_only(name: &'static str, f: Lin) -> DynOp {
    DynOp::new(
        name,
        Arc::new(move |x: &[Dyn]| vec![concrete(name, &x[0], &*f)]),
    )
}

/// A linear collective `f` whose transpose is the collective `t`: its
/// tangent is `f` of the tangent and its cotangent `t` of the cotangent,
/// each again such an op, so derivatives of any order go through.
fn linear(name: &'static str, f: Lin, t: Lin) -> DynOp {
    let (jf, jt) = (f.clone(), t.clone());
    let (vf, vt) = (f.clone(), t);
    forward_only(name, f)
        .with_jvp(Arc::new(
            move |x: &[Dyn], _y: &[Dyn], dx: &[Option<Dyn>]| {
                vec![match &dx[0] {
                    Some(d) => linear(name, jf.clone(), jt.clone())
                        .apply(std::slice::from_ref(d))
                        .remove(0),
                    None => x[0].zeros_like(),
                }]
            },
        ))
        .with_vjp(Arc::new(
            move |_x: &[Dyn], _y: &[Dyn], ct: &[Option<Dyn>]| {
                let back = linear(name, vt.clone(), vf.clone());
                vec![
                    ct[0]
                        .as_ref()
                        .map(|c| back.apply(std::slice::from_ref(c)).remove(0)),
                ]
            },
        ))
}

fn lin(f: impl Fn(&Array) -> Array + Send + Sync + 'static) -> Lin {
    Arc::new(f)
}

/// Runs `op` on `x` with the GIL released (a collective waits for the
/// other ranks).
fn run(py: Python<'_>, op: DynOp, x: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    running()?;
    let x = arg(x)?;
    let y = py.detach(|| guard(move || op.apply(std::slice::from_ref(&x)).remove(0)))?;
    Ok(PyArray::new(y))
}

/// The elementwise reduction of `x` over every rank, on every rank:
/// `op` is "sum", "mean" or "max" ("max" has no derivative rule here).
#[pyfunction]
#[pyo3(signature = (x, op = "sum"))]
fn all_reduce(py: Python<'_>, x: &Bound<'_, PyAny>, op: &str) -> PyResult<PyArray> {
    let w = Comm::world();
    let dop = match op {
        "sum" => {
            let f = move |a: &Array| dist::all_reduce(a, Reduce::Sum, w);
            linear("all_reduce", lin(f), lin(f))
        }
        "mean" => {
            let f = move |a: &Array| dist::all_reduce(a, Reduce::Mean, w);
            linear("all_reduce", lin(f), lin(f))
        }
        "max" => forward_only(
            "all_reduce",
            lin(move |a: &Array| dist::all_reduce(a, Reduce::Max, w)),
        ),
        other => {
            return Err(PyValueError::new_err(format!(
                "nabla.dist.all_reduce: op must be \"sum\", \"mean\" or \"max\", not {other:?}"
            )));
        }
    };
    run(py, dop, x)
}

/// Every rank's `x` concatenated along axis 0, rank by rank, on every
/// rank (the transpose of `reduce_scatter`).
#[pyfunction]
fn all_gather(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    let w = Comm::world();
    let f = move |a: &Array| dist::all_gather(a, w);
    let t = move |a: &Array| dist::reduce_scatter(a, w);
    run(py, linear("all_gather", lin(f), lin(t)), x)
}

/// The sum over ranks of `x`, split along axis 0: rank `r` keeps part `r`
/// (axis 0 must divide by the world size; the transpose of `all_gather`).
#[pyfunction]
fn reduce_scatter(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    let w = Comm::world();
    let f = move |a: &Array| dist::reduce_scatter(a, w);
    let t = move |a: &Array| dist::all_gather(a, w);
    run(py, linear("reduce_scatter", lin(f), lin(t)), x)
}

/// Rank `root`'s `x` on every rank (its cotangents sum at `root`).
#[pyfunction]
#[pyo3(signature = (x, root = 0))]
fn broadcast(py: Python<'_>, x: &Bound<'_, PyAny>, root: usize) -> PyResult<PyArray> {
    running()?;
    if root >= dist::world_size() {
        return Err(PyValueError::new_err(format!(
            "nabla.dist.broadcast: root {root} is not a rank of a world of {}",
            dist::world_size()
        )));
    }
    let w = Comm::world();
    let f = move |a: &Array| dist::broadcast(a, root, w);
    let t = move |a: &Array| {
        let total = dist::all_reduce(a, Reduce::Sum, w);
        if dist::rank() == root {
            total
        } else {
            total.zeros_like()
        }
    };
    run(py, linear("broadcast", lin(f), lin(t)), x)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let d = PyModule::new(m.py(), "_dist")?;
    d.add_function(wrap_pyfunction!(init, &d)?)?;
    d.add_function(wrap_pyfunction!(finalize, &d)?)?;
    d.add_function(wrap_pyfunction!(abort, &d)?)?;
    d.add_function(wrap_pyfunction!(rank, &d)?)?;
    d.add_function(wrap_pyfunction!(world_size, &d)?)?;
    d.add_function(wrap_pyfunction!(barrier, &d)?)?;
    d.add_function(wrap_pyfunction!(all_reduce, &d)?)?;
    d.add_function(wrap_pyfunction!(all_gather, &d)?)?;
    d.add_function(wrap_pyfunction!(reduce_scatter, &d)?)?;
    d.add_function(wrap_pyfunction!(broadcast, &d)?)?;
    m.add_submodule(&d)?;
    Ok(())
}
