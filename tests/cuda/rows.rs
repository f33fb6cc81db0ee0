//! The row kernels (softmax and layer normalisation over the last axis,
//! one warp per row) on the GPU against the CPU's: values and gradients of
//! `nabla::softmax` and `nabla::layer_norm`, each backward op, at row
//! lengths below, at and above a warp (1, 7, 32, 300, 1000), on a
//! transposed (strided) input, in f64 (1e-12) and f32 (1e-5).

use crate::common::assert_close;
use crate::gpu_or_skip as gpu;
use nabla::composite::rows::{normalize_rows_backward, softmax_rows_backward};
use nabla::prelude::*;

#[differentiable]
fn loss(x: &Array, w: &Array, b: &Array) -> Array {
    let y = nabla::layer_norm(x, w, b, 1e-5);
    nabla::sum(&(nabla::softmax(&y, -1) * x.sin()))
}

fn input(rows: usize, d: usize) -> Array {
    Array::from_vec(
        (0..rows * d)
            .map(|i| ((i * 37 % 101) as f64) / 13.0 - 3.5)
            .collect(),
        &[rows, d],
    )
}

#[test]
fn row_kernels_on_the_gpu_match_the_cpu() {
    let Some(dev) = gpu() else { return };
    for (dtype, tol) in [(DType::F64, 1e-12), (DType::F32, 1e-5)] {
        for d in [1usize, 7, 32, 300, 1000] {
            let x = input(5, d).cast(dtype);
            let g = x.cos();
            let what = |op: &str| format!("{op}, {dtype:?}, rows of {d}");
            let on = |a: &Array| a.to_device(dev);
            let back = |a: Array| {
                assert_eq!(a.device(), dev);
                a.to_device(Device::Cpu)
            };
            let y = nabla::softmax(&x, -1);
            assert_close(
                &back(nabla::softmax(&on(&x), -1)),
                &y,
                tol,
                &what("softmax"),
            );
            assert_close(
                &back(softmax_rows_backward(&on(&y), &on(&g), 1.0)),
                &softmax_rows_backward(&y, &g, 1.0),
                tol,
                &what("softmax backward"),
            );
            let (w, b) = (
                x.slice_axis(0, 0..1).reshape(&[d]).cos(),
                g.slice_axis(0, 1..2).reshape(&[d]),
            );
            assert_close(
                &back(nabla::layer_norm(&on(&x), &on(&w), &on(&b), 1e-5)),
                &nabla::layer_norm(&x, &w, &b, 1e-5),
                tol,
                &what("layer_norm"),
            );
            assert_close(
                &back(normalize_rows_backward(&on(&x), &on(&g), 1e-5)),
                &normalize_rows_backward(&x, &g, 1e-5),
                tol * 10.0,
                &what("layer_norm backward"),
            );
            let cpu = grad!(loss, argnums = 0)(&x, &w, &b);
            let gpu_g = grad!(loss, argnums = 0)(&on(&x), &on(&w), &on(&b));
            assert_close(&back(gpu_g), &cpu, tol * 10.0, &what("gradient"));
            let s3 = x.reshape(&[5, 1, d]) + x.reshape(&[5, d, 1]).cos();
            assert_close(
                &back(nabla::composite::rows::attention_softmax(
                    &on(&s3),
                    0.3,
                    true,
                )),
                &nabla::composite::rows::attention_softmax(&s3, 0.3, true),
                tol,
                &what("causal scaled softmax"),
            );
            let t = x.transpose();
            assert_close(
                &back(nabla::softmax(&on(&t), -1)),
                &nabla::softmax(&t, -1),
                tol,
                &what("softmax of a transposed input"),
            );
        }
    }
}
