#[differentiable]
fn f(x: &Array, n: usize) -> Array {
    let mut y = x.clone();
    #[nabla::checkpoint(snapshots = 2)]
    while n > 0 {
        y = y.sin();
    }
    #[nabla::checkpoint(snapshots = 0)]
    for _ in 0..n {
        y = y.cos();
    }
    'outer: for i in 0..n {
        if i > 2 { break 'outer; }
    }
    y.sum()
}
