/// A loss.
#[differentiable]
pub fn loss(w: &Array, b: &Array, x: &Array, y: &Array) -> Array {
    let h = x.matmul(w) + b;
    let d = h.tanh() - y;
    nabla::mean(&(&d * &d))
}
