//! Per-example gradients: `vmap!(grad!(loss), in_axes = (None, 0, 0))`.
//! The composition is resolved at compile time: it runs the generated VJP
//! program of `loss` once, at `Batched<Array>` (the weights shared, the data
//! batched). Checked against a loop of single-example gradients.
//!
//! Run: `cargo run --release --example per_example_grads`

use nabla::Batched;
use nabla::prelude::*;

#[differentiable]
fn loss(w: &Array, x: &Array, y: &Array) -> Array {
    let r = x.dot(w) - y;
    r.square() + nabla::sum(&(w * x).sin()) * 0.1
}

fn main() {
    nabla::manual_seed(1);
    let (n, d) = (8, 4);
    let w = nabla::randn(&[d], DType::F64);
    let xs = nabla::randn(&[n, d], DType::F64);
    let ys = nabla::randn(&[n], DType::F64);

    // One program run for the whole batch: w is shared (not batched).
    let (out, pullback) = loss::vjp::<Batched<Array>>(
        &Batched::unbatched(w.clone()),
        &Batched::new(xs.clone(), Some(0)),
        &Batched::new(ys.clone(), Some(0)),
    );
    let (gw, _, _) = pullback(out.ones_like());
    let per_example = gw.materialize(n, 0);
    println!(
        "per-example gradients ({:?}):\n{per_example}",
        per_example.shape()
    );

    // The same, one example at a time.
    let mut max_err = 0.0f64;
    for i in 0..n {
        let xi = xs.index_select(0, &[i]).squeeze(0);
        let yi = ys.index_select(0, &[i]).squeeze(0);
        let gi = nabla::grad(loss)(&w, &xi, &yi);
        let row = per_example.index_select(0, &[i]).squeeze(0);
        max_err = max_err.max((&row - &gi).abs().max().item());
    }
    println!("max difference from a loop of grad(loss): {max_err:.2e}");
    assert!(max_err < 1e-12);
}
