//! Trains the benchmark MLP (784-512-512-10, tanh, MSE, batch 256, f32,
//! SGD) on the GPU when one is available, and says so and uses the CPU when
//! not. The same code runs on either device: only where the arrays are
//! created differs. The targets come from a fixed random "teacher" network,
//! so the loss has somewhere to fall.
//!
//! Run: `cargo run --release --features cuda --example gpu_mlp`
//! (without `--features cuda` it runs on the CPU and tells you why).

use nabla::prelude::*;
use std::time::Instant;

fn main() {
    let device = match nabla::cuda::unavailable_reason() {
        None => Device::Cuda(0),
        Some(why) => {
            println!("no GPU: {why}; training on the CPU instead");
            Device::Cpu
        }
    };
    println!("device: {device}");
    nabla::manual_seed(0);
    let init = |fan_in: usize, shape: &[usize]| {
        nabla::randn_on(shape, DType::F32, device) * (1.0 / (fan_in as f32).sqrt())
    };
    let x = nabla::randn_on(&[256, 784], DType::F32, device);
    let teacher = init(784, &[784, 10]);
    let y = x.matmul(&teacher).tanh();

    let mut params = [
        init(784, &[784, 512]).requires_grad(),
        Array::zeros_on(&[512], DType::F32, device).requires_grad(),
        init(512, &[512, 512]).requires_grad(),
        Array::zeros_on(&[512], DType::F32, device).requires_grad(),
        init(512, &[512, 10]).requires_grad(),
        Array::zeros_on(&[10], DType::F32, device).requires_grad(),
    ];
    let lr = 0.1f32;
    let (mut first, mut last) = (f64::NAN, f64::NAN);
    let start = Instant::now();
    let steps = 200;
    for step in 0..steps {
        let h1 = (x.matmul(&params[0]) + &params[1]).tanh();
        let h2 = (h1.matmul(&params[2]) + &params[3]).tanh();
        let pred = h2.matmul(&params[4]) + &params[5];
        let loss = nabla::mse_loss(&pred, &y);
        loss.backward();
        for p in params.iter_mut() {
            let g = p.grad();
            *p -= g * lr;
            p.zero_grad();
        }
        if step % 40 == 0 || step == steps - 1 {
            let l = loss.item(); // the only device→host copy per printed step
            if step == 0 {
                first = l;
            }
            last = l;
            println!("step {step:3}  loss {l:.5}  (on {})", loss.device());
        }
    }
    let per_step = start.elapsed().as_secs_f64() / steps as f64;
    println!("{:.3} ms per training step on {device}", per_step * 1e3);
    println!("loss fell from {first:.4} to {last:.4}");
    assert!(last < first * 0.5, "training did not reduce the loss");
}
