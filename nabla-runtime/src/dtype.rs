//! Element types and devices.

use crate::array::Host;
use ndarray::ArrayD;
use std::fmt;

/// The element type of an [`Array`](crate::Array).
///
/// `F32` and `F64` are differentiable; `I64` (indices) and `Bool` (masks)
/// are not.
///
/// ```
/// use nabla::{Array, DType};
/// assert_eq!(Array::zeros(&[2], DType::F64).dtype(), DType::F64);
/// assert!(DType::F32.is_float() && !DType::Bool.is_float());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    /// 32-bit float.
    F32,
    /// 64-bit float.
    F64,
    /// 64-bit signed integer (indices).
    I64,
    /// Boolean (masks).
    Bool,
}

impl DType {
    /// True for `F32` and `F64`.
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F64)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::I64 => "i64",
            DType::Bool => "bool",
        };
        f.write_str(s)
    }
}

/// Where an array's storage lives.
///
/// ```
/// use nabla::{Array, Device};
/// assert_eq!(Array::scalar(1.0f32).device(), Device::Cpu);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Device {
    /// Host memory.
    Cpu,
    /// CUDA device `n` (needs the `cuda` feature).
    Cuda(usize),
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Device::Cpu => f.write_str("cpu"),
            Device::Cuda(n) => write!(f, "cuda:{n}"),
        }
    }
}

/// Storage of an array: host elements of one dtype ([`Host`]), or a GPU
/// buffer.
#[derive(Clone, Debug)]
pub(crate) enum Data {
    F32(Host<f32>),
    F64(Host<f64>),
    I64(Host<i64>),
    Bool(Host<bool>),
    /// Any dtype, on a CUDA device.
    #[cfg(feature = "cuda")]
    Cuda(nabla_kernels::cuda::GpuArray),
}

