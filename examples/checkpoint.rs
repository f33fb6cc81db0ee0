//! Checkpoints with `nabla::io`: train a small model, save it as a
//! safetensors file (names from the struct's fields, as PyTorch's state
//! dicts name them), load it into a fresh model, and see what a model of
//! the wrong shape is told.
//!
//! Run: `cargo run --release --example checkpoint`

use nabla::optim::{Adam, Optimizer};
use nabla::prelude::*;

#[derive(Clone, Tree)]
struct Linear {
    weight: Array,
    bias: Array,
}

#[derive(Clone, Tree)]
struct Net {
    fc: Linear,
    head: Linear,
}

/// A 2-16-1 network: layers in PyTorch's layout (`weight` is `[out, in]`).
fn net(hidden: usize, init: impl Fn(&[usize]) -> Array) -> Net {
    Net {
        fc: Linear {
            weight: init(&[hidden, 2]),
            bias: init(&[hidden]),
        },
        head: Linear {
            weight: init(&[1, hidden]),
            bias: init(&[1]),
        },
    }
}

#[differentiable]
fn predict(p: &Net, x: &Array) -> Array {
    let h = (x.matmul(&p.fc.weight.transpose()) + &p.fc.bias).tanh();
    h.matmul(&p.head.weight.transpose()) + &p.head.bias
}

#[differentiable]
fn loss(p: &Net, x: &Array, y: &Array) -> Array {
    nabla::mse_loss(&predict(p, x), y)
}

fn main() -> Result<(), nabla::io::Error> {
    // Fit y = x0 * x1 on random points.
    nabla::manual_seed(0);
    let x = nabla::rand(&[256, 2], DType::F32) * 2.0 - 1.0;
    let y = (x.slice_axis(1, 0..1) * x.slice_axis(1, 1..2)).reshape(&[256, 1]);
    let mut p = net(16, |s| nabla::randn(s, DType::F32) * 0.5);
    let opt = Adam::new(0.02);
    let mut state = opt.init(&p);
    for _ in 0..300 {
        let (_, g) = nabla::value_and_grad(loss)(&p, &x, &y);
        opt.update(&mut p, &g, &mut state);
    }
    let trained = loss(&p, &x, &y).item();

    let path = std::env::temp_dir().join("nabla_example_checkpoint.safetensors");
    nabla::io::save(&p, &path)?;
    println!(
        "saved {} ({} bytes):",
        path.display(),
        std::fs::metadata(&path).map_or(0, |m| m.len())
    );
    for (name, a) in nabla::io::load_file(&path)? {
        println!("  {name:12} {:?} {}", a.shape(), a.dtype());
    }

    // A fresh model of the same shape takes the weights back.
    let mut fresh = net(16, |s| Array::zeros(s, DType::F32));
    nabla::io::load(&mut fresh, &path)?;
    let reloaded = loss(&fresh, &x, &y).item();
    println!("loss after training {trained:.6}, after reloading {reloaded:.6}");
    assert_eq!(trained, reloaded, "the reloaded model differs");

    // A model with another hidden width is refused, every difference named.
    let mut wider = net(32, |s| Array::zeros(s, DType::F32));
    match nabla::io::load(&mut wider, &path) {
        Ok(()) => panic!("a wrong-shaped model loaded"),
        Err(e) => println!("loading into a 2-32-1 model:\n{e}"),
    }
    std::fs::remove_file(&path).ok();
    Ok(())
}
