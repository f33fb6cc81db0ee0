#[custom_op(jvp = damped_jvp, vjp = damped_vjp, batch = elementwise)]
pub fn damped(x: &Array, v: Array, k: f64, c: f64) -> Array {
    nabla::custom::cpu_kernel::<f64>(&[x, &v], x.shape(), |ins, out| {})
}
