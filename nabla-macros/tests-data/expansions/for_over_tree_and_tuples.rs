#[differentiable]
fn layers(ws: &[Array], x: &Array, scales: &[f64]) -> Array {
    let mut h = x.clone();
    for w in ws.iter() {
        h = h.matmul(w).tanh();
    }
    for (i, s) in scales.iter().enumerate() {
        h = &h * *s + (i as f64);
    }
    nabla::sum(&h)
}
