//! Diagonals and traces.

use crate::Array;
use nabla_macros::differentiable;

/// The diagonal of the last two axes of `a` `[.., m, n]`: `[.., min(m, n)]`
/// (`jnp.diagonal(a, axis1=-2, axis2=-1)`).
///
/// ```
/// use nabla::{Array, linalg};
/// let a = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
/// assert_eq!(linalg::diagonal(&a).to_vec::<f64>(), vec![1.0, 5.0]);
/// ```
#[differentiable(crate = crate)]
pub fn diagonal(a: &Array) -> Array {
    let (flat, idx) = crate::linalg::diag::positions(a.shape());
    a.reshape(&flat).index_select(-1, &idx)
}

/// The flattened shape `[.., m · n]` and the positions of the diagonal in
/// each flattened matrix.
#[doc(hidden)]
#[track_caller]
pub fn positions(shape: impl AsRef<[usize]>) -> (Vec<usize>, Vec<usize>) {
    let shape = shape.as_ref();
    let nd = shape.len();
    assert!(
        nd >= 2,
        "linalg::diagonal: a must be matrices [.., m, n], got shape {shape:?}; pass an array with at least two axes"
    );
    let (m, n) = (shape[nd - 2], shape[nd - 1]);
    let mut flat = shape[..nd - 2].to_vec();
    flat.push(m * n);
    (flat, (0..m.min(n)).map(|i| i * n + i).collect())
}

/// The sum of the diagonal of the last two axes, one value per matrix.
///
/// ```
/// use nabla::{Array, linalg};
/// let a = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]);
/// assert_eq!(linalg::trace(&a).item(), 5.0);
/// ```
#[differentiable(crate = crate)]
pub fn trace(a: &Array) -> Array {
    crate::linalg::diagonal(a).sum_axes(&[-1], false)
}
