//! The projectile workload of issue 5: the squared miss distance of a
//! projectile with quadratic drag after 1 000 semi-implicit Euler steps, as
//! in `examples/projectile.rs` (same constants), differentiated with
//! respect to launch speed and angle. `benches/compare/jax_projectile_twin.py`
//! mirrors it (`jax.jit(jax.grad)` over `lax.fori_loop`).

use nabla::prelude::*;

const G: f64 = 9.81;
const DRAG: f64 = 0.02;
const STEPS: usize = 1000;
const T: f64 = 2.5;
const DT: f64 = T / STEPS as f64;
const TARGET: (f64, f64) = (40.0, 5.0);

/// `(speed, angle)` the gradient is taken at.
pub const AT: (f64, f64) = (20.0, 0.6);

/// Squared distance between the projectile at time T and the target.
#[differentiable]
pub fn miss(speed: f64, angle: f64) -> f64 {
    let mut x = speed * 0.0;
    let mut y = speed * 0.0;
    let mut vx = speed * angle.cos();
    let mut vy = speed * angle.sin();
    for _ in 0..STEPS {
        let v = (vx * vx + vy * vy).sqrt();
        vx -= DT * DRAG * v * vx;
        vy -= DT * (G + DRAG * v * vy);
        x += DT * vx;
        y += DT * vy;
    }
    (x - TARGET.0) * (x - TARGET.0) + (y - TARGET.1) * (y - TARGET.1)
}

/// The gradient against central differences (before timing).
pub fn check() {
    let (s, a) = AT;
    let (gs, ga) = nabla::grad!(miss, argnums = (0, 1))(s, a);
    let h = 1e-6;
    let fs = (miss(s + h, a) - miss(s - h, a)) / (2.0 * h);
    let fa = (miss(s, a + h) - miss(s, a - h)) / (2.0 * h);
    assert!(
        (gs - fs).abs() < 1e-5 * fs.abs().max(1.0),
        "d/dspeed {gs} vs {fs}"
    );
    assert!(
        (ga - fa).abs() < 1e-5 * fa.abs().max(1.0),
        "d/dangle {ga} vs {fa}"
    );
    println!(
        "projectile: miss {:.6}, gradient ({gs:.6}, {ga:.6})",
        miss(s, a)
    );
}
