//! Fixed-size arrays of floats as arguments of functions of floats:
//! `grad`, `value_and_grad`, `vjp` and `jvp` of `[f64; 3]` and
//! `[[f64; 2]; 2]` arguments, mixed with `f64` arguments and `argnums`,
//! with loops and branches inside; against central finite differences.

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

fn flight_by_hand(p: [f64; 3]) -> f64 {
    let (dt, mut x, mut y) = (0.01, 0.0, 0.0);
    let (mut vx, mut vy) = (p[0] * p[1].cos(), p[0] * p[1].sin());
    for _ in 0..100 {
        let (ax, ay) = (-p[2] * vx, -9.81 - p[2] * vy);
        x += dt * vx;
        y += dt * vy;
        vx += dt * ax;
        vy += dt * ay;
    }
    x * x + y
}

/// Central differences of `f` at `p`.
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
    assert_eq!(flight(&p), flight_by_hand(p));
    let g: [f64; 3] = grad(flight)(&p);
    close(g, fd(flight_by_hand, p), 1e-6, "grad");
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

fn quadratic_by_hand(m: [[f64; 2]; 2], v: [f64; 2], s: f64) -> f64 {
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
    assert_eq!(quadratic(m, &v, s), quadratic_by_hand(m, v, s));
    let (gm, gv, gs) = grad!(quadratic, argnums = (0, 1, 2))(m, &v, s);
    let flat = |q: [f64; 4]| quadratic_by_hand([[q[0], q[1]], [q[2], q[3]]], v, s);
    close(
        [gm[0][0], gm[0][1], gm[1][0], gm[1][1]],
        fd(flat, [m[0][0], m[0][1], m[1][0], m[1][1]]),
        1e-7,
        "d/dm",
    );
    close(gv, fd(|w| quadratic_by_hand(m, w, s), v), 1e-7, "d/dv");
    close(
        [gs],
        fd(|t| quadratic_by_hand(m, v, t[0]), [s]),
        1e-7,
        "d/ds",
    );
    // One argument at a time.
    let gv2: [f64; 2] = grad!(quadratic, argnums = 1)(m, &v, s);
    assert_eq!(gv2, gv);
}
