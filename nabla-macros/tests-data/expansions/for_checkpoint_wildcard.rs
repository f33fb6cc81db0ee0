#[differentiable]
fn roll_snap(s: &Array) -> Array {
    let mut h = s.clone();
    #[checkpoint(snapshots = 3)]
    for _ in 0..12 {
        h = (&h * 0.9).sin() + h.square() * 0.1;
    }
    nabla::sum(&h.exp())
}
