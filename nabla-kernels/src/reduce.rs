//! Axis reductions, arg-reductions and cumulative sums.

use crate::parallel;
use crate::{Float, PARALLEL_THRESHOLD};
use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn};

/// A reduction over one or more axes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    /// sum
    Sum,
    /// product
    Prod,
    /// maximum (NaN propagates)
    Max,
    /// minimum (NaN propagates)
    Min,
}

/// Reduces `x` over `axes` (sorted, distinct, in range); the result drops
/// those axes. Reducing over no axes copies `x`.
///
/// ```
/// use nabla_kernels::reduce::{reduce, ReduceOp};
/// let x = ndarray::arr2(&[[1.0f64, 2.0], [3.0, 4.0]]).into_dyn();
/// assert_eq!(reduce(x.view(), &[0], ReduceOp::Sum).as_slice().unwrap(), &[4.0, 6.0]);
/// assert_eq!(reduce(x.view(), &[1], ReduceOp::Max).as_slice().unwrap(), &[2.0, 4.0]);
/// assert_eq!(reduce(x.view(), &[0, 1], ReduceOp::Prod).into_iter().next(), Some(24.0));
/// ```
pub fn reduce<T: Float>(x: ArrayViewD<'_, T>, axes: &[usize], op: ReduceOp) -> ArrayD<T> {
    let nd = x.ndim();
    let kept: crate::Shape = (0..nd).filter(|a| !axes.contains(a)).collect();
    let out_shape: crate::Shape = kept.iter().map(|&a| x.shape()[a]).collect();
    let n: usize = axes.iter().map(|&a| x.shape()[a]).product();
    let outer: usize = out_shape.iter().product();
    // Leading axes reduced over a contiguous array: accumulate whole rows.
    let leading = !axes.is_empty() && axes.iter().enumerate().all(|(i, &a)| a == i) && outer > 1;
    if let (true, Some(s)) = (leading, x.as_slice()) {
        let v = columns(s, n, outer, op);
        return crate::owned(IxDyn(&out_shape), v);
    }
    // Trailing axes reduced over a contiguous array: each output element
    // is one contiguous row.
    let trailing = axes
        .iter()
        .enumerate()
        .all(|(i, &a)| a == nd - axes.len() + i);
    if let (true, Some(s)) = (trailing, x.as_slice()) {
        let v = rows(s, n, outer, op);
        return crate::owned(IxDyn(&out_shape), v);
    }
    // A contiguous array reduced over its trailing axes and others: the
    // trailing run first (whole rows, no copy), then the rest of the
    // smaller result (a bias gradient's `[N, C, H, W] → [C]` reads the
    // input once instead of transposing it).
    let run = (0..nd).rev().take_while(|a| axes.contains(a)).count();
    if run > 0 && x.is_standard_layout() {
        let inner = reduce(x, &axes[axes.len() - run..], op);
        return reduce(inner.view(), &axes[..axes.len() - run], op);
    }
    let mut perm = kept.clone();
    perm.extend_from_slice(axes);
    let p = x.permuted_axes(IxDyn(&perm));
    let copied;
    let s = match p.as_slice() {
        Some(s) => s,
        None => {
            copied = crate::elementwise::contiguous(&p);
            copied.as_slice().expect("standard layout")
        }
    };
    let v = rows(s, n, outer, op);
    crate::owned(IxDyn(&out_shape), v)
}

fn identity<T: Float>(op: ReduceOp) -> T {
    match op {
        ReduceOp::Sum => T::ZERO,
        ReduceOp::Prod => T::ONE,
        ReduceOp::Max => T::NEG_INFINITY,
        ReduceOp::Min => T::INFINITY,
    }
}

#[inline(always)]
fn combine<T: Float>(op: ReduceOp, a: T, b: T) -> T {
    match op {
        ReduceOp::Sum => a + b,
        ReduceOp::Prod => a * b,
        ReduceOp::Max => {
            if a > b || a.is_nan() {
                a
            } else {
                b
            }
        }
        ReduceOp::Min => {
            if a < b || a.is_nan() {
                a
            } else {
                b
            }
        }
    }
}

