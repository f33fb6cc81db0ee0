use nabla::prelude::*;

#[differentiable]
fn f(x: &Array, n: usize) -> Array {
    nabla::sum(&x.powi(n as i32))
}

fn main() {
    let x = Array::ones(&[2], DType::F64);
    // argument 1 is a usize: it has no gradient
    let _ = nabla::grad!(f, argnums = 1)(&x, 2);
    // there is no argument 2
    let _ = nabla::grad!(f, argnums = 2)(&x, 2);
}
