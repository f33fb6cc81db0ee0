//! Dense linear algebra over batches of matrices: LU solves, inverses and
//! determinants, Cholesky, triangular solves, symmetric eigensolves and
//! QR, each factorisation by the `faer` crate, one matrix at a time and the
//! batch spread over the threads.
//!
//! Inputs are row-major `[.., m, n]` arrays (any strides; copied to
//! row-major first); the leading axes are a batch, equal for every operand.
//! Failures give documented non-finite values, never a panic on user data:
//! a singular matrix solves to `±inf`/NaN (as LAPACK's and JAX's do), a
//! matrix that is not positive definite has an all-NaN Cholesky factor, an
//! eigensolve that does not converge all-NaN eigenvalues and vectors.

use crate::{Float, parallel};
use faer::{MatMut, MatRef, Par, Side};
use ndarray::{ArrayD, ArrayViewD, IxDyn};

/// The per-matrix routines, for `f32` and `f64`. Slices are row-major.
pub trait Linalg: Float + faer::traits::RealField {
    /// `x = a⁻¹ b` for `a` `n × n` and `b` `n × k`.
    fn solve_one(a: &[Self], b: &[Self], n: usize, x: &mut [Self]);
    /// `a⁻¹`.
    fn inv_one(a: &[Self], n: usize, out: &mut [Self]);
    /// `(sign, log |det a|, det a)` from one LU factorisation.
    fn det_one(a: &[Self], n: usize) -> (Self, Self, Self);
    /// The lower Cholesky factor of `a`'s lower triangle; `false` (and NaN)
    /// when `a` is not positive definite.
    fn cholesky_one(a: &[Self], n: usize, out: &mut [Self]) -> bool;
    /// `x = t⁻¹ b` with `t` the lower (or upper) triangle of `a`.
    fn tri_solve_one(a: &[Self], b: &[Self], n: usize, lower: bool, x: &mut [Self]);
    /// Ascending eigenvalues `w` and eigenvectors (columns of `v`) of the
    /// symmetric matrix whose lower triangle `a` holds; `false` (NaN) when
    /// the solver does not converge.
    fn eigh_one(a: &[Self], n: usize, w: &mut [Self], v: &mut [Self]) -> bool;
    /// The reduced QR factorisation of `a` (`m × n`, `k = min(m, n)`):
    /// `q` `m × k`, `r` `k × n`.
    fn qr_one(a: &[Self], m: usize, n: usize, q: &mut [Self], r: &mut [Self]);
}

/// Writes `src` into the row-major `dst` of its shape.
fn store<T: Copy>(src: MatRef<'_, T>, dst: &mut [T]) {
    let cols = src.ncols();
    for i in 0..src.nrows() {
        for j in 0..cols {
            dst[i * cols + j] = src[(i, j)];
        }
    }
}

/// The parity (`+1` or `−1`) of a permutation given by its forward array.
fn parity(perm: &[usize]) -> i32 {
    let mut seen = vec![false; perm.len()];
    let mut sign = 1;
    for s in 0..perm.len() {
        let mut len = 0;
        let mut i = s;
        while !seen[i] {
            seen[i] = true;
            i = perm[i];
            len += 1;
        }
        if len > 0 && len % 2 == 0 {
            sign = -sign;
        }
    }
    sign
}