/// Reduces one contiguous slice.
fn reduce_slice<T: Float>(s: &[T], op: ReduceOp) -> T {
    if op == ReduceOp::Sum {
        return sum_slice(s);
    }
    s.iter().fold(identity(op), |a, &b| combine(op, a, b))
}

/// `Σ s` in eight independent accumulators, so the loop vectorises (a
/// single accumulator would serialise on latency).
pub(crate) fn sum_slice<T: Float>(s: &[T]) -> T {
    let mut acc = [T::ZERO; 8];
    let chunks = s.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        for i in 0..8 {
            acc[i] += c[i];
        }
    }
    let mut t = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for &v in rest {
        t += v;
    }
    t
}

fn rows<T: Float>(s: &[T], n: usize, outer: usize, op: ReduceOp) -> Vec<T> {
    if n == 0 {
        return vec![identity(op); outer];
    }
    if s.len() >= PARALLEL_THRESHOLD && outer > 1 {
        // Pieces of whole rows, about 8K elements each.
        let rows = (8192 / n).max(1);
        let mut out = vec![identity::<T>(op); outer];
        parallel::chunks_mut(&mut out, rows, |c, o| {
            for (j, slot) in o.iter_mut().enumerate() {
                let r = (c * rows + j) * n;
                *slot = reduce_slice(&s[r..r + n], op);
            }
        });
        out
    } else if outer == 1 && s.len() >= PARALLEL_THRESHOLD {
        let parts = parallel::map_collect(s.len().div_ceil(PARALLEL_THRESHOLD), |i| {
            let lo = i * PARALLEL_THRESHOLD;
            reduce_slice(&s[lo..(lo + PARALLEL_THRESHOLD).min(s.len())], op)
        });
        vec![
            parts
                .into_iter()
                .fold(identity(op), |a, b| combine(op, a, b)),
        ]
    } else {
        s.chunks(n).map(|r| reduce_slice(r, op)).collect()
    }
}

/// Reduces the leading `n` rows of width `w` of a contiguous array.
fn columns<T: Float>(s: &[T], n: usize, w: usize, op: ReduceOp) -> Vec<T> {
    let fold_rows = |lo: usize, hi: usize| {
        let mut acc = vec![identity::<T>(op); hi - lo];
        for r in 0..n {
            let row = &s[r * w + lo..r * w + hi];
            for (a, &v) in acc.iter_mut().zip(row) {
                *a = combine(op, *a, v);
            }
        }
        acc
    };
    if s.len() >= PARALLEL_THRESHOLD && w >= 64 {
        let parts = rayon::current_num_threads().max(1);
        let step = w.div_ceil(parts).max(16);
        let pieces: Vec<Vec<T>> = parallel::map_collect(w.div_ceil(step), |i| {
            fold_rows(i * step, ((i + 1) * step).min(w))
        });
        pieces.concat()
    } else {
        fold_rows(0, w)
    }
}

/// Index of the largest (`max = true`) or smallest element along `axis`;
/// the first one wins ties. The result drops `axis`.
///
/// ```
/// use nabla_kernels::reduce::arg_reduce;
/// let x = ndarray::arr2(&[[1.0f32, 5.0, 5.0], [7.0, 0.0, 2.0]]).into_dyn();
/// assert_eq!(arg_reduce(x.view(), 1, true).as_slice().unwrap(), &[1, 0]);
/// assert_eq!(arg_reduce(x.view(), 1, false).as_slice().unwrap(), &[0, 1]);
/// ```
pub fn arg_reduce<T: Float>(x: ArrayViewD<'_, T>, axis: usize, max: bool) -> ArrayD<i64> {
    let mut out_shape = x.shape().to_vec();
    out_shape.remove(axis);
    let mut out = ArrayD::<i64>::zeros(IxDyn(&out_shape));
    for (o, lane) in out.iter_mut().zip(x.lanes(Axis(axis))) {
        let mut best = 0usize;
        let mut bv = lane[0];
        for (i, &v) in lane.iter().enumerate().skip(1) {
            if bv.is_nan() {
                break; // like NumPy, the first NaN wins
            }
            if v.is_nan() || (max && v > bv) || (!max && v < bv) {
                best = i;
                bv = v;
            }
        }
        *o = best as i64;
    }
    out
}

