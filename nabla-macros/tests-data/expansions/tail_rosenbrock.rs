#[differentiable]
fn rosenbrock(x: &Array) -> Array {
    let n = x.shape()[0];
    let head = x.slice_axis(0, 0..n - 1);
    let tail = x.slice_axis(0, 1..n);
    let d = tail - head.square();
    nabla::sum(&(d.square() * 100.0 + (1.0 - head).square()))
}
