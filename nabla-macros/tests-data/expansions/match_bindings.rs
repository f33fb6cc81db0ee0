#[differentiable]
fn scaled(x: &Array, opt: Option<(usize, f64)>) -> Array {
    let y = match opt {
        Some((k, s)) if k > 1 => x * s + k as f64,
        Some((_, s)) => x * s,
        None => x.clone(),
    };
    let z = match opt {
        Some((k, _)) => y.sin() * (k as f64),
        _ => y.clone(),
    };
    z.sum()
}
