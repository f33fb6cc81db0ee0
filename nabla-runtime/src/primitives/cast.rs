//! Dtype conversion. Differentiable between `F32` and `F64` (the VJP casts
//! the cotangent back); conversions to or from integers and bools carry no
//! derivative.

use crate::autograd::unary_node;
use crate::storage::data_cast;
use crate::{Array, DType};

/// Forward: converts the storage.
///
/// ```
/// use nabla::{primitives::cast, Array, DType};
/// let y = cast::forward(&Array::from_vec(vec![1.5f64, -2.0], &[2]), DType::F32);
/// assert_eq!(y.dtype(), DType::F32);
/// assert_eq!(y.to_vec::<f32>(), vec![1.5, -2.0]);
/// ```
#[track_caller]
pub fn forward(x: &Array, dtype: DType) -> Array {
    if x.dtype() == dtype {
        // The same storage (values never change under another holder).
        return Array {
            data: x.data.clone(),
            grad: None,
        };
    }
    let y = Array::from_data(data_cast(&x.data, dtype));
    crate::array::nans::check("cast", &[x], &y);
    y
}

/// VJP rule: cast the cotangent back to the input dtype.
///
/// ```
/// use nabla::{primitives::cast, Array, DType};
/// let g = cast::vjp(DType::F64, &Array::ones(&[2], DType::F32));
/// assert_eq!((g.dtype(), g.to_vec::<f64>()), (DType::F64, vec![1.0, 1.0]));
/// ```
pub fn vjp(x_dtype: DType, ct: &Array) -> Array {
    ct.cast(x_dtype)
}

pub(crate) fn cast(x: &Array, dtype: DType) -> Array {
    if x.dtype() == dtype {
        return x.clone();
    }
    let y = forward(x, dtype);
    if !(x.dtype().is_float() && dtype.is_float()) {
        return y;
    }
    unary_node(y, "cast", x, |_| {
        let from = x.dtype();
        move |ct| vjp(from, ct)
    })
}

impl Array {
    /// Converts to another dtype (rounding towards zero for integers,
    /// nonzero → `true` for bool). Differentiable between `F32` and `F64`.
    ///
    /// ```
    /// use nabla::{Array, DType};
    /// let x = Array::from_vec(vec![1.7f64, -0.2], &[2]);
    /// assert_eq!(x.cast(DType::I64).to_vec::<i64>(), vec![1, 0]);
    /// assert_eq!(x.cast(DType::F32).dtype(), DType::F32);
    /// ```
    pub fn cast(&self, dtype: DType) -> Array {
        cast(self, dtype)
    }
}
