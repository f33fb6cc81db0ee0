#[differentiable]
fn forward(&self, x: &Array) -> Array {
    ((x * &self.scale).tanh() + 1.0) * 0.5
}
