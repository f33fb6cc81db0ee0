//! Per-example gradients: `vmap!(grad(loss), in_axes = (None, 0, 0))`,
//! for a function of arrays and for a model held in a `#[derive(Tree)]`
//! struct. The composition is resolved at compile time: it runs the
//! generated VJP program of `loss` once, at `Batched<Array>` (the weights
//! shared, the data batched), and every leaf of the gradient gains the
//! batch axis. Checked against a loop of single-example gradients, then
//! used for DP-SGD-style clipping: each example's gradient scaled to a
//! norm of at most 1 before averaging.
//!
//! Run: `cargo run --release --example per_example_grads`

use nabla::prelude::*;

#[differentiable]
fn loss(w: &Array, x: &Array, y: &Array) -> Array {
    let r = x.dot(w) - y;
    r.square() + nabla::sum(&(w * x).sin()) * 0.1
}

/// A two-layer network as a value; its gradient is a value of the same type.
#[derive(Tree, Clone)]
struct Mlp {
    w1: Array,
    b1: Array,
    w2: Array,
    b2: Array,
}

/// The squared error of one example `x: [d]`, `y: []`.
#[differentiable]
fn mlp_loss(p: &Mlp, x: &Array, y: &Array) -> Array {
    let h = (x.matmul(&p.w1) + &p.b1).tanh();
    let o = nabla::sum(&(h * &p.w2)) + &p.b2;
    (o - y).square()
}

/// The largest absolute difference between two arrays.
fn max_diff(a: &Array, b: &Array) -> f64 {
    (a - b).abs().max().item()
}

/// Row `i` of a batched array.
fn row(a: &Array, i: usize) -> Array {
    a.index_select(0, &[i]).squeeze(0)
}

fn main() {
    nabla::manual_seed(1);
    let (n, d, hidden) = (8, 4, 16);
    let w = nabla::randn(&[d], DType::F64);
    let xs = nabla::randn(&[n, d], DType::F64);
    let ys = nabla::randn(&[n], DType::F64);

    // Arrays: one program run for the whole batch, w shared.
    let per_example = vmap!(grad(loss), in_axes = (None, 0, 0))(&w, &xs, &ys);
    println!(
        "per-example gradients ({:?}):\n{per_example}",
        per_example.shape()
    );
    let mut max_err = 0.0f64;
    for i in 0..n {
        let gi = grad(loss)(&w, &row(&xs, i), &row(&ys, i));
        max_err = max_err.max(max_diff(&row(&per_example, i), &gi));
    }
    println!("max difference from a loop of grad(loss): {max_err:.2e}");
    assert!(max_err < 1e-12);

    // A model as a tree: per-example gradients of every parameter.
    let p = Mlp {
        w1: nabla::randn(&[d, hidden], DType::F64) * 0.5,
        b1: Array::zeros(&[hidden], DType::F64),
        w2: nabla::randn(&[hidden], DType::F64) * 0.5,
        b2: Array::zeros(&[], DType::F64),
    };
    let (losses, per) = vmap!(value_and_grad(mlp_loss), in_axes = (None, 0, 0))(&p, &xs, &ys);
    println!(
        "per-example losses {losses}\nper-example gradient shapes: w1 {:?}, b1 {:?}, w2 {:?}, b2 {:?}",
        per.w1.shape(),
        per.b1.shape(),
        per.w2.shape(),
        per.b2.shape()
    );
    let mut tree_err = 0.0f64;
    for i in 0..n {
        let gi = grad(mlp_loss)(&p, &row(&xs, i), &row(&ys, i));
        for (a, b) in [
            (&per.w1, &gi.w1),
            (&per.b1, &gi.b1),
            (&per.w2, &gi.w2),
            (&per.b2, &gi.b2),
        ] {
            tree_err = tree_err.max(max_diff(&row(a, i), b));
        }
    }
    println!("max difference from a loop over the tree: {tree_err:.2e}");
    assert!(tree_err < 1e-12);

    // DP-SGD-style clipping: each example's gradient norm at most 1.
    let sq = |a: &Array| {
        let axes: Vec<isize> = (1..a.ndim() as isize).collect();
        if axes.is_empty() {
            a.square()
        } else {
            a.square().sum_axes(&axes, false)
        }
    };
    let norms = (sq(&per.w1) + sq(&per.b1) + sq(&per.w2) + sq(&per.b2)).sqrt();
    let scale = (&norms + 1e-12)
        .recip()
        .minimum(&Array::ones(&[n], DType::F64));
    let clipped_w2 = (&per.w2 * &scale.reshape(&[n, 1])).mean_axes(&[0], false);
    println!("per-example gradient norms {norms}");
    println!("clipped mean gradient of w2 {clipped_w2}");
    let full = grad(mlp_loss)(&p, &row(&xs, 0), &row(&ys, 0));
    assert_eq!(full.w2.shape(), clipped_w2.shape());
}
