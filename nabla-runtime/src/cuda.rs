//! GPU availability, usable with or without the `cuda` feature.
//!
//! ```
//! use nabla::{Array, DType, Device};
//! let device = if nabla::cuda::is_available() { Device::Cuda(0) } else { Device::Cpu };
//! let x = Array::ones(&[2, 2], DType::F32).to_device(device);
//! assert_eq!(x.sum().item(), 4.0);
//! ```

/// True when this build has the `cuda` feature, the CUDA driver loads and
/// at least one GPU is present. Never panics, never aborts.
///
/// ```
/// assert_eq!(nabla::cuda::is_available(), nabla::cuda::device_count() > 0);
/// ```
pub fn is_available() -> bool {
    device_count() > 0
}

/// Number of usable CUDA devices (0 without the `cuda` feature).
///
/// ```
/// use nabla::{Array, DType, Device};
/// for n in 0..nabla::cuda::device_count() {
///     let x = Array::ones(&[2], DType::F32).to_device(Device::Cuda(n));
///     assert_eq!(x.device(), Device::Cuda(n));
/// }
/// ```
pub fn device_count() -> usize {
    #[cfg(feature = "cuda")]
    {
        nabla_kernels::cuda::device_count()
    }
    #[cfg(not(feature = "cuda"))]
    {
        0
    }
}

/// Why no GPU can be used, for a skip message (`None` when one can).
///
/// ```
/// if let Some(why) = nabla::cuda::unavailable_reason() {
///     println!("running on the CPU: {why}");
/// }
/// ```
pub fn unavailable_reason() -> Option<String> {
    #[cfg(feature = "cuda")]
    {
        nabla_kernels::cuda::Gpu::get(0)
            .err()
            .map(|e| e.to_string())
    }
    #[cfg(not(feature = "cuda"))]
    {
        Some("this build of nabla has no GPU support (enable the `cuda` feature)".into())
    }
}

/// Waits for all queued GPU work on device `n` (for timing; results never
/// need it, host reads synchronise). A no-op without a GPU.
///
/// ```
/// use nabla::{Array, DType, Device};
/// let device = if nabla::cuda::is_available() { Device::Cuda(0) } else { Device::Cpu };
/// let y = Array::ones(&[3], DType::F32).to_device(device).exp();
/// nabla::cuda::synchronize(0);
/// assert_eq!(y.to_vec::<f32>(), vec![1f32.exp(); 3]);
/// ```
pub fn synchronize(n: usize) {
    #[cfg(feature = "cuda")]
    if let Ok(g) = nabla_kernels::cuda::Gpu::get(n) {
        let _ = g.synchronize();
    }
    #[cfg(not(feature = "cuda"))]
    let _ = n;
}

/// GPU time by kernel on device `n` since the last report, most first,
/// when the program runs with `NABLA_GPU_PROFILE=1` (each launch is then
/// bracketed by timing events); `None` without a GPU or with profiling
/// off.
///
/// ```
/// if let Some(table) = nabla::cuda::profile_report(0) {
///     println!("{table}");
/// }
/// ```
pub fn profile_report(n: usize) -> Option<String> {
    #[cfg(feature = "cuda")]
    if nabla_kernels::cuda::profiling()
        && let Ok(g) = nabla_kernels::cuda::Gpu::get(n)
    {
        return Some(g.profile_report());
    }
    let _ = n;
    None
}

/// Device buffers and NCCL for `nabla::dist`'s GPU collectives (features
/// `mpi` and `cuda`); not part of the user-facing API.
#[cfg(feature = "cuda")]
#[doc(hidden)]
pub mod raw {
    use crate::Array;
    use crate::storage::Data;
    pub use nabla_kernels::cuda::{Gpu, GpuArray, Nccl, NcclReduce, nccl_available};

    /// The device array under `x`, when `x` lives on a GPU.
    pub fn gpu_array(x: &Array) -> Option<&GpuArray> {
        match &*x.data {
            Data::Cuda(g) => Some(g),
            _ => None,
        }
    }

    /// An array (not tracked) over a device array.
    pub fn from_gpu_array(g: GpuArray) -> Array {
        Array::from_data(Data::Cuda(g))
    }
}
