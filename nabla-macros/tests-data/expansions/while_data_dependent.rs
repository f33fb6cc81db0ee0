#[differentiable]
fn halve_until_small(x: &Array) -> Array {
    let mut y = x * 3.0;
    let mut steps = 0;
    while nabla::sum(&y).item() > 1.0 {
        y = y.sin() * 0.5 + &y * 0.25;
        steps += 1;
    }
    nabla::sum(&y.square()) * (1.0 + steps as f64)
}
