//! Launchers of the row kernels (rows.cu): softmax and normalisation over
//! the last axis, one warp per row, like [`crate::rows`] on the CPU.

use super::array::GpuArray;
use super::launch::{KernelArg, contiguous, float, grid, launch};

/// `x` as a dense row-major buffer from its start (a copy otherwise).
fn dense(x: &GpuArray) -> GpuArray {
    if x.is_contiguous() && x.offset() == 0 {
        x.clone()
    } else {
        contiguous(x)
    }
}

/// Rows and row length of `x` (the last axis; 1 for a scalar).
fn rows_of(x: &GpuArray) -> (i64, i64) {
    let d = x.shape().last().copied().unwrap_or(1).max(1);
    ((x.numel() / d) as i64, d as i64)
}

/// Runs row kernel `name` on same-shaped float inputs into a fresh array,
/// with its scalar (`eps` or `scale`) and, for softmax, the causal block
/// height (0: no mask).
#[track_caller]
fn run(name: &str, ins: &[&GpuArray], scalar: f64, causal: Option<i64>) -> GpuArray {
    let t = float(name, ins[0]);
    for x in ins {
        assert!(
            x.shape() == ins[0].shape()
                && x.elem() == ins[0].elem()
                && x.ordinal() == ins[0].ordinal(),
            "cuda {name}: operands differ in shape, dtype or device"
        );
    }
    let ins: Vec<GpuArray> = ins.iter().map(|x| dense(x)).collect();
    let out = GpuArray::alloc(ins[0].gpu(), ins[0].elem(), ins[0].shape());
    let (rows, d) = rows_of(&out);
    if out.numel() == 0 {
        return out;
    }
    let cfg = grid(rows as usize * 32);
    let f = format!("{name}_{t}");
    let e = scalar;
    match (&ins[..], causal) {
        ([x], Some(t)) => launch!(x.gpu(), f, cfg, [*x.buf, *out.buf, rows, d, e, t]),
        ([x], None) => launch!(x.gpu(), f, cfg, [*x.buf, *out.buf, rows, d, e]),
        ([x, g], None) => launch!(x.gpu(), f, cfg, [*x.buf, *g.buf, *out.buf, rows, d, e]),
        _ => unreachable!("row kernels take one or two arrays"),
    }
    out
}

/// `softmax(scale · x)` over the last axis, causally masked with
/// `causal`, like [`crate::rows::scaled_softmax`].
#[track_caller]
pub fn softmax_rows(x: &GpuArray, scale: f64, causal: bool) -> GpuArray {
    let nd = x.shape().len();
    let t = if causal && nd >= 2 {
        x.shape()[nd - 2] as i64
    } else {
        0
    };
    run("softmax_rows", &[x], scale, Some(t))
}

/// `scale · y ⊙ (g − Σ y ⊙ g)` over the last axis, like
/// [`crate::rows::softmax_backward`].
#[track_caller]
pub fn softmax_backward_rows(y: &GpuArray, g: &GpuArray, scale: f64) -> GpuArray {
    run("softmax_backward_rows", &[y, g], scale, None)
}

/// `(x − mean) / √(var + eps)` over the last axis, like
/// [`crate::rows::normalize`].
#[track_caller]
pub fn normalize_rows(x: &GpuArray, eps: f64) -> GpuArray {
    run("normalize_rows", &[x], eps, None)
}

/// The VJP of [`normalize_rows`], like [`crate::rows::normalize_backward`].
#[track_caller]
pub fn normalize_backward_rows(x: &GpuArray, g: &GpuArray, eps: f64) -> GpuArray {
    run("normalize_backward_rows", &[x, g], eps, None)
}
