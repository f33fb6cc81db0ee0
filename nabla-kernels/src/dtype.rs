//! [`DType`]: the element types of arrays.

use std::fmt;

/// The element type of an array: the one list of dtypes, shared by the
/// kernels (CPU and CUDA) and the runtime.
///
/// `F32` and `F64` are differentiable; `I64` (indices) and `Bool` (masks)
/// are not.
///
/// ```
/// use nabla_kernels::DType;
/// assert!(DType::F32.is_float() && !DType::Bool.is_float());
/// assert_eq!(DType::I64.to_string(), "i64");
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
    /// The suffix of this type's CUDA kernels (`u8` for bool, one byte per
    /// element).
    ///
    /// ```
    /// assert_eq!(nabla_kernels::DType::Bool.cuda_name(), "u8");
    /// ```
    pub fn cuda_name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::I64 => "i64",
            DType::Bool => "u8",
        }
    }

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
