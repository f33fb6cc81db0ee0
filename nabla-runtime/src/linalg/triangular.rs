//! Cholesky factors and triangular solves.

use super::{both_batched, check_rhs, check_square, mt, on_host, pattern, sym};
use crate::storage::{float_map, float_map2};
use crate::{Array, ArrayValue};
use nabla_kernels::linalg as kernels;
use nabla_macros::custom_op;

/// The lower Cholesky factor `l` (`l lᵀ = a`) of the symmetric part of
/// `a` `[.., n, n]`, as `jnp.linalg.cholesky`; all NaN where that is not
/// positive definite.
///
/// ```
/// use nabla::{Array, linalg};
/// let a = Array::from_vec(vec![4.0f64, 2.0, 2.0, 2.0], &[2, 2]);
/// assert_eq!(linalg::cholesky(&a).to_vec::<f64>(), vec![2.0, 0.0, 1.0, 1.0]);
/// ```
#[custom_op(jvp = cholesky_jvp, vjp = cholesky_vjp, batch = elementwise, shard = last(2), crate = crate)]
pub fn cholesky(a: &Array) -> Array {
    check_square("cholesky", a);
    on_host(&[a], |v| {
        let s = sym(&v[0]);
        Array::from_data(float_map!(
            &*s.data,
            |x| kernels::cholesky(x.view()),
            unreachable!("checked float")
        ))
    })
}

/// `Φ(x)`: the lower triangle of `x` with its diagonal halved.
fn phi<V: ArrayValue>(x: &V) -> V {
    let n = x.shape_vec()[x.ndim() - 1];
    x.mul(&pattern(x, n, |i, j| match i.cmp(&j) {
        std::cmp::Ordering::Greater => 1.0,
        std::cmp::Ordering::Equal => 0.5,
        std::cmp::Ordering::Less => 0.0,
    }))
}

fn cholesky_jvp<V: ArrayValue>(_a: &V, l: &V, da: Option<&V>) -> V {
    // l̇ = l Φ(l⁻¹ sym(ȧ) l⁻ᵀ)
    da.map_or_else(
        || l.zeros_like(),
        |t| {
            let x1 = triangular_solve::forward(l, &sym(t), true);
            let x = triangular_solve::forward(l, &mt(&x1), true);
            l.matmul(&phi(&x))
        },
    )
}

fn cholesky_vjp<V: ArrayValue>(_a: &V, l: &V, ct: &V) -> V {
    // ā = sym(l⁻ᵀ Φ(lᵀ l̄) l⁻¹)
    let lt = mt(l);
    let p = phi(&lt.matmul(ct));
    let y = triangular_solve::forward(&lt, &p, false);
    sym(&mt(&triangular_solve::forward(&lt, &mt(&y), false)))
}

/// `t⁻¹ b` with `t` the lower (`lower`) or upper triangle of `a`
/// `[.., n, n]` (the other triangle is not read) and `b` `[.., n, k]`
/// with `a`'s batch axes (`jax.scipy.linalg.solve_triangular`).
///
/// ```
/// use nabla::{Array, linalg};
/// let a = Array::from_vec(vec![2.0f64, 9.0, 1.0, 1.0], &[2, 2]);
/// let b = Array::from_vec(vec![2.0f64, 3.0], &[2, 1]);
/// assert_eq!(linalg::triangular_solve(&a, &b, true).to_vec::<f64>(), vec![1.0, 2.0]);
/// ```
#[custom_op(jvp = tri_jvp, vjp = tri_vjp, batch = tri_batch, shard = last(2), crate = crate)]
pub fn triangular_solve(a: &Array, b: &Array, lower: bool) -> Array {
    check_rhs("triangular_solve", a, b);
    on_host(&[a, b], |v| {
        Array::from_data(float_map2!(
            &*v[0].data,
            &*v[1].data,
            |x, y| kernels::triangular_solve(x.view(), y.view(), lower),
            unreachable!("checked float")
        ))
    })
}

/// `x` restricted to the triangle `triangular_solve` reads.
fn triangle<V: ArrayValue>(x: &V, lower: bool) -> V {
    let n = x.shape_vec()[x.ndim() - 1];
    x.mul(&pattern(x, n, |i, j| {
        if (lower && j <= i) || (!lower && j >= i) {
            1.0
        } else {
            0.0
        }
    }))
}

fn tri_jvp<V: ArrayValue>(a: &V, _b: &V, x: &V, da: Option<&V>, db: Option<&V>, lower: bool) -> V {
    // ẋ = t⁻¹ (ḃ − ṫ x)
    let rhs = match (da, db) {
        (Some(da), Some(db)) => db.sub(&triangle(da, lower).matmul(x)),
        (Some(da), None) => triangle(da, lower).matmul(x).neg(),
        (None, Some(db)) => db.clone(),
        (None, None) => return x.zeros_like(),
    };
    triangular_solve::forward(a, &rhs, lower)
}

fn tri_vjp<V: ArrayValue>(a: &V, _b: &V, x: &V, ct: &V, lower: bool) -> (V, V) {
    // b̄ = t⁻ᵀ x̄, ā = −tri(b̄ xᵀ)
    let gb = triangular_solve::forward(&mt(a), ct, !lower);
    (triangle(&gb.matmul(&mt(x)), lower).neg(), gb)
}

fn tri_batch<V: ArrayValue>(a: &V, b: &V, batched: [bool; 2], lower: bool) -> V {
    let (a, b) = both_batched(a, b, batched);
    triangular_solve::forward(&a, &b, lower)
}
