//! The extension module `nabla._nabla`: Nabla's runtime for Python. The
//! package `nabla` (python/nabla/) re-exports it and adds the transforms
//! of Python functions (python/nabla/_transforms.py).
//!
//! | file | what |
//! |---|---|
//! | `array.rs` | `nabla.Array`: attributes, conversion, autograd |
//! | `operators.rs` | Python operators, in-place updates |
//! | `indexing.rs` | `x[...]` |
//! | `ops.rs` | the op functions (`nabla.sin`, `nabla.sum`, ...) |
//! | `functional.rs` | the composites (`softmax`, `gelu`, losses) |
//! | `create.rs` | creation and random draws |
//! | `convert.rs` | Python values to arrays, dtypes, axes |
//! | `numpy_interop.rs` | NumPy arrays in and out |
//! | `dlpack.rs`, `dlpack_import.rs` | DLPack: `__dlpack__`, `nabla.from_dlpack` |
//! | `trace.rs` | levels, tracers and pullbacks for the transforms |
//! | `jit_cache.rs` | `nabla.jit`'s cache: lookup and replay without Python |
//! | `errors.rs` | panics as Python exceptions |
//! | `methods.rs` | `Array` methods (`x.sum()`, `x.reshape(..)`) |
//! | `ops_more.rs` | `pad`, `einsum`, `sort`, `tril`, gathers, ... |
//! | `layers.rs` | `nn.functional`: convolutions, pooling, norms |
//! | `linalg.rs` | `nabla.linalg` |
//! | `nn.rs` | `nabla.nn`'s initial parameters and attention |
//! | `optim.rs` | `nabla.optim` |
//! | `io.rs` | `nabla.io` (safetensors) |
//! | `custom.rs` | `nabla.custom_op`, the op of `nabla.checkpoint` |
//! | `dist.rs` | `nabla.dist` (feature `mpi`): MPI collectives |

use pyo3::prelude::*;

mod array;
mod convert;
mod create;
mod custom;
#[cfg(feature = "mpi")]
mod dist;
mod dlpack;
mod dlpack_import;
mod errors;
mod functional;
mod indexing;
mod io;
mod jit_cache;
mod layers;
mod linalg;
mod methods;
mod nn;
mod numpy_interop;
mod operators;
mod ops;
mod ops_more;
mod optim;
mod trace;

/// Turns recording on the imperative tape on or off for this thread,
/// returning the previous setting (`with nabla.no_grad():` uses it).
#[pyfunction]
fn _set_grad_enabled(enabled: bool) -> bool {
    nabla::autograd::set_grad_enabled(enabled)
}

/// True unless inside `nabla.no_grad()`.
#[pyfunction]
fn is_grad_enabled() -> bool {
    nabla::is_grad_enabled()
}

/// Turns NaN hunting on or off for the process (`NABLA_DEBUG_NANS=1`
/// turns it on at start): the first op that turns finite inputs into NaN
/// or infinity raises, naming the op, the shapes, the dtype and, in a
/// backward pass, the op whose derivative rule produced it
/// (`jax.config.update("jax_debug_nans", True)`).
#[pyfunction]
fn debug_nans(on: bool) {
    nabla::debug_nans(on)
}

/// Whether `nabla.debug_nans` is on.
#[pyfunction]
fn debug_nans_enabled() -> bool {
    nabla::debug_nans_enabled()
}

/// Makes results independent of the number of threads and of GPU
/// scheduling, for the process (`NABLA_DETERMINISTIC=1` turns it on at
/// start; `torch.use_deterministic_algorithms(True)`). Without it, results
/// are already the same run to run for a fixed thread count.
#[pyfunction]
fn set_deterministic(on: bool) {
    nabla::set_deterministic(on)
}

/// Whether `nabla.set_deterministic` is on.
#[pyfunction]
fn deterministic_enabled() -> bool {
    nabla::deterministic_enabled()
}

/// Hands every freed buffer kept for reuse back to the operating system
/// (and GPU pools back to the driver): `torch.cuda.empty_cache()`. Call it
/// after a peak, not in a hot loop.
#[pyfunction]
fn release_buffers() {
    nabla::release_buffers()
}

/// Caps the freed memory kept for reuse, in bytes (2 GiB by default).
#[pyfunction]
fn set_buffer_cap(bytes: usize) {
    nabla::set_buffer_cap(bytes)
}

/// The cap set by `set_buffer_cap`, in bytes.
#[pyfunction]
fn buffer_cap() -> usize {
    nabla::buffer_cap()
}

#[pymodule]
fn _nabla(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::install_hook();
    // nabla.jit's fused runs compile to machine code.
    nabla_jit::install();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<array::PyArray>()?;
    m.add_class::<convert::PyDType>()?;
    m.add("float32", convert::PyDType(nabla::DType::F32))?;
    m.add("float64", convert::PyDType(nabla::DType::F64))?;
    m.add("int64", convert::PyDType(nabla::DType::I64))?;
    m.add("bool_", convert::PyDType(nabla::DType::Bool))?;
    m.add_function(wrap_pyfunction!(_set_grad_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(is_grad_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(debug_nans, m)?)?;
    m.add_function(wrap_pyfunction!(debug_nans_enabled, m)?)?;
    m.add_function(wrap_pyfunction!(set_deterministic, m)?)?;
    m.add_function(wrap_pyfunction!(release_buffers, m)?)?;
    m.add_function(wrap_pyfunction!(set_buffer_cap, m)?)?;
    m.add_function(wrap_pyfunction!(buffer_cap, m)?)?;
    m.add_function(wrap_pyfunction!(deterministic_enabled, m)?)?;
    ops::register(m)?;
    functional::register(m)?;
    create::register(m)?;
    trace::register(m)?;
    custom::register(m)?;
    jit_cache::register(m)?;
    nn::register(m)?;
    optim::register(m)?;
    io::register(m)?;
    ops_more::register(m)?;
    layers::register(m)?;
    linalg::register(m)?;
    dlpack::register(m)?;
    #[cfg(feature = "mpi")]
    dist::register(m)?;
    Ok(())
}
