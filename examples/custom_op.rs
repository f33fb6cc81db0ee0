//! Custom primitives: (a) a numerically stable `ln(1 + e^x)` with its own
//! VJP, used in a training loop; (b) a fused elementwise kernel (a damped
//! spring force with static parameters) with a CPU kernel over slices and a
//! CUDA kernel, hand-written rules and an elementwise batching rule,
//! differentiated and vmapped.
//!
//! Run: `cargo run --release --example custom_op`
//! (GPU: `cargo run --release --features cuda --example custom_op`)

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

/// The force kernel in CUDA C: one thread per element (used when the
/// arrays live on a GPU; compiled by NVRTC on first use).
#[cfg(feature = "cuda")]
const SPRING_CUDA: nabla::custom::CudaKernel = nabla::custom::CudaKernel {
    name: "spring_force",
    source: r#"
extern "C" __global__ void spring_force(const double* x, const double* v, const double* p,
                                        double* f, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) f[i] = -p[0] * (x[i] - p[2]) - p[1] * v[i];
}"#,
};

/// `f = -k (x - rest) - c v`, elementwise, as one fused loop over slices on
/// the CPU (or one CUDA kernel on a GPU). `k`, `c` and `rest` are static
/// parameters: not differentiated, passed to the rules after their usual
/// arguments. `batch = elementwise`: under `vmap` the kernel runs once on
/// the stacked arrays instead of once per example.
#[nabla::custom_op(jvp = spring_jvp, vjp = spring_vjp, batch = elementwise)]
fn spring_force(x: &Array, v: &Array, k: f64, c: f64, rest: f64) -> Array {
    #[cfg(feature = "cuda")]
    if x.device() != Device::Cpu {
        let p = Array::from_vec(vec![k, c, rest], &[3]).to_device(x.device());
        let how = nabla::custom::CudaLaunch::PerElement { block: 256 };
        return SPRING_CUDA.launch(&[x, v, &p], x.shape(), DType::F64, how);
    }
    nabla::custom::cpu_kernel::<f64>(&[x, v], x.shape(), |ins, f| {
        let (xs, vs) = (ins[0].as_slice(), ins[1].as_slice());
        for ((f, &x), &v) in f.iter_mut().zip(xs).zip(vs) {
            *f = -k * (x - rest) - c * v;
        }
    })
}

// A rule's parameter list is fixed by the op: inputs, output, tangents, statics.
#[allow(clippy::too_many_arguments)]
fn spring_jvp<V: ArrayValue>(
    x: &V,
    _v: &V,
    _f: &V,
    dx: Option<&V>,
    dv: Option<&V>,
    k: f64,
    c: f64,
    _rest: f64,
) -> V {
    let mut t = x.zeros_like();
    if let Some(dx) = dx {
        t = t.add(&dx.mul_scalar(-k));
    }
    if let Some(dv) = dv {
        t = t.add(&dv.mul_scalar(-c));
    }
    t
}

fn spring_vjp<V: ArrayValue>(_x: &V, _v: &V, _f: &V, ct: &V, k: f64, c: f64, _rest: f64) -> (V, V) {
    (ct.mul_scalar(-k), ct.mul_scalar(-c))
}

/// Final energy of a chain of independent springs after 100 steps.
#[differentiable]
fn final_energy(x0: &Array, v0: &Array) -> Array {
    let mut x = x0.clone();
    let mut v = v0.clone();
    for _ in 0..100 {
        v = &v + &(spring_force(&x, &v, 4.0, 0.3, 1.0) * 0.01);
        x = &x + &(&v * 0.01);
    }
    nabla::sum(&((x - 1.0).square() * 2.0 + v.square() * 0.5))
}

fn main() {
    // (a) The hand-written rules, checked against each other and against
    // finite differences (second derivatives included), then a linear
    // classifier trained with the custom softplus.
    let probe = Array::from_vec(vec![-30.0, -1.5, 0.0, 0.7, 25.0], &[5]);
    nabla::testing::check_grads(stable_softplus, &(probe,), 2);
    println!("stable_softplus: JVP, VJP and second derivatives agree with finite differences");
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
    for i in 0..3 {
        let one = nabla::grad(final_energy)(&batch.slice_axis(0, i..i + 1).reshape(&[4]), &v0);
        let row = per.slice_axis(0, i..i + 1).reshape(&[4]);
        assert!(
            (&one - &row).abs().max().item() < 1e-12,
            "vmap (batching rule) vs a loop"
        );
    }
    println!(
        "vmap ran the fused kernel once per step for all 3 chains (batch = elementwise); matches a loop"
    );

    // The same gradient with the CUDA kernel when a GPU is there.
    if nabla::cuda::is_available() {
        let d = Device::Cuda(0);
        let gg = nabla::grad(final_energy)(&x0.to_device(d), &v0.to_device(d));
        println!("on {d}: dE/dx0 = {gg}");
        assert!((&gg.to_device(Device::Cpu) - &gx).abs().max().item() < 1e-9);
    } else {
        println!("(no GPU: the CUDA kernel path was not run)");
    }
}
