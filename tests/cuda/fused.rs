//! Fused regions on the GPU: each `#[differentiable]` function below holds
//! a region that runs as one generated CUDA kernel each way (the fused pass
//! counter moves); its value and gradient on the device match the CPU's
//! (f64 1e-12, f32 1e-5) — with slices, broadcast operands (a bias row, a
//! row's mean kept with keepdim), a trailing sum and a trailing mean, and a
//! non-contiguous (transposed) input.

use crate::common::assert_close;
use crate::gpu_or_skip as gpu;
use nabla::prelude::*;

#[differentiable]
fn rosenbrock(x: &Array) -> Array {
    let n = x.shape()[0];
    let (head, tail) = (x.slice_axis(0, 0..n - 1), x.slice_axis(0, 1..n));
    nabla::sum(&((tail - head.square()).square() * 100.0 + (1.0 - head).square()))
}

#[differentiable]
fn biased(x: &Array, b: &Array) -> Array {
    nabla::mean(&((x + b).tanh() * x.sin() + (x * b).softplus()))
}

#[differentiable]
fn centred(x: &Array) -> Array {
    let m = nabla::mean_axes(x, &[-1], true);
    let y = ((x - &m).square() + 1.0).sqrt().ln() * x.exp();
    nabla::sum(&(&y * &y))
}

#[differentiable]
fn chain(x: &Array) -> Array {
    (((x * 2.0).sin() + x).tanh() * 0.5 + 1.0).ln() * x
}

#[differentiable]
fn chain_loss(x: &Array) -> Array {
    nabla::sum(&chain(x).square())
}

/// `f` and its gradient on the CPU and on `dev` agree; the device ran
/// fused passes.
fn agree(
    dev: Device,
    what: &str,
    tol: f64,
    xs: &[Array],
    f: impl Fn(&[Array]) -> (Array, Vec<Array>),
) {
    let (y_cpu, g_cpu) = f(xs);
    let on: Vec<Array> = xs.iter().map(|x| x.to_device(dev)).collect();
    let before = nabla::fused::passes();
    let (y_gpu, g_gpu) = f(&on);
    assert!(
        nabla::fused::passes() > before,
        "{what}: no fused pass ran on {dev}"
    );
    assert_eq!(y_gpu.device(), dev, "{what}: value left the device");
    assert_close(
        &y_gpu.to_device(Device::Cpu),
        &y_cpu,
        tol,
        &format!("{what} value"),
    );
    for (k, (a, b)) in g_gpu.iter().zip(&g_cpu).enumerate() {
        assert_eq!(a.device(), dev, "{what}: gradient {k} left the device");
        assert_close(
            &a.to_device(Device::Cpu),
            b,
            tol,
            &format!("{what} grad {k}"),
        );
    }
}

#[test]
fn fused_regions_on_the_gpu_match_the_cpu() {
    let Some(dev) = gpu() else { return };
    for (dtype, tol) in [(DType::F64, 1e-12), (DType::F32, 1e-5)] {
        let k = Key::new(7);
        let x = k.normal(&[1001], dtype);
        agree(dev, &format!("rosenbrock {dtype}"), tol, &[x], |a| {
            let (v, g) = value_and_grad(rosenbrock)(&a[0]);
            (v, vec![g])
        });

        let [k1, k2] = k.split2();
        let x = k1.normal(&[37, 65], dtype);
        let b = k2.normal(&[65], dtype);
        agree(
            dev,
            &format!("bias row {dtype}"),
            tol,
            &[x.clone(), b],
            |a| {
                let (v, (gx, gb)) = nabla::value_and_grad!(biased, argnums = (0, 1))(&a[0], &a[1]);
                (v, vec![gx, gb])
            },
        );

        // A transposed (non-contiguous) operand.
        let xt = x.transpose();
        agree(
            dev,
            &format!("per-row mean, transposed {dtype}"),
            tol * 10.0,
            &[xt],
            |a| {
                let (v, g) = value_and_grad(centred)(&a[0]);
                (v, vec![g])
            },
        );

        let x = k2.normal(&[3, 1000], dtype);
        agree(dev, &format!("chain {dtype}"), tol, &[x], |a| {
            let y = chain(&a[0]);
            let g = nabla::grad(chain_loss)(&a[0]);
            (y, vec![g])
        });
    }
}
