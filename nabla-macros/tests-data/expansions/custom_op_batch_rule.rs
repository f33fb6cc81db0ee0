#[custom_op(vjp = scaled_vjp, batch = scaled_batch)]
fn scaled_mul(a: &Array, b: &Array) -> Array {
    a * b
}
