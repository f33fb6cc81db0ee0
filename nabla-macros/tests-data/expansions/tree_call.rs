#[differentiable]
fn calls_with_a_tree(p: &Mlp, x: &Array, y: &Array) -> Array {
    let l = mlp_loss(p, x, y);
    &l * 2.0 + nabla::sum(&p.extra[0].square())
}
