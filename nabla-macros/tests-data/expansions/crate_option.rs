/// Softplus.
#[differentiable(crate = crate)]
pub fn softplus(x: &Array) -> Array {
    crate::maximum(x, &x.zeros_like()) + crate::log1p(&(-x.abs()).exp())
}
