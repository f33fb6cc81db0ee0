//! Fixed-size arrays of floats in functions of floats: `grad`,
//! `value_and_grad`, `vjp`, `jvp`, `jacfwd`, `jacrev` and `hessian` of
//! `[f64; 3]` and `[[f64; 2]; 2]` arguments and `[f64; M]` results, mixed
//! with `f64` arguments and `argnums`, with loops and branches inside, and
//! Hessian-vector products `jvp(grad(f))`;
//! against closed forms and central finite differences.

use nabla::prelude::*;

/// A projectile with drag, from `p = [speed, angle, drag]`: where it is
/// after one second.
#[differentiable]
fn flight(p: &[f64; 3]) -> f64 {
    let dt = 0.01;
    let mut x = 0.0;
    let mut y = 0.0;
    let mut vx = p[0] * p[1].cos();
    let mut vy = p[0] * p[1].sin();
    for _ in 0..100 {
        let ax = -p[2] * vx;
        let ay = -9.81 - p[2] * vy;
        x += dt * vx;
        y += dt * vy;
        vx += dt * ax;
        vy += dt * ay;
    }
    x * x + y
}

/// Central differences of `f` at `p`. Hand-rolled: these are functions of
/// floats and fixed-size arrays, which `check_grads` does not take.
fn fd<const N: usize>(f: impl Fn([f64; N]) -> f64, p: [f64; N]) -> [f64; N] {
    std::array::from_fn(|i| {
        let (mut a, mut b) = (p, p);
        a[i] += 1e-6;
        b[i] -= 1e-6;
        (f(a) - f(b)) / 2e-6
    })
}

fn close<const N: usize>(got: [f64; N], want: [f64; N], tol: f64, what: &str) {
    for i in 0..N {
        assert!(
            (got[i] - want[i]).abs() <= tol * want[i].abs().max(1.0),
            "{what}: {got:?} against {want:?}"
        );
    }
}

#[test]
fn grad_of_a_simulation_on_a_fixed_array() {
    let p = [12.0, 0.7, 0.1];
    let g: [f64; 3] = grad(flight)(&p);
    // The function value is the function as written: differences of it.
    close(g, fd(|q| flight(&q), p), 1e-6, "grad");
    let (v, g2) = value_and_grad(flight)(&p);
    assert_eq!((v, g2), (flight(&p), g));
    // vjp and jvp agree with the gradient.
    let (y, pullback) = vjp(flight)(&p);
    assert_eq!(y, v);
    close(pullback(&2.0), g.map(|x| 2.0 * x), 1e-12, "vjp");
    let t = [1.0, -2.0, 0.5];
    let (_, dy) = jvp(flight)((&p,), (&t,));
    let want: f64 = (0..3).map(|i| g[i] * t[i]).sum();
    assert!(
        (dy - want).abs() < 1e-9 * want.abs().max(1.0),
        "{dy} {want}"
    );
}

/// A 2×2 matrix argument, a float argument and a loop over indices.
#[differentiable]
fn quadratic(m: [[f64; 2]; 2], v: &[f64; 2], s: f64) -> f64 {
    let mut total = 0.0;
    for i in 0..2 {
        for j in 0..2 {
            total += v[i] * m[i][j] * v[j];
        }
    }
    if total > 0.0 {
        total * s
    } else {
        -total * s * s
    }
}

#[test]
fn nested_arrays_floats_and_argnums() {
    let m = [[2.0, 0.5], [-1.0, 3.0]];
    let v = [0.3, -1.2];
    let s = 1.5;
    let (gm, gv, gs) = grad!(quadratic, argnums = (0, 1, 2))(m, &v, s);
    let flat = |q: [f64; 4]| quadratic([[q[0], q[1]], [q[2], q[3]]], &v, s);
    close(
        [gm[0][0], gm[0][1], gm[1][0], gm[1][1]],
        fd(flat, [m[0][0], m[0][1], m[1][0], m[1][1]]),
        1e-7,
        "d/dm",
    );
    close(gv, fd(|w| quadratic(m, &w, s), v), 1e-7, "d/dv");
    close([gs], fd(|t| quadratic(m, &v, t[0]), [s]), 1e-7, "d/ds");
    // One argument at a time.
    let gv2: [f64; 2] = grad!(quadratic, argnums = 1)(m, &v, s);
    assert_eq!(gv2, gv);
}

