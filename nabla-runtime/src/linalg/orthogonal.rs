//! QR factorisations.

use super::{cols, mt, on_host, pattern, rows, triangular_solve};
use crate::storage::float_map;
use crate::{Array, ArrayValue};
use nabla_kernels::linalg as kernels;
use nabla_macros::{custom_op, differentiable};

/// The reduced QR factorisation of `a` `[.., m, n]` (`jnp.linalg.qr`,
/// `mode="reduced"`): `(q [.., m, k], r [.., k, n])`, `k = min(m, n)`,
/// `q` with orthonormal columns, `r` upper triangular, `a = q r`.
/// Derivatives need `m ≥ n` (tall or square), as in JAX; a wide `a`
/// factorises but panics when differentiated.
///
/// ```
/// use nabla::{Array, linalg};
/// let a = Array::from_vec(vec![3.0f64, 1.0, 4.0, 2.0], &[2, 2]);
/// let (q, r) = linalg::qr(&a);
/// assert!((q.matmul(&r) - &a).abs().max().item() < 1e-12);
/// ```
#[differentiable(crate = crate)]
pub fn qr(a: &Array) -> (Array, Array) {
    // The packed primitive first: it checks the shape.
    let p = crate::linalg::qr_packed(a);
    let (m, n) = (a.shape()[a.ndim() - 2], a.shape()[a.ndim() - 1]);
    let k = m.min(n);
    (
        p.slice_axis(-2, 0..m).slice_axis(-1, 0..k),
        p.slice_axis(-2, m..m + k),
    )
}

/// [`qr`] as one primitive: `[.., m + k, n]`, rows `0..m` holding `q` in
/// columns `0..k` (zeros after), rows `m..` holding `r`.
///
/// ```
/// use nabla::{Array, linalg};
/// let a = Array::from_vec(vec![3.0f64, 4.0], &[2, 1]);
/// assert_eq!(linalg::qr_packed(&a).shape(), &[3, 1]);
/// ```
#[custom_op(jvp = qr_jvp, vjp = qr_vjp, batch = elementwise, shard = last(2), crate = crate)]
pub fn qr_packed(a: &Array) -> Array {
    let s = a.shape();
    assert!(
        s.len() >= 2,
        "linalg::qr: a must be matrices [.., m, n], got shape {s:?}; pass an array with at least two axes"
    );
    if !a.dtype().is_float() {
        crate::primitives::unary::not_float("qr", a);
    }
    on_host(&[a], |v| {
        Array::from_data(float_map!(
            &*v[0].data,
            |x| kernels::qr_packed(x.view()),
            unreachable!("checked float")
        ))
    })
}

/// `q` and `r` of a packed output of a tall or square matrix, after
/// checking it is one.
#[track_caller]
fn parts<V: ArrayValue>(p: &V) -> (V, V) {
    let s = p.shape_vec();
    let (rk, n) = (s[s.len() - 2], s[s.len() - 1]);
    assert!(
        rk >= 2 * n,
        "linalg::qr: derivatives need a tall or square matrix (m ≥ n), got {} × {n}; \
         differentiate the factorisation of the transpose instead",
        rk / 2
    );
    let m = rk - n;
    (rows(p, 0, m), rows(p, m, m + n))
}

/// `x r⁻¹` for upper triangular `r`.
fn right_rinv<V: ArrayValue>(x: &V, r: &V) -> V {
    mt(&triangular_solve::forward(&mt(r), &mt(x), true))
}

fn qr_jvp<V: ArrayValue>(_a: &V, p: &V, da: Option<&V>) -> V {
    let Some(t) = da else {
        return p.zeros_like();
    };
    // c = ȧ r⁻¹, k = qᵀ c, ω = tril(k, −1) − tril(k, −1)ᵀ:
    // q̇ = q (ω − k) + c, ṙ = (k − ω) r
    let (q, r) = parts(p);
    let n = r.shape_vec()[r.ndim() - 1];
    let c = right_rinv(t, &r);
    let k = mt(&q).matmul(&c);
    let low = k.mul(&pattern(&k, n, |i, j| if i > j { 1.0 } else { 0.0 }));
    let omega = low.sub(&mt(&low));
    let dq = q.matmul(&omega.sub(&k)).add(&c);
    let dr = k.sub(&omega).matmul(&r);
    V::concat(&[dq, dr], p.ndim() - 2)
}

fn qr_vjp<V: ArrayValue>(_a: &V, p: &V, ct: &V) -> V {
    // n = r̄ rᵀ − qᵀ q̄, n' = triu(n) + triu(n, 1)ᵀ: ā = (q̄ + q n') r⁻ᵀ
    let (q, r) = parts(p);
    let s = r.shape_vec();
    let n = s[s.len() - 1];
    let m = q.shape_vec()[q.ndim() - 2];
    let (gq, gr) = (cols(&rows(ct, 0, m), 0, n), rows(ct, m, m + n));
    let nn = gr.matmul(&mt(&r)).sub(&mt(&q).matmul(&gq));
    let up = nn.mul(&pattern(&nn, n, |i, j| if j >= i { 1.0 } else { 0.0 }));
    let strict = nn.mul(&pattern(&nn, n, |i, j| if j > i { 1.0 } else { 0.0 }));
    let sym_up = up.add(&mt(&strict));
    let x = gq.add(&q.matmul(&sym_up));
    // x r⁻ᵀ = (r⁻¹ xᵀ)ᵀ
    mt(&triangular_solve::forward(&r, &mt(&x), false))
}
