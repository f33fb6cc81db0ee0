//! The CUDA backend's integration tests, in a binary of their own so that
//! the `--features cuda` pass of CI and `scripts/gpu-check.sh` build only
//! these (not the whole `tests/it` binary a second time).
//!
//! - [`fused`]: fused regions as generated CUDA kernels, against the CPU;
//! - [`gpu`]: every fixture case on the device, the imperative seed
//!   example, CPU/GPU agreement of generated programs and composed
//!   transforms; without a GPU, the probing and error paths;
//! - [`process_settings`]: deterministic scatter-adds, and the memory
//!   pool's cap and release;
//! - [`products`]: matrix products of views (two batch axes, broadcasts,
//!   a batch against a shared weight) against the CPU;
//! - [`registry_nn`]: the op registry's newer ops (`jax_reference_more`)
//!   and PyTorch's tiny GPT on the device;
//! - [`rows`]: the row kernels (softmax, layer normalisation) against the
//!   CPU's;
//! - `custom_kernel` (feature `cuda`): a user's CUDA kernel compiled with
//!   NVRTC (and run, with a GPU).
//!
//! Every GPU test prints why it skipped when there is no usable GPU.

#[allow(unused_imports)]
#[path = "../it/common.rs"]
mod common;
#[cfg(feature = "cuda")]
mod custom_kernel;
mod fused;
mod gpu;
mod process_settings;
mod products;
mod registry_nn;
mod rows;

/// The device to test on, or `None` (with the reason printed) when there
/// is no usable GPU.
fn gpu_or_skip() -> Option<nabla::Device> {
    match nabla::cuda::unavailable_reason() {
        None => Some(nabla::Device::Cuda(0)),
        Some(why) => {
            eprintln!("skipped: no GPU ({why})");
            None
        }
    }
}
