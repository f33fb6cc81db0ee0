#[differentiable]
fn foo(args: &[Array]) -> Vec<Array> {
    vec![nabla::sum(&nabla::sin(&args[0]))]
}