/// Cumulative sum along `axis`; `reverse` sums from the end (the VJP of a
/// forward cumsum).
///
/// ```
/// use nabla_kernels::reduce::cumsum;
/// let x = ndarray::arr1(&[1.0f64, 2.0, 3.0]).into_dyn();
/// assert_eq!(cumsum(x.view(), 0, false).as_slice().unwrap(), &[1.0, 3.0, 6.0]);
/// assert_eq!(cumsum(x.view(), 0, true).as_slice().unwrap(), &[6.0, 5.0, 3.0]);
/// ```
pub fn cumsum<T: Float>(x: ArrayViewD<'_, T>, axis: usize, reverse: bool) -> ArrayD<T> {
    let mut out = x.as_standard_layout().into_owned();
    if reverse {
        out.invert_axis(Axis(axis));
    }
    out.accumulate_axis_inplace(Axis(axis), |&prev, cur| *cur += prev);
    if reverse {
        out.invert_axis(Axis(axis));
        out = out.as_standard_layout().into_owned();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reductions_match_naive() {
        let x = ndarray::Array::from_shape_fn(IxDyn(&[3, 4, 5]), |i| {
            (i[0] * 20 + i[1] * 5 + i[2]) as f64 * 0.1 - 2.0
        });
        for axes in [
            vec![0],
            vec![1],
            vec![2],
            vec![0, 1],
            vec![0, 2],
            vec![1, 2],
            vec![0, 1, 2],
        ] {
            let r = reduce(x.view(), &axes, ReduceOp::Sum);
            let mut naive = x.clone();
            for &a in axes.iter().rev() {
                naive = naive.sum_axis(Axis(a));
            }
            assert_eq!(r.shape(), naive.shape());
            for (a, b) in r.iter().zip(naive.iter()) {
                assert!((a - b).abs() < 1e-12, "{axes:?}");
            }
        }
        let t = x.t();
        let r = reduce(t.view(), &[0], ReduceOp::Max);
        assert_eq!(
            r[[0, 0]],
            x.index_axis(Axis(0), 0)
                .index_axis(Axis(0), 0)
                .iter()
                .cloned()
                .fold(f64::MIN, f64::max)
        );
    }

    #[test]
    fn trailing_runs_then_the_rest() {
        // `[N, C, H, W] → [C]` (a bias gradient) and `[1, 3]` reduce their
        // trailing run first, then the rest of the smaller result.
        let x = ndarray::Array::from_shape_fn(IxDyn(&[3, 4, 5, 6]), |i| {
            ((i[0] * 7 + i[1] * 5 + i[2] * 3 + i[3]) % 17) as f64 - 8.0
        });
        for axes in [vec![0, 2, 3], vec![1, 3], vec![0, 3]] {
            for op in [ReduceOp::Sum, ReduceOp::Max] {
                let r = reduce(x.view(), &axes, op);
                let mut naive = x.clone();
                for &a in axes.iter().rev() {
                    naive = match op {
                        ReduceOp::Sum => naive.sum_axis(Axis(a)),
                        _ => naive.fold_axis(Axis(a), f64::MIN, |m, &v| m.max(v)),
                    };
                }
                assert_eq!(r, naive, "{axes:?} {op:?}");
            }
        }
    }

    #[test]
    fn large_sums() {
        let n = PARALLEL_THRESHOLD * 4 + 3;
        let x = ndarray::Array1::from_elem(n, 1.0f64).into_dyn();
        assert_eq!(reduce(x.view(), &[0], ReduceOp::Sum)[[]], n as f64);
        let m = ndarray::Array2::from_elem((n / 64, 64), 1.0f64).into_dyn();
        assert!(
            reduce(m.view(), &[0], ReduceOp::Sum)
                .iter()
                .all(|&v| v == (n / 64) as f64)
        );
        assert!(
            reduce(m.view(), &[1], ReduceOp::Sum)
                .iter()
                .all(|&v| v == 64.0)
        );
    }
}
