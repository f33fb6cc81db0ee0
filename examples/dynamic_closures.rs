//! Transforms of closures at run time (`nabla::dynamic`): for code the
//! `#[differentiable]` macro cannot see, such as a model chosen at run
//! time from a string. The closures compute on `Dyn` values; the
//! derivative rules are the same ones the macro's code calls.
//!
//! Run: `cargo run --release --example dynamic_closures`

use nabla::dynamic::{self, Dyn};
use nabla::prelude::*;

/// A model picked at run time: `y = f(w · x)` with `f` by name.
fn model(activation: &str) -> impl Fn(&Dyn, &Dyn) -> Dyn + '_ {
    move |w, x| {
        let z = w.matmul(x);
        match activation {
            "tanh" => z.tanh(),
            "sigmoid" => z.sigmoid(),
            _ => z.relu(),
        }
    }
}

fn main() {
    let x = Dyn::from(Array::from_vec(vec![0.5f64, -1.0, 2.0], &[3]));
    let w0 = Dyn::from(Array::from_vec(
        vec![0.1f64, 0.2, 0.3, -0.4, 0.5, -0.6],
        &[2, 3],
    ));
    for act in ["tanh", "sigmoid"] {
        let f = model(act);
        // grad of a scalar loss with respect to the weights
        let loss = |w: &Dyn| f(w, &x).square().sum_axes(&[0], false);
        let g = dynamic::grad(loss, &w0);
        // check one entry against a central difference
        let h = 1e-6;
        let bump = |d: f64| {
            let mut v = w0.to_array().to_vec::<f64>();
            v[1] += d;
            loss(&Dyn::from(Array::from_vec(v, &[2, 3])))
                .to_array()
                .item()
        };
        let fd = (bump(h) - bump(-h)) / (2.0 * h);
        let got = g.to_array().to_vec::<f64>()[1];
        println!("{act:8} dL/dw[0,1] = {got:.9}  (central difference {fd:.9})");
        assert!((got - fd).abs() < 1e-7);
    }
    // Nested and mixed: the Hessian of a closure, and per-example gradients.
    let f = model("tanh");
    let hess = dynamic::hessian(
        |v| f(&w0, &v[0]).sum_axes(&[0], false),
        std::slice::from_ref(&x),
    );
    println!("Hessian of sum(tanh(W x)) in x:\n{}", hess[0][0].to_array());
    let xs = Dyn::from(Array::from_vec(
        vec![0.5f64, -1.0, 2.0, 1.0, 0.0, -1.0],
        &[2, 3],
    ));
    let per_example = dynamic::vmap(
        |v| vec![dynamic::grad(|w| f(w, &v[0]).sum_axes(&[0], false), &w0)],
        std::slice::from_ref(&xs),
        &[Some(0)],
        &[0],
    );
    println!(
        "per-example gradients: shape {:?}",
        per_example[0].to_array().shape()
    );
    // A function recorded once and replayed on new inputs.
    let (_, program) = dynamic::record(
        |v| vec![dynamic::grad(|w| f(w, &v[0]).sum_axes(&[0], false), &w0)],
        std::slice::from_ref(&x),
    );
    println!("recorded gradient program: {} instructions", program.len());
    let replayed = program.run(&[xs.to_array().index_select(0, &[1]).reshape(&[3]).into()]);
    println!("replayed at x = [1, 0, -1]:\n{}", replayed[0].to_array());
}
