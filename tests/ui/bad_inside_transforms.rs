use nabla::prelude::*;

#[differentiable]
fn f(x: &Array) -> Array {
    nabla::sum(&(x * x))
}

// vjp returns a pullback, which differentiable code does not hold.
#[differentiable]
fn uses_vjp(x: &Array) -> Array {
    let (y, _pullback) = nabla::vjp(f)(x);
    y
}

// jvp gives two results; bind both (or pick one: `nabla::jvp(f)(..).1`).
#[differentiable]
fn single_jvp(x: &Array) -> Array {
    let y = nabla::jvp(f)((x,), (x,));
    y.1
}

fn main() {}