#[test]
fn hessian_and_jacobians_of_a_simulation() {
    let p = [12.0, 0.7, 0.1];
    let h: [[f64; 3]; 3] = hessian(flight)(&p);
    // Columns by central differences of the gradient.
    for k in 0..3 {
        let (mut a, mut b) = (p, p);
        a[k] += 1e-5;
        b[k] -= 1e-5;
        let (ga, gb) = (grad(flight)(&a), grad(flight)(&b));
        let col: [f64; 3] = std::array::from_fn(|i| (ga[i] - gb[i]) / 2e-5);
        close(
            std::array::from_fn(|i| h[i][k]),
            col,
            1e-5,
            "hessian column",
        );
    }
    for (i, row) in h.iter().enumerate() {
        for (j, hij) in row.iter().enumerate() {
            assert!((hij - h[j][i]).abs() < 1e-9, "symmetric");
        }
    }
    // The Jacobian of a scalar function is its gradient, both ways.
    close(jacfwd(flight)(&p), grad(flight)(&p), 1e-12, "jacfwd");
    close(jacrev(flight)(&p), grad(flight)(&p), 1e-12, "jacrev");
}

#[test]
fn hessian_vector_products_on_fixed_arrays() {
    let p = [12.0, 0.7, 0.1];
    let v = [1.0, -2.0, 0.5];
    // jvp(grad(f)): the gradient and H·v in one forward-over-reverse run.
    let (g, hv) = jvp(grad(flight))((&p,), (&v,));
    assert_eq!(g, grad(flight)(&p));
    let h = hessian(flight)(&p);
    let want: [f64; 3] = std::array::from_fn(|i| (0..3).map(|j| h[i][j] * v[j]).sum());
    close(hv, want, 1e-9, "H·v");
    // Central differences of the gradient along v.
    let along = |t: f64| grad(flight)(&std::array::from_fn(|i| p[i] + t * v[i]));
    let (a, b) = (along(1e-5), along(-1e-5));
    close(
        hv,
        std::array::from_fn(|i| (a[i] - b[i]) / 2e-5),
        1e-5,
        "fd H·v",
    );
    // Nested arrays and floats with tuple argnums: tangents on each.
    let m = [[2.0, 0.5], [-1.0, 3.0]];
    let (dm, dw) = ([[0.1, 0.0], [0.0, -0.2]], [1.0, 0.5]);
    let w = [0.3, -1.2];
    let ((gm, gw), (tm, tw)) =
        jvp(grad!(quadratic, argnums = (0, 1)))((m, &w, 1.5), (dm, &dw, 0.25));
    assert_eq!((gm, gw), grad!(quadratic, argnums = (0, 1))(m, &w, 1.5));
    // The tangent of the gradient by central differences along the tangents.
    let step = |t: f64| {
        let mt = std::array::from_fn(|i| std::array::from_fn(|j| m[i][j] + t * dm[i][j]));
        let wt = std::array::from_fn(|i| w[i] + t * dw[i]);
        grad!(quadratic, argnums = (0, 1))(mt, &wt, 1.5 + t * 0.25)
    };
    let ((am, aw), (bm, bw)) = (step(1e-5), step(-1e-5));
    close(
        tw,
        std::array::from_fn(|i| (aw[i] - bw[i]) / 2e-5),
        1e-5,
        "d grad_w",
    );
    let flat = |x: [[f64; 2]; 2]| [x[0][0], x[0][1], x[1][0], x[1][1]];
    let fdm: [f64; 4] = std::array::from_fn(|i| (flat(am)[i] - flat(bm)[i]) / 2e-5);
    close(flat(tm), fdm, 1e-5, "d grad_m");
}

/// Cubic in a 2×2 matrix, times a float.
#[allow(clippy::needless_range_loop)]
#[differentiable]
fn cubic(m: [[f64; 2]; 2], s: f64) -> f64 {
    let mut t = 0.0;
    for i in 0..2 {
        for j in 0..2 {
            t += m[i][j] * m[i][j] * m[j][i] * s;
        }
    }
    t
}

#[test]
fn hessian_of_a_nested_array() {
    let m = [[1.0, 2.0], [3.0, 4.0]];
    // `[[f64; 2]; 2]` in, `in_shape ++ in_shape` out, as in JAX.
    let h: [[[[f64; 2]; 2]; 2]; 2] = hessian(cubic)(m, 2.0);
    for k in 0..4 {
        let (a, b) = (k / 2, k % 2);
        let (mut mp, mut mm) = (m, m);
        mp[a][b] += 1e-5;
        mm[a][b] -= 1e-5;
        let (gp, gm) = (grad(cubic)(mp, 2.0), grad(cubic)(mm, 2.0));
        for i in 0..2 {
            for j in 0..2 {
                let fd = (gp[i][j] - gm[i][j]) / 2e-5;
                assert!((h[i][j][a][b] - fd).abs() < 1e-5, "H[{i}][{j}][{a}][{b}]");
            }
        }
    }
    // ∂²f/∂m₀₁∂m₁₀ = 2 (m₀₁ + m₁₀) s.
    assert_eq!(h[0][1][1][0], 20.0);
}

