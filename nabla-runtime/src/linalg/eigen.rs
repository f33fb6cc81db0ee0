//! Symmetric eigendecompositions.

use super::{check_square, mt, on_host, pattern, rows, sym};
use crate::storage::float_map;
use crate::{Array, ArrayValue};
use nabla_kernels::linalg as kernels;
use nabla_macros::{custom_op, differentiable};

/// Eigenvalues (ascending) and eigenvectors of the symmetric part of `a`
/// `[.., n, n]` (`jnp.linalg.eigh`): `(w [.., n], v [.., n, n])` with
/// `a = v · diag(w) · vᵀ`, eigenvectors in the columns of `v`. Eigenvector
/// derivatives are infinite where eigenvalues repeat (undefined there), and
/// the whole VJP then is not finite: for eigenvalues alone use
/// [`eigvalsh`], whose derivatives stay finite.
///
/// ```
/// use nabla::{Array, linalg};
/// let a = Array::from_vec(vec![2.0f64, 1.0, 1.0, 2.0], &[2, 2]);
/// let (w, v) = linalg::eigh(&a);
/// assert!((w.to_vec::<f64>()[0] - 1.0).abs() < 1e-12 && (w.to_vec::<f64>()[1] - 3.0).abs() < 1e-12);
/// assert_eq!(v.shape(), &[2, 2]);
/// ```
#[differentiable(crate = crate)]
pub fn eigh(a: &Array) -> (Array, Array) {
    let n = a.shape()[a.ndim() - 1];
    let p = crate::linalg::eigh_packed(a);
    (
        p.slice_axis(-2, 0..1).squeeze(-2),
        p.slice_axis(-2, 1..n + 1),
    )
}

/// The eigenvalues (ascending) of the symmetric part of `a` `[.., n, n]`
/// (`jnp.linalg.eigvalsh`). A primitive of its own: its derivatives
/// (`ẇ = diag(vᵀ ȧ v)`, `ā = v diag(w̄) vᵀ`) stay finite where eigenvalues
/// repeat, where those through [`eigh`]'s eigenvectors do not; the rules
/// factorise `a` again for `v`.
///
/// ```
/// use nabla::{Array, linalg};
/// let a = Array::from_vec(vec![2.0f64, 0.0, 0.0, 1.0], &[2, 2]);
/// assert_eq!(linalg::eigvalsh(&a).to_vec::<f64>(), vec![1.0, 2.0]);
/// ```
#[custom_op(jvp = eigvalsh_jvp, vjp = eigvalsh_vjp, batch = elementwise, shard = last(2), crate = crate)]
pub fn eigvalsh(a: &Array) -> Array {
    rows(&eigh_packed(a), 0, 1).squeeze(-2)
}

/// The eigenvectors of `a` (columns), from a fresh factorisation.
fn vectors<V: ArrayValue>(a: &V) -> V {
    let n = a.shape_vec()[a.ndim() - 1];
    rows(&eigh_packed::forward(a), 1, n + 1)
}

fn eigvalsh_jvp<V: ArrayValue>(a: &V, w: &V, da: Option<&V>) -> V {
    let Some(t) = da else {
        return w.zeros_like();
    };
    let v = vectors(a);
    let n = v.shape_vec()[v.ndim() - 1];
    let m = mt(&v).matmul(&sym(t)).matmul(&v);
    let eye = pattern(&m, n, |i, j| if i == j { 1.0 } else { 0.0 });
    m.mul(&eye).sum_axes(&[m.ndim() - 2], false)
}

fn eigvalsh_vjp<V: ArrayValue>(a: &V, _w: &V, ct: &V) -> V {
    let v = vectors(a);
    let mut s = ct.shape_vec().to_vec();
    s.insert(s.len() - 1, 1);
    let vs = v.mul(&ct.reshape(&s));
    sym(&vs.matmul(&mt(&v)))
}

/// [`eigh`] as one primitive: `[.., n + 1, n]`, row 0 the eigenvalues,
/// rows `1..` the eigenvectors' matrix.
///
/// ```
/// use nabla::{Array, linalg};
/// let a = Array::from_vec(vec![2.0f64, 0.0, 0.0, 1.0], &[2, 2]);
/// assert_eq!(linalg::eigh_packed(&a).shape(), &[3, 2]);
/// ```
#[custom_op(jvp = eigh_jvp, vjp = eigh_vjp, batch = elementwise, shard = last(2), crate = crate)]
pub fn eigh_packed(a: &Array) -> Array {
    check_square("eigh", a);
    on_host(&[a], |v| {
        let s = sym(&v[0]);
        Array::from_data(float_map!(
            &*s.data,
            |x| kernels::eigh_packed(x.view()),
            unreachable!("checked float")
        ))
    })
}

/// The eigenvalues `[.., 1, n]`, eigenvectors `[.., n, n]` and
/// `F[i, j] = 1 / (w_j − w_i)` off the diagonal (0 on it) of a packed
/// output.
fn parts<V: ArrayValue>(p: &V) -> (V, V, V) {
    let n = p.shape_vec()[p.ndim() - 1];
    let (w, v) = (rows(p, 0, 1), rows(p, 1, n + 1));
    let eye = pattern(p, n, |i, j| if i == j { 1.0 } else { 0.0 });
    let gaps = w.sub(&mt(&w)).add(&eye);
    let f = eye.neg().add_scalar(1.0).div(&gaps);
    (w, v, f)
}

fn eigh_jvp<V: ArrayValue>(_a: &V, p: &V, da: Option<&V>) -> V {
    // m = vᵀ sym(ȧ) v: ẇ = diag(m), v̇ = v (F ∘ m)
    let Some(t) = da else {
        return p.zeros_like();
    };
    let (_, v, f) = parts(p);
    let n = v.shape_vec()[v.ndim() - 1];
    let m = mt(&v).matmul(&sym(t)).matmul(&v);
    let eye = pattern(&m, n, |i, j| if i == j { 1.0 } else { 0.0 });
    let dw = m.mul(&eye).sum_axes(&[m.ndim() - 2], true);
    let dv = v.matmul(&f.mul(&m));
    V::concat(&[dw, dv], p.ndim() - 2)
}

fn eigh_vjp<V: ArrayValue>(_a: &V, p: &V, ct: &V) -> V {
    // ā = sym(v (diag(w̄) + F ∘ (vᵀ v̄)) vᵀ)
    let (_, v, f) = parts(p);
    let n = v.shape_vec()[v.ndim() - 1];
    let (gw, gv) = (rows(ct, 0, 1), rows(ct, 1, n + 1));
    let eye = pattern(&v, n, |i, j| if i == j { 1.0 } else { 0.0 });
    let inner = gw.mul(&eye).add(&f.mul(&mt(&v).matmul(&gv)));
    sym(&v.matmul(&inner).matmul(&mt(&v)))
}
