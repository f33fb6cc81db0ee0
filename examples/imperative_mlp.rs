//! PyTorch-style imperative training on `Array`: the seed example, then a
//! short training loop (`nabla::optim::Sgd`) whose loss you can watch fall.
//!
//! Run: `cargo run --release --example imperative_mlp`

use nabla::optim::{Optimizer, Sgd};
use nabla::prelude::*;

fn main() {
    nabla::manual_seed(0);

    // --- The seed example, as a user writes it. ---
    let mut weight = nabla::randn(&[3, 4], DType::F32).requires_grad();
    let mut bias = nabla::randn(&[2, 4], DType::F32).requires_grad();
    let label = nabla::randn(&[2, 4], DType::F32);
    let input = nabla::randn(&[2, 3], DType::F32);
    let logits = nabla::relu(&(input.matmul(&weight) + &bias));
    let loss = nabla::sum(&(logits - &label).powi(2));
    println!("Loss: {loss}");
    loss.backward();
    weight -= 0.01 * weight.grad();
    bias -= 0.01 * bias.grad();
    println!("weight: {weight} bias: {bias}");

    // --- A small regression MLP trained with SGD. ---
    // Learn y = sin(3 x0) + x1² from 256 samples with a 2-32-32-1 tanh MLP.
    let n = 256;
    let x = nabla::rand(&[n, 2], DType::F32) * 2.0 - 1.0;
    let cols = x.split(&[1, 1], 1);
    let y = (&cols[0] * 3.0).sin() + cols[1].square();

    let init = |fan_in: usize, shape: &[usize]| {
        nabla::randn(shape, DType::F32) * (1.0 / (fan_in as f32).sqrt())
    };
    let mut params = [
        init(2, &[2, 32]).requires_grad(),
        Array::zeros(&[32], DType::F32).requires_grad(),
        init(32, &[32, 32]).requires_grad(),
        Array::zeros(&[32], DType::F32).requires_grad(),
        init(32, &[32, 1]).requires_grad(),
        Array::zeros(&[1], DType::F32).requires_grad(),
    ];

    // SGD as torch.optim.SGD: one in-place pass per parameter per step.
    let opt = Sgd::new(0.05);
    let mut state = opt.init(&params);
    let mut first = f64::NAN;
    let mut last = f64::NAN;
    for step in 0..=1000 {
        let h1 = (x.matmul(&params[0]) + &params[1]).tanh();
        let h2 = (h1.matmul(&params[2]) + &params[3]).tanh();
        let pred = h2.matmul(&params[4]) + &params[5];
        let loss = nabla::mse_loss(&pred, &y);
        loss.backward();
        opt.step(&mut params, &mut state);
        for p in &params {
            p.zero_grad();
        }
        let l = loss.item();
        if step == 0 {
            first = l;
        }
        last = l;
        if step % 100 == 0 {
            println!("step {step:4}  loss {l:.5}");
        }
    }
    println!("loss fell from {first:.4} to {last:.4}");
    assert!(last < first * 0.2, "training did not reduce the loss");
}
