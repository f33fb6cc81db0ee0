//! Solves, inverses and determinants, from LU factorisations.

use super::{both_batched, check_rhs, check_square, mt, on_host, per_matrix, sum2};
use crate::storage::{float_map, float_map2};
use crate::{Array, ArrayValue};
use nabla_kernels::linalg as kernels;
use nabla_macros::{custom_op, differentiable};

/// `a⁻¹ b` for `a` `[.., n, n]` and `b` `[.., n, k]` or `[n]` (one
/// vector for every matrix); batch axes broadcast (`jnp.linalg.solve`,
/// NumPy 2's rule: only a 1-D `b` is a vector). A singular `a` gives
/// non-finite values.
///
/// ```
/// use nabla::{Array, linalg};
/// let a = Array::from_vec(vec![2.0f64, 0.0, 0.0, 4.0], &[2, 2]);
/// let b = Array::from_vec(vec![2.0f64, 2.0], &[2]);
/// assert_eq!(linalg::solve(&a, &b).to_vec::<f64>(), vec![1.0, 0.5]);
/// ```
#[differentiable(crate = crate)]
pub fn solve(a: &Array, b: &Array) -> Array {
    let (sa, sb, vector) = crate::linalg::lu::solve_shapes(a.shape(), b.shape());
    let bm = if vector { b.expand_dims(-1) } else { b.clone() };
    let x = crate::linalg::solve_square(&a.broadcast_to(&sa), &bm.broadcast_to(&sb));
    if vector { x.squeeze(-1) } else { x }
}

/// The broadcast shapes of `solve`'s operands, and whether `b` is a
/// vector (1-D).
#[doc(hidden)]
#[track_caller]
pub fn solve_shapes(
    sa: impl AsRef<[usize]>,
    sb: impl AsRef<[usize]>,
) -> (Vec<usize>, Vec<usize>, bool) {
    let (sa, sb) = (sa.as_ref(), sb.as_ref());
    assert!(
        sa.len() >= 2 && sa[sa.len() - 1] == sa[sa.len() - 2],
        "linalg::solve: a must be square matrices [.., n, n], got shape {sa:?}; pass a with two equal last axes"
    );
    let n = sa[sa.len() - 1];
    let vector = sb.len() == 1;
    let (bbatch, bmat) = if vector {
        (&sb[..sb.len() - 1], vec![sb[sb.len() - 1], 1])
    } else {
        assert!(
            sb.len() >= 2,
            "linalg::solve: b {sb:?} must be [.., n, k] or [n] for a {sa:?}; reshape b"
        );
        (&sb[..sb.len() - 2], sb[sb.len() - 2..].to_vec())
    };
    assert!(
        bmat[0] == n,
        "linalg::solve: a {sa:?} is {n} × {n} but b {sb:?} has {} rows; pass a b of shape [.., {n}, k] or [{n}]",
        bmat[0]
    );
    let batch = nabla_kernels::elementwise::try_broadcast_shape(&sa[..sa.len() - 2], bbatch)
        .unwrap_or_else(|| {
            panic!("linalg::solve: batch axes of a {sa:?} and b {sb:?} do not broadcast; make them equal or 1")
        });
    let mut fa = batch.to_vec();
    fa.extend([n, n]);
    let mut fb = batch.to_vec();
    fb.extend(bmat);
    (fa, fb, vector)
}

/// The solve primitive behind [`solve`]: `a⁻¹ b` for `a` `[.., n, n]` and
/// `b` `[.., n, k]` with the same batch axes.
///
/// ```
/// use nabla::{Array, linalg};
/// let a = Array::from_vec(vec![2.0f64, 0.0, 0.0, 4.0], &[2, 2]);
/// let b = Array::from_vec(vec![2.0f64, 2.0], &[2, 1]);
/// assert_eq!(linalg::solve_square(&a, &b).to_vec::<f64>(), vec![1.0, 0.5]);
/// ```
#[custom_op(jvp = solve_jvp, vjp = solve_vjp, batch = solve_batch, shard = last(2), crate = crate)]
pub fn solve_square(a: &Array, b: &Array) -> Array {
    check_rhs("solve", a, b);
    on_host(&[a, b], |v| {
        Array::from_data(float_map2!(
            &*v[0].data,
            &*v[1].data,
            |x, y| kernels::solve(x.view(), y.view()),
            unreachable!("checked float")
        ))
    })
}

fn solve_jvp<V: ArrayValue>(a: &V, _b: &V, x: &V, da: Option<&V>, db: Option<&V>) -> V {
    // ẋ = a⁻¹ (ḃ − ȧ x)
    let rhs = match (da, db) {
        (Some(da), Some(db)) => db.sub(&da.matmul(x)),
        (Some(da), None) => da.matmul(x).neg(),
        (None, Some(db)) => db.clone(),
        (None, None) => return x.zeros_like(),
    };
    solve_square::forward(a, &rhs)
}

fn solve_vjp<V: ArrayValue>(a: &V, _b: &V, x: &V, ct: &V) -> (V, V) {
    // b̄ = a⁻ᵀ x̄, ā = −b̄ xᵀ
    let gb = solve_square::forward(&mt(a), ct);
    (gb.matmul(&mt(x)).neg(), gb)
}

fn solve_batch<V: ArrayValue>(a: &V, b: &V, batched: [bool; 2]) -> V {
    let (a, b) = both_batched(a, b, batched);
    solve_square::forward(&a, &b)
}

