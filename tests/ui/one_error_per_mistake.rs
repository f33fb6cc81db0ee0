use nabla::prelude::*;

// Each function below has one mistake, and each mistake is one error: the
// callers (direct calls, other differentiable functions, transforms) see
// the function as declared and report nothing more.

#[differentiable]
fn with_closure(x: &Array) -> Array {
    let g = |v: &Array| v.exp();
    nabla::sum(&g(x))
}

#[differentiable(fused = false)]
fn bad_option(x: &Array) -> Array {
    nabla::sum(&x.sin())
}

#[differentiable]
fn mixed(a: &Array, dt: f64) -> Array {
    nabla::sum(&(a * dt))
}

#[differentiable]
fn misspelled(x: &Array) -> (Array, Array) {
    (nabla::sum(&x.sinn()), x.clone())
}

#[differentiable]
fn log_of_float(x: f64) -> f64 {
    x.log()
}

#[differentiable]
fn caller(x: &Array) -> Array {
    with_closure(x) + bad_option(x) + mixed(x, 0.5)
}

fn main() {
    let x = Array::ones(&[2], DType::F64);
    let _ = nabla::grad(with_closure)(&x);
    let _ = nabla::value_and_grad(bad_option)(&x);
    let _ = nabla::grad(mixed)(&x, 0.5);
    let _ = grad!(misspelled, has_aux)(&x);
    let _ = nabla::vmap(bad_option)(&x);
    let _ = nabla::grad(log_of_float)(2.0);
    let _ = nabla::grad(caller)(&x);
    let _ = with_closure(&x);
}
