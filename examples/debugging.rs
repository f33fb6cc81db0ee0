//! Debugging numerics and long runs: (a) `check_grads` on a hand-written
//! derivative rule that is wrong, and on the fixed one; (b) `debug_nans`
//! finding the op and line that first made a NaN in a training step;
//! (c) reproducible draws under threads and `set_deterministic`; (d) a
//! training loop whose memory stays flat, and `release_buffers` after a
//! peak.
//!
//! Run: `cargo run --release --example debugging`

use nabla::prelude::*;
use nabla::testing::{Options, check_grads, check_grads_with};

// ----- (a) a custom rule checked against finite differences -----

/// `x³` whose VJP forgets the factor 3 (a typical slip).
#[nabla::custom_op(jvp = cube_jvp, vjp = cube_vjp_wrong)]
fn cube_wrong(x: &Array) -> Array {
    x.powi(3)
}

/// `x³` with the right rules.
#[nabla::custom_op(jvp = cube_jvp, vjp = cube_vjp)]
fn cube(x: &Array) -> Array {
    x.powi(3)
}

fn cube_jvp<V: ArrayValue>(x: &V, _y: &V, dx: Option<&V>) -> V {
    dx.map(|d| d.mul(&x.square().mul_scalar(3.0)))
        .unwrap_or_else(|| x.zeros_like())
}

fn cube_vjp_wrong<V: ArrayValue>(x: &V, _y: &V, ct: &V) -> V {
    ct.mul(&x.square())
}

fn cube_vjp<V: ArrayValue>(x: &V, _y: &V, ct: &V) -> V {
    ct.mul(&x.square().mul_scalar(3.0))
}

// ----- (b) a loss that makes a NaN for some inputs -----

/// A log-likelihood with a bug: `ln(sigma)` where `sigma` can reach 0.
#[differentiable]
fn nll(mu: &Array, sigma: &Array, x: &Array) -> Array {
    let z = (x - mu) / sigma;
    nabla::mean(&(z.square() * 0.5 + sigma.ln()))
}

fn main() {
    let x = Array::from_vec(vec![0.5f64, -1.2, 2.0], &[3]);

    println!("(a) check_grads");
    let slip = check_grads_with(cube_wrong, &(x.clone(),), &Options::default())
        .expect_err("the missing factor 3 is caught");
    println!("  cube_wrong: {slip}");
    let ok =
        check_grads_with(cube, &(x.clone(),), &Options::default()).expect("the fixed rule agrees");
    println!(
        "  cube: JVP, VJP and second order agree with finite differences ({} comparisons)",
        ok.comparisons
    );
    check_grads(cube, &(x.clone(),), 2); // the same, as an assertion

    println!("(b) debug_nans");
    let mu = Array::from_vec(vec![0.0f64, 1.0], &[2]);
    let sigma = Array::from_vec(vec![1.0f64, 0.0], &[2]); // a collapsed scale
    let data = Array::from_vec(vec![0.3f64, 0.9], &[2]);
    let plain = nll(&mu, &sigma, &data).item();
    println!("  without it the loss is just {plain}");
    nabla::debug_nans(true);
    let quiet = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let caught = std::panic::catch_unwind(|| nll(&mu, &sigma, &data));
    std::panic::set_hook(quiet);
    nabla::debug_nans(false);
    let msg = caught
        .err()
        .and_then(|p| p.downcast::<String>().ok())
        .expect("debug_nans stops at the first NaN");
    println!("  with it: {msg}");

    println!("(c) reproducible randomness");
    let draws = |seed| {
        std::thread::spawn(move || {
            nabla::manual_seed(seed);
            nabla::randn(&[3], DType::F64).to_vec::<f64>()
        })
    };
    let (a, b) = (draws(7), draws(7));
    let noise = std::thread::spawn(|| nabla::randn(&[1000], DType::F64));
    let (a, b) = (a.join().unwrap(), b.join().unwrap());
    noise.join().unwrap();
    println!("  two threads seeded with 7 draw {a:.4?} and {b:.4?}");
    assert_eq!(
        a, b,
        "a seeded thread's draws do not depend on other threads"
    );
    nabla::set_deterministic(true);
    let m = Key::new(0).normal(&[64, 64], DType::F64);
    let (q, _) = nabla::linalg::qr(&m);
    println!(
        "  set_deterministic(true): QR plans for a fixed thread count (q[0, 0] = {:.6})",
        q.to_vec::<f64>()[0]
    );
    nabla::set_deterministic(false);

    println!("(d) memory over a long run");
    let mut w = Key::new(1).normal(&[32, 32], DType::F32).requires_grad();
    let input = Key::new(2).normal(&[64, 32], DType::F32);
    let step = |w: &mut Array| {
        let loss = (input.matmul(w).tanh() - 0.5).square().mean();
        loss.backward();
        *w = (w.detach() - w.grad() * 0.05).requires_grad();
        loss.item()
    };
    for _ in 0..200 {
        step(&mut w);
    }
    let warm = rss_mib();
    let mut last = 0.0;
    for _ in 0..5000 {
        last = step(&mut w);
    }
    println!(
        "  RSS {warm:.1} MiB after warm-up, {:.1} MiB after 5000 more steps (loss {last:.4})",
        rss_mib()
    );
    let ones = Array::ones(&[1 << 24], DType::F64); // 128 MiB
    let twos = &ones * 2.0; // and 128 more
    assert_eq!(twos.sum().item(), (1u64 << 25) as f64);
    drop((ones, twos));
    let kept = rss_mib();
    nabla::release_buffers();
    println!(
        "  after a 256 MiB peak: {kept:.1} MiB kept for reuse, {:.1} MiB after release_buffers()",
        rss_mib()
    );
}

/// Resident memory of this process in MiB (Linux; NaN elsewhere).
fn rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<f64>().ok())
        .map_or(f64::NAN, |pages| pages * 4096.0 / (1 << 20) as f64)
}
