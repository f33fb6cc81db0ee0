//! `nabla::linalg` beyond the JAX fixture cases (`fixtures::linalg`):
//! gradients of every op against central finite differences on random
//! well-conditioned inputs (f64), shapes the fixtures lack (vector and
//! broadcast right-hand sides, upper triangles, wide and tall QR,
//! non-square diagonals, eigenvectors), `vmap` against a loop, f32 against
//! f64, and the failure values and shape errors.

use crate::common::*;
use nabla::linalg;
use nabla::prelude::*;

/// A random `shape` array in f64 (entries in about ±2).
fn rand(shape: &[usize], seed: u64) -> Array {
    Key::new(seed).normal(shape, DType::F64)
}

/// `x xᵀ + n I` over the last two axes (symmetric positive definite).
fn spd(x: &Array) -> Array {
    let n = x.shape()[x.ndim() - 1];
    x.matmul(&x.swapaxes(-1, -2)) + Array::eye(n, DType::F64) * n as f64
}

/// `x + 3 I` (well-conditioned for small random `x`).
fn shifted(x: &Array) -> Array {
    let n = x.shape()[x.ndim() - 1];
    x + &(Array::eye(n, DType::F64) * 3.0)
}

/// Checks the tape's gradient of `Σ f(xs) · ct` against central
/// differences for every input. Hand-rolled: the gradient under test is the
/// tape's, of a run-time closure, which `check_grads` does not take.
fn check(name: &str, f: &dyn Fn(&[Array]) -> Array, xs: &[Array]) {
    let y = f(xs);
    let ct = rand(y.shape(), 99);
    let leaves: Vec<Array> = xs.iter().map(|x| x.clone().requires_grad()).collect();
    (&f(&leaves) * &ct).sum().backward();
    for (i, x) in leaves.iter().enumerate() {
        let want = fd_grad(f, xs, &ct, i, 1e-6);
        assert_close(&x.grad(), &want, 1e-6, &format!("{name}: d/dx{i}"));
    }
}

#[test]
fn gradients_match_finite_differences() {
    let a = rand(&[3, 3], 1);
    let ab = rand(&[2, 3, 3], 2);
    check(
        "solve matrix",
        &|v| linalg::solve(&shifted(&v[0]), &v[1]),
        &[a.clone(), rand(&[3, 2], 3)],
    );
    check(
        "solve vector",
        &|v| linalg::solve(&shifted(&v[0]), &v[1]),
        &[a.clone(), rand(&[3], 4)],
    );
    check(
        "solve broadcast",
        &|v| linalg::solve(&shifted(&v[0]), &v[1]),
        &[ab.clone(), rand(&[3, 2], 5)],
    );
    check(
        "solve batch of vector",
        &|v| linalg::solve(&shifted(&v[0]), &v[1]),
        &[ab.clone(), rand(&[3], 6)],
    );
    check(
        "inv",
        &|v| linalg::inv(&shifted(&v[0])),
        std::slice::from_ref(&ab),
    );
    check(
        "det",
        &|v| linalg::det(&shifted(&v[0])),
        std::slice::from_ref(&ab),
    );
    check(
        "det, negative",
        &|v| linalg::det(&(-shifted(&v[0]))),
        std::slice::from_ref(&a),
    );
    check(
        "slogdet",
        &|v| linalg::slogdet(&(-shifted(&v[0]))).1,
        std::slice::from_ref(&ab),
    );
    check(
        "cholesky",
        &|v| linalg::cholesky(&spd(&v[0])),
        std::slice::from_ref(&ab),
    );
    check(
        "triangular lower",
        &|v| linalg::triangular_solve(&shifted(&v[0]), &v[1], true),
        &[a.clone(), rand(&[3, 4], 7)],
    );
    check(
        "triangular upper",
        &|v| linalg::triangular_solve(&shifted(&v[0]), &v[1], false),
        &[ab.clone(), rand(&[2, 3, 2], 8)],
    );
    check(
        "eigvalsh",
        &|v| linalg::eigvalsh(&spd(&v[0])),
        std::slice::from_ref(&ab),
    );
    check(
        "eigh values",
        &|v| linalg::eigh(&spd(&v[0])).0,
        std::slice::from_ref(&a),
    );
    // Eigenvectors are defined up to sign: their squares are not.
    check(
        "eigh vectors",
        &|v| linalg::eigh(&spd(&v[0])).1.square(),
        std::slice::from_ref(&ab),
    );
    check(
        "qr q square",
        &|v| linalg::qr(&v[0]).0,
        std::slice::from_ref(&a),
    );
    check(
        "qr r square",
        &|v| linalg::qr(&v[0]).1,
        std::slice::from_ref(&a),
    );
    let tall = rand(&[2, 5, 3], 9);
    check(
        "qr q tall",
        &|v| linalg::qr(&v[0]).0,
        std::slice::from_ref(&tall),
    );
    check("qr r tall", &|v| linalg::qr(&v[0]).1, &[tall]);
    check(
        "trace",
        &|v| linalg::trace(&v[0]),
        std::slice::from_ref(&ab),
    );
    check(
        "diagonal wide",
        &|v| linalg::diagonal(&v[0]),
        &[rand(&[2, 3, 5], 10)],
    );
}

#[differentiable]
fn logdet_spd(x: &Array, eye: &Array) -> Array {
    let a = x.matmul(&x.transpose()) + eye * 3.0;
    let l = linalg::cholesky(&a);
    nabla::sum(&linalg::diagonal(&l).ln()) * 2.0
}

