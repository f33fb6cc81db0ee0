//! Newton's method on the Rosenbrock function with `grad` and `hessian`
//! generated at compile time.
//!
//! Run: `cargo run --release --example newton`

use nabla::prelude::*;

#[differentiable]
fn rosenbrock(x: &Array) -> Array {
    let n = x.shape()[0];
    let head = x.slice_axis(0, 0..n - 1);
    let tail = x.slice_axis(0, 1..n);
    nabla::sum(&((tail - head.square()).square() * 100.0 + (1.0 - head).square()))
}

/// Solves `a · x = b` by Gaussian elimination with partial pivoting.
fn solve(a: &Array, b: &Array) -> Array {
    let n = b.numel();
    let mut m = a.to_vec::<f64>();
    let mut v = b.to_vec::<f64>();
    for col in 0..n {
        let p = (col..n)
            .max_by(|&i, &j| m[i * n + col].abs().total_cmp(&m[j * n + col].abs()))
            .unwrap();
        for k in 0..n {
            m.swap(col * n + k, p * n + k);
        }
        v.swap(col, p);
        for row in col + 1..n {
            let f = m[row * n + col] / m[col * n + col];
            for k in col..n {
                m[row * n + k] -= f * m[col * n + k];
            }
            v[row] -= f * v[col];
        }
    }
    for row in (0..n).rev() {
        let s: f64 = (row + 1..n).map(|k| m[row * n + k] * v[k]).sum();
        v[row] = (v[row] - s) / m[row * n + row];
    }
    Array::from_vec(v, &[n])
}

fn main() {
    // From this start pure Newton reaches the global minimiser (1, ..., 1);
    // from others it can stop at the 5-D Rosenbrock's other stationary point.
    let mut x = Array::from_vec(vec![0.5f64, 0.4, 0.6, 0.5, 0.3], &[5]);
    let grad = nabla::grad(rosenbrock);
    let hess = nabla::hessian(rosenbrock);
    for it in 0..30 {
        let (f, g) = (rosenbrock(&x), grad(&x));
        let gnorm = g.square().sum().sqrt().item();
        println!("iter {it:2}  f = {:.3e}  |grad| = {gnorm:.3e}", f.item());
        if gnorm < 1e-10 {
            break;
        }
        let step = solve(&hess(&x), &g);
        x = &x - &step;
    }
    println!("minimiser: {x}");
    let err = (&x - 1.0).abs().max().item();
    println!("max |x - 1| = {err:.2e}");
    assert!(
        err < 1e-8,
        "Newton did not converge to the minimiser (1, ..., 1)"
    );
}
