#[differentiable]
async fn bad<T>(x: f32, y: &Array) {
    x
}
