use nabla::prelude::*;

#[differentiable]
fn loss(w: &Array) -> Array {
    nabla::sum(&(w * w))
}

fn main() {
    let w = Array::ones(&[3], DType::F64);
    // A differentiable function is a constant value, so a local of the same
    // name is a pattern: rustc names the fix (another name).
    let loss = loss(&w);
    let _ = loss;
}
