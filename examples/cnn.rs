//! A small convolutional classifier on a synthetic image task: 16×16
//! grey images holding a horizontal bar, a vertical bar or a diagonal, at a
//! random place, under noise. `nn::models::Cnn` (two conv + ReLU + max-pool
//! blocks and a linear layer) is trained with Adam on the tape and reaches
//! high accuracy on images it has not seen.
//!
//! Run: `cargo run --release --example cnn`

use nabla::nn::models::{Cnn, CnnConfig, accuracy};
use nabla::optim::{Adam, Optimizer};
use nabla::prelude::*;
use nabla::tree::Tree;

const SIDE: usize = 16;
const CLASSES: [&str; 3] = ["horizontal bar", "vertical bar", "diagonal"];

/// `n` images `[n, 1, 16, 16]` and their labels, drawn from `key`.
fn images(n: usize, key: Key) -> (Array, Array) {
    let [kc, kp, kn] = key.split(3)[..] else {
        unreachable!()
    };
    let class = kc.uniform(&[n], DType::F64).to_vec::<f64>();
    let place = kp.uniform(&[n, 2], DType::F64).to_vec::<f64>();
    let noise = kn.normal(&[n, SIDE * SIDE], DType::F32).to_vec::<f32>();
    let mut pixels = Vec::with_capacity(n * SIDE * SIDE);
    let mut labels = Vec::with_capacity(n);
    for i in 0..n {
        let c = ((class[i] * 3.0) as usize).min(2);
        let at = 2 + (place[2 * i] * (SIDE - 4) as f64) as usize;
        let shift = (place[2 * i + 1] * 6.0) as isize - 3;
        for r in 0..SIDE {
            for col in 0..SIDE {
                let on = match c {
                    0 => r == at,
                    1 => col == at,
                    _ => col as isize == r as isize + shift,
                };
                let v = if on { 1.0 } else { 0.0 } + 0.3 * noise[i * SIDE * SIDE + r * SIDE + col];
                pixels.push(v);
            }
        }
        labels.push(c as i64);
    }
    (
        Array::from_vec(pixels, &[n, 1, SIDE, SIDE]),
        Array::from_vec(labels, &[n]),
    )
}

fn main() {
    let keys = Key::new(2024).split(3);
    let cfg = CnnConfig {
        channels: 1,
        height: SIDE,
        width: SIDE,
        features: [8, 16],
        classes: 3,
    };
    let mut cnn = Cnn::new(&cfg, keys[0]);
    cnn.for_each_leaf_mut(&mut |p| *p = p.clone().requires_grad());
    let params: usize = nabla::tree::leaves(&cnn).iter().map(|p| p.numel()).sum();
    let (test_x, test_y) = images(300, keys[1]);
    println!("classes: {CLASSES:?}; {params} parameters; 300 test images");

    let opt = Adam::new(3e-3);
    let mut state = opt.init(&cnn);
    let batches = keys[2].split(150);
    let start = std::time::Instant::now();
    for (step, key) in batches.into_iter().enumerate() {
        let (x, y) = images(32, key);
        let loss = cnn.loss(&x, &y);
        loss.backward();
        opt.step(&mut cnn, &mut state);
        cnn.for_each_leaf(&mut |p| p.zero_grad());
        if step % 25 == 0 || step == 149 {
            let acc = nabla::no_grad(|| accuracy(&cnn.forward(&test_x), &test_y));
            println!(
                "step {step:3}  loss {:.4}  test accuracy {:.1}%",
                loss.item(),
                100.0 * acc
            );
        }
    }
    let acc = nabla::no_grad(|| accuracy(&cnn.forward(&test_x), &test_y));
    println!(
        "150 steps of 32 images in {:.1} s; final test accuracy {:.1}% (chance: 33.3%)",
        start.elapsed().as_secs_f64(),
        100.0 * acc
    );
    assert!(acc > 0.9, "the CNN should separate the three shapes");
}