macro_rules! linalg_impl {
    ($t:ty) => {
        impl Linalg for $t {
            fn solve_one(a: &[$t], b: &[$t], n: usize, x: &mut [$t]) {
                use faer::linalg::solvers::Solve;
                let k = b.len() / n.max(1);
                let lu = MatRef::from_row_major_slice(a, n, n).partial_piv_lu();
                let mut rhs = MatMut::from_row_major_slice_mut(x, n, k);
                rhs.copy_from(MatRef::from_row_major_slice(b, n, k));
                lu.solve_in_place(rhs);
            }

            fn inv_one(a: &[$t], n: usize, out: &mut [$t]) {
                use faer::linalg::solvers::DenseSolveCore;
                let lu = MatRef::from_row_major_slice(a, n, n).partial_piv_lu();
                store(lu.inverse().as_ref(), out);
            }

            fn det_one(a: &[$t], n: usize) -> ($t, $t, $t) {
                let lu = MatRef::from_row_major_slice(a, n, n).partial_piv_lu();
                let u = lu.U();
                let mut sign = parity(lu.P().arrays().0) as $t;
                let (mut log, mut det) = (0.0 as $t, sign);
                for i in 0..n {
                    let d = u[(i, i)];
                    det *= d;
                    log += d.abs().ln();
                    if d < 0.0 {
                        sign = -sign;
                    } else if d == 0.0 || d.is_nan() {
                        sign = if d == 0.0 { 0.0 } else { <$t>::NAN };
                    }
                }
                (sign, log, det)
            }

            fn cholesky_one(a: &[$t], n: usize, out: &mut [$t]) -> bool {
                match MatRef::from_row_major_slice(a, n, n).llt(Side::Lower) {
                    Ok(llt) => {
                        let l = llt.L();
                        for i in 0..n {
                            for j in 0..n {
                                out[i * n + j] = if j <= i { l[(i, j)] } else { 0.0 };
                            }
                        }
                        true
                    }
                    Err(_) => {
                        out.fill(<$t>::NAN);
                        false
                    }
                }
            }

            fn tri_solve_one(a: &[$t], b: &[$t], n: usize, lower: bool, x: &mut [$t]) {
                // The other triangle is zeroed so it is never read.
                let mut t = vec![0.0 as $t; n * n];
                for i in 0..n {
                    for j in 0..n {
                        if (j <= i) == lower || i == j {
                            t[i * n + j] = a[i * n + j];
                        }
                    }
                }
                let k = b.len() / n.max(1);
                let tm = MatRef::from_row_major_slice(&t, n, n);
                let mut rhs = MatMut::from_row_major_slice_mut(x, n, k);
                rhs.copy_from(MatRef::from_row_major_slice(b, n, k));
                if lower {
                    faer::linalg::triangular_solve::solve_lower_triangular_in_place(
                        tm,
                        rhs,
                        Par::Seq,
                    );
                } else {
                    faer::linalg::triangular_solve::solve_upper_triangular_in_place(
                        tm,
                        rhs,
                        Par::Seq,
                    );
                }
            }

            fn eigh_one(a: &[$t], n: usize, w: &mut [$t], v: &mut [$t]) -> bool {
                match MatRef::from_row_major_slice(a, n, n).self_adjoint_eigen(Side::Lower) {
                    Ok(e) => {
                        let s = e.S().column_vector();
                        for i in 0..n {
                            w[i] = s[i];
                        }
                        store(e.U(), v);
                        true
                    }
                    Err(_) => {
                        w.fill(<$t>::NAN);
                        v.fill(<$t>::NAN);
                        false
                    }
                }
            }

            fn qr_one(a: &[$t], m: usize, n: usize, q: &mut [$t], r: &mut [$t]) {
                let k = m.min(n);
                let f = MatRef::from_row_major_slice(a, m, n).qr();
                store(f.compute_thin_Q().as_ref(), q);
                let rr = f.thin_R();
                for i in 0..k {
                    for j in 0..n {
                        r[i * n + j] = if j >= i { rr[(i, j)] } else { 0.0 };
                    }
                }
            }
        }
    };
}

linalg_impl!(f32);
linalg_impl!(f64);

/// The batch size and trailing matrix shape of a `[.., rows, cols]` array.
fn split(shape: &[usize]) -> (usize, usize, usize) {
    let nd = shape.len();
    assert!(
        nd >= 2,
        "linalg kernel: a matrix needs two axes, got {shape:?}"
    );
    (
        shape[..nd - 2].iter().product(),
        shape[nd - 2],
        shape[nd - 1],
    )
}

/// Runs `f(batch index, out block)` for every matrix, in parallel when the
/// work is large enough to share.
fn per_matrix<T: Send, F: Fn(usize, &mut [T]) + Sync>(
    out: &mut [T],
    block: usize,
    work: usize,
    f: F,
) {
    if block == 0 {
        return;
    }
    crate::determinism::plan_factorisations();
    if out.len() / block > 1 && work >= 1 << 15 {
        parallel::chunks_mut(out, block, f);
    } else {
        out.chunks_mut(block).enumerate().for_each(|(i, o)| f(i, o));
    }
}

