//! The `sim_loop` workload of `BENCHMARKS.md`: the gradient of a 10 000-step
//! f64 scalar simulation — a damped oscillator `x'' = −k x − c x'`
//! integrated by explicit Euler — with respect to the stiffness `k`, the
//! damping `c` and the initial displacement `x0`; the loss is the final
//! energy. `benches/compare/jax_sim_loop_twin.py` mirrors it.

use nabla::prelude::*;

/// Steps of the simulation.
pub const STEPS: usize = 10_000;
/// Time step.
pub const DT: f64 = 1e-3;
/// `(k, c, x0)` the gradient is taken at.
pub const AT: (f64, f64, f64) = (2.0, 0.1, 1.0);

/// The simulation; its gradient is the generated VJP with a residual tape.
#[differentiable]
pub fn sim(k: f64, c: f64, x0: f64) -> f64 {
    let mut x = x0;
    let mut v = 0.0 * x0;
    for _ in 0..STEPS {
        let a = -k * x - c * v;
        let x_next = x + DT * v;
        v += DT * a;
        x = x_next;
    }
    0.5 * v * v + 0.5 * k * x * x
}

/// The same simulation with the binomial schedule (20 snapshots).
#[differentiable]
pub fn sim_revolve(k: f64, c: f64, x0: f64) -> f64 {
    let mut x = x0;
    let mut v = 0.0 * x0;
    #[nabla::checkpoint(snapshots = 20)]
    for _ in 0..STEPS {
        let a = -k * x - c * v;
        let x_next = x + DT * v;
        v += DT * a;
        x = x_next;
    }
    0.5 * v * v + 0.5 * k * x * x
}

/// The adjoint written by hand: the forward loop stores the trajectory
/// (pre-sized), the reverse loop runs the transposed step.
#[inline(never)]
pub fn sim_adjoint_by_hand(k: f64, c: f64, x0: f64) -> (f64, f64, f64) {
    let mut traj = Vec::with_capacity(STEPS);
    let (mut x, mut v) = (x0, 0.0);
    for _ in 0..STEPS {
        traj.push((x, v));
        let a = -k * x - c * v;
        let x_next = x + DT * v;
        v += DT * a;
        x = x_next;
    }
    // loss = v²/2 + k x²/2
    let (mut xb, mut vb) = (k * x, v);
    let (mut kb, mut cb) = (0.5 * x * x, 0.0);
    for &(x, v) in traj.iter().rev() {
        // v' = v + DT (−k x − c v), x' = x + DT v
        let ab = DT * vb;
        kb -= ab * x;
        cb -= ab * v;
        let xb_prev = xb - ab * k;
        vb = vb + DT * xb - ab * c;
        xb = xb_prev;
    }
    (kb, cb, xb)
}

/// Prints the gradient and checks the three gradients agree (to 1e-12 relative) and match central
/// differences; panics otherwise.
pub fn check() {
    let (k, c, x0) = AT;
    let g = nabla::grad!(sim, argnums = (0, 1, 2))(k, c, x0);
    let r = nabla::grad!(sim_revolve, argnums = (0, 1, 2))(k, c, x0);
    let h = sim_adjoint_by_hand(k, c, x0);
    let (g, r, h) = ([g.0, g.1, g.2], [r.0, r.1, r.2], [h.0, h.1, h.2]);
    let eps = 1e-6;
    let fd = [
        (sim(k + eps, c, x0) - sim(k - eps, c, x0)) / (2.0 * eps),
        (sim(k, c + eps, x0) - sim(k, c - eps, x0)) / (2.0 * eps),
        (sim(k, c, x0 + eps) - sim(k, c, x0 - eps)) / (2.0 * eps),
    ];
    let close = |a: f64, b: f64, rel: f64| (a - b).abs() <= rel * a.abs().max(b.abs()).max(1.0);
    // Compare with the JAX twin's first line.
    println!("sim_loop gradient (k, c, x0) = {g:?}");
    for i in 0..3 {
        assert_eq!(g[i], r[i], "sim_loop: revolve vs taped gradient, input {i}");
        assert!(
            close(g[i], h[i], 1e-12),
            "sim_loop: generated {} vs hand {}",
            g[i],
            h[i]
        );
        assert!(
            close(h[i], fd[i], 1e-6),
            "sim_loop: hand {} vs central difference {}",
            h[i],
            fd[i]
        );
    }
}
