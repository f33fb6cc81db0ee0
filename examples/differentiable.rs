//! Compile-time derivatives with `#[differentiable]`: a scalar function and
//! its derivatives, then an MLP (a `#[derive(Tree)]` struct) trained with
//! `value_and_grad`. No tape is built: the gradient is Rust code generated
//! by the macro.
//!
//! Run: `cargo run --release --example differentiable`

use nabla::prelude::*;

/// A scalar function: its generated derivative is straight-line f64 code.
#[differentiable]
fn bump(x: f64, y: f64) -> f64 {
    (x * y).sin() * (-(x * x) - y * y).exp()
}

#[derive(Clone, Tree)]
struct Layer {
    w: Array,
    b: Array,
}

#[derive(Clone, Tree)]
struct Mlp {
    hidden: Layer,
    out: Layer,
}

#[differentiable]
fn predict(p: &Mlp, x: &Array) -> Array {
    let h = (x.matmul(&p.hidden.w) + &p.hidden.b).tanh();
    h.matmul(&p.out.w) + &p.out.b
}

#[differentiable]
fn loss(p: &Mlp, x: &Array, y: &Array) -> Array {
    nabla::mse_loss(&predict(p, x), y)
}

fn main() {
    // Scalar derivatives, checked against central differences.
    let (x, y) = (0.7, -0.3);
    let (gx, gy) = nabla::grad!(bump, argnums = (0, 1))(x, y);
    let h = 1e-6;
    let fdx = (bump(x + h, y) - bump(x - h, y)) / (2.0 * h);
    let fdy = (bump(x, y + h) - bump(x, y - h)) / (2.0 * h);
    println!("bump({x}, {y}) = {:.6}", bump(x, y));
    println!("  d/dx = {gx:.9}   (finite differences {fdx:.9})");
    println!("  d/dy = {gy:.9}   (finite differences {fdy:.9})");
    let (_, dir) = nabla::jvp(bump)((x, y), (1.0, 1.0));
    println!(
        "  directional derivative along (1, 1) = {dir:.9} = d/dx + d/dy = {:.9}",
        gx + gy
    );

    // Fit y = sin(2x) on [-1, 1] with a 1-32-1 tanh MLP.
    nabla::manual_seed(0);
    let xs = Array::linspace(-1.0, 1.0, 128, DType::F32).reshape(&[128, 1]);
    let ys = (&xs * 2.0).sin();
    let mut p = Mlp {
        hidden: Layer {
            w: nabla::randn(&[1, 32], DType::F32),
            b: Array::zeros(&[32], DType::F32),
        },
        out: Layer {
            w: nabla::randn(&[32, 1], DType::F32) * 0.2,
            b: Array::zeros(&[1], DType::F32),
        },
    };
    let lr = 0.2;
    let mut first = 0.0;
    for step in 0..=1500 {
        let (l, g) = nabla::value_and_grad(loss)(&p, &xs, &ys);
        p.hidden.w -= &g.hidden.w * lr;
        p.hidden.b -= &g.hidden.b * lr;
        p.out.w -= &g.out.w * lr;
        p.out.b -= &g.out.b * lr;
        if step == 0 {
            first = l.item();
        }
        if step % 300 == 0 {
            println!("step {step:4}  loss {:.6}", l.item());
        }
    }
    let last = loss(&p, &xs, &ys).item();
    println!("loss fell from {first:.5} to {last:.5}");
    assert!(last < first * 0.05, "training did not converge");
    let probe = Array::from_vec(vec![0.5f32], &[1, 1]);
    println!(
        "model(0.5) = {:.4}, sin(1.0) = {:.4}",
        predict(&p, &probe).item(),
        1.0f64.sin()
    );
}