/// `x = a⁻¹ b` per batch entry: `a` `[.., n, n]`, `b` `[.., n, k]`.
///
/// ```
/// use nabla_kernels::linalg::solve;
/// let a = ndarray::arr2(&[[2.0f64, 0.0], [0.0, 4.0]]).into_dyn();
/// let b = ndarray::arr2(&[[2.0f64], [2.0]]).into_dyn();
/// assert_eq!(solve(a.view(), b.view()).as_slice().unwrap(), &[1.0, 0.5]);
/// ```
pub fn solve<T: Linalg>(a: ArrayViewD<'_, T>, b: ArrayViewD<'_, T>) -> ArrayD<T> {
    let (a, b) = (a.as_standard_layout(), b.as_standard_layout());
    let (_, n, _) = split(a.shape());
    let (_, _, k) = split(b.shape());
    let (sa, sb) = (
        a.as_slice().expect("row-major"),
        b.as_slice().expect("row-major"),
    );
    let mut out = vec![T::ZERO; b.len()];
    per_matrix(&mut out, n * k, n * n * (n + k), |i, x| {
        T::solve_one(
            &sa[i * n * n..(i + 1) * n * n],
            &sb[i * n * k..(i + 1) * n * k],
            n,
            x,
        )
    });
    ArrayD::from_shape_vec(IxDyn(b.shape()), out).expect("shape")
}

/// `a⁻¹` per batch entry.
///
/// ```
/// use nabla_kernels::linalg::inv;
/// let a = ndarray::arr2(&[[2.0f64, 0.0], [0.0, 4.0]]).into_dyn();
/// assert_eq!(inv(a.view()).as_slice().unwrap(), &[0.5, 0.0, 0.0, 0.25]);
/// ```
pub fn inv<T: Linalg>(a: ArrayViewD<'_, T>) -> ArrayD<T> {
    let a = a.as_standard_layout();
    let (_, n, _) = split(a.shape());
    let sa = a.as_slice().expect("row-major");
    let mut out = vec![T::ZERO; a.len()];
    per_matrix(&mut out, n * n, n * n * n, |i, o| {
        T::inv_one(&sa[i * n * n..(i + 1) * n * n], n, o)
    });
    ArrayD::from_shape_vec(IxDyn(a.shape()), out).expect("shape")
}

/// What [`det`] computes: `which` 0 the sign, 1 `log |det|`, 2 `det`.
fn det_part<T: Linalg>(a: ArrayViewD<'_, T>, which: usize) -> ArrayD<T> {
    let a = a.as_standard_layout();
    let (batch, n, _) = split(a.shape());
    let sa = a.as_slice().expect("row-major");
    let mut out = vec![T::ZERO; batch];
    per_matrix(&mut out, 1, batch * n * n * n, |i, o| {
        let (s, l, d) = T::det_one(&sa[i * n * n..(i + 1) * n * n], n);
        o[0] = [s, l, d][which];
    });
    ArrayD::from_shape_vec(IxDyn(&a.shape()[..a.ndim() - 2]), out).expect("shape")
}

/// `det a` per batch entry (one LU factorisation each).
///
/// ```
/// use nabla_kernels::linalg::det;
/// let a = ndarray::arr2(&[[0.0f64, 2.0], [3.0, 0.0]]).into_dyn();
/// assert_eq!(det(a.view()).into_raw_vec_and_offset().0, vec![-6.0]);
/// ```
pub fn det<T: Linalg>(a: ArrayViewD<'_, T>) -> ArrayD<T> {
    det_part(a, 2)
}

/// `log |det a|` per batch entry (`-inf` for a singular matrix).
///
/// ```
/// use nabla_kernels::linalg::logabsdet;
/// let a = ndarray::arr2(&[[0.0f64, 2.0], [3.0, 0.0]]).into_dyn();
/// assert_eq!(logabsdet(a.view()).into_raw_vec_and_offset().0, vec![6f64.ln()]);
/// ```
pub fn logabsdet<T: Linalg>(a: ArrayViewD<'_, T>) -> ArrayD<T> {
    det_part(a, 1)
}

