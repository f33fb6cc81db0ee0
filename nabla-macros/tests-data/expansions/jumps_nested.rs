#[differentiable]
fn nested(w: &Array) -> Array {
    let mut h = w.clone();
    for i in 0..4 {
        if i == 1 {
            continue;
        }
        for j in 0..10 {
            if j >= i + 2 {
                break;
            }
            h = (&h * 0.9 + w * 0.1).tanh();
        }
        if i == 3 {
            h = h.square();
        } else {
            h = &h + w;
            continue;
        }
        h = &h * 1.5;
    }
    nabla::sum(&h)
}
