#[differentiable]
fn bad(x: &Array, v: Vec<usize>) -> Array {
    let y = loop { break x.clone(); };
    println!("{}", 1);
    let c = || x.sin();
    x.frobnicate() + y[0]
}
