#[differentiable]
fn while_jumps(x: &Array) -> Array {
    let mut y = x.clone();
    let mut n = 0usize;
    while n < 20 {
        n += 1;
        if n.is_multiple_of(3) {
            continue;
        }
        y = (&y * 1.1).sin() + x * 0.05;
        if nabla::sum(&y).item() > 2.5 {
            break;
        }
    }
    nabla::sum(&(&y * &y))
}
