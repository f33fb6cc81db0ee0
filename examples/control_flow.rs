//! Control flow in differentiable code: `break` with a data-dependent trip
//! count, `continue`, early `return` from inside a loop, and a loop over a
//! slice of arrays — each differentiated and checked against finite
//! differences.
//!
//! Run: `cargo run --release --example control_flow`

use nabla::prelude::*;

/// √a by Newton's method, stopping when converged: the number of
/// iterations depends on `a`, and the derivative is that of the iterations
/// that ran (which converges to 1 / (2√a)).
#[differentiable]
fn newton_sqrt(a: f64) -> f64 {
    let mut x = 0.5 * (a + 1.0); // ≥ √a (AM–GM), so Newton decreases monotonically
    for _ in 0..100 {
        if (x * x - a).abs() < 1e-14 * a {
            break;
        }
        x = 0.5 * (x + a / x);
    }
    x
}

/// A body dropped from 30 m with linear drag, simulated for 3 s: if it
/// reaches the ground, return (early, from inside the loop) its squared
/// impact speed; otherwise its height at 3 s.
#[differentiable]
fn impact_or_height(drag: f64) -> f64 {
    let (mut h, mut v) = (30.0 + drag * 0.0, 0.0 * drag);
    let dt = 0.001;
    for _ in 0..3000 {
        v += dt * (-9.81 - drag * v);
        h += dt * v;
        if h < 0.0 {
            return v * v;
        }
    }
    h
}

/// A residual stack over a slice of layers, skipping (with `continue`) the
/// layers whose pre-activation has negative mean.
#[differentiable]
fn gated_stack(layers: &[Array], x: &Array) -> Array {
    let mut h = x.clone();
    for w in layers {
        let z = h.matmul(w);
        if nabla::mean(&z).item() < 0.0 {
            continue;
        }
        h = &h + &z.tanh();
    }
    nabla::sum(&h.square())
}

/// Plain simulation: does the body reach the ground within 3 s?
fn lands_within_3s(drag: f64) -> bool {
    let (mut h, mut v) = (30.0f64, 0.0f64);
    for _ in 0..3000 {
        v += 0.001 * (-9.81 - drag * v);
        h += 0.001 * v;
        if h < 0.0 {
            return true;
        }
    }
    false
}

fn main() {
    println!("-- break: Newton's method");
    for a in [0.5, 2.0, 10.0, 1e6] {
        let g = nabla::grad(newton_sqrt)(a);
        println!(
            "sqrt({a}) = {:.12}   d/da = {g:.12}   exact 1/(2 sqrt a) = {:.12}",
            newton_sqrt(a),
            0.5 / a.sqrt()
        );
        assert!((g - 0.5 / a.sqrt()).abs() < 1e-9 * (0.5 / a.sqrt()).max(1.0));
    }

    println!("-- early return from a loop");
    for drag in [0.0, 0.3, 2.0] {
        let g = nabla::grad(impact_or_height)(drag);
        let fd = (impact_or_height(drag + 1e-6) - impact_or_height(drag - 1e-6)) / 2e-6;
        let what = if lands_within_3s(drag) {
            "impact speed² (returned early)"
        } else {
            "height at 3 s"
        };
        println!(
            "drag {drag}: {what} = {:9.4}, d/d(drag) = {g:10.4} (finite difference {fd:10.4})",
            impact_or_height(drag)
        );
        assert!((g - fd).abs() < 1e-3 * fd.abs().max(1.0));
    }

    println!("-- continue in a loop over a slice of layers");
    nabla::manual_seed(2);
    let layers: Vec<Array> = (0..4)
        .map(|_| nabla::randn(&[3, 3], DType::F64) * 0.7)
        .collect();
    let x = nabla::randn(&[2, 3], DType::F64);
    let (gl, gx) = nabla::grad!(gated_stack, argnums = (0, 1))(&layers, &x);
    let mut e = vec![0.0; 6];
    e[4] = 1e-6;
    let dx = Array::from_vec(e, &[2, 3]);
    let fd = (gated_stack(&layers, &(&x + &dx)) - gated_stack(&layers, &(&x - &dx))) / 2e-6;
    println!(
        "d/dx = {gx}\nd/dx[1, 1] by finite difference: {:.6}",
        fd.item()
    );
    assert!((gx.to_vec::<f64>()[4] - fd.item()).abs() < 1e-6);
    let skipped = gl.iter().filter(|g| g.abs().sum().item() == 0.0).count();
    println!(
        "layers skipped by `continue` (zero gradient): {skipped} of {}",
        gl.len()
    );
}
