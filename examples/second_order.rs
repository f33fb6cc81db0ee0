//! Second-order derivatives without forming the Hessian: Hessian-vector
//! products with `jvp(grad(f))` (forward-over-reverse, one pass), and
//! Newton's method with conjugate gradients on them (Newton-CG) for the
//! Rosenbrock function in 20 dimensions. `vjp(grad(f))` gives the same
//! products as a pullback; both are checked against central differences of
//! the gradient. A damped oscillator integrated from constants shows a
//! simulation whose state starts as plain numbers. A critic trained with a
//! gradient penalty (WGAN-GP style) calls `nabla::grad` inside the loss it
//! differentiates. A projectile with drag on `[f64; 3]` parameters gets
//! its gradient `[f64; 3]` and Hessian `[[f64; 3]; 3]` as plain arrays.
//!
//! Run: `cargo run --release --example second_order`

use nabla::prelude::*;

/// Rosenbrock: `Σ 100 (x_{i+1} − x_i²)² + (1 − x_i)²`.
#[differentiable]
fn rosenbrock(x: &Array) -> Array {
    let n = x.shape()[0];
    let head = x.slice_axis(0, 0..n - 1);
    let tail = x.slice_axis(0, 1..n);
    let d = &tail - &head.square();
    nabla::sum(&(d.square() * 100.0 + (1.0 - &head).square()))
}

/// `H v` by forward-over-reverse.
fn hvp(x: &Array, v: &Array) -> Array {
    jvp(grad(rosenbrock))((x,), (v,)).1
}

fn dot(a: &Array, b: &Array) -> f64 {
    nabla::sum(&(a * b)).item()
}

/// Solves `H p = -g` approximately by conjugate gradients on `hvp`.
fn newton_direction(x: &Array, g: &Array) -> Array {
    let mut p = g.zeros_like();
    let mut r = -g;
    let mut d = r.clone();
    for _ in 0..x.shape()[0] {
        let hd = hvp(x, &d);
        let curvature = dot(&d, &hd);
        if curvature <= 0.0 {
            // Not positive definite along d: fall back to steepest descent.
            return if dot(&p, &p) == 0.0 { -g } else { p };
        }
        let alpha = dot(&r, &r) / curvature;
        p = &p + &(&d * alpha);
        let r_next = &r - &(&hd * alpha);
        if dot(&r_next, &r_next).sqrt() < 1e-10 {
            break;
        }
        let beta = dot(&r_next, &r_next) / dot(&r, &r);
        d = &r_next + &(&d * beta);
        r = r_next;
    }
    p
}

/// A damped oscillator from rest: `x` and `v` start as numbers.
#[differentiable]
fn oscillator(k: f64, c: f64) -> f64 {
    let dt = 0.01;
    let mut x = 1.0;
    let mut v = 0.0;
    for _ in 0..500 {
        let a = -k * x - c * v;
        x += dt * v;
        v += dt * a;
    }
    0.5 * v * v + 0.5 * k * x * x
}

/// A critic's score of the points `x` (rows): `Σ tanh(x w)`.
#[differentiable]
fn critic(x: &Array, w: &Array) -> Array {
    nabla::sum(&x.matmul(w).tanh())
}

/// The critic's score plus `λ (‖∂score/∂x‖² − 1)²`: the gradient inside
/// the loss is differentiated again when the loss is.
#[differentiable]
fn penalised(w: &Array, x: &Array) -> Array {
    let gx = nabla::grad(critic)(x, w);
    let n2 = nabla::sum(&(&gx * &gx));
    critic(x, w) * 0.1 + (&n2 - 1.0) * (&n2 - 1.0) * 10.0
}

/// Gradient descent on the penalised critic; checks its gradient first.
fn gradient_penalty() {
    nabla::manual_seed(5);
    let x = nabla::randn(&[8, 3], DType::F64);
    let mut w = nabla::randn(&[3, 1], DType::F64);
    // The gradient through the inner gradient, against central differences.
    let g = grad(penalised)(&w, &x);
    let (eps, dir) = (1e-6, nabla::randn(&[3, 1], DType::F64));
    let fd = (penalised(&(&w + &(&dir * eps)), &x) - penalised(&(&w - &(&dir * eps)), &x)).item()
        / (2.0 * eps);
    let along = dot(&g, &dir);
    println!("gradient penalty: d/dw along a direction {along:.6} (finite difference {fd:.6})");
    assert!((along - fd).abs() < 1e-6 * fd.abs().max(1.0));
    let norm2 = |w: &Array| {
        let gx = grad(critic)(&x, w);
        dot(&gx, &gx)
    };
    println!("  before: ‖∂critic/∂x‖² = {:.4}", norm2(&w));
    for _ in 0..200 {
        w = &w - &(grad(penalised)(&w, &x) * 1e-3);
    }
    println!(
        "  after 200 steps: ‖∂critic/∂x‖² = {:.4} (the penalty pulls it to 1)",
        norm2(&w)
    );
    assert!((norm2(&w) - 1.0).abs() < 0.1);
}

/// A projectile with drag from `p = [speed, angle, drag]`: the squared
/// distance to a target after one second of flight.
#[differentiable]
fn miss(p: &[f64; 3]) -> f64 {
    let dt = 0.01;
    let (mut x, mut y) = (0.0, 0.0);
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
    (x - 10.0) * (x - 10.0) + (y - 2.0) * (y - 2.0)
}

