#[differentiable]
pub(crate) fn g(x: &f32, n: usize) -> f32 {
    let mut y = x * 1.0;
    for _ in 0..n {
        y = y.sin() * 2.0 - 1.0 / y;
    }
    y
}