/// `a⁻¹` for `a` `[.., n, n]` (non-finite where `a` is singular).
///
/// ```
/// use nabla::{Array, linalg};
/// let a = Array::from_vec(vec![2.0f64, 0.0, 0.0, 4.0], &[2, 2]);
/// assert_eq!(linalg::inv(&a).to_vec::<f64>(), vec![0.5, 0.0, 0.0, 0.25]);
/// ```
#[custom_op(jvp = inv_jvp, vjp = inv_vjp, batch = elementwise, shard = last(2), crate = crate)]
pub fn inv(a: &Array) -> Array {
    check_square("inv", a);
    on_host(&[a], |v| {
        Array::from_data(float_map!(
            &*v[0].data,
            |x| kernels::inv(x.view()),
            unreachable!("checked float")
        ))
    })
}

fn inv_jvp<V: ArrayValue>(_a: &V, y: &V, da: Option<&V>) -> V {
    da.map_or_else(|| y.zeros_like(), |d| y.matmul(d).matmul(y).neg())
}

fn inv_vjp<V: ArrayValue>(_a: &V, y: &V, ct: &V) -> V {
    let yt = mt(y);
    yt.matmul(ct).matmul(&yt).neg()
}

/// `det a` for `a` `[.., n, n]`, one value per matrix.
///
/// ```
/// use nabla::{Array, linalg};
/// let a = Array::from_vec(vec![0.0f64, 2.0, 3.0, 0.0], &[2, 2]);
/// assert_eq!(linalg::det(&a).item(), -6.0);
/// ```
#[custom_op(jvp = det_jvp, vjp = det_vjp, batch = elementwise, shard = last(2), crate = crate)]
pub fn det(a: &Array) -> Array {
    check_square("det", a);
    on_host(&[a], |v| {
        Array::from_data(float_map!(
            &*v[0].data,
            |x| kernels::det(x.view()),
            unreachable!("checked float")
        ))
    })
}

fn det_jvp<V: ArrayValue>(a: &V, d: &V, da: Option<&V>) -> V {
    // ḋ = det(a) · tr(a⁻¹ ȧ)
    da.map_or_else(
        || d.zeros_like(),
        |t| d.mul(&sum2(&mt(&inv::forward(a)).mul(t))),
    )
}

fn det_vjp<V: ArrayValue>(a: &V, d: &V, ct: &V) -> V {
    // ā = d̄ · det(a) · a⁻ᵀ
    mt(&inv::forward(a)).mul(&per_matrix(&ct.mul(d)))
}

/// `log |det a|` for `a` `[.., n, n]` (`-inf` where `a` is singular).
///
/// ```
/// use nabla::{Array, linalg};
/// let a = Array::from_vec(vec![0.0f64, 2.0, 3.0, 0.0], &[2, 2]);
/// assert_eq!(linalg::logabsdet(&a).item(), 6f64.ln());
/// ```
#[custom_op(jvp = logabsdet_jvp, vjp = logabsdet_vjp, batch = elementwise, shard = last(2), crate = crate)]
pub fn logabsdet(a: &Array) -> Array {
    check_square("slogdet", a);
    on_host(&[a], |v| {
        Array::from_data(float_map!(
            &*v[0].data,
            |x| kernels::logabsdet(x.view()),
            unreachable!("checked float")
        ))
    })
}

fn logabsdet_jvp<V: ArrayValue>(a: &V, l: &V, da: Option<&V>) -> V {
    da.map_or_else(|| l.zeros_like(), |t| sum2(&mt(&inv::forward(a)).mul(t)))
}

fn logabsdet_vjp<V: ArrayValue>(a: &V, _l: &V, ct: &V) -> V {
    mt(&inv::forward(a)).mul(&per_matrix(ct))
}

/// The sign of `det a` (`±1`, 0 where `a` is singular); its derivative is
/// zero.
///
/// ```
/// use nabla::{Array, linalg};
/// let a = Array::from_vec(vec![0.0f64, 2.0, 3.0, 0.0], &[2, 2]);
/// assert_eq!(linalg::det_sign(&a).item(), -1.0);
/// ```
#[custom_op(jvp = sign_jvp, vjp = sign_vjp, batch = elementwise, shard = last(2), crate = crate)]
pub fn det_sign(a: &Array) -> Array {
    check_square("slogdet", a);
    on_host(&[a], |v| {
        Array::from_data(float_map!(
            &*v[0].data,
            |x| kernels::det_sign(x.view()),
            unreachable!("checked float")
        ))
    })
}

fn sign_jvp<V: ArrayValue>(_a: &V, s: &V, _da: Option<&V>) -> V {
    s.zeros_like()
}

fn sign_vjp<V: ArrayValue>(a: &V, _s: &V, _ct: &V) -> V {
    a.zeros_like()
}

/// `(sign, log |det a|)` for `a` `[.., n, n]` (`jnp.linalg.slogdet`):
/// `det a = sign · exp(log |det a|)` without overflow.
///
/// ```
/// use nabla::{Array, linalg};
/// let a = Array::from_vec(vec![0.0f64, 2.0, 3.0, 0.0], &[2, 2]);
/// let (s, l) = linalg::slogdet(&a);
/// assert_eq!((s.item(), l.item()), (-1.0, 6f64.ln()));
/// ```
#[differentiable(crate = crate)]
pub fn slogdet(a: &Array) -> (Array, Array) {
    (crate::linalg::det_sign(a), crate::linalg::logabsdet(a))
}
