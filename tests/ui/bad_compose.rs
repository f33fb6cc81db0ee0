use nabla::prelude::*;

#[differentiable]
fn f(w: &Array, x: &Array, y: &Array) -> Array {
    nabla::sum(&(w * x - y))
}

fn main() {
    let a = Array::ones(&[3], DType::F64);
    // in_axes has two entries for a function of three arguments
    let _ = nabla::vmap!(f, in_axes = (None, 0));
    // argument 3 does not exist
    let _ = nabla::jacrev!(f, argnums = 3)(&a, &a, &a);
    // vmap takes in_axes/out_axes, not argnums
    let _ = nabla::vmap!(f, argnums = 1);
}
