#[differentiable]
fn weighted(ws: &Vec<Array>, xs: &[Array], k: usize) -> Array {
    let a = &ws[0] * &xs[k];
    let b = &ws[1] * &xs[0];
    nabla::sum(&(a + b).sin())
}
