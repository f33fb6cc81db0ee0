#[differentiable]
fn mix(a: &Array, b: &Array, #[nondiff] mask: &Array, axis: usize) -> Array {
    let c = nabla::concat(&[a, b], axis);
    let s = nabla::stack(&[a.clone(), b.clone()], 0);
    let w = nabla::where_(mask, a, b);
    let z = a.zeros_like() + b.stop_gradient() + nabla::stop_gradient(a);
    let p = c.softmax(-1).sum() + s.clip(-1.0, 1.0).mean() + w.powf(2.0).sum();
    let q = -(&z / 2.0) - 1.0 / &z + 3.0 - &z;
    let mut r = q.reshape(&[a.numel()]);
    r *= 2.0;
    r -= &r.full_like(0.5);
    r /= a.ndim() as f64;
    let v = vec![1usize, 2];
    let k = v.len() + [0usize; 2].len();
    &p + nabla::sum(&r.index_select(0, &[k]))
}
