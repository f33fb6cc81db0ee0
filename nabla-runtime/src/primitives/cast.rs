//! Dtype conversion. Differentiable between `F32` and `F64` (the VJP casts
//! the cotangent back); conversions to or from integers and bools carry no
//! derivative.

use crate::array::data_cast;
use crate::autograd::unary_node;
use crate::{Array, DType};

/// Forward: converts the storage.
pub fn forward(x: &Array, dtype: DType) -> Array {
    Array::from_data(data_cast(&x.data, dtype))
}

/// VJP rule: cast the cotangent back to the input dtype.
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
