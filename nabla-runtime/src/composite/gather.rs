//! Gathers and scatters with static indices: `take_along_axis`,
//! `embedding`, `scatter_add`, `pad`, `tril`/`triu`. Each is written as
//! `#[differentiable]` code over the `index_select`/`index_add` adjoint
//! pair (one gather or scatter of the flattened array with indices computed
//! from the shapes), so every transform differentiates and batches them
//! with the rules of those two primitives.

use crate::Array;
use crate::array::norm_axis;
use nabla_macros::differentiable;

pub use crate::array::positions::along_axis_flat;
pub(crate) use crate::array::positions::{checked_indices, strides};

/// `x` gathered along `axis` at `indices` (`numpy.take_along_axis`):
/// `out[.., i, ..] = x[.., indices[.., i, ..], ..]`. `indices` is an `I64`
/// array with `x`'s rank and `x`'s length on every other axis.
///
/// ```
/// # use nabla::*;
/// let x = Array::from_vec(vec![10.0f64, 20.0, 30.0, 40.0], &[2, 2]);
/// let idx = Array::from_vec(vec![1i64, 0], &[2, 1]);
/// assert_eq!(nabla::take_along_axis(&x, &idx, 1).to_vec::<f64>(), vec![20.0, 30.0]);
/// ```
#[differentiable(crate = crate)]
pub fn take_along_axis(x: &Array, #[nondiff] indices: &Array, axis: isize) -> Array {
    let flat = crate::composite::gather::along_axis_flat(x.shape(), indices, axis);
    x.reshape(&[x.numel()])
        .index_select(0, &flat)
        .reshape(indices.shape())
}

/// The rows of `table` (`[vocab, dim]`) at `indices` (an `I64` array of any
/// shape): `indices.shape() ++ [dim]`, as `torch.nn.functional.embedding`.
///
/// ```
/// # use nabla::*;
/// let table = Array::from_vec(vec![0.0f64, 1.0, 2.0, 3.0], &[2, 2]);
/// let e = nabla::embedding(&table, &Array::from_vec(vec![1i64, 1, 0], &[3]));
/// assert_eq!(e.shape(), &[3, 2]);
/// assert_eq!(e.to_vec::<f64>(), vec![2.0, 3.0, 2.0, 3.0, 0.0, 1.0]);
/// ```
#[differentiable(crate = crate)]
pub fn embedding(table: &Array, #[nondiff] indices: &Array) -> Array {
    let (rows, out) = crate::composite::gather::embedding_plan(table.shape(), indices);
    table.index_select(0, &rows).reshape(&out)
}

/// The rows `embedding` gathers and its output shape.
#[doc(hidden)]
#[track_caller]
pub fn embedding_plan(table: impl AsRef<[usize]>, indices: &Array) -> (Vec<usize>, Vec<usize>) {
    let table = table.as_ref();
    assert!(
        table.len() == 2,
        "embedding: the table must be [vocab, dim], found shape {table:?}; reshape it to two axes"
    );
    let rows = checked_indices("embedding", indices, table[0]);
    let mut out = indices.shape().to_vec();
    out.push(table[1]);
    (rows, out)
}

/// Slabs of `x` along `axis` added into zeros with `out_size` slabs, slab
/// `k` going to position `indices[k]` (`x.at[indices].add` in JAX,
/// `index_add` in PyTorch): repeated indices accumulate. Its VJP is a
/// gather, so it is the adjoint of `x.index_select(axis, indices)`.
///
/// ```
/// # use nabla::*;
/// let x = Array::from_vec(vec![1.0f64, 2.0, 3.0], &[3]);
/// let idx = Array::from_vec(vec![1i64, 0, 1], &[3]);
/// assert_eq!(nabla::scatter_add(&x, 0, &idx, 2).to_vec::<f64>(), vec![2.0, 4.0]);
/// ```
#[differentiable(crate = crate)]
pub fn scatter_add(x: &Array, axis: isize, #[nondiff] indices: &Array, out_size: usize) -> Array {
    let (shape, ax, idx) =
        crate::composite::gather::scatter_plan(x.shape(), axis, indices, out_size);
    x.index_add(&shape, ax, &idx)
}

