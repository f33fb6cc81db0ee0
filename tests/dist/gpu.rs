//! GPU arrays in the collectives (features `mpi` and `cuda`): on one rank
//! (NCCL takes one GPU per rank, and the test machines have one), every
//! collective, a gradient through `all_reduce` and `DataParallel::mean`
//! on device arrays against the same on host arrays. Skips with a printed
//! reason where no GPU is present.

use crate::worker::{close, data};
use nabla::dist::{self, Comm, DataParallel, Reduce};
use nabla::prelude::*;

#[differentiable]
fn reduced_square(x: &Array, #[nondiff] comm: Comm) -> Array {
    let y = dist::all_reduce(x, Reduce::Sum, comm);
    nabla::sum(&(&y * &y))
}

#[test]
#[ignore = "run under mpirun by the launcher tests"]
fn gpu_collectives() {
    let _mpi = dist::init();
    if let Some(why) = nabla::cuda::unavailable_reason() {
        println!("gpu_collectives skipped: {why}");
        return;
    }
    println!(
        "gpu_collectives: NCCL {}",
        if nabla::cuda::raw::nccl_available() {
            "loads (GPU arrays go device to device)"
        } else {
            "does not load (GPU arrays go through the host)"
        }
    );
    let (w, gpu) = (Comm::world(), Device::Cuda(0));
    for (dtype, tol) in [(DType::F32, 1e-6), (DType::F64, 1e-12)] {
        for shape in [vec![6, 3], vec![0, 2], vec![5]] {
            let x = data(3, &shape, dtype);
            let g = x.to_device(gpu);
            let pairs = [
                (
                    dist::all_reduce(&x, Reduce::Sum, w),
                    dist::all_reduce(&g, Reduce::Sum, w),
                ),
                (
                    dist::all_reduce(&x, Reduce::Max, w),
                    dist::all_reduce(&g, Reduce::Max, w),
                ),
                (
                    dist::all_reduce(&x, Reduce::Mean, w),
                    dist::all_reduce(&g, Reduce::Mean, w),
                ),
                (dist::all_gather(&x, w), dist::all_gather(&g, w)),
                (dist::reduce_scatter(&x, w), dist::reduce_scatter(&g, w)),
                (dist::all_to_all(&x, w), dist::all_to_all(&g, w)),
                (dist::broadcast(&x, 0, w), dist::broadcast(&g, 0, w)),
            ];
            for (k, (host, device)) in pairs.iter().enumerate() {
                assert_eq!(device.device(), gpu, "collective {k} leaves the GPU");
                close(
                    &device.to_device(Device::Cpu),
                    host,
                    tol,
                    &format!("GPU collective {k}, {dtype:?} {shape:?}"),
                );
            }
        }
        // A strided (transposed) device input.
        let x = data(4, &[3, 4], dtype).transpose();
        close(
            &dist::all_reduce(&x.to_device(gpu), Reduce::Sum, w).to_device(Device::Cpu),
            &dist::all_reduce(&x, Reduce::Sum, w),
            tol,
            "GPU all_reduce of a transposed array",
        );
        // The gradient through all_reduce, on the device and on the host.
        let x = data(5, &[7], dtype);
        let host = grad(reduced_square)(&x, w);
        let device = grad(reduced_square)(&x.to_device(gpu), w);
        close(
            &device.to_device(Device::Cpu),
            &host,
            tol,
            "gradient through a GPU all_reduce",
        );
        // DataParallel's buckets of device leaves.
        let leaves = vec![
            data(6, &[4, 3], dtype).to_device(gpu),
            data(7, &[5], dtype).to_device(gpu),
        ];
        let dp = DataParallel::new(w).bucket_bytes(1 << 20);
        for (got, want) in dp.mean(&leaves).iter().zip(&leaves) {
            assert_eq!(got.device(), gpu);
            close(
                &got.to_device(Device::Cpu),
                &want.to_device(Device::Cpu),
                tol,
                "DataParallel::mean on the GPU",
            );
        }
        for (got, want) in dp.sync(&leaves).iter().zip(&leaves) {
            close(
                &got.to_device(Device::Cpu),
                &want.to_device(Device::Cpu),
                tol,
                "DataParallel::sync on the GPU",
            );
        }
    }
}