/// The sign of `det a` per batch entry: `±1`, or 0 for a singular matrix.
///
/// ```
/// use nabla_kernels::linalg::det_sign;
/// let a = ndarray::arr2(&[[0.0f64, 2.0], [3.0, 0.0]]).into_dyn();
/// assert_eq!(det_sign(a.view()).into_raw_vec_and_offset().0, vec![-1.0]);
/// ```
pub fn det_sign<T: Linalg>(a: ArrayViewD<'_, T>) -> ArrayD<T> {
    det_part(a, 0)
}

/// The lower Cholesky factor per batch entry, from the lower triangle;
/// all NaN where the matrix is not positive definite.
///
/// ```
/// use nabla_kernels::linalg::cholesky;
/// let a = ndarray::arr2(&[[4.0f64, 2.0], [2.0, 2.0]]).into_dyn();
/// assert_eq!(cholesky(a.view()).as_slice().unwrap(), &[2.0, 0.0, 1.0, 1.0]);
/// ```
pub fn cholesky<T: Linalg>(a: ArrayViewD<'_, T>) -> ArrayD<T> {
    let a = a.as_standard_layout();
    let (_, n, _) = split(a.shape());
    let sa = a.as_slice().expect("row-major");
    let mut out = vec![T::ZERO; a.len()];
    per_matrix(&mut out, n * n, n * n * n, |i, o| {
        T::cholesky_one(&sa[i * n * n..(i + 1) * n * n], n, o);
    });
    ArrayD::from_shape_vec(IxDyn(a.shape()), out).expect("shape")
}

/// `x = t⁻¹ b` per batch entry, `t` the lower (`lower`) or upper triangle
/// of `a` `[.., n, n]` (the other triangle is not read), `b` `[.., n, k]`.
///
/// ```
/// use nabla_kernels::linalg::triangular_solve;
/// let a = ndarray::arr2(&[[2.0f64, 9.0], [1.0, 1.0]]).into_dyn();
/// let b = ndarray::arr2(&[[2.0f64], [3.0]]).into_dyn();
/// assert_eq!(triangular_solve(a.view(), b.view(), true).as_slice().unwrap(), &[1.0, 2.0]);
/// ```
pub fn triangular_solve<T: Linalg>(
    a: ArrayViewD<'_, T>,
    b: ArrayViewD<'_, T>,
    lower: bool,
) -> ArrayD<T> {
    let (a, b) = (a.as_standard_layout(), b.as_standard_layout());
    let (_, n, _) = split(a.shape());
    let (_, _, k) = split(b.shape());
    let (sa, sb) = (
        a.as_slice().expect("row-major"),
        b.as_slice().expect("row-major"),
    );
    let mut out = vec![T::ZERO; b.len()];
    per_matrix(&mut out, n * k, n * n * k, |i, x| {
        T::tri_solve_one(
            &sa[i * n * n..(i + 1) * n * n],
            &sb[i * n * k..(i + 1) * n * k],
            n,
            lower,
            x,
        )
    });
    ArrayD::from_shape_vec(IxDyn(b.shape()), out).expect("shape")
}

/// Eigenvalues (ascending) and eigenvectors of symmetric matrices (from
/// the lower triangle), packed `[.., n + 1, n]`: row 0 holds the
/// eigenvalues, rows `1..` the matrix whose columns are the eigenvectors.
///
/// ```
/// use nabla_kernels::linalg::eigh_packed;
/// let a = ndarray::arr2(&[[2.0f64, 0.0], [0.0, 1.0]]).into_dyn();
/// let p = eigh_packed(a.view());
/// assert_eq!(p.as_slice().unwrap()[..2], [1.0, 2.0]);
/// ```
pub fn eigh_packed<T: Linalg>(a: ArrayViewD<'_, T>) -> ArrayD<T> {
    let a = a.as_standard_layout();
    let (_, n, _) = split(a.shape());
    let sa = a.as_slice().expect("row-major");
    let mut shape = a.shape().to_vec();
    shape[a.ndim() - 2] = n + 1;
    let mut out = vec![T::ZERO; shape.iter().product()];
    per_matrix(&mut out, (n + 1) * n, n * n * n, |i, o| {
        let (w, v) = o.split_at_mut(n);
        T::eigh_one(&sa[i * n * n..(i + 1) * n * n], n, w, v);
    });
    ArrayD::from_shape_vec(IxDyn(&shape), out).expect("shape")
}

