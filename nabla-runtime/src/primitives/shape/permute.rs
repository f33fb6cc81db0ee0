//! Axis permutation.

use super::reshape;
use crate::autograd::needs_grad;
use crate::storage::any_map;
use crate::{Array, ArrayValue};
use ndarray::IxDyn;

/// The output shape, checking that `perm` is a permutation of the axes.
///
/// ```
/// use nabla::primitives::shape::permute;
/// assert_eq!(&permute::out_shape(&[2, 3, 4], &[2, 0, 1])[..], &[4, 2, 3]);
/// assert!(std::panic::catch_unwind(|| permute::out_shape(&[2, 3], &[0, 0])).is_err());
/// ```
#[track_caller]
pub fn out_shape(x: &[usize], perm: &[usize]) -> crate::Shape {
    check(x, perm);
    perm.iter().map(|&p| x[p]).collect()
}
/// Panics unless `perm` lists each axis of `x` once (the check of
/// [`out_shape`], without building the shape).
#[track_caller]
fn check(x: &[usize], perm: &[usize]) {
    let nd = x.len();
    // One bit per axis seen (arrays have far fewer than 128 axes; more
    // fall back to sorting).
    let ok = if nd <= 128 {
        let mut seen = 0u128;
        perm.len() == nd
            && perm.iter().all(|&p| {
                if p >= nd || (seen >> p) & 1 == 1 {
                    return false;
                }
                seen |= 1 << p;
                true
            })
    } else {
        let mut sorted = perm.to_vec();
        sorted.sort_unstable();
        sorted.iter().copied().eq(0..nd)
    };
    if !ok {
        panic!(
            "permute: {perm:?} is not a permutation of the {nd} axes of an array with shape {x:?}; list each axis 0..{nd} once"
        );
    }
}
/// Forward: a strided view, no copy.
///
/// ```
/// use nabla::{primitives::shape::permute, Array, DType};
/// let x = Array::arange(6, DType::F64).reshape(&[2, 3]);
/// let y = permute::forward(&x, &[1, 0]);
/// assert_eq!(y.shape(), &[3, 2]);
/// assert_eq!(y.to_vec::<f64>(), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
/// ```
#[track_caller]
pub fn forward(x: &Array, perm: &[usize]) -> Array {
    check(x.shape(), perm);
    crate::array::on_gpu!(&*x.data, |g| g.permute(perm));
    crate::array::view::host_view!(x, |r| r.permuted_axes(IxDyn(perm)))
}
/// `permute` then `reshape` to `shape`, with one copy on the CPU
/// where the reshape of the permuted view would copy. When it would
/// not (it only adds or drops length-1 axes, or the permuted view is
/// already row-major), on a GPU, or when `x` records a tape node, the
/// two ops run one after the other, so views stay views.
///
/// ```
/// use nabla::{primitives::shape::permute, Array, DType};
/// let x = Array::arange(6, DType::F64).reshape(&[2, 3]);
/// let y = permute::forward_as(&x, &[1, 0], &[6]);
/// assert_eq!(y.to_vec::<f64>(), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
/// ```
#[track_caller]
pub fn forward_as(x: &Array, perm: &[usize], shape: &[usize]) -> Array {
    let ps = out_shape(x.shape(), perm);
    reshape::check(&ps, shape);
    if reshape_keeps_view(x.shape(), x.strides(), perm, shape)
        || needs_grad(&[x])
        || x.device() != crate::Device::Cpu
    {
        return x.permute(perm).reshape(shape);
    }
    Array::from_data(any_map!(&*x.data, |a| {
        nabla_kernels::elementwise::permuted_as(&a.view(), perm, shape)
    }))
}
/// Whether reshaping the view of `(shape, strides)` permuted by `perm`
/// into `target` is again a view: its non-unit axes are `target`'s in
/// order, or the permuted view is row-major (unit axes aside).
fn reshape_keeps_view(
    shape: &[usize],
    strides: &[isize],
    perm: &[usize],
    target: &[usize],
) -> bool {
    // Row-major, walking the permuted axes from the last.
    let mut want = 1isize;
    let mut row_major = true;
    for &a in perm.iter().rev() {
        if shape[a] != 1 {
            row_major &= strides[a] == want;
            want *= shape[a] as isize;
        }
    }
    if row_major {
        return true;
    }
    // The same non-unit axes, in order.
    let mut t = target.iter().filter(|&&d| d != 1);
    perm.iter()
        .filter(|&&a| shape[a] != 1)
        .all(|&a| t.next() == Some(&shape[a]))
        && t.next().is_none()
}
/// The inverse permutation.
///
/// ```
/// use nabla::primitives::shape::permute::inverse;
/// assert_eq!(inverse(&[2, 0, 1]), vec![1, 2, 0]);
/// ```
pub fn inverse(perm: &[usize]) -> Vec<usize> {
    let mut inv = vec![0; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inv[p] = i;
    }
    inv
}
/// JVP rule.
///
/// ```
/// use nabla::{primitives::shape::permute, Array, DType};
/// let dx = Array::zeros(&[2, 3, 4], DType::F64);
/// assert_eq!(permute::jvp(&dx, &[2, 0, 1]).shape(), &[4, 2, 3]);
/// ```
pub fn jvp<V: ArrayValue>(dx: &V, perm: &[usize]) -> V {
    dx.permute(perm)
}
/// VJP rule: the inverse permutation.
///
/// ```
/// use nabla::{primitives::shape::permute, Array, DType};
/// let ct = Array::zeros(&[4, 2, 3], DType::F64); // the output's shape
/// assert_eq!(permute::vjp(&[2, 0, 1], &ct).shape(), &[2, 3, 4]);
/// ```
pub fn vjp<V: ArrayValue>(perm: &[usize], ct: &V) -> V {
    ct.permute(&inverse(perm))
}
