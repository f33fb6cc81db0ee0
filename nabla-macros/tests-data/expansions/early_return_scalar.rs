#[differentiable]
fn step(x: f64, y: f64) -> f64 {
    if x > y {
        return x * y;
    }
    x + y
}
