use nabla::prelude::*;

#[differentiable]
fn mixed(x: &Array, k: f64) -> Array {
    x * k
}

#[differentiable]
fn generic<T>(x: &Array, _t: T) -> Array {
    x.sin()
}

#[differentiable]
fn nothing_to_differentiate(n: usize) -> f64 {
    n as f64
}

#[differentiable]
fn mutable(x: &mut Array) -> Array {
    x.sin()
}

fn main() {}