/// The output shape, axis and positions of `scatter_add`.
#[doc(hidden)]
#[track_caller]
pub fn scatter_plan(
    shape: impl AsRef<[usize]>,
    axis: isize,
    indices: &Array,
    out_size: usize,
) -> (Vec<usize>, isize, Vec<usize>) {
    let shape = shape.as_ref();
    let ax = norm_axis("scatter_add", axis, shape.len());
    assert!(
        indices.numel() == shape[ax] && indices.ndim() == 1,
        "scatter_add: indices of shape {:?} need one entry per slab of axis {ax} of the input (shape {shape:?})",
        indices.shape()
    );
    let idx = checked_indices("scatter_add", indices, out_size);
    let mut out = shape.to_vec();
    out[ax] = out_size;
    (out, ax as isize, idx)
}

/// Positions `pad` reads from `[x.flatten(), value]`: an element of `x`,
/// or the last entry (the fill) outside it; and the padded shape. The
/// pairs are checked first (`pads_by_blocks`).
#[doc(hidden)]
pub fn pad_plan(shape: impl AsRef<[usize]>, pads: &[(usize, usize)]) -> (Vec<usize>, Vec<usize>) {
    let shape = shape.as_ref();
    let out: Vec<usize> = shape
        .iter()
        .zip(pads)
        .map(|(&n, &(b, a))| n + b + a)
        .collect();
    let fill: usize = shape.iter().product();
    let (xs, os) = (strides(shape), strides(&out));
    let total: usize = out.iter().product();
    let idx = (0..total)
        .map(|flat| {
            let mut src = 0;
            for d in 0..out.len() {
                let c = flat / os[d] % out[d];
                if c < pads[d].0 || c >= pads[d].0 + shape[d] {
                    return fill;
                }
                src += (c - pads[d].0) * xs[d];
            }
            src
        })
        .collect();
    (idx, out)
}

/// `x` padded with `value`: `pads[d] = (before, after)` elements on axis
/// `d` (`numpy.pad` with a constant; `torch.nn.functional.pad` lists the
/// last axis first, this lists axes in order).
///
/// ```
/// # use nabla::*;
/// let x = Array::from_vec(vec![1.0f64, 2.0], &[2]);
/// assert_eq!(nabla::pad(&x, &[(1, 2)], 0.0).to_vec::<f64>(), vec![0.0, 1.0, 2.0, 0.0, 0.0]);
/// ```
#[differentiable(crate = crate)]
// `&x.shape()`: the generated programs' shapes are owned (`Shape`).
#[allow(clippy::needless_borrow)]
pub fn pad(x: &Array, pads: &[(usize, usize)], #[nondiff] value: f64) -> Array {
    if crate::composite::gather::pads_by_blocks(x.shape(), pads) {
        // Constant blocks concatenated on each padded axis in turn: a copy
        // per padded axis, no index table.
        let mut y = x.reshape(&x.shape());
        #[allow(clippy::needless_range_loop)]
        for d in 0..pads.len() {
            y = crate::composite::gather::pad_axis(&y, d, pads[d].0, pads[d].1, value);
        }
        y
    } else {
        let (idx, out) = crate::composite::gather::pad_plan(x.shape(), pads);
        let flat = x.reshape(&[x.numel()]);
        crate::composite::gather::with_fill(&flat, value)
            .index_select(0, &idx)
            .reshape(&out)
    }
}

/// Whether `pad` builds its result from constant blocks (every axis of `x`
/// non-empty, so a block can be shaped from a slice of `x`) rather than by
/// a gather.
#[doc(hidden)]
#[track_caller]
pub fn pads_by_blocks(shape: impl AsRef<[usize]>, pads: &[(usize, usize)]) -> bool {
    let shape = shape.as_ref();
    assert!(
        pads.len() == shape.len(),
        "pad: {} (before, after) pairs for an array of rank {} (shape {shape:?}); give one pair per axis",
        pads.len(),
        shape.len()
    );
    !shape.is_empty() && !shape.contains(&0)
}

/// `shape` with `len` on `axis`.
#[doc(hidden)]
pub fn with_len(shape: &[usize], axis: usize, len: usize) -> Vec<usize> {
    let mut s = shape.to_vec();
    s[axis] = len;
    s
}

