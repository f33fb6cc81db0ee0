//! CUDA kernels (feature `cuda`): CUDA C source compiled at run time with
//! NVRTC (once per device, to a CUBIN for the device's architecture) and
//! cuBLAS for matrix products.
//!
//! Nothing here touches the GPU until asked: [`is_available`] probes for the
//! driver library and a device without panicking, and [`Gpu::get`] returns an
//! error value when there is none. Arrays on a device are [`GpuArray`]s:
//! shared, immutable buffers with a shape, strides and offset, like the CPU
//! arrays, so views (slices, transposes, broadcasts) cost no copy. Every
//! kernel writes a contiguous output and reads its inputs through strides.
//!
//! ```
//! // On a machine without a GPU this prints `false` and touches nothing.
//! println!("CUDA available: {}", nabla_kernels::cuda::is_available());
//! ```

mod array;
mod device;
mod fused;
mod gemm;
mod kernel_cache;
mod launch;
mod layout;
mod nccl;
mod profile;
mod reduce;
mod rows;

pub use array::{GpuArray, HostElem};
pub use device::{
    Gpu, GpuError, KERNEL_SOURCE, compile_kernels, compile_source, device_count, is_available,
    release_freed_memory, set_pool_cap,
};
pub use fused::{FusedBody, fused_map, fused_source, fused_sum};
pub use gemm::matmul;
pub use launch::{
    UserLaunch, add_into_region, arange, binary, cast, compare, concat, contiguous, fill,
    index_add, index_select, launch_user, slice_place, unary, where_select,
};
pub use layout::MAX_DIMS;
pub use nccl::{Nccl, NcclReduce, nccl_available};
pub use profile::profiling;
pub use reduce::{arg_reduce, cumsum, reduce};
pub use rows::{normalize_backward_rows, normalize_rows, softmax_backward_rows, softmax_rows};

#[cfg(test)]
mod tests {
    /// Compiles every kernel with NVRTC for the H200's architecture (sm_90)
    /// and a consumer one (sm_86). Needs libnvrtc only, not a GPU; skips with
    /// a printed reason when NVRTC is not installed.
    #[test]
    fn kernels_compile_with_nvrtc() {
        for arch in [90, 86] {
            match super::compile_kernels(arch) {
                Ok(image) => {
                    for name in launched_kernel_names() {
                        let found = image
                            .windows(name.len() + 1)
                            .any(|w| w[..name.len()] == *name.as_bytes() && w[name.len()] == 0);
                        assert!(
                            found,
                            "sm_{arch}: kernel {name} (requested by launch.rs) is not in the CUBIN"
                        );
                    }
                }
                Err(e) if e.0.starts_with("NVRTC (libnvrtc.so) not found") => {
                    eprintln!("skipped: {e}");
                    return;
                }
                Err(e) => panic!("sm_{arch}: {e}"),
            }
        }
    }

    /// Every kernel name the launchers in launch.rs ask for.
    fn launched_kernel_names() -> Vec<String> {
        let (floats, all) = (["f32", "f64"], ["f32", "f64", "i64", "u8"]);
        let mut names = Vec::new();
        for t in floats {
            for fam in [
                "unary",
                "binary",
                "reduce",
                "reduce_rows",
                "reduce_rows_chunked",
                "reduce_warp_rows",
                "argreduce",
                "cumsum",
                "index_add",
                "softmax_rows",
                "softmax_backward_rows",
                "normalize_rows",
                "normalize_backward_rows",
                "add_into",
            ] {
                names.push(format!("{fam}_{t}"));
            }
        }
        for t in ["f32", "f64", "i64"] {
            names.push(format!("compare_{t}"));
        }
        for t in all {
            for fam in ["where", "fill", "arange", "index_select"] {
                names.push(format!("{fam}_{t}"));
            }
            for u in all {
                names.push(format!("copy_{t}_{u}"));
            }
        }
        names
    }

    #[test]
    fn probing_without_a_gpu_is_an_error_value() {
        if super::is_available() {
            eprintln!("skipped: a GPU is present");
            return;
        }
        let e = super::Gpu::get(0).unwrap_err();
        assert!(e.0.contains("no CUDA device"), "{e}");
    }
}
