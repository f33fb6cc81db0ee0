//! A custom op's CUDA kernel (`nabla::custom::CudaKernel`).

use crate::common::*;
use nabla::prelude::*;

/// The CUDA kernel of the custom-op example compiles with NVRTC (skips
/// without libnvrtc); with a GPU it matches the CPU kernel.
#[test]
fn custom_cuda_kernel_compiles_and_matches_the_cpu() {
    const K: nabla::custom::CudaKernel = nabla::custom::CudaKernel {
        name: "axpy2",
        source: r#"extern "C" __global__ void axpy2(const double* x, const double* y, double* out, long long n) {
            long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
            if (i < n) out[i] = 2.0 * x[i] + y[i];
        }"#,
    };
    match K.compile_for(90) {
        Ok(()) => {}
        Err(e) if e.contains("not found") => {
            eprintln!("skipped NVRTC compile: {e}");
        }
        Err(e) => panic!("{e}"),
    }
    if !nabla::cuda::is_available() {
        eprintln!("skipped launch: no GPU");
        return;
    }
    let d = Device::Cuda(0);
    let _rng = rng_lock();
    let x = nabla::randn(&[1000], DType::F64);
    let y = nabla::randn(&[1000], DType::F64);
    let got = K.launch(
        &[&x.to_device(d), &y.to_device(d)],
        &[1000],
        DType::F64,
        nabla::custom::CudaLaunch::PerElement { block: 128 },
    );
    assert_close(&got, &(&x * 2.0 + &y), 1e-12, "custom CUDA kernel");
}