impl Data {
    pub(crate) fn dtype(&self) -> DType {
        match self {
            Data::F32(_) => DType::F32,
            Data::F64(_) => DType::F64,
            Data::I64(_) => DType::I64,
            Data::Bool(_) => DType::Bool,
            #[cfg(feature = "cuda")]
            Data::Cuda(g) => crate::device::dtype_of(g.elem()),
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

/// A Rust element type that can fill an [`Array`](crate::Array):
/// `f32`, `f64`, `i64` or `bool`.
///
/// ```
/// use nabla::{Array, DType};
/// let x = Array::from_vec(vec![1i64, 2, 3], &[3]);
/// assert_eq!(x.dtype(), DType::I64);
/// assert_eq!(x.to_vec::<i64>(), vec![1, 2, 3]);
/// ```
pub trait Element: Copy + Send + Sync + fmt::Debug + 'static {
    /// The matching dtype.
    const DTYPE: DType;
    /// Wraps an owned ndarray of this element type as an array (no copy).
    #[doc(hidden)]
    fn into_array(a: ArrayD<Self>) -> crate::Array;
    #[doc(hidden)]
    fn from_f64(v: f64) -> Self;
    #[doc(hidden)]
    fn to_f64(self) -> f64;
    /// From an `i64` element: exact for `i64` itself (through `f64`
    /// otherwise, which is exact up to 2^53).
    #[doc(hidden)]
    fn from_i64(v: i64) -> Self {
        Self::from_f64(v as f64)
    }
}

macro_rules! element {
    ($t:ty, $d:ident, |$v:ident| $from:expr, |$w:ident| $to:expr $(, exact_i64: $ex:ident)?) => {
        impl Element for $t {
            $(
                fn from_i64(v: i64) -> Self {
                    let $ex = v;
                    $ex as $t
                }
            )?
            const DTYPE: DType = DType::$d;
            fn into_array(a: ArrayD<Self>) -> crate::Array {
                crate::Array::from_data(Data::$d(Host::from_nd(a)))
            }
            fn from_f64($v: f64) -> Self {
                $from
            }
            fn to_f64(self) -> f64 {
                let $w = self;
                $to
            }
        }
    };
}

element!(f32, F32, |v| v as f32, |w| w as f64);
element!(f64, F64, |v| v, |w| w);
element!(i64, I64, |v| v as i64, |w| w as f64, exact_i64: v);
element!(bool, Bool, |v| v != 0.0, |w| if w { 1.0 } else { 0.0 });

/// Runs `$body` with `$v` bound to the typed ndarray of a float `Data`,
/// rewrapping the (owned) result; other dtypes go to `$err`.
macro_rules! float_map {
    ($data:expr, |$v:ident| $body:expr, $err:expr) => {
        match $data {
            $crate::dtype::Data::F32($v) => {
                $crate::dtype::Data::F32($crate::array::Host::from($body))
            }
            $crate::dtype::Data::F64($v) => {
                $crate::dtype::Data::F64($crate::array::Host::from($body))
            }
            #[cfg(feature = "cuda")]
            $crate::dtype::Data::Cuda(_) => $crate::device::no_gpu_path(),
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
            $crate::dtype::Data::F32(h) => h.as_slice().map(|$s| {
                $crate::dtype::Data::F32($crate::array::Host::from_vec(h.shape(), $body))
            }),
            $crate::dtype::Data::F64(h) => h.as_slice().map(|$s| {
                $crate::dtype::Data::F64($crate::array::Host::from_vec(h.shape(), $body))
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
            ($crate::dtype::Data::F32(ha), $crate::dtype::Data::F32(hb)) => {
                match (ha.as_slice(), hb.as_slice()) {
                    (Some($x), Some($y)) => Some($crate::dtype::Data::F32(
                        $crate::array::Host::from_vec(ha.shape(), $body),
                    )),
                    _ => None,
                }
            }
            ($crate::dtype::Data::F64(ha), $crate::dtype::Data::F64(hb)) => {
                match (ha.as_slice(), hb.as_slice()) {
                    (Some($x), Some($y)) => Some($crate::dtype::Data::F64(
                        $crate::array::Host::from_vec(ha.shape(), $body),
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
            ($crate::dtype::Data::F32($x), $crate::dtype::Data::F32($y)) => {
                $crate::dtype::Data::F32($crate::array::Host::from($body))
            }
            ($crate::dtype::Data::F64($x), $crate::dtype::Data::F64($y)) => {
                $crate::dtype::Data::F64($crate::array::Host::from($body))
            }
            #[cfg(feature = "cuda")]
            ($crate::dtype::Data::Cuda(_), _) | (_, $crate::dtype::Data::Cuda(_)) => {
                $crate::device::no_gpu_path()
            }
            _ => $err,
        }
    };
}

/// Runs `$body` on the typed ndarray of any dtype, rewrapping the result.
macro_rules! any_map {
    ($data:expr, |$v:ident| $body:expr) => {
        match $data {
            $crate::dtype::Data::F32($v) => {
                $crate::dtype::Data::F32($crate::array::Host::from($body))
            }
            $crate::dtype::Data::F64($v) => {
                $crate::dtype::Data::F64($crate::array::Host::from($body))
            }
            $crate::dtype::Data::I64($v) => {
                $crate::dtype::Data::I64($crate::array::Host::from($body))
            }
            $crate::dtype::Data::Bool($v) => {
                $crate::dtype::Data::Bool($crate::array::Host::from($body))
            }
            #[cfg(feature = "cuda")]
            $crate::dtype::Data::Cuda(_) => $crate::device::no_gpu_path(),
        }
    };
}

/// Runs a device op and returns its array from the enclosing function when
/// `$data` lives on a GPU: `on_gpu!(&*x.data, |g| cuda::unary(g, op));`.
/// Expands to nothing without the `cuda` feature.
macro_rules! on_gpu {
    ($data:expr, |$g:ident| $body:expr) => {
        #[cfg(feature = "cuda")]
        if let $crate::dtype::Data::Cuda($g) = $data {
            return $crate::Array::from_data($crate::dtype::Data::Cuda($body));
        }
    };
}

/// Like [`on_gpu`] for ops with several array operands: when any operand is
/// on a GPU, `$g` is the vector of all operands on that device (0-d host
/// constants moved there; other mixes panic naming the devices).
macro_rules! on_gpus {
    ($op:expr, [$($x:expr),+], |$g:ident| $body:expr) => {
        #[cfg(feature = "cuda")]
        if let Some($g) = $crate::device::gpu_operands($op, &[$($x),+]) {
            return $crate::Array::from_data($crate::dtype::Data::Cuda($body));
        }
    };
}

pub(crate) use {
    any_map, float_map, float_map2, float_slice_map, float_slice_map2, on_gpu, on_gpus,
};
