//! Reduction launchers: `reduce` (sum, max, min, .. over any axes),
//! `arg_reduce` and `cumsum`. A reduction views its input with the kept
//! axes first and the reduced ones last (`rows` × `cols`) and picks a
//! kernel by that shape: one warp per short row, blocks (chunked) per long
//! row, or one thread per output (chunked) when the kept axes are innermost
//! in memory.

use super::array::GpuArray;
use super::launch::{BLOCK, KernelArg, float, grid, launch, layout_of};
use crate::DType;
use crate::reduce::ReduceOp;
use cudarc::driver::LaunchConfig;

/// `x` with the `axes` moved last: (view, rows, cols).
fn rows_view(x: &GpuArray, axes: &[usize]) -> (GpuArray, usize, usize) {
    let kept: Vec<usize> = (0..x.shape().len()).filter(|a| !axes.contains(a)).collect();
    let perm: Vec<usize> = kept.iter().chain(axes).copied().collect();
    let rows = kept.iter().map(|&a| x.shape()[a]).product();
    let cols = axes.iter().map(|&a| x.shape()[a]).product();
    (x.permute(&perm), rows, cols)
}

/// The memory step between consecutive elements of a row of `v` (its last
/// `n` axes, the reduced ones) when the row walks memory uniformly, and 1;
/// else (0, 0): each element's place then comes from the layout.
fn row_stride(v: &GpuArray, n: usize) -> (i64, i32) {
    let nd = v.shape().len();
    let dims: Vec<(usize, isize)> = v.shape()[nd - n..]
        .iter()
        .zip(&v.strides()[nd - n..])
        .filter(|(len, _)| **len != 1)
        .map(|(l, s)| (*l, *s))
        .collect();
    let uniform = dims.windows(2).all(|w| w[0].1 == w[1].1 * w[1].0 as isize);
    match dims.last() {
        None => (1, 1),
        Some(&(_, s)) if uniform => (s as i64, 1),
        Some(_) => (0, 0),
    }
}

