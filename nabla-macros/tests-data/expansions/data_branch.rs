#[differentiable]
fn piecewise(x: &Array) -> Array {
    let s = nabla::sum(x);
    let y = if s.item() > 0.0 {
        let t = x.sin() * 2.0;
        t * x
    } else if s.item() > -1.0 {
        x.exp()
    } else {
        x.square() * 3.0
    };
    nabla::sum(&y)
}
