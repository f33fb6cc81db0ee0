#[differentiable]
fn clipped(x: &Array, #[nondiff] limit: f64) -> Array {
    let s = nabla::sum(x);
    if s.item() > limit {
        return s * 0.5;
    }
    let mut y = x.clone();
    for _ in 0..3 {
        y = y.sin();
        if nabla::sum(&y).item() < 0.0 {
            return nabla::sum(&y.exp());
        }
    }
    nabla::sum(&y)
}
