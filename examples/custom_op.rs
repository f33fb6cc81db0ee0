//! Custom primitives: (a) a numerically stable `ln(1 + e^x)` with its own
//! VJP, used in a training loop; (b) a fused elementwise kernel (a damped
//! spring force over slices) with hand-written rules, differentiated and
//! vmapped.
//!
//! Run: `cargo run --release --example custom_op`

use nabla::prelude::*;

// ----- (a) stable softplus with a custom VJP -----

/// `ln(1 + e^x)` as `max(x, 0) + ln(1 + e^-|x|)`: no overflow for large x.
#[nabla::custom_op(jvp = softplus_jvp, vjp = softplus_vjp)]
fn stable_softplus(x: &Array) -> Array {
    x.relu() + (-x.abs()).exp().ln_1p()
}

fn softplus_jvp<V: ArrayValue>(x: &V, _y: &V, dx: Option<&V>) -> V {
    dx.map(|d| d.mul(&x.sigmoid()))
        .unwrap_or_else(|| x.zeros_like())
}

fn softplus_vjp<V: ArrayValue>(x: &V, _y: &V, ct: &V) -> V {
    ct.mul(&x.sigmoid())
}

/// Logistic-regression loss `mean(softplus(-y · (x w)))` for labels ±1.
#[differentiable]
fn logistic_loss(w: &Array, x: &Array, y: &Array) -> Array {
    let margin = y * &x.matmul(w);
    nabla::mean(&stable_softplus(&(-margin)))
}

// ----- (b) a fused damped-spring force kernel -----

/// `f = -k (x - rest) - c v`, elementwise, written as one loop over slices.
#[nabla::custom_op(jvp = spring_jvp, vjp = spring_vjp)]
fn spring_force(x: &Array, v: &Array) -> Array {
    const K: f64 = 4.0;
    const C: f64 = 0.3;
    const REST: f64 = 1.0;
    let (xs, vs) = (x.to_vec::<f64>(), v.to_vec::<f64>());
    let f: Vec<f64> = xs
        .iter()
        .zip(&vs)
        .map(|(&x, &v)| -K * (x - REST) - C * v)
        .collect();
    Array::from_vec(f, x.shape()).cast(x.dtype())
}

fn spring_jvp<V: ArrayValue>(x: &V, _v: &V, _f: &V, dx: Option<&V>, dv: Option<&V>) -> V {
    let mut t = x.zeros_like();
    if let Some(dx) = dx {
        t = t.add(&dx.mul_scalar(-4.0));
    }
    if let Some(dv) = dv {
        t = t.add(&dv.mul_scalar(-0.3));
    }
    t
}

fn spring_vjp<V: ArrayValue>(_x: &V, _v: &V, _f: &V, ct: &V) -> (V, V) {
    (ct.mul_scalar(-4.0), ct.mul_scalar(-0.3))
}

/// Final energy of a chain of independent springs after 100 steps.
#[differentiable]
fn final_energy(x0: &Array, v0: &Array) -> Array {
    let mut x = x0.clone();
    let mut v = v0.clone();
    for _ in 0..100 {
        v = &v + &(spring_force(&x, &v) * 0.01);
        x = &x + &(&v * 0.01);
    }
    nabla::sum(&((x - 1.0).square() * 2.0 + v.square() * 0.5))
}

fn main() {
    // (a) Train a linear classifier with the custom softplus.
    nabla::manual_seed(3);
    let x = nabla::randn(&[200, 3], DType::F64);
    let true_w = Array::from_vec(vec![2.0, -1.0, 0.5], &[3]);
    let y = x.matmul(&true_w).signum();
    let mut w = Array::zeros(&[3], DType::F64);
    for step in 0..=300 {
        let (l, g) = nabla::value_and_grad(logistic_loss)(&w, &x, &y);
        w -= &g * 0.5;
        if step % 100 == 0 {
            println!("step {step:3}  loss {:.5}", l.item());
        }
    }
    let acc = x.matmul(&w).signum().eq(&y).cast(DType::F64).mean().item();
    println!("learned w = {w}, accuracy {:.1}%", acc * 100.0);
    assert!(acc > 0.97);
    // Large inputs do not overflow.
    println!(
        "stable_softplus(1000) = {}",
        stable_softplus(&Array::scalar(1000.0f64))
    );

    // (b) Sensitivities of the spring chain's final energy, for one chain
    // and, with vmap, for a batch of initial positions.
    let x0 = Array::from_vec(vec![1.5, 0.2, 1.0, 2.0], &[4]);
    let v0 = Array::zeros(&[4], DType::F64);
    let (gx, gv) = nabla::grad!(final_energy, argnums = (0, 1))(&x0, &v0);
    let h = 1e-6;
    let e =
        |d: f64| final_energy(&(&x0 + &Array::from_vec(vec![d, 0.0, 0.0, 0.0], &[4])), &v0).item();
    let fd = (e(h) - e(-h)) / (2.0 * h);
    println!("dE/dx0 = {gx}\ndE/dv0 = {gv}\nfinite difference of dE/dx0[0]: {fd:.6}");
    assert!((gx.to_vec::<f64>()[0] - fd).abs() < 1e-5);
    let batch = nabla::randn(&[3, 4], DType::F64) + 1.0;
    let per = nabla::vmap!(nabla::grad!(final_energy), in_axes = (0, None))(&batch, &v0);
    println!("vmapped dE/dx0 for 3 chains ({:?}):\n{per}", per.shape());
}