/// A vector field of three floats: `[f64; 4]` out.
#[differentiable]
fn field(a: f64, b: f64, c: f64) -> [f64; 4] {
    [a * b, b.sin() * c, a + c * c, 2.0]
}

/// A map of `[f64; 2]` to `[f64; 3]`.
#[differentiable]
fn polar(q: &[f64; 2]) -> [f64; 3] {
    let r = q[0];
    [r * q[1].cos(), r * q[1].sin(), r * r]
}

#[test]
fn vector_results_with_vjp_jvp_and_jacobians() {
    let (a, b, c) = (0.5, -1.2, 2.0);
    assert_eq!(field(a, b, c), [a * b, b.sin() * c, a + c * c, 2.0]);
    // jvp along b.
    let (y, t) = jvp(field)((a, b, c), (0.0, 1.0, 0.0));
    assert_eq!(y, field(a, b, c));
    close(t, [a, b.cos() * c, 0.0, 0.0], 1e-12, "jvp");
    // vjp: uᵀJ, one cotangent per argument.
    let (y2, pullback) = vjp(field)(a, b, c);
    assert_eq!(y2, y);
    let (ca, cb, cc) = pullback(&[1.0, 0.0, 2.0, 5.0]);
    close([ca, cb, cc], [b + 2.0, a, 4.0 * c], 1e-12, "vjp");
    // Jacobians w.r.t. one float: the column [∂y/∂b].
    let jb: [f64; 4] = jacfwd!(field, argnums = 1)(a, b, c);
    close(jb, t, 1e-12, "jacfwd argnums = 1");
    close(
        jacrev!(field, argnums = 1)(a, b, c),
        t,
        1e-12,
        "jacrev argnums = 1",
    );
    // [f64; 2] -> [f64; 3]: a 3 × 2 Jacobian, output-major.
    let q = [1.5, 0.4];
    let jf: [[f64; 2]; 3] = jacfwd(polar)(&q);
    let jr: [[f64; 2]; 3] = jacrev(polar)(&q);
    let want = [
        [q[1].cos(), -q[0] * q[1].sin()],
        [q[1].sin(), q[0] * q[1].cos()],
        [2.0 * q[0], 0.0],
    ];
    for o in 0..3 {
        close(jf[o], want[o], 1e-12, "jacfwd");
        close(jr[o], want[o], 1e-12, "jacrev");
    }
}

/// A float function's Hessian with argnums, next to a fixed array.
#[differentiable]
fn mixed(p: &[f64; 2], s: f64) -> f64 {
    p[0] * p[1] * s * s + (s * p[0]).sin()
}

#[test]
fn hessians_with_argnums() {
    let (p, s) = ([0.3, -0.8], 1.7);
    let hs: f64 = hessian!(mixed, argnums = 1)(&p, s);
    let want = 2.0 * p[0] * p[1] - p[0] * p[0] * (s * p[0]).sin();
    assert!((hs - want).abs() < 1e-12, "{hs} {want}");
    let hp: [[f64; 2]; 2] = hessian(mixed)(&p, s);
    let want = [[-s * s * (s * p[0]).sin(), s * s], [s * s, 0.0]];
    close(hp[0], want[0], 1e-12, "row 0");
    close(hp[1], want[1], 1e-12, "row 1");
}

#[differentiable]
fn first_n(m: &[[f64; 3]; 2], n: usize) -> f64 {
    let mut total = 0.0;
    for j in 0..n {
        total += m[0][j] * m[1][0];
    }
    total
}

#[test]
fn an_index_out_of_bounds_panics_as_in_rust() {
    let m = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
    assert_eq!(grad(first_n)(&m, 3), [[4.0, 4.0, 4.0], [6.0, 0.0, 0.0]]);
    // m[0][3] would be m[1][0] in the flat leaves; it panics instead.
    let r = std::panic::catch_unwind(|| grad(first_n)(&m, 4));
    let msg = r.expect_err("out of bounds");
    let msg = msg.downcast_ref::<String>().expect("a message");
    assert!(
        msg.contains("index out of bounds: the len is 3 but the index is 3"),
        "{msg}"
    );
}
