//! First-order transforms of `#[differentiable]` functions: `grad` of a
//! scalar and of an array function, `argnums`, `has_aux`, `vjp!` and
//! `jvp!`, and the gradient of a `#[derive(Tree)]` struct of parameters.
//! Every derivative printed is checked against central differences.
//!
//! Run: `cargo run --release --example grad_basics`

use nabla::prelude::*;

/// A scalar function: its generated derivative is straight-line f64 code.
#[differentiable]
fn bump(x: f64, y: f64) -> f64 {
    (x * y).sin() * (-(x * x) - y * y).exp()
}

/// An array function with a scalar result.
#[differentiable]
fn energy(x: &Array, w: &Array) -> Array {
    nabla::sum(&(x.matmul(w).tanh().square()))
}

/// A loss that also returns its prediction (`has_aux`).
#[differentiable]
fn loss_and_prediction(w: &Array, x: &Array) -> (Array, Array) {
    let pred = x.matmul(w);
    (nabla::sum(&(pred.clone() - 1.0).square()), pred)
}

/// A vector-valued function, for `vjp!` and `jvp!`.
#[differentiable]
fn squash(x: &Array) -> Array {
    x.sin() * x.exp()
}

#[derive(Clone, Tree)]
struct Params {
    scale: Array,
    shift: Array,
}

#[differentiable]
fn fit(p: &Params, x: &Array, y: &Array) -> Array {
    nabla::mse_loss(&(x * &p.scale + &p.shift), y)
}

/// Central differences of a scalar function of one array, entry by entry.
fn fd(f: impl Fn(&Array) -> f64, x: &Array) -> Array {
    let h = 1e-6;
    let base = x.to_vec::<f64>();
    let g = (0..base.len())
        .map(|i| {
            let (mut p, mut m) = (base.clone(), base.clone());
            p[i] += h;
            m[i] -= h;
            let (p, m) = (Array::from_vec(p, x.shape()), Array::from_vec(m, x.shape()));
            (f(&p) - f(&m)) / (2.0 * h)
        })
        .collect();
    Array::from_vec(g, x.shape())
}

/// The largest absolute difference between two arrays.
fn max_diff(a: &Array, b: &Array) -> f64 {
    a.to_vec::<f64>()
        .iter()
        .zip(b.to_vec::<f64>())
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

fn main() {
    // 1. A scalar function, both arguments (argnums), and a JVP.
    let (x, y) = (0.7, -0.3);
    let (gx, gy) = nabla::grad!(bump, argnums = (0, 1))(x, y);
    let h = 1e-6;
    let fdx = (bump(x + h, y) - bump(x - h, y)) / (2.0 * h);
    let fdy = (bump(x, y + h) - bump(x, y - h)) / (2.0 * h);
    println!("bump({x}, {y}) = {:.6}", bump(x, y));
    println!("  d/dx = {gx:.9}  (finite differences {fdx:.9})");
    println!("  d/dy = {gy:.9}  (finite differences {fdy:.9})");
    assert!((gx - fdx).abs() < 1e-8 && (gy - fdy).abs() < 1e-8);

    // 2. An array function: the gradient w.r.t. the second argument.
    nabla::manual_seed(1);
    let xs = nabla::randn(&[4, 3], DType::F64);
    let w = nabla::randn(&[3, 2], DType::F64);
    let gw = nabla::grad!(energy, argnums = 1)(&xs, &w);
    let err = max_diff(&gw, &fd(|w| energy(&xs, w).item(), &w));
    println!(
        "grad of energy w.r.t. w: shape {:?}, max |grad - FD| = {err:.1e}",
        gw.shape()
    );
    assert!(err < 1e-7);

    // 3. has_aux: the loss, its auxiliary prediction, and the gradient.
    let ((l, pred), g) = nabla::value_and_grad!(loss_and_prediction, has_aux)(&w, &xs);
    let err = max_diff(&g, &fd(|w| loss_and_prediction(w, &xs).0.item(), &w));
    println!(
        "loss {:.4}, prediction shape {:?}, max |grad - FD| = {err:.1e}",
        l.item(),
        pred.shape()
    );
    assert!(err < 1e-7);

    // 4. vjp! and jvp! of a vector function: uᵀJ and J·t agree (uᵀ(J t) = (uᵀJ) t).
    let v = Array::from_vec(vec![0.1f64, -0.4, 0.8], &[3]);
    let (u, t) = (
        Array::from_vec(vec![1.0f64, 2.0, -1.0], &[3]),
        Array::from_vec(vec![0.5f64, 0.0, 1.5], &[3]),
    );
    let (_, pullback) = nabla::vjp!(squash)(&v);
    let ut_j = pullback(&u);
    let (_, j_t) = nabla::jvp!(squash)((&v,), (&t,));
    let (lhs, rhs) = (
        nabla::sum(&(&u * &j_t)).item(),
        nabla::sum(&(&ut_j * &t)).item(),
    );
    println!("vjp: uᵀJ = {ut_j}");
    println!("jvp: J t = {j_t}");
    println!("uᵀ(J t) = {lhs:.12}, (uᵀJ) t = {rhs:.12}");
    assert!((lhs - rhs).abs() < 1e-12);

    // 5. A Tree struct of parameters: its gradient is a Params.
    let p = Params {
        scale: Array::from_vec(vec![0.5f64, -1.0, 2.0], &[3]),
        shift: Array::scalar(0.25f64),
    };
    let target = xs.sin();
    let gp = nabla::grad(fit)(&p, &xs, &target);
    let fd_scale = fd(
        |s| {
            let q = Params {
                scale: s.clone(),
                shift: p.shift.clone(),
            };
            fit(&q, &xs, &target).item()
        },
        &p.scale,
    );
    let err = max_diff(&gp.scale, &fd_scale);
    println!(
        "grad of fit: scale {} (max |grad - FD| = {err:.1e}), shift {:.6}",
        gp.scale,
        gp.shift.item()
    );
    assert!(err < 1e-7);
}
