use nabla::prelude::*;

#[derive(Tree, Clone)]
struct Params {
    w: Array,
}

#[differentiable]
fn loss(p: &Params, x: &Array) -> Array {
    nabla::sum(&(&p.w * x))
}

fn main() {
    let p = Params { w: Array::ones(&[3], DType::F64) };
    let x = Array::ones(&[2, 3], DType::F64);
    // Per-example gradients over a tree: vmap does not take functions of
    // trees yet; the error says what to do instead.
    let _ = nabla::vmap!(nabla::grad(loss), in_axes = (None, 0));
    let _ = (p, x);
}
