//! Element types ([`DType`], defined once in `nabla-kernels`, and
//! [`Element`]) and devices ([`Device`]).

use super::data::Data;
use super::host::Host;
use ndarray::ArrayD;
use std::fmt;

/// The element type of an [`Array`](crate::Array): `F32` and `F64` are
/// differentiable, `I64` (indices) and `Bool` (masks) are not.
///
/// ```
/// use nabla::{Array, DType};
/// assert_eq!(Array::zeros(&[2], DType::F64).dtype(), DType::F64);
/// ```
pub use nabla_kernels::DType;

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
    /// Wraps an owned ndarray of this element type as storage (no copy).
    #[doc(hidden)]
    fn into_data(a: ArrayD<Self>) -> Data;
    /// Wraps host elements of this element type as storage.
    #[doc(hidden)]
    fn host_data(h: Host<Self>) -> Data;
    /// The host elements of `d` when they are of this element type.
    #[doc(hidden)]
    fn host_of(d: &Data) -> Option<&Host<Self>>;
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
            fn into_data(a: ArrayD<Self>) -> Data {
                Data::$d(Host::from_nd(a))
            }
            fn host_data(h: Host<Self>) -> Data {
                Data::$d(h)
            }
            fn host_of(d: &Data) -> Option<&Host<Self>> {
                match d {
                    Data::$d(h) => Some(h),
                    _ => None,
                }
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
