use nabla::prelude::*;

// A plain helper, called with a differentiable argument: the error says to
// mark it #[differentiable] (one error, at the call).
fn helper(x: &Array) -> Array {
    x * 2.0
}

#[differentiable]
fn f(x: &Array) -> Array {
    nabla::sum(&helper(x))
}

// Static arguments are fine: ordinary Rust.
fn rows(shape: &[usize]) -> usize {
    shape[0]
}

#[differentiable]
fn g(x: &Array) -> Array {
    let n = rows(&x.shape());
    nabla::sum(x) * (n as f64)
}

fn main() {
    let x = Array::ones(&[2], DType::F64);
    let _ = nabla::grad(f)(&x);
    let _ = nabla::grad(g)(&x);
}