/// Newton steps on speed and angle (drag fixed) with the `[[f64; 3]; 3]`
/// Hessian of the simulation.
fn aim() {
    let mut p = [8.0, 0.9, 0.1];
    println!(
        "projectile: miss = {:.3e} at speed {:.3}, angle {:.3}",
        miss(&p),
        p[0],
        p[1]
    );
    for _ in 0..8 {
        let g: [f64; 3] = grad(miss)(&p);
        let h: [[f64; 3]; 3] = hessian(miss)(&p);
        // Solve the 2 × 2 system for (speed, angle).
        let det = h[0][0] * h[1][1] - h[0][1] * h[1][0];
        p[0] -= (h[1][1] * g[0] - h[0][1] * g[1]) / det;
        p[1] -= (h[0][0] * g[1] - h[1][0] * g[0]) / det;
    }
    let m = miss(&p);
    println!(
        "            miss = {m:.3e} at speed {:.3}, angle {:.3}",
        p[0], p[1]
    );
    assert!(
        m < 1e-16,
        "Newton's method on the simulation hits the target"
    );
    // The Hessian against central differences of the gradient.
    let h = hessian(miss)(&p);
    let mut worst = 0.0f64;
    for k in 0..3 {
        let (mut a, mut b) = (p, p);
        a[k] += 1e-5;
        b[k] -= 1e-5;
        let (ga, gb) = (grad(miss)(&a), grad(miss)(&b));
        for i in 0..3 {
            worst = worst.max(((ga[i] - gb[i]) / 2e-5 - h[i][k]).abs());
        }
    }
    println!("            |hessian - finite difference|_max = {worst:.1e}");
    assert!(worst < 1e-4);
}

fn main() {
    aim();
    gradient_penalty();
    let n = 20;
    let x0 = Array::from_vec((0..n).map(|i| -1.2 + 0.1 * (i % 3) as f64).collect(), &[n]);

    // Check H v against central differences of the gradient.
    let v = Array::from_vec((0..n).map(|i| ((i * 7) % 5) as f64 - 2.0).collect(), &[n]);
    let eps = 1e-6;
    let fd = (grad(rosenbrock)(&(&x0 + &(&v * eps))) - grad(rosenbrock)(&(&x0 - &(&v * eps))))
        * (0.5 / eps);
    let hv = hvp(&x0, &v);
    let err = (&hv - &fd).abs().max().item();
    println!("|H v - finite difference|_max = {err:.2e}");
    assert!(err < 1e-4, "H v against finite differences");
    let (_, pullback) = vjp(grad(rosenbrock))(&x0);
    let err_vjp = (&pullback(&v) - &hv).abs().max().item();
    println!("|vjp(grad) - jvp(grad)|_max = {err_vjp:.2e} (H is symmetric)");
    assert!(err_vjp < 1e-9);

    // Newton-CG with a backtracking line search.
    let mut x = x0;
    let mut f = rosenbrock(&x).item();
    println!("step  0: f = {f:.6e}");
    for step in 1..=100 {
        let g = grad(rosenbrock)(&x);
        if dot(&g, &g).sqrt() < 1e-10 {
            break;
        }
        let p = newton_direction(&x, &g);
        let mut t = 1.0;
        while rosenbrock(&(&x + &(&p * t))).item() > f + 1e-4 * t * dot(&g, &p) && t > 1e-8 {
            t *= 0.5;
        }
        x = &x + &(&p * t);
        f = rosenbrock(&x).item();
        if step % 5 == 0 || f < 1e-20 {
            println!("step {step:2}: f = {f:.6e}");
        }
        if f < 1e-20 {
            break;
        }
    }
    let dist = (&x - 1.0).abs().max().item();
    println!("minimiser within {dist:.1e} of [1, 1, ..., 1]");
    assert!(dist < 1e-6, "Newton-CG converges to the minimiser");

    // The oscillator's energy sensitivities and its Hessian in (k, c).
    let (k, c) = (2.0, 0.3);
    let (dk, dc) = grad!(oscillator, argnums = (0, 1))(k, c);
    let (_, pb) = vjp!(grad!(oscillator, argnums = (0, 1)))(k, c);
    let (hkk, hck) = pb(&(1.0, 0.0));
    let fd_k = (oscillator(k + 1e-6, c) - oscillator(k - 1e-6, c)) / 2e-6;
    println!("oscillator: dE/dk = {dk:.6} (finite difference {fd_k:.6}), dE/dc = {dc:.6}");
    println!("            d²E/dk² = {hkk:.6}, d²E/dk dc = {hck:.6}");
    assert!((dk - fd_k).abs() < 1e-6);
    let g = grad!(oscillator, argnums = (0, 1));
    let (hkk_fd, hck_fd) = {
        let (a, b) = (g(k + 1e-5, c), g(k - 1e-5, c));
        ((a.0 - b.0) / 2e-5, (a.1 - b.1) / 2e-5)
    };
    assert!(
        (hkk - hkk_fd).abs() < 1e-5 && (hck - hck_fd).abs() < 1e-5,
        "{hkk_fd} {hck_fd}"
    );
}
