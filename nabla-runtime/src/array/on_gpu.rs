//! The device dispatch of array ops: `on_gpu!` and `on_gpus!` return the
//! op's GPU result from the enclosing function when its operands live on
//! a CUDA device (feature `cuda`; without it they expand to nothing).

/// Runs a device op and returns its array from the enclosing function when
/// `$data` lives on a GPU: `on_gpu!(&*x.data, |g| cuda::unary(g, op));`.
/// Expands to nothing without the `cuda` feature.
macro_rules! on_gpu {
    ($data:expr, |$g:ident| $body:expr) => {
        #[cfg(feature = "cuda")]
        if let $crate::storage::Data::Cuda($g) = $data {
            return $crate::Array::from_data($crate::storage::Data::Cuda($body));
        }
    };
}

/// Like [`on_gpu`] for ops with several array operands: when any operand is
/// on a GPU, `$g` is the vector of all operands on that device (0-d host
/// constants moved there; other mixes panic naming the devices).
macro_rules! on_gpus {
    ($op:expr, [$($x:expr),+], |$g:ident| $body:expr) => {
        #[cfg(feature = "cuda")]
        if let Some($g) = $crate::storage::gpu::gpu_operands($op, &[$(&*($x).data),+]) {
            return $crate::Array::from_data($crate::storage::Data::Cuda($body));
        }
    };
}

pub(crate) use {on_gpu, on_gpus};
