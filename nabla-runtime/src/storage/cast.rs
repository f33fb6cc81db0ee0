//! Storage converted to another dtype.

use super::data::Data;
use super::dtype::{DType, Element};
use super::host::Host;

/// `data` converted to `dtype` (a copy).
pub(crate) fn data_cast(data: &Data, dtype: DType) -> Data {
    fn conv<S: Element, T: Element>(a: &Host<S>) -> Data {
        T::into_data(a.view().mapv(|v| T::from_f64(v.to_f64())))
    }
    fn go<S: Element>(a: &Host<S>, dtype: DType) -> Data {
        match dtype {
            DType::F32 => conv::<S, f32>(a),
            DType::F64 => conv::<S, f64>(a),
            DType::I64 => conv::<S, i64>(a),
            DType::Bool => conv::<S, bool>(a),
        }
    }
    if data.dtype() == dtype {
        // A copy (`cast::forward` shares the storage before it gets here).
        return data.clone();
    }
    match data {
        Data::F32(a) => go(a, dtype),
        Data::F64(a) => go(a, dtype),
        Data::I64(a) => go(a, dtype),
        Data::Bool(a) => go(a, dtype),
        #[cfg(feature = "cuda")]
        Data::Cuda(g) => Data::Cuda(nabla_kernels::cuda::cast(g, dtype)),
    }
}
