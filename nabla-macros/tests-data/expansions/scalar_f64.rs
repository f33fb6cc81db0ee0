#[differentiable]
fn f(x: f64, y: f64) -> f64 {
    let z = x * x * y;
    z + y.sin()
}
