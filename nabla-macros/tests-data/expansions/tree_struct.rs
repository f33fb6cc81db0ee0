#[differentiable]
fn mlp_loss(p: &Mlp, x: &Array, y: &Array) -> Array {
    let h = (x.matmul(&p.hidden.w) + &p.hidden.b).tanh();
    let o = h.matmul(&p.out.w) + &p.out.b;
    nabla::mean(&(o - y).powi(2))
}
