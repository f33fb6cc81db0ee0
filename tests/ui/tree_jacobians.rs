use nabla::prelude::*;

#[derive(Tree, Clone)]
struct Params {
    w: Array,
}

#[differentiable]
fn loss(p: &Params, x: &Array) -> Array {
    nabla::sum(&(&p.w * x))
}

#[differentiable]
fn scaled(x: &Array, #[nondiff] k: usize) -> Array {
    nabla::sum(x) * (k as f64)
}

fn main() {
    let p = Params { w: Array::ones(&[3], DType::F64) };
    let x = Array::ones(&[2, 3], DType::F64);
    // The Hessian w.r.t. a tree would be a tree of trees: not supported;
    // the error says which Hessians are.
    let _ = nabla::hessian(loss)(&p, &x);
    // A function with a static parameter is not composable.
    let _ = nabla::vmap(scaled);
    let _ = (p, x);
}
