use nabla::prelude::*;

#[differentiable]
fn loss(w: &Array) -> Array {
    nabla::sum(&(w * w))
}

// Inside a differentiable function the macro names the problem itself.
#[differentiable]
fn twice(w: &Array) -> Array {
    let loss = loss(w);
    loss * 2.0
}

fn main() {
    let w = Array::ones(&[3], DType::F64);
    // A differentiable function is a constant value, so a local of the same
    // name is a pattern: rustc names the fix (another name).
    let loss = loss(&w);
    let _ = loss;
    let _ = twice(&w);
}
