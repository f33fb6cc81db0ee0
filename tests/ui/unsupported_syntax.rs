use nabla::prelude::*;

#[differentiable]
fn looped(x: &Array) -> Array {
    let mut y = x.clone();
    loop {
        y = y.sin();
    }
}

#[differentiable]
fn jump_in_expression(x: &Array) -> Array {
    let mut y = x.clone();
    for i in 0..3 {
        let k = if i == 2 { continue } else { 2.0 };
        y = y.sin() * k;
    }
    y
}

#[differentiable]
fn with_closure(x: &Array) -> Array {
    let f = |v: &Array| v.exp();
    f(x)
}

#[differentiable]
fn unknown(x: &Array) -> Array {
    x.frobnicate()
}

#[differentiable]
fn in_unsafe(x: &Array) -> Array {
    unsafe { x.sin() }
}

#[differentiable]
fn recursive(x: &Array, n: usize) -> Array {
    if n == 0 {
        return x.clone();
    }
    recursive(&x.sin(), n - 1)
}

#[differentiable]
fn list_result(args: &[Array]) -> Vec<Array> {
    let ys = args.to_vec();
    ys
}

#[differentiable]
fn repeated_list(args: &[Array]) -> Vec<Array> {
    vec![nabla::sum(&args[0]); 2]
}

#[differentiable]
fn misspelled(x: &Array) -> Array {
    x.arcsinn()
}

fn main() {}
