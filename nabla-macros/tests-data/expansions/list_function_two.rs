#[differentiable]
pub fn two_by_two(args: &[Array]) -> Vec<Array> {
    let a = &args[0];
    let b = &args[1];
    let s = nabla::sum(&b.square());
    vec![nabla::sum(&(a.sin() * a)) * s, a.exp() * nabla::sum(b)]
}
