//! The second half of `nabla.from_dlpack` (`dlpack.rs` takes the tensor
//! out of its capsule): a DLPack tensor on the CPU as a Nabla array,
//! sharing the producer's memory (`Array::from_external`, which calls the
//! producer's deleter when the last array using it is dropped), or copied.
//!
//! Shared: float32, float64 and int64 elements at an address aligned for
//! their type, any strides. Copied: bool elements (a Rust `bool` must be 0
//! or 1, and the producer could later write other bytes through its own
//! tensor; the copy reads each byte as `!= 0`), misaligned memory, empty
//! tensors, and `copy=True`.

use crate::dlpack::Managed;
use nabla::{Array, DType};
use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::prelude::*;

/// NumPy's name for a DLPack element type.
fn dtype_name(code: u8, bits: u8, lanes: u16) -> String {
    let base = match code {
        0 => format!("int{bits}"),
        1 => format!("uint{bits}"),
        2 => format!("float{bits}"),
        3 => "opaque handle".to_string(),
        4 => format!("bfloat{bits}"),
        5 => format!("complex{bits}"),
        6 => "bool".to_string(),
        _ => format!("DLPack type code {code} of {bits} bits"),
    };
    if lanes == 1 {
        base
    } else {
        format!("{base} x{lanes} (a vector type)")
    }
}

/// Row-major strides (in elements) of `shape`.
fn row_major(shape: &[usize]) -> Vec<isize> {
    let mut s = vec![0isize; shape.len()];
    let mut step = 1isize;
    for k in (0..shape.len()).rev() {
        s[k] = step;
        step *= shape[k] as isize;
    }
    s
}

/// Whether `strides` lay `shape` out contiguously in row-major order
/// (axes of length 1 may have any stride).
fn is_row_major(shape: &[usize], strides: &[isize]) -> bool {
    let want = row_major(shape);
    (0..shape.len()).all(|k| shape[k] == 1 || strides[k] == want[k])
}

/// The elements in row-major order, each read by `read` at its address
/// (`size` bytes per element, `strides` in elements).
fn gather<T>(
    first: *const u8,
    shape: &[usize],
    strides: &[isize],
    size: usize,
    read: impl Fn(*const u8) -> T,
) -> Vec<T> {
    let n: usize = shape.iter().product();
    let mut out = Vec::with_capacity(n);
    let mut idx = vec![0usize; shape.len()];
    let mut off = 0isize;
    for _ in 0..n {
        out.push(read(first.wrapping_offset(off * size as isize)));
        for k in (0..shape.len()).rev() {
            idx[k] += 1;
            off += strides[k];
            if idx[k] < shape[k] {
                break;
            }
            off -= strides[k] * shape[k] as isize;
            idx[k] = 0;
        }
    }
    out
}

/// The Nabla array of the tensor `m` describes (see the module docs);
/// `copy`: `Some(true)` always copies, `Some(false)` never does (a
/// `BufferError` where it must).
pub(crate) fn to_array(m: Managed, copy: Option<bool>) -> PyResult<Array> {
    let t = m.tensor();
    let (kind, id) = t.device();
    if kind != 1 {
        return Err(PyBufferError::new_err(format!(
            "nabla.from_dlpack: the tensor is on DLPack device ({kind}, {id}), not the CPU (1, 0); \
             move it to the CPU first"
        )));
    }
    let (code, bits, lanes) = t.dtype();
    let dtype = match (code, bits, lanes) {
        (2, 32, 1) => DType::F32,
        (2, 64, 1) => DType::F64,
        (0, 64, 1) => DType::I64,
        (6, 8, 1) => DType::Bool,
        _ => {
            return Err(PyTypeError::new_err(format!(
                "nabla.from_dlpack: dtype {} is not one of Nabla's (float32, float64, int64, bool); \
                 convert it first (NumPy: x.astype(np.float32), PyTorch: x.to(torch.float32), \
                 JAX: x.astype(jnp.float32)), or pass a NumPy array to nabla.asarray, which converts",
                dtype_name(code, bits, lanes)
            )));
        }
    };
    // SAFETY: `m` holds the managed tensor, alive until it is dropped.
    let (shape, strides) = unsafe { t.shape_strides() };
    if shape.iter().any(|&n| n < 0) {
        return Err(PyValueError::new_err(format!(
            "nabla.from_dlpack: the tensor has a negative length in its shape {shape:?}"
        )));
    }
    let shape: Vec<usize> = shape.iter().map(|&n| n as usize).collect();
    let strides: Vec<isize> = match strides {
        Some(s) => s.iter().map(|&s| s as isize).collect(),
        None => row_major(&shape),
    };
    if shape.contains(&0) {
        return Ok(Array::zeros(&shape, dtype));
    }
    let first = t.first();
    let size = match dtype {
        DType::F32 => 4,
        DType::F64 | DType::I64 => 8,
        DType::Bool => 1,
    };
    let aligned = (first as usize).is_multiple_of(size);
    let aliases = nabla::Array::external_layout_aliases(&shape, &strides);
    let share = copy != Some(true) && dtype != DType::Bool && aligned && !aliases;
    if !share && copy == Some(false) {
        return Err(PyBufferError::new_err(if dtype == DType::Bool {
            "nabla.from_dlpack: bool tensors are copied (a Rust bool must be 0 or 1, which shared bytes \
             cannot promise); pass copy=None or copy=True"
        } else if aliases {
            "nabla.from_dlpack: the tensor's strides reach some elements from several indices (a broadcast \
             axis of stride 0), which Nabla's arrays cannot share, so it must be copied; pass copy=None or \
             copy=True"
        } else {
            "nabla.from_dlpack: the tensor's memory is not aligned for its dtype, so it must be copied; \
             pass copy=None or copy=True"
        }));
    }
    let contiguous = is_row_major(&shape, &strides);
    let n: usize = shape.iter().product();
    macro_rules! typed {
        ($t:ty) => {{
            let p = first.cast::<$t>();
            if share {
                // SAFETY: the producer's tensor holds valid `$t`s (its
                // dtype) at these strides from the aligned `p`, in one
                // allocation kept until `m`'s deleter runs, which the
                // array calls when its storage is dropped. Nabla never
                // writes them.
                unsafe { Array::from_external(p, &shape, &strides, Box::new(m)) }
            } else if contiguous && aligned {
                // SAFETY: `n` contiguous aligned elements, alive while `m`.
                let v = unsafe { std::slice::from_raw_parts(p, n) }.to_vec();
                Array::from_vec(v, &shape)
            } else {
                // SAFETY: every address `gather` reads is an element of the
                // tensor, alive while `m` (dropped after the copy).
                let v = gather(first, &shape, &strides, size, |q| unsafe {
                    q.cast::<$t>().read_unaligned()
                });
                Array::from_vec(v, &shape)
            }
        }};
    }
    Ok(match dtype {
        DType::F32 => typed!(f32),
        DType::F64 => typed!(f64),
        DType::I64 => typed!(i64),
        // SAFETY: as above; each bool is read as a byte.
        DType::Bool => Array::from_vec(
            gather(first, &shape, &strides, 1, |q| unsafe { q.read() != 0 }),
            &shape,
        ),
    })
}