/// The reduced QR factorisation of `a` `[.., m, n]` (`k = min(m, n)`),
/// packed `[.., m + k, n]`: rows `0..m`, columns `0..k` hold `Q` (the rest
/// of those rows is 0), rows `m..` hold `R` (upper triangular).
///
/// ```
/// use nabla_kernels::linalg::qr_packed;
/// let a = ndarray::arr2(&[[3.0f64], [4.0]]).into_dyn();
/// let p = qr_packed(a.view());
/// let (q, r) = (p.as_slice().unwrap()[..2].to_vec(), p.as_slice().unwrap()[2]);
/// assert!((q[0] * r - 3.0).abs() < 1e-12 && (q[1] * r - 4.0).abs() < 1e-12);
/// ```
pub fn qr_packed<T: Linalg>(a: ArrayViewD<'_, T>) -> ArrayD<T> {
    let a = a.as_standard_layout();
    let (_, m, n) = split(a.shape());
    let k = m.min(n);
    let sa = a.as_slice().expect("row-major");
    let mut shape = a.shape().to_vec();
    shape[a.ndim() - 2] = m + k;
    let mut out = vec![T::ZERO; shape.iter().product()];
    per_matrix(&mut out, (m + k) * n, m * n * k, |i, o| {
        let (qo, r) = o.split_at_mut(m * n);
        let mut q = vec![T::ZERO; m * k];
        T::qr_one(&sa[i * m * n..(i + 1) * m * n], m, n, &mut q, r);
        for row in 0..m {
            qo[row * n..row * n + k].copy_from_slice(&q[row * k..(row + 1) * k]);
        }
    });
    ArrayD::from_shape_vec(IxDyn(&shape), out).expect("shape")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &[f64], b: &[f64], tol: f64) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() <= tol * (1.0 + y.abs()), "{a:?} vs {b:?}");
        }
    }

    #[test]
    fn factorisations_reproduce_their_matrix() {
        let a = ndarray::Array::from_shape_fn((2, 3, 3), |(b, i, j)| {
            if i == j {
                4.0 + b as f64
            } else {
                ((i * 3 + j + b) % 5) as f64 * 0.3 - 0.5
            }
        })
        .into_dyn();
        let spd = ndarray::Array::from_shape_fn((2, 3, 3), |(b, i, j)| {
            (0..3).map(|t| a[[b, i, t]] * a[[b, j, t]]).sum::<f64>()
        })
        .into_dyn();
        // solve: a · x = b.
        let rhs =
            ndarray::Array::from_shape_fn((2, 3, 2), |(b, i, j)| (b + i * 2 + j) as f64).into_dyn();
        let x = solve(a.view(), rhs.view());
        for b in 0..2 {
            let ab = a
                .index_axis(ndarray::Axis(0), b)
                .into_dimensionality::<ndarray::Ix2>()
                .unwrap();
            let xb = x
                .index_axis(ndarray::Axis(0), b)
                .into_dimensionality::<ndarray::Ix2>()
                .unwrap();
            let got = ab.dot(&xb);
            close(
                got.as_standard_layout().as_slice().unwrap(),
                rhs.index_axis(ndarray::Axis(0), b)
                    .as_standard_layout()
                    .as_slice()
                    .unwrap(),
                1e-12,
            );
            // inverse and determinant against the solve and a cofactor expansion.
            let id = ab.dot(
                &inv(ab.into_dyn())
                    .into_dimensionality::<ndarray::Ix2>()
                    .unwrap(),
            );
            close(
                id.as_standard_layout().as_slice().unwrap(),
                ndarray::Array2::eye(3).as_slice().unwrap(),
                1e-12,
            );
            let m = |i: usize, j: usize| ab[[i, j]];
            let cof = m(0, 0) * (m(1, 1) * m(2, 2) - m(1, 2) * m(2, 1))
                - m(0, 1) * (m(1, 0) * m(2, 2) - m(1, 2) * m(2, 0))
                + m(0, 2) * (m(1, 0) * m(2, 1) - m(1, 1) * m(2, 0));
            close(
                &det(ab.into_dyn()).into_raw_vec_and_offset().0,
                &[cof],
                1e-12,
            );
            close(
                &logabsdet(ab.into_dyn()).into_raw_vec_and_offset().0,
                &[cof.abs().ln()],
                1e-12,
            );
            close(
                &det_sign(ab.into_dyn()).into_raw_vec_and_offset().0,
                &[cof.signum()],
                0.0,
            );
            // Cholesky: l lᵀ = spd; eigh: v diag(w) vᵀ = spd; qr: q r = a.
            let sb = spd
                .index_axis(ndarray::Axis(0), b)
                .into_dimensionality::<ndarray::Ix2>()
                .unwrap();
            let l = cholesky(sb.into_dyn())
                .into_dimensionality::<ndarray::Ix2>()
                .unwrap();
            close(
                l.dot(&l.t()).as_standard_layout().as_slice().unwrap(),
                sb.as_standard_layout().as_slice().unwrap(),
                1e-12,
            );
            let p = eigh_packed(sb.into_dyn())
                .into_dimensionality::<ndarray::Ix2>()
                .unwrap();
            let (w, v) = (p.row(0), p.slice(ndarray::s![1.., ..]));
            assert!(w[0] <= w[1] && w[1] <= w[2]);
            let rebuilt = v.dot(&ndarray::Array2::from_diag(&w)).dot(&v.t());
            close(
                rebuilt.as_standard_layout().as_slice().unwrap(),
                sb.as_standard_layout().as_slice().unwrap(),
                1e-12,
            );
            let p = qr_packed(ab.into_dyn())
                .into_dimensionality::<ndarray::Ix2>()
                .unwrap();
            let (q, r) = (p.slice(ndarray::s![..3, ..]), p.slice(ndarray::s![3.., ..]));
            close(
                q.dot(&r).as_standard_layout().as_slice().unwrap(),
                ab.as_standard_layout().as_slice().unwrap(),
                1e-12,
            );
            // triangular solves read one triangle only.
            let lx = triangular_solve(ab.into_dyn(), rhs.index_axis(ndarray::Axis(0), b), true)
                .into_dimensionality::<ndarray::Ix2>()
                .unwrap();
            let tl = ndarray::Array2::from_shape_fn(
                (3, 3),
                |(i, j)| if j <= i { ab[[i, j]] } else { 0.0 },
            );
            close(
                tl.dot(&lx).as_standard_layout().as_slice().unwrap(),
                rhs.index_axis(ndarray::Axis(0), b)
                    .as_standard_layout()
                    .as_slice()
                    .unwrap(),
                1e-12,
            );
            let ux = triangular_solve(ab.into_dyn(), rhs.index_axis(ndarray::Axis(0), b), false)
                .into_dimensionality::<ndarray::Ix2>()
                .unwrap();
            let tu = ndarray::Array2::from_shape_fn(
                (3, 3),
                |(i, j)| if j >= i { ab[[i, j]] } else { 0.0 },
            );
            close(
                tu.dot(&ux).as_standard_layout().as_slice().unwrap(),
                rhs.index_axis(ndarray::Axis(0), b)
                    .as_standard_layout()
                    .as_slice()
                    .unwrap(),
                1e-12,
            );
        }
    }

    #[test]
    fn failures_are_non_finite_values() {
        let singular = ndarray::arr2(&[[1.0f64, 2.0], [2.0, 4.0]]).into_dyn();
        assert_eq!(det(singular.view()).into_raw_vec_and_offset().0, vec![0.0]);
        assert_eq!(
            det_sign(singular.view()).into_raw_vec_and_offset().0,
            vec![0.0]
        );
        assert_eq!(
            logabsdet(singular.view()).into_raw_vec_and_offset().0,
            vec![f64::NEG_INFINITY]
        );
        let x = solve(
            singular.view(),
            ndarray::arr2(&[[1.0], [1.0]]).into_dyn().view(),
        );
        assert!(x.iter().any(|v| !v.is_finite()));
        let indefinite = ndarray::arr2(&[[1.0f64, 2.0], [2.0, 1.0]]).into_dyn();
        assert!(cholesky(indefinite.view()).iter().all(|v| v.is_nan()));
        let qr_wide = qr_packed(
            ndarray::arr2(&[[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]])
                .into_dyn()
                .view(),
        );
        assert_eq!(qr_wide.shape(), &[4, 3]);
    }
}