#[test]
fn second_order_through_factorisations() {
    // log det(a) from the Cholesky factor equals slogdet's, and so do
    // their Hessians (forward over reverse through cholesky, triangular
    // solves and inv).
    let x = rand(&[3, 3], 11);
    let eye = Array::eye(3, DType::F64);
    let h = hessian(logdet_spd)(&x, &eye);
    let a = x.matmul(&x.transpose()) + &eye * 3.0;
    assert_close(
        &logdet_spd(&x, &eye),
        &linalg::slogdet(&a).1,
        1e-12,
        "log det",
    );
    let g = |v: &[Array]| {
        let xl = v[0].clone().requires_grad();
        logdet_spd(&xl, &eye).backward();
        xl.grad()
    };
    for k in 0..9 {
        let mut e = vec![0.0; 9];
        e[k] = 1.0;
        let d = Array::from_vec(e, &[3, 3]);
        let (p, m) = (&x + &(&d * 1e-6), &x - &(&d * 1e-6));
        let col = (g(&[p]) - g(&[m])) / 2e-6;
        let got = h.reshape(&[9, 3, 3]).index_select(0, &[k]).reshape(&[3, 3]);
        assert_close(&got, &col, 1e-5, &format!("hessian column {k}"));
    }
}

#[differentiable]
fn eigvals_spd(x: &Array, eye: &Array) -> Array {
    linalg::eigvalsh(&(x.matmul(&x.transpose()) + eye * 3.0))
}

#[differentiable]
fn det_shifted(x: &Array, eye: &Array) -> Array {
    linalg::det(&(x + eye * 3.0))
}

#[test]
fn vmap_equals_a_loop() {
    let xs = rand(&[4, 3, 3], 12);
    let eye = Array::eye(3, DType::F64);
    let w = vmap!(eigvals_spd, in_axes = (0, None))(&xs, &eye);
    let q = vmap!(det_shifted, in_axes = (0, None))(&xs, &eye);
    for i in 0..4 {
        let xi = xs.index_select(0, &[i]).squeeze(0);
        let a = xi.matmul(&xi.transpose()) + &eye * 3.0;
        assert_close(
            &w.index_select(0, &[i]).squeeze(0),
            &linalg::eigvalsh(&a),
            1e-12,
            "eigvalsh",
        );
        assert_close(
            &q.index_select(0, &[i]).squeeze(0),
            &linalg::det(&shifted(&xi)),
            1e-12,
            "det",
        );
    }
}

#[test]
fn f32_agrees_with_f64() {
    let a = shifted(&rand(&[2, 4, 4], 13));
    let b = rand(&[2, 4, 3], 14);
    let a32 = a.cast(DType::F32);
    let b32 = b.cast(DType::F32);
    assert_eq!(linalg::solve(&a32, &b32).dtype(), DType::F32);
    assert_close(
        &linalg::solve(&a32, &b32),
        &linalg::solve(&a, &b),
        1e-4,
        "solve f32",
    );
    assert_close(&linalg::inv(&a32), &linalg::inv(&a), 1e-4, "inv f32");
    assert_close(&linalg::det(&a32), &linalg::det(&a), 1e-4, "det f32");
    assert_close(
        &linalg::cholesky(&spd(&a).cast(DType::F32)),
        &linalg::cholesky(&spd(&a)),
        1e-4,
        "cholesky f32",
    );
    assert_close(
        &linalg::eigvalsh(&spd(&a).cast(DType::F32)),
        &linalg::eigvalsh(&spd(&a)),
        1e-4,
        "eigvalsh f32",
    );
    let (q, r) = linalg::qr(&a32);
    assert_close(&q.matmul(&r), &a32, 1e-4, "qr f32");
}

#[test]
fn failures_are_values() {
    let singular = Array::from_vec(vec![1.0f64, 2.0, 2.0, 4.0], &[2, 2]);
    assert_eq!(linalg::det(&singular).item(), 0.0);
    let (s, l) = linalg::slogdet(&singular);
    assert_eq!((s.item(), l.item()), (0.0, f64::NEG_INFINITY));
    let x = linalg::solve(&singular, &Array::ones(&[2], DType::F64));
    assert!(x.to_vec::<f64>().iter().any(|v| !v.is_finite()), "{x:?}");
    let indefinite = Array::from_vec(vec![1.0f64, 2.0, 2.0, 1.0], &[2, 2]);
    assert!(
        linalg::cholesky(&indefinite)
            .to_vec::<f64>()
            .iter()
            .all(|v| v.is_nan())
    );
    // A repeated eigenvalue: eigenvalue gradients stay finite.
    let eye = Array::eye(3, DType::F64).requires_grad();
    linalg::eigvalsh(&eye).sum().backward();
    assert!(eye.grad().to_vec::<f64>().iter().all(|v| v.is_finite()));
}

#[test]
#[should_panic(expected = "linalg::solve: a [2, 2] is 2 × 2 but b [3] has 3 rows")]
fn solve_shapes_are_checked() {
    let a = Array::eye(2, DType::F64);
    linalg::solve(&a, &Array::ones(&[3], DType::F64));
}

#[test]
#[should_panic(expected = "linalg::inv: a must be square matrices [.., n, n], got shape [2, 3]")]
fn square_inputs_are_checked() {
    linalg::inv(&Array::ones(&[2, 3], DType::F64));
}

#[test]
#[should_panic(
    expected = "linalg::qr: derivatives need a tall or square matrix (m ≥ n), got 2 × 3"
)]
fn wide_qr_derivatives_are_refused() {
    let a = Array::ones(&[2, 3], DType::F64).requires_grad();
    let (q, r) = linalg::qr(&a);
    assert_eq!((q.shape(), r.shape()), (&[2usize, 2][..], &[2usize, 3][..]));
    (q.sum() + r.sum()).backward();
}
