//! [`Data`]: the storage of an array (host elements of one dtype, or a
//! GPU buffer), and the macros that map over its host variants.

use super::dtype::DType;
use super::host::Host;

/// Storage of an array: host elements of one dtype ([`Host`]), or a GPU
/// buffer. Public only so that the hidden [`Element::into_data`] can
/// name it.
///
/// [`Element::into_data`]: super::Element::into_data
#[doc(hidden)]
#[derive(Clone, Debug)]
pub enum Data {
    F32(Host<f32>),
    F64(Host<f64>),
    I64(Host<i64>),
    Bool(Host<bool>),
    /// Any dtype, on a CUDA device.
    #[cfg(feature = "cuda")]
    Cuda(nabla_kernels::cuda::GpuArray),
}

#[cfg(feature = "cuda")]
/// An op reached a CPU-only code path with a device array (a bug: every
/// op dispatches to the GPU before its CPU kernels).
#[track_caller]
pub(crate) fn no_gpu_path() -> ! {
    panic!(
        "internal error: this op has no CUDA path yet; move the array to the CPU with .to_device(Device::Cpu)"
    )
}

impl Data {
    pub(crate) fn dtype(&self) -> DType {
        match self {
            Data::F32(_) => DType::F32,
            Data::F64(_) => DType::F64,
            Data::I64(_) => DType::I64,
            Data::Bool(_) => DType::Bool,
            #[cfg(feature = "cuda")]
            Data::Cuda(g) => g.elem(),
        }
    }

    pub(crate) fn shape(&self) -> &[usize] {
        match self {
            Data::F32(a) => a.shape(),
            Data::F64(a) => a.shape(),
            Data::I64(a) => a.shape(),
            Data::Bool(a) => a.shape(),
            #[cfg(feature = "cuda")]
            Data::Cuda(g) => g.shape(),
        }
    }

    pub(crate) fn strides(&self) -> &[isize] {
        match self {
            Data::F32(a) => a.strides(),
            Data::F64(a) => a.strides(),
            Data::I64(a) => a.strides(),
            Data::Bool(a) => a.strides(),
            #[cfg(feature = "cuda")]
            Data::Cuda(g) => g.strides(),
        }
    }
}

/// Runs `$body` with `$v` bound to the typed ndarray of a float `Data`,
/// rewrapping the (owned) result; other dtypes go to `$err`.
macro_rules! float_map {
    ($data:expr, |$v:ident| $body:expr, $err:expr) => {
        match $data {
            $crate::storage::Data::F32($v) => {
                $crate::storage::Data::F32($crate::storage::Host::from($body))
            }
            $crate::storage::Data::F64($v) => {
                $crate::storage::Data::F64($crate::storage::Host::from($body))
            }
            #[cfg(feature = "cuda")]
            $crate::storage::Data::Cuda(_) => $crate::storage::no_gpu_path(),
            _ => $err,
        }
    };
}

/// Like [`float_map`] on row-major elements: `Some` of `$body` (a `Vec`
/// of the elements in the same order, from the slice `$s`) when the data
/// is a contiguous row-major float array on the host, else `None`. Skips
/// the ndarray views and layout checks of the general path.
macro_rules! float_slice_map {
    ($data:expr, |$s:ident| $body:expr) => {
        match $data {
            $crate::storage::Data::F32(h) => h.as_slice().map(|$s| {
                $crate::storage::Data::F32($crate::storage::Host::from_vec(h.shape(), $body))
            }),
            $crate::storage::Data::F64(h) => h.as_slice().map(|$s| {
                $crate::storage::Data::F64($crate::storage::Host::from_vec(h.shape(), $body))
            }),
            _ => None,
        }
    };
}

/// Like [`float_slice_map`] for two operands of one shape: `Some` when
/// both are contiguous row-major host arrays of the same float dtype.
macro_rules! float_slice_map2 {
    ($a:expr, $b:expr, |$x:ident, $y:ident| $body:expr) => {
        match ($a, $b) {
            ($crate::storage::Data::F32(ha), $crate::storage::Data::F32(hb)) => {
                match (ha.as_slice(), hb.as_slice()) {
                    (Some($x), Some($y)) => Some($crate::storage::Data::F32(
                        $crate::storage::Host::from_vec(ha.shape(), $body),
                    )),
                    _ => None,
                }
            }
            ($crate::storage::Data::F64(ha), $crate::storage::Data::F64(hb)) => {
                match (ha.as_slice(), hb.as_slice()) {
                    (Some($x), Some($y)) => Some($crate::storage::Data::F64(
                        $crate::storage::Host::from_vec(ha.shape(), $body),
                    )),
                    _ => None,
                }
            }
            _ => None,
        }
    };
}

/// Like [`float_map`] for two operands of the same float dtype.
macro_rules! float_map2 {
    ($a:expr, $b:expr, |$x:ident, $y:ident| $body:expr, $err:expr) => {
        match ($a, $b) {
            ($crate::storage::Data::F32($x), $crate::storage::Data::F32($y)) => {
                $crate::storage::Data::F32($crate::storage::Host::from($body))
            }
            ($crate::storage::Data::F64($x), $crate::storage::Data::F64($y)) => {
                $crate::storage::Data::F64($crate::storage::Host::from($body))
            }
            #[cfg(feature = "cuda")]
            ($crate::storage::Data::Cuda(_), _) | (_, $crate::storage::Data::Cuda(_)) => {
                $crate::storage::no_gpu_path()
            }
            _ => $err,
        }
    };
}

/// Runs `$body` on the typed ndarray of any dtype, rewrapping the result.
macro_rules! any_map {
    ($data:expr, |$v:ident| $body:expr) => {
        match $data {
            $crate::storage::Data::F32($v) => {
                $crate::storage::Data::F32($crate::storage::Host::from($body))
            }
            $crate::storage::Data::F64($v) => {
                $crate::storage::Data::F64($crate::storage::Host::from($body))
            }
            $crate::storage::Data::I64($v) => {
                $crate::storage::Data::I64($crate::storage::Host::from($body))
            }
            $crate::storage::Data::Bool($v) => {
                $crate::storage::Data::Bool($crate::storage::Host::from($body))
            }
            #[cfg(feature = "cuda")]
            $crate::storage::Data::Cuda(_) => $crate::storage::no_gpu_path(),
        }
    };
}

pub(crate) use {any_map, float_map, float_map2, float_slice_map, float_slice_map2};
