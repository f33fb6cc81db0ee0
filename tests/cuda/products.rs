//! Matrix products on the GPU whose operands are views: two batch axes
//! that do not merge into one stride (attention's `[batch, time, heads,
//! dim]` read as `[batch, heads, time, dim]`, and its transpose), a
//! broadcast batch axis, and a batch against one shared weight (one GEMM
//! of all rows) — each against the CPU, values and gradients, f64 and f32.

use crate::common::assert_close;
use crate::gpu_or_skip as gpu;
use nabla::prelude::*;

fn input(shape: &[usize], seed: usize) -> Array {
    let n: usize = shape.iter().product();
    Array::from_vec(
        (0..n)
            .map(|i| (((i + seed) * 37 % 101) as f64) / 50.0 - 1.0)
            .collect(),
        shape,
    )
}

#[differentiable]
fn attention_like(q: &Array, k: &Array) -> Array {
    // [2, 5, 3, 4] -> [2, 3, 5, 4]: heads as the second batch axis.
    let qh = q.permute(&[0, 2, 1, 3]);
    let kh = k.permute(&[0, 2, 1, 3]);
    let s = qh.matmul(&kh.permute(&[0, 1, 3, 2]));
    nabla::sum(&(s.matmul(&kh).sin()))
}

#[test]
fn products_of_views_on_the_gpu_match_the_cpu() {
    let Some(dev) = gpu() else { return };
    for (dtype, tol) in [(DType::F64, 1e-12), (DType::F32, 1e-4)] {
        let on = |a: &Array| a.cast(dtype).to_device(dev);
        let back = |a: Array| {
            assert_eq!(a.device(), dev);
            a.to_device(Device::Cpu).cast(DType::F64)
        };
        let (q, k) = (input(&[2, 5, 3, 4], 1), input(&[2, 5, 3, 4], 7));
        let qp = q.permute(&[0, 2, 1, 3]);
        let kt = k.permute(&[0, 2, 3, 1]);
        let want = qp.matmul(&kt);
        assert_close(
            &back(
                on(&q)
                    .permute(&[0, 2, 1, 3])
                    .matmul(&on(&k).permute(&[0, 2, 3, 1])),
            ),
            &want,
            tol,
            &format!("two unmergeable batch axes, {dtype:?}"),
        );
        // A broadcast batch axis on one side.
        let w = input(&[1, 3, 4, 6], 3);
        assert_close(
            &back(on(&qp).matmul(&on(&w))),
            &qp.matmul(&w),
            tol,
            &format!("broadcast batch axis, {dtype:?}"),
        );
        // A batch against one weight: one GEMM of all rows.
        let (x, m) = (input(&[4, 5, 6], 2), input(&[6, 7], 5));
        assert_close(
            &back(on(&x).matmul(&on(&m))),
            &x.matmul(&m),
            tol,
            &format!("batch against a shared matrix, {dtype:?}"),
        );
        let cpu = grad!(attention_like, argnums = 0)(&q, &k);
        let g = grad!(attention_like, argnums = 0)(&on(&q), &on(&k));
        assert_close(&back(g), &cpu, tol * 10.0, &format!("gradient, {dtype:?}"));
    }
}
