//! Row kernels: softmax and normalisation over the last axis, each row in
//! one pass through the cache (the row's statistics and its output are
//! computed while the row is hot), rows split across threads above
//! [`PARALLEL_THRESHOLD`](crate::PARALLEL_THRESHOLD) elements.
//!
//! The backward kernels recompute what they need from the row (the
//! maximum is not needed: they take the softmax output; normalisation
//! recomputes mean and reciprocal standard deviation), so the forward
//! keeps nothing beside its output.
//!
//! ```
//! use nabla_kernels::rows::softmax;
//! let x = ndarray::arr2(&[[0.0f64, 0.0], [0.0, 2f64.ln()]]).into_dyn();
//! let y = softmax(x.view());
//! assert_eq!(y.as_slice().unwrap(), &[0.5, 0.5, 1.0 / 3.0, 2.0 / 3.0]);
//! ```

use crate::Float;
use crate::reduce::sum_slice as sum;
use ndarray::{ArrayD, ArrayViewD};

/// `exp(x − max) / Σ exp(x − max)` along the last axis.
///
/// ```
/// let x = ndarray::arr1(&[1.0f32, 1.0, 1.0, 1.0]).into_dyn();
/// assert_eq!(nabla_kernels::rows::softmax(x.view()).as_slice().unwrap(), &[0.25; 4]);
/// ```
pub fn softmax<T: Float>(x: ArrayViewD<'_, T>) -> ArrayD<T> {
    scaled_softmax(x, 1.0, false)
}

/// `softmax(scale · x)` along the last axis; with `causal`, the rows of
/// each `[T, S]` block of the last two axes are masked the way
/// `torch.tril` masks attention: row `t` keeps columns `j ≤ t` (the others
/// are 0, as scores of `−∞` give).
///
/// ```
/// let x = ndarray::arr2(&[[1.0f64, 9.0], [0.0, 0.0]]).into_dyn();
/// let y = nabla_kernels::rows::scaled_softmax(x.view(), 0.5, true);
/// assert_eq!(y.as_slice().unwrap(), &[1.0, 0.0, 0.5, 0.5]);
/// ```
pub fn scaled_softmax<T: Float>(x: ArrayViewD<'_, T>, scale: f64, causal: bool) -> ArrayD<T> {
    let t = if causal && x.ndim() >= 2 {
        x.shape()[x.ndim() - 2]
    } else {
        0
    };
    let c = T::from_f64(scale);
    map_rows(&[x], |r, [row], out| {
        let keep = if t > 0 {
            (r % t + 1).min(row.len())
        } else {
            row.len()
        };
        let (row, (out, masked)) = (&row[..keep], out.split_at_mut(keep));
        let m = row
            .iter()
            .fold(T::NEG_INFINITY, |m, &v| if v > m { v } else { m });
        for (o, &v) in out.iter_mut().zip(row) {
            *o = ((v - m) * c).exp_v();
        }
        let inv = T::ONE / sum(out);
        out.iter_mut().for_each(|o| *o *= inv);
        masked.iter_mut().for_each(|o| *o = T::ZERO);
    })
}

/// The VJP (and JVP: the Jacobian is symmetric) of [`scaled_softmax`]
/// from its output `y` and a cotangent `g`: `scale · y ⊙ (g − Σ y ⊙ g)`
/// along the last axis (masked entries have `y = 0`: no mask needed).
///
/// ```
/// let y = ndarray::arr1(&[0.5f64, 0.5]).into_dyn();
/// let g = ndarray::arr1(&[1.0f64, 0.0]).into_dyn();
/// let dx = nabla_kernels::rows::softmax_backward(y.view(), g.view(), 1.0);
/// assert_eq!(dx.as_slice().unwrap(), &[0.25, -0.25]);
/// ```
pub fn softmax_backward<T: Float>(
    y: ArrayViewD<'_, T>,
    g: ArrayViewD<'_, T>,
    scale: f64,
) -> ArrayD<T> {
    let c = T::from_f64(scale);
    map_rows(&[y, g], |_, [y, g], out| {
        let s = dot(y, g);
        for ((o, &yv), &gv) in out.iter_mut().zip(y).zip(g) {
            *o = c * yv * (gv - s);
        }
    })
}

