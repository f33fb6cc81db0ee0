//! Joining arrays: [`concat`] along an existing axis and [`stack`] along a
//! new one, recording the tape node that splits the cotangent back.

use crate::Array;
use crate::array::norm_axis;
use crate::autograd::{needs_grad, record};

/// Joins arrays along an existing axis (`jnp.concatenate`).
///
/// ```
/// # use nabla::{concat, Array, DType};
/// let c = concat(&[Array::zeros(&[2, 3], DType::F32), Array::ones(&[2, 2], DType::F32)], 1);
/// assert_eq!(c.shape(), &[2, 5]);
/// ```
#[track_caller]
pub fn concat<A: std::borrow::Borrow<Array>>(parts: &[A], axis: isize) -> Array {
    let parts: Vec<Array> = parts.iter().map(|p| p.borrow().clone()).collect();
    let nd = parts.first().map(|p| p.ndim()).unwrap_or(0);
    let ax = norm_axis("concat", axis, nd);
    concat_norm(&parts, ax)
}

#[track_caller]
pub(crate) fn concat_norm(parts: &[Array], axis: usize) -> Array {
    let y = super::concat::forward(parts, axis);
    let refs: Vec<&Array> = parts.iter().collect();
    if !needs_grad(&refs) {
        return y;
    }
    let sizes: Vec<usize> = parts.iter().map(|p| p.shape()[axis]).collect();
    let want: Vec<bool> = parts.iter().map(|p| p.is_tracked()).collect();
    record(
        y,
        "concat",
        &refs,
        Box::new(move |ct| {
            (0..sizes.len())
                .map(|i| want[i].then(|| super::concat::vjp(&sizes, axis, i, ct)))
                .collect()
        }),
    )
}

/// Joins arrays along a new axis (`jnp.stack`).
///
/// ```
/// # use nabla::{stack, Array, DType};
/// let s = stack(&[Array::zeros(&[2, 3], DType::F32), Array::ones(&[2, 3], DType::F32)], 0);
/// assert_eq!(s.shape(), &[2, 2, 3]);
/// ```
#[track_caller]
pub fn stack<A: std::borrow::Borrow<Array>>(parts: &[A], axis: isize) -> Array {
    let nd = parts.first().map(|p| p.borrow().ndim()).unwrap_or(0);
    let ax = norm_axis("stack", axis, nd + 1);
    let expanded: Vec<Array> = parts
        .iter()
        .map(|p| p.borrow().expand_dims(ax as isize))
        .collect();
    concat_norm(&expanded, ax)
}
