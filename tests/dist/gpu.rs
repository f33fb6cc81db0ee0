//! GPU arrays in the collectives (features `mpi` and `cuda`): on one rank
//! (NCCL takes one GPU per rank, and the test machines have one), every
//! collective, a gradient through `all_reduce` and `DataParallel::mean`
//! on device arrays against the same on host arrays. Skips with a printed
//! reason where no GPU is present.

use crate::worker::{close, data};
use nabla::dist::{self, Comm, DataParallel, Reduce, Spec};
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
        // DArrays of device arrays under spmd and auto: every reshard of
        // a [4, 6] array and an MLP's gradient, against the host.
        let mesh = dist::Mesh::new(&[("x", dist::world_size())]);
        let x = data(8, &[4, 6], dtype);
        for (a, b) in [
            (Spec::new(&[Some("x"), None]), Spec::new(&[None, Some("x")])),
            (Spec::new(&[None, None]), Spec::new(&[Some("x"), None])),
        ] {
            let d = dist::distribute(&x.to_device(gpu), &mesh, &a).reshard(&b);
            assert_eq!(d.local().device(), gpu, "a reshard keeps blocks on the GPU");
            close(
                &d.to_global().to_device(Device::Cpu),
                &x,
                tol,
                "GPU reshard",
            );
        }
        let (w1, w2) = (data(9, &[6, 4], dtype), data(10, &[4, 3], dtype));
        let y = data(11, &[4, 3], dtype);
        let host = nabla::grad(crate::spmd::mlp_loss)(&w1, &w2, &x, &y);
        let on = |a: &Array, s: Spec| dist::distribute(&a.to_device(gpu), &mesh, &s);
        let g = nabla::grad(dist::spmd(crate::spmd::mlp_loss, &mesh))(
            &on(&w1, Spec::new(&[None, Some("x")])),
            &on(&w2, Spec::new(&[Some("x"), None])),
            &on(&x, Spec::new(&[None, None])),
            &on(&y, Spec::new(&[None, None])),
        );
        assert_eq!(g.local().device(), gpu);
        close(
            &g.to_global().to_device(Device::Cpu),
            &host,
            tol,
            "spmd gradient on the GPU",
        );
        let a = dist::auto(crate::spmd::mlp_loss, &mesh);
        let g = nabla::grad(a)(
            &w1.to_device(gpu),
            &w2.to_device(gpu),
            &x.to_device(gpu),
            &y.to_device(gpu),
        );
        close(
            &g.to_device(Device::Cpu),
            &host,
            tol,
            "auto gradient on the GPU",
        );
    }
}