/// `(x − mean) / √(var + eps)` along the last axis (biased variance):
/// layer normalisation without its affine weight and bias.
///
/// ```
/// let x = ndarray::arr1(&[1.0f64, 3.0]).into_dyn();
/// let y = nabla_kernels::rows::normalize(x.view(), 0.0);
/// assert_eq!(y.as_slice().unwrap(), &[-1.0, 1.0]);
/// ```
pub fn normalize<T: Float>(x: ArrayViewD<'_, T>, eps: f64) -> ArrayD<T> {
    map_rows(&[x], |_, [row], out| {
        let (mean, r) = moments(row, eps);
        for (o, &v) in out.iter_mut().zip(row) {
            *o = (v - mean) * r;
        }
    })
}

/// [`normalize`]'s VJP (and JVP: its Jacobian is symmetric) from its
/// input `x` and a cotangent `g`: with `x̂` the normalised row and `r` the
/// reciprocal standard deviation, `r · (g − mean(g) − x̂ · mean(g ⊙ x̂))`.
///
/// ```
/// let x = ndarray::arr1(&[1.0f64, 3.0]).into_dyn();
/// let g = ndarray::arr1(&[1.0f64, 1.0]).into_dyn();
/// // A shift of the whole row does not change the output.
/// let dx = nabla_kernels::rows::normalize_backward(x.view(), g.view(), 0.0);
/// assert_eq!(dx.as_slice().unwrap(), &[0.0, 0.0]);
/// ```
pub fn normalize_backward<T: Float>(
    x: ArrayViewD<'_, T>,
    g: ArrayViewD<'_, T>,
    eps: f64,
) -> ArrayD<T> {
    map_rows(&[x, g], |_, [x, g], out| {
        let (mean, r) = moments(x, eps);
        let inv_d = T::from_f64(1.0 / x.len() as f64);
        // out holds x̂ while the two means are taken.
        for (o, &v) in out.iter_mut().zip(x) {
            *o = (v - mean) * r;
        }
        let (a, b) = (sum(g) * inv_d, dot(g, out) * inv_d);
        for (o, &gv) in out.iter_mut().zip(g) {
            *o = r * (gv - a - *o * b);
        }
    })
}

/// Mean and `1 / √(var + eps)` of a row (two passes: the variance is
/// taken about the mean, as PyTorch does, not from `E[x²] − E[x]²`).
fn moments<T: Float>(row: &[T], eps: f64) -> (T, T) {
    let inv_d = T::from_f64(1.0 / row.len().max(1) as f64);
    let mean = sum(row) * inv_d;
    let mut acc = [T::ZERO; 8];
    let chunks = row.chunks_exact(8);
    let tail = chunks.remainder();
    for c in chunks {
        for (a, &v) in acc.iter_mut().zip(c) {
            let d = v - mean;
            *a += d * d;
        }
    }
    let mut var = acc.iter().copied().sum::<T>();
    for &v in tail {
        var += (v - mean) * (v - mean);
    }
    let r = T::ONE / (var * inv_d + T::from_f64(eps)).sqrt();
    (mean, r)
}

