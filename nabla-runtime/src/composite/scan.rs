//! `cumprod` and `sort`, written as `#[differentiable]` code.
//!
//! `cumprod` is a log-depth scan of products (no division, so exact at
//! zeros and to every order, like JAX's). `sort` ranks the elements by
//! comparisons of a gradient-free copy and applies the rank permutation as
//! a 0/1 matrix: the derivative routes each tangent to the sorted position
//! of its element (JAX's rule), under every transform. The rank matrix
//! costs O(n²) per sorted slice, so it suits slices of up to a few thousand
//! elements.

use crate::Array;
use nabla_macros::differentiable;

/// The shifts of a Hillis–Steele scan over `n` elements: 1, 2, 4, .. < n.
///
/// ```
/// assert_eq!(nabla::composite::scan::doublings(5), vec![1, 2, 4]);
/// ```
pub fn doublings(n: usize) -> Vec<usize> {
    std::iter::successors(Some(1usize), |s| Some(s * 2))
        .take_while(|&s| s < n)
        .collect()
}

/// Cumulative product along `axis` (`jnp.cumprod`).
///
/// ```
/// # use nabla::*;
/// let x = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[4]);
/// assert_eq!(nabla::cumprod(&x, 0).to_vec::<f64>(), vec![1.0, 2.0, 6.0, 24.0]);
/// ```
#[differentiable(crate = crate)]
pub fn cumprod(x: &Array, axis: isize) -> Array {
    let ax = crate::composite::checked_axis("cumprod", axis, x.ndim());
    let n = x.shape()[ax as usize];
    let mut y = x.clone();
    for s in crate::composite::scan::doublings(n) {
        let ones = y.slice_axis(ax, 0..s).ones_like();
        let head = y.slice_axis(ax, 0..n - s);
        y = &y * &crate::concat(&[&ones, &head], ax);
    }
    y
}

/// The permutation moving `axis` last, and its inverse.
#[doc(hidden)]
#[track_caller]
pub fn axis_last(op: &str, ndim: usize, axis: isize) -> (Vec<usize>, Vec<usize>) {
    let ax = crate::array::norm_axis(op, axis, ndim);
    let to: Vec<usize> = (0..ndim).filter(|&i| i != ax).chain([ax]).collect();
    let mut back = vec![0; ndim];
    for (i, &p) in to.iter().enumerate() {
        back[p] = i;
    }
    (to, back)
}

/// `x` sorted ascending along `axis` (`jnp.sort`); equal elements keep
/// their order. NaN makes its slice NaN. Cost O(n²) per slice of `n`
/// elements (see the module doc).
///
/// ```
/// # use nabla::*;
/// let x = Array::from_vec(vec![3.0f64, 1.0, 2.0, 1.0], &[4]);
/// assert_eq!(nabla::sort(&x, -1).to_vec::<f64>(), vec![1.0, 1.0, 2.0, 3.0]);
/// ```
#[differentiable(crate = crate)]
pub fn sort(x: &Array, axis: isize) -> Array {
    let (to_last, back) = crate::composite::scan::axis_last("sort", x.ndim(), axis);
    let xt = x.permute(&to_last);
    let key = crate::stop_gradient(&xt);
    // Positions 0..n-1 in x's dtype, and the order of (key, position)
    // pairs: less[i][j] = 1 when element j sorts before element i.
    let pos = xt.ones_like().cumsum(-1) - 1.0;
    let by_key = (key.expand_dims(-1) - key.expand_dims(-2)).signum() * 2.0;
    let by_pos = (pos.expand_dims(-1) - pos.expand_dims(-2)).signum();
    let less = ((by_key + by_pos).signum() + 1.0) * 0.5;
    let rank = less.sum_axes(&[-1], false) - 0.5;
    // onehot[r][i] = 1 when element i goes to position r.
    let onehot = (-(rank.expand_dims(-2) - pos.expand_dims(-1)).abs() + 1.0).relu();
    onehot
        .matmul(&xt.expand_dims(-1))
        .squeeze(-1)
        .permute(&back)
}
