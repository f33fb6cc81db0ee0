//! Rust panics as Python exceptions. Every call into the runtime goes
//! through [`guard`]: a panic (a bad shape, a bad dtype, a bad argument)
//! becomes `ValueError` or `TypeError` carrying the runtime's message, which
//! names the op, the shapes and the fix; nothing aborts the interpreter.

use pyo3::PyErr;
use pyo3::exceptions::{PyFloatingPointError, PyTypeError, PyValueError};
use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Once;

thread_local! {
    /// True while a guarded call runs on this thread: its panics are
    /// reported as exceptions, not printed.
    static GUARDED: Cell<u32> = const { Cell::new(0) };
}

static HOOK: Once = Once::new();

/// Keeps the default panic message for panics outside [`guard`] and
/// silences the ones it turns into exceptions.
pub fn install_hook() {
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if GUARDED.with(|g| g.get()) == 0 {
                default(info);
            }
        }));
    });
}

/// Puts the silencing of [`guard`]ed panics in front of the current hook
/// again (after `nabla::dist::init` chained its own, which would end the
/// MPI job on a panic that only becomes an exception).
#[cfg(feature = "mpi")]
pub fn guard_before_current_hook() {
    let inner = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if GUARDED.with(|g| g.get()) == 0 {
            inner(info);
        }
    }));
}

/// Runs `f`, turning a panic into a Python exception.
pub fn guard<T>(f: impl FnOnce() -> T) -> Result<T, PyErr> {
    GUARDED.with(|g| g.set(g.get() + 1));
    let r = catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(g.get() - 1));
    r.map_err(|payload| {
        let msg = if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else if let Some(s) = payload.downcast_ref::<&str>() {
            (*s).to_string()
        } else {
            "nabla: an operation failed".to_string()
        };
        exception(msg)
    })
}

/// The exception class for a runtime message: `FloatingPointError` for
/// `nabla.debug_nans` reports (as JAX's), `TypeError` for dtypes,
/// `ValueError` for everything else (shapes, axes, values).
pub fn exception(msg: String) -> PyErr {
    let lower = msg.to_lowercase();
    if msg.starts_with("debug_nans:") {
        PyFloatingPointError::new_err(msg)
    } else if lower.contains("dtype") && !lower.contains("shape") {
        PyTypeError::new_err(msg)
    } else {
        PyValueError::new_err(msg)
    }
}

/// Arrays with at least this many elements are computed with the GIL
/// released, so other Python threads run meanwhile; below it the release
/// would cost more than it frees.
const HEAVY: usize = 1 << 12;

/// [`guard`], with the GIL released when `work` (an element count) is large.
pub fn guard_heavy<T: Send>(
    py: pyo3::Python<'_>,
    work: usize,
    f: impl FnOnce() -> T + Send,
) -> Result<T, PyErr> {
    if work >= HEAVY {
        py.detach(|| guard(f))
    } else {
        guard(f)
    }
}
