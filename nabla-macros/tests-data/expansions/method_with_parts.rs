#[differentiable]
fn forward(&self, x: &Array) -> Array {
    let h = self.layers[0].forward(x) * *self.gain;
    if let Some(b) = &self.bias { h + b } else { h }
}
