#[differentiable]
fn newton_sqrt(a: f64) -> f64 {
    let mut x = a;
    for _ in 0..100 {
        if (x * x - a).abs() < 1e-12 {
            break;
        }
        x = 0.5 * (x + a / x);
    }
    x
}