/// `Σ a ⊙ b`, in eight interleaved partial sums.
fn dot<T: Float>(a: &[T], b: &[T]) -> T {
    let mut acc = [T::ZERO; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: T = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(&x, &y)| x * y)
        .sum();
    for (x, y) in ca.zip(cb) {
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    acc.iter().copied().sum::<T>() + tail
}

/// Applies `f(row index, input rows, output row)` to every row (last
/// axis) of same-shaped inputs, in parallel above the threshold, into a
/// fresh row-major array of that shape.
#[track_caller]
fn map_rows<T: Float, const N: usize>(
    xs: &[ArrayViewD<'_, T>; N],
    f: impl Fn(usize, [&[T]; N], &mut [T]) + Sync,
) -> ArrayD<T> {
    let shape = xs[0].shape().to_vec();
    for x in xs {
        assert_eq!(x.shape(), &shape[..], "row kernel: operand shapes differ");
    }
    let std: Vec<_> = xs.iter().map(|x| x.as_standard_layout()).collect();
    let slices: Vec<&[T]> = std
        .iter()
        .map(|a| a.as_slice().expect("standard layout is contiguous"))
        .collect();
    let d = shape.last().copied().unwrap_or(1).max(1);
    let n: usize = shape.iter().product();
    let mut out = vec![T::ZERO; n];
    // Rows per task: about 16K elements each.
    let per = (crate::PARALLEL_THRESHOLD / 2).div_ceil(d).max(1);
    let run = |first: usize, piece: &mut [T]| {
        for (k, o) in piece.chunks_mut(d).enumerate() {
            let at = (first + k) * d;
            f(
                first + k,
                std::array::from_fn(|i| &slices[i][at..at + d]),
                o,
            );
        }
    };
    if n >= crate::PARALLEL_THRESHOLD {
        crate::parallel::chunks_mut(&mut out, per * d, |i, piece| run(i * per, piece));
    } else {
        run(0, &mut out);
    }
    crate::owned(shape, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each kernel against its definition written out element by element,
    /// on rows long enough to use the parallel path and a ragged tail.
    #[test]
    fn row_kernels_match_their_definitions() {
        let (rows, d) = (300, 131);
        let x: Vec<f64> = (0..rows * d)
            .map(|i| ((i * 37 % 101) as f64) / 17.0 - 3.0)
            .collect();
        let g: Vec<f64> = (0..rows * d)
            .map(|i| ((i * 53 % 89) as f64) / 23.0 - 2.0)
            .collect();
        let xa = ndarray::ArrayD::from_shape_vec(vec![rows, d], x.clone()).unwrap();
        let ga = ndarray::ArrayD::from_shape_vec(vec![rows, d], g.clone()).unwrap();
        let y = softmax(xa.view());
        let dy = softmax_backward(y.view(), ga.view(), 1.0);
        let n = normalize(xa.view(), 1e-5);
        let dn = normalize_backward(xa.view(), ga.view(), 1e-5);
        for r in 0..rows {
            let xr = &x[r * d..(r + 1) * d];
            let gr = &g[r * d..(r + 1) * d];
            let m = xr.iter().cloned().fold(f64::MIN, f64::max);
            let s: f64 = xr.iter().map(|v| (v - m).exp()).sum();
            let yr: Vec<f64> = xr.iter().map(|v| (v - m).exp() / s).collect();
            let sg: f64 = yr.iter().zip(gr).map(|(a, b)| a * b).sum();
            let mean = xr.iter().sum::<f64>() / d as f64;
            let var = xr.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / d as f64;
            let rs = 1.0 / (var + 1e-5).sqrt();
            let xh: Vec<f64> = xr.iter().map(|v| (v - mean) * rs).collect();
            let ga_ = gr.iter().sum::<f64>() / d as f64;
            let gb = gr.iter().zip(&xh).map(|(a, b)| a * b).sum::<f64>() / d as f64;
            for j in 0..d {
                let at = [r, j];
                assert!((y[&at[..]] - yr[j]).abs() < 1e-15);
                assert!((dy[&at[..]] - yr[j] * (gr[j] - sg)).abs() < 1e-14);
                assert!((n[&at[..]] - xh[j]).abs() < 1e-13);
                assert!((dn[&at[..]] - rs * (gr[j] - ga_ - xh[j] * gb)).abs() < 1e-12);
            }
        }
    }
}
