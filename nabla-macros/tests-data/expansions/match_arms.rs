#[differentiable]
fn activated(x: &Array, w: &Array, #[nondiff] act: Activation) -> Array {
    let z = x.matmul(w);
    let h = match act {
        Activation::Tanh => z.tanh(),
        Activation::Relu => z.relu(),
        Activation::Scaled => z * 2.0,
    };
    let scale = match x.sum().item() > 0.0 {
        true => 1.0,
        false => 3.0,
    };
    nabla::sum(&h.square()) * scale
}
