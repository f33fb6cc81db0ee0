#[differentiable]
fn snap2(x: &Array, w: &Array, n: usize) -> Array {
    let mut h = x.clone();
    let mut acc = nabla::sum(&x.zeros_like());
    #[nabla::checkpoint(snapshots = 2)]
    for i in 0..n {
        let _ = crate::count_run();
        h = cell(&h, w) * (1.0 + 0.01 * i as f64) + &h * 0.5;
        acc += nabla::sum(&h.square());
    }
    acc + nabla::sum(&h)
}