/// Reduces `x` over `axes` (sorted, distinct); the result drops them.
#[track_caller]
pub fn reduce(x: &GpuArray, axes: &[usize], op: ReduceOp) -> GpuArray {
    let t = float("reduce", x);
    let out_shape: Vec<usize> = (0..x.shape().len())
        .filter(|a| !axes.contains(a))
        .map(|a| x.shape()[a])
        .collect();
    let (v, rows, cols) = rows_view(x, axes);
    let code = op as i32;
    let lx = layout_of(&v, v.shape());
    // Kept axes innermost in memory (reducing over leading axes): one thread
    // per output, neighbouring threads read neighbouring elements. Otherwise
    // blocks per row (split into chunks when there are few rows).
    let kept_inner = v.shape().len() > axes.len() && {
        let last_kept = v.shape().len() - axes.len() - 1;
        v.strides()[last_kept] == 1
    };
    // Few outputs over long kept-inner columns (a bias gradient, the sum
    // over a batch): one thread per output would leave most of the device
    // idle, each thread walking a whole column; split the columns into
    // chunks, one thread per output and chunk (neighbouring threads read
    // neighbouring elements), then reduce the chunks' partials.
    let (rstride, uniform) = row_stride(&v, axes.len());
    let threads = 16 * BLOCK as usize * x.gpu().sm_count();
    if kept_inner && rows >= 64 && rows < threads && cols >= 64 {
        let chunks = (threads / rows).clamp(1, cols / 32);
        if chunks >= 2 {
            let chunk = cols.div_ceil(chunks);
            let partial = GpuArray::alloc(x.gpu(), x.elem(), &[chunks, rows]);
            let (r, c, k, kl) = (rows as i64, cols as i64, chunks as i64, chunk as i64);
            launch!(
                x.gpu(),
                format!("reduce_rows_chunked_{t}"),
                grid(rows * chunks),
                [
                    *v.buf,
                    lx,
                    *partial.buf,
                    r,
                    c,
                    k,
                    kl,
                    rstride,
                    uniform,
                    code
                ]
            );
            return reduce(&partial, &[0], op).reshape(&out_shape);
        }
    }
    if rows == 0 || cols <= 32 || (kept_inner && rows >= 64) {
        let out = GpuArray::alloc(x.gpu(), x.elem(), &out_shape);
        let (r, c) = (rows as i64, cols as i64);
        if r > 0 {
            launch!(
                x.gpu(),
                format!("reduce_rows_{t}"),
                grid(rows),
                [*v.buf, lx, *out.buf, r, c, rstride, uniform, code]
            );
        }
        return out;
    }
    // Many short rows (a softmax's or a layer norm's last axis): one warp
    // per row, lanes reading neighbouring elements, a shuffle to finish.
    if !kept_inner && rows >= 256 && cols <= 8192 {
        let out = GpuArray::alloc(x.gpu(), x.elem(), &out_shape);
        let (r, c) = (rows as i64, cols as i64);
        launch!(
            x.gpu(),
            format!("reduce_warp_rows_{t}"),
            grid(rows * 32),
            [*v.buf, lx, *out.buf, r, c, rstride, uniform, code]
        );
        return out;
    }
    // Enough blocks to fill the device (8 per SM), and no block reading more
    // than 16K elements, so a long row is spread over several waves of short
    // blocks; never chunks under 4K elements.
    let chunks = (8 * x.gpu().sm_count())
        .div_ceil(rows)
        .max(cols.div_ceil(1 << 14))
        .clamp(1, cols.div_ceil(4096).max(1));
    let chunk = cols.div_ceil(chunks);
    let partial = GpuArray::alloc(x.gpu(), x.elem(), &[rows, chunks]);
    let blocks = (rows * chunks).min(1 << 20) as u32;
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    let (r, c, k, kl) = (rows as i64, cols as i64, chunks as i64, chunk as i64);
    let at = std::panic::Location::caller();
    launch!(
        x.gpu(),
        format!("reduce_{t}"),
        cfg,
        [*v.buf, lx, *partial.buf, r, c, k, kl, code],
        label = || format!("reduce_{t} {:?} axes {axes:?} @ {at}", x.shape(),)
    );
    if chunks == 1 {
        partial.reshape(&out_shape)
    } else {
        reduce(&partial, &[1], op).reshape(&out_shape)
    }
}

/// Index of the largest (`max`) or smallest entry along `axis` (first on
/// ties); an `I64` array without that axis.
#[track_caller]
pub fn arg_reduce(x: &GpuArray, axis: usize, max: bool) -> GpuArray {
    let t = float("argmax/argmin", x);
    let (v, rows, cols) = rows_view(x, &[axis]);
    let mut out_shape = x.shape().to_vec();
    out_shape.remove(axis);
    let out = GpuArray::alloc(x.gpu(), DType::I64, &out_shape);
    let (lx, r, c, m) = (
        layout_of(&v, v.shape()),
        rows as i64,
        cols as i64,
        max as i32,
    );
    if rows > 0 && cols > 0 {
        launch!(
            x.gpu(),
            format!("argreduce_{t}"),
            grid(rows),
            [*v.buf, lx, *out.buf, r, c, m]
        );
    }
    out
}

/// Cumulative sum along `axis` (`reverse`: from the end).
#[track_caller]
pub fn cumsum(x: &GpuArray, axis: usize, reverse: bool) -> GpuArray {
    let t = float("cumsum", x);
    let (v, rows, cols) = rows_view(x, &[axis]);
    let out = GpuArray::alloc(x.gpu(), x.elem(), v.shape());
    let (lx, r, c, rev) = (
        layout_of(&v, v.shape()),
        rows as i64,
        cols as i64,
        reverse as i32,
    );
    if rows > 0 && cols > 0 {
        launch!(
            x.gpu(),
            format!("cumsum_{t}"),
            grid(rows),
            [*v.buf, lx, *out.buf, r, c, rev]
        );
    }
    // `out` is in the permuted order (axis last): move the axis back.
    let nd = x.shape().len();
    let mut back: Vec<usize> = (0..nd - 1).collect();
    back.insert(axis, nd - 1);
    out.permute(&back)
}
