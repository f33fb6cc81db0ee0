#[differentiable(krate = foo)]
fn f(x: &Array) -> Array { x.sin() }