/// `x` with `before` and `after` entries holding `value` on `axis` (which
/// is not empty): `concat` of two constant blocks around `x`.
///
/// ```
/// # use nabla::*;
/// let x = Array::from_vec(vec![1.0f64, 2.0], &[1, 2]);
/// let y = nabla::composite::gather::pad_axis(&x, 1, 1, 0, 5.0);
/// assert_eq!(y.to_vec::<f64>(), vec![5.0, 1.0, 2.0]);
/// ```
#[differentiable(crate = crate)]
#[allow(clippy::needless_borrow)] // as in `pad`
pub fn pad_axis(
    x: &Array,
    #[nondiff] axis: usize,
    #[nondiff] before: usize,
    #[nondiff] after: usize,
    #[nondiff] value: f64,
) -> Array {
    if before + after == 0 {
        x.reshape(&x.shape())
    } else {
        let edge = x.slice_axis(axis as isize, 0..1).zeros_like() + value;
        let front = edge.broadcast_to(&crate::composite::gather::with_len(
            &x.shape(),
            axis,
            before,
        ));
        let back = edge.broadcast_to(&crate::composite::gather::with_len(&x.shape(), axis, after));
        crate::concat(&[&front, x, &back], axis as isize)
    }
}

/// `x` with one more entry at the end of its last axis holding `value`, a
/// constant: what the gathers of `pad`, `conv` and the pools read where a
/// window falls outside `x`.
///
/// ```
/// # use nabla::*;
/// let x = Array::from_vec(vec![1.0f64, 2.0], &[1, 2]);
/// let y = nabla::composite::gather::with_fill(&x, -1.0);
/// assert_eq!(y.to_vec::<f64>(), vec![1.0, 2.0, -1.0]);
/// ```
#[differentiable(crate = crate)]
pub fn with_fill(x: &Array, #[nondiff] value: f64) -> Array {
    let last = x.ndim() as isize - 1;
    // A [.., 1] constant shaped from one column (no pass over `x`), or
    // from the (empty) last axis summed away.
    let column = if x.shape()[x.ndim() - 1] > 0 {
        x.slice_axis(last, 0..1).zeros_like()
    } else {
        x.sum_axes(&[last], true).zeros_like()
    };
    crate::concat(&[x, &(column + value)], last)
}

/// The mask of the entries `tril` (`lower`) or `triu` keeps in the last two
/// axes of `shape`, relative to diagonal `k`.
#[doc(hidden)]
#[track_caller]
pub fn triangle_mask(op: &str, shape: impl AsRef<[usize]>, k: isize, lower: bool) -> Array {
    let shape = shape.as_ref();
    assert!(
        shape.len() >= 2,
        "{op}: needs at least two axes (a matrix), found shape {shape:?}; reshape it to [.., m, n]"
    );
    let (m, n) = (shape[shape.len() - 2], shape[shape.len() - 1]);
    let keep: Vec<bool> = (0..m * n)
        .map(|f| {
            let (i, j) = ((f / n) as isize, (f % n) as isize);
            if lower { j - i <= k } else { j - i >= k }
        })
        .collect();
    Array::from_vec(keep, &[m, n])
}

/// The lower triangle of the last two axes: entries with `j - i <= k`
/// kept, the rest zero (`numpy.tril`).
///
/// ```
/// # use nabla::*;
/// let x = Array::ones(&[2, 2], DType::F64);
/// assert_eq!(nabla::tril(&x, 0).to_vec::<f64>(), vec![1.0, 0.0, 1.0, 1.0]);
/// ```
#[differentiable(crate = crate)]
pub fn tril(x: &Array, k: isize) -> Array {
    let keep = crate::composite::gather::triangle_mask("tril", x.shape(), k, true);
    crate::where_(&keep, x, &x.zeros_like())
}

/// The upper triangle of the last two axes: entries with `j - i >= k`
/// kept, the rest zero (`numpy.triu`).
///
/// ```
/// # use nabla::*;
/// let x = Array::ones(&[2, 2], DType::F64);
/// assert_eq!(nabla::triu(&x, 1).to_vec::<f64>(), vec![0.0, 1.0, 0.0, 0.0]);
/// ```
#[differentiable(crate = crate)]
pub fn triu(x: &Array, k: isize) -> Array {
    let keep = crate::composite::gather::triangle_mask("triu", x.shape(), k, false);
    crate::where_(&keep, x, &x.zeros_like())
}
