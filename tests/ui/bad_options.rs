use nabla::prelude::*;

#[differentiable]
fn f(x: f64) -> f64 {
    x * x
}

fn main() {
    let _ = nabla::grad!(f, argnum = 0);
}
