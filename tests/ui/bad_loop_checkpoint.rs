use nabla::prelude::*;

#[differentiable]
fn no_snapshots(x: &Array) -> Array {
    let mut y = x.clone();
    #[nabla::checkpoint(snapshots = 0)]
    for _ in 0..3 {
        y = y.sin();
    }
    y
}

#[differentiable]
fn unknown_key(x: &Array) -> Array {
    let mut y = x.clone();
    #[nabla::checkpoint(snaps = 4)]
    for _ in 0..3 {
        y = y.sin();
    }
    y
}

#[differentiable]
fn no_count(x: &Array) -> Array {
    let mut y = x.clone();
    #[nabla::checkpoint]
    for _ in 0..3 {
        y = y.sin();
    }
    y
}

#[differentiable]
fn not_a_literal(x: &Array, n: usize) -> Array {
    let mut y = x.clone();
    #[nabla::checkpoint(snapshots = n)]
    for _ in 0..3 {
        y = y.sin();
    }
    y
}

#[differentiable]
fn on_while(x: f64) -> f64 {
    let mut y = x;
    #[nabla::checkpoint(snapshots = 4)]
    while y > 1.0 {
        y = y * 0.5;
    }
    y
}

fn main() {}
