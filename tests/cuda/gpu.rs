//! The CUDA backend. With a GPU (feature `cuda`): every fixture case of
//! `jax_reference.json` forward / tape VJP / JVP / vmap / HVP on the device
//! in f32 (1e-4) and f64 (1e-9), the imperative seed example, and CPU/GPU
//! agreement of generated programs and composed transforms. Without one,
//! every GPU test prints why it skipped, and the probing and error paths
//! are checked instead (this is what CI exercises).

use crate::common::*;
use crate::gpu_or_skip as gpu;
use nabla::prelude::*;
use nabla::{Batched, Dual};

fn cases() -> Vec<serde_json::Value> {
    fixture("jax_reference.json")["cases"]
        .as_array()
        .unwrap()
        .clone()
}

fn inputs_on(case: &serde_json::Value, key: &str, dtype: DType, dev: Device) -> Vec<Array> {
    case[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| arr(j).cast(dtype).to_device(dev))
        .collect()
}

#[test]
fn probing_reports_no_device_cleanly() {
    let n = nabla::cuda::device_count();
    assert_eq!(nabla::cuda::is_available(), n > 0);
    if n == 0 {
        let why = nabla::cuda::unavailable_reason().expect("a reason when there is no GPU");
        assert!(!why.is_empty());
        let err =
            std::panic::catch_unwind(|| Array::ones(&[2], DType::F32).to_device(Device::Cuda(0)))
                .expect_err("moving to a missing GPU must panic");
        let msg = err
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap();
        assert!(
            msg.contains("to_device(cuda:0)") || msg.contains("Device::Cuda(0)"),
            "{msg}"
        );
        assert!(msg.contains("cuda") || msg.contains("GPU"), "{msg}");
    }
    // Host arrays never need a GPU.
    let x = Array::ones(&[2], DType::F64).to_device(Device::Cpu);
    assert_eq!(x.device(), Device::Cpu);
}

#[test]
fn every_fixture_op_forward_vjp_jvp_on_the_gpu() {
    let Some(dev) = gpu() else { return };
    for case in cases() {
        let (name, op, params) = (
            case["name"].as_str().unwrap(),
            case["op"].as_str().unwrap(),
            &case["params"],
        );
        for (dtype, tol) in [(DType::F64, 1e-9), (DType::F32, 1e-4)] {
            let xs = inputs_on(&case, "inputs", dtype, dev);
            let y = apply(op, params, &xs);
            assert_eq!(y.device(), dev, "{name}: output left the device");
            assert_eq!(y.dtype(), dtype, "{name}");
            assert_close(
                &y,
                &arr(&case["output"]),
                tol,
                &format!("{name} forward {dtype} on {dev}"),
            );

            let ct = arr(&case["cotangent"]).cast(dtype).to_device(dev);
            let (_, grads) = tape_vjp(op, params, &xs, &ct);
            for (k, (g, w)) in grads
                .iter()
                .zip(case["vjp"].as_array().unwrap())
                .enumerate()
            {
                assert_eq!(g.device(), dev, "{name}: gradient left the device");
                assert_close(
                    g,
                    &arr(w),
                    tol,
                    &format!("{name} tape vjp[{k}] {dtype} on {dev}"),
                );
            }

            let ts = inputs_on(&case, "tangents", dtype, dev);
            let yd: Dual<Array> = apply(op, params, &duals(&xs, &ts));
            assert_close(
                &yd.tangent_or_zero(),
                &arr(&case["jvp"]),
                tol,
                &format!("{name} jvp {dtype} on {dev}"),
            );
        }
    }
}

#[test]
fn every_fixture_op_vmap_and_hvp_on_the_gpu() {
    let Some(dev) = gpu() else { return };
    let (mut vmaps, mut hvps) = (0, 0);
    for case in cases() {
        let (name, op, params) = (
            case["name"].as_str().unwrap(),
            case["op"].as_str().unwrap(),
            &case["params"],
        );
        for key in ["vmap", "vmap_in_axes_0_none"] {
            let Some(v) = case.get(key) else { continue };
            let xs: Vec<Batched<Array>> = v["inputs"]
                .as_array()
                .unwrap()
                .iter()
                .zip(v["in_axes"].as_array().unwrap())
                .map(|(j, ax)| Batched::new(arr(j).to_device(dev), ax.as_u64().map(|a| a as usize)))
                .collect();
            let y: Batched<Array> = apply(op, params, &xs);
            let got = y.materialize(y.batch_size().unwrap_or(3), 0);
            assert_eq!(got.device(), dev);
            assert_close(
                &got,
                &arr(&v["output"]),
                1e-9,
                &format!("{name} {key} on {dev}"),
            );
            vmaps += 1;
        }
        let xs = inputs_on(&case, "inputs", DType::F64, dev);
        let ts = inputs_on(&case, "tangents", DType::F64, dev);
        let dx = duals(&xs, &ts);
        let y = apply(op, params, &dx);
        let ct = Dual::constant(arr(&case["cotangent"]).to_device(dev));
        if let Some(grads) = direct_vjp(op, params, &dx, &y, &ct) {
            for (k, (g, w)) in grads
                .iter()
                .zip(case["hvp"].as_array().unwrap())
                .enumerate()
            {
                assert_close(
                    &g.tangent_or_zero(),
                    &arr(w),
                    1e-7,
                    &format!("{name} hvp[{k}] on {dev}"),
                );
            }
            hvps += 1;
        }
    }
    assert!(
        vmaps >= 78 && hvps >= 60,
        "{vmaps} vmap and {hvps} hvp cases"
    );
}

#[test]
fn imperative_seed_example_on_the_gpu_matches_the_cpu() {
    let Some(dev) = gpu() else { return };
    let _rng = seeded(0);
    let run = |dev: Device| {
        nabla::manual_seed(0);
        let mut w = nabla::randn_on(&[3, 4], DType::F32, dev).requires_grad();
        let x = nabla::randn_on(&[2, 3], DType::F32, dev);
        let loss = nabla::sum(&x.matmul(&w).tanh());
        loss.backward();
        assert_eq!(w.grad().device(), dev);
        w -= 0.01 * w.grad();
        (loss.item(), w.to_vec::<f32>())
    };
    let (l_cpu, w_cpu) = run(Device::Cpu);
    let (l_gpu, w_gpu) = run(dev);
    assert!((l_cpu - l_gpu).abs() < 1e-5, "{l_cpu} vs {l_gpu}");
    for (a, b) in w_cpu.iter().zip(&w_gpu) {
        assert!((a - b).abs() < 1e-5, "{a} vs {b}");
    }
}

#[differentiable]
fn mlp_loss(w1: &Array, w2: &Array, x: &Array, y: &Array) -> Array {
    let h = x.matmul(w1).tanh();
    let p = h.matmul(w2);
    nabla::mean(&(p - y).square())
}

#[differentiable]
fn seed(x: &Array) -> Array {
    nabla::sum(&nabla::sin(x))
}

#[differentiable]
fn shaped(x: &Array) -> Array {
    let s = nabla::softmax(&x.reshape(&[2, 6]), -1);
    let t = nabla::concat(
        &[
            s.slice_axis(1, 0..3),
            x.reshape(&[2, 6]).slice_axis(1, 3..6),
        ],
        1,
    );
    nabla::sum(
        &(t.cumsum(1)
            * t.transpose()
                .sum_axes(&[0], false)
                .reshape(&[1, 2])
                .transpose())
        .exp(),
    )
}

/// Generated code, composed transforms and vmap give the same numbers on
/// the GPU as on the CPU.
#[test]
fn generated_programs_and_transforms_agree_with_the_cpu() {
    let Some(dev) = gpu() else { return };
    let _rng = seeded(3);
    let host: Vec<Array> = [[8, 16], [16, 4], [32, 8], [32, 4]]
        .iter()
        .map(|s| nabla::randn(s, DType::F64))
        .collect();
    let on = |d: Device| host.iter().map(|a| a.to_device(d)).collect::<Vec<_>>();
    let close = |a: &Array, b: &Array, what: &str| {
        assert_eq!(b.device(), dev, "{what}");
        assert_close(b, &a.to_device(Device::Cpu), 1e-9, what)
    };

    let (c, g) = (on(Device::Cpu), on(dev));
    let gc = nabla::grad(mlp_loss)(&c[0], &c[1], &c[2], &c[3]);
    let gg = nabla::grad(mlp_loss)(&g[0], &g[1], &g[2], &g[3]);
    close(&gc, &gg, "grad(mlp_loss)");

    let pc = nabla::vmap!(nabla::grad!(mlp_loss), in_axes = (None, None, 0, 0))(
        &c[0], &c[1], &c[2], &c[3],
    );
    let pg = nabla::vmap!(nabla::grad!(mlp_loss), in_axes = (None, None, 0, 0))(
        &g[0], &g[1], &g[2], &g[3],
    );
    close(&pc, &pg, "per-example grads");

    let x = nabla::randn(&[2, 3], DType::F64);
    let h = nabla::jacfwd(nabla::jacrev(nabla::vmap(seed)));
    close(&h(&x), &h(&x.to_device(dev)), "seed hessian");

    let z = nabla::randn(&[12], DType::F64);
    close(
        &nabla::hessian(shaped)(&z),
        &nabla::hessian(shaped)(&z.to_device(dev)),
        "hessian(shaped)",
    );
}

/// f32 kernels at sizes that reach every path: 16-byte vector loads with a
/// scalar tail (odd lengths), a contiguous view that starts off 16-byte
/// alignment (offset 1), and long rows split into chunks. Compared with the
/// CPU in f64: a dropped or repeated element moves a sum by about 1, far
/// above f32 rounding of a 1e5-term sum (≈1e-4 relative here).
#[test]
fn f32_vector_paths_agree_with_the_cpu() {
    let Some(dev) = gpu() else { return };
    let _rng = seeded(9);
    let n = 1_000_003;
    let x = nabla::randn(&[n], DType::F32);
    let xg = x.to_device(dev);
    let x64 = x.cast(DType::F64);
    let unaligned = xg.slice_axis(0, 1..n);
    let unaligned_cpu = x64.slice_axis(0, 1..n);
    for (name, got, want) in [
        ("tanh", xg.tanh(), x64.tanh()),
        ("exp", xg.exp(), x64.exp()),
        ("neg (run-time op)", xg.neg(), x64.neg()),
        ("tanh, offset 1", unaligned.tanh(), unaligned_cpu.tanh()),
        (
            "square, offset 1",
            unaligned.square(),
            unaligned_cpu.square(),
        ),
    ] {
        assert_close(&got.cast(DType::F64), &want, 1e-6, name);
    }
    assert_close(&xg.sum().cast(DType::F64), &x64.sum(), 1e-4, "sum");
    assert_close(
        &unaligned.sum().cast(DType::F64),
        &unaligned_cpu.sum(),
        1e-4,
        "sum, offset 1",
    );
    assert_close(&xg.max().cast(DType::F64), &x64.max(), 0.0, "max");
    let m = nabla::randn(&[3, 100_003], DType::F32);
    let (mg, m64) = (m.to_device(dev), m.cast(DType::F64));
    assert_close(
        &mg.sum_axes(&[1], false).cast(DType::F64),
        &m64.sum_axes(&[1], false),
        1e-4,
        "row sums",
    );
    assert_close(
        &mg.slice_axis(1, 5..100_003)
            .sum_axes(&[1], false)
            .cast(DType::F64),
        &m64.slice_axis(1, 5..100_003).sum_axes(&[1], false),
        1e-4,
        "row sums of a slice",
    );
}

#[test]
fn big_reductions_and_gemms_agree_with_the_cpu() {
    let Some(dev) = gpu() else { return };
    let _rng = seeded(5);
    let x = nabla::randn(&[300, 1000], DType::F64);
    let xg = x.to_device(dev);
    for axes in [vec![0isize], vec![1], vec![0, 1]] {
        assert_close(
            &xg.sum_axes(&axes, false),
            &x.sum_axes(&axes, false),
            1e-9,
            &format!("sum {axes:?}"),
        );
        assert_close(
            &xg.max_axes(&axes, true),
            &x.max_axes(&axes, true),
            0.0,
            &format!("max {axes:?}"),
        );
    }
    // Many outputs over long leading axes (a bias gradient's shape): the
    // columns are split into chunks, each chunk's partial reduced again.
    let wide = nabla::randn(&[2, 1500, 1100], DType::F64);
    let wg = wide.to_device(dev);
    for axes in [vec![0isize, 1], vec![1]] {
        assert_close(
            &wg.sum_axes(&axes, false),
            &wide.sum_axes(&axes, false),
            1e-9,
            &format!("chunked sum {axes:?}"),
        );
        assert_close(
            &wg.min_axes(&axes, false),
            &wide.min_axes(&axes, false),
            0.0,
            &format!("chunked min {axes:?}"),
        );
    }
    // Short rows, one warp each: rows walking memory uniformly, and rows
    // whose elements the layout places (the kept axis in the middle).
    let mid = nabla::randn(&[7, 300, 40], DType::F32);
    let mg = mid.to_device(dev);
    for axes in [vec![2isize], vec![0, 2], vec![1, 2]] {
        assert_close(
            &mg.sum_axes(&axes, false),
            &mid.sum_axes(&axes, false),
            1e-4,
            &format!("warp-row sum {axes:?}"),
        );
        assert_close(
            &mg.max_axes(&axes, false),
            &mid.max_axes(&axes, false),
            0.0,
            &format!("warp-row max {axes:?}"),
        );
    }
    assert_eq!(xg.argmax(1).to_vec::<i64>(), x.argmax(1).to_vec::<i64>());
    let w = nabla::randn(&[1000, 70], DType::F64);
    let wg = w.to_device(dev);
    assert_close(&xg.matmul(&wg), &x.matmul(&w), 1e-9, "gemm");
    assert_close(
        &xg.transpose().transpose().matmul(&wg.slice_axis(1, 3..40)),
        &x.matmul(&w.slice_axis(1, 3..40)),
        1e-9,
        "gemm of a slice",
    );
    assert_close(
        &wg.transpose().matmul(&xg.transpose()),
        &w.transpose().matmul(&x.transpose()),
        1e-9,
        "gemm of transposes",
    );
    let b = nabla::randn(&[4, 5, 6], DType::F32);
    let c = nabla::randn(&[6, 7], DType::F32);
    assert_close(
        &b.to_device(dev).matmul(&c.to_device(dev)),
        &b.matmul(&c),
        1e-4,
        "batched gemm f32",
    );
}

#[test]
fn mixing_devices_is_a_clear_panic() {
    let Some(dev) = gpu() else { return };
    let a = Array::ones(&[3], DType::F32).to_device(dev);
    let b = Array::ones(&[3], DType::F32);
    let err = std::panic::catch_unwind(|| &a + &b).expect_err("mixed devices must panic");
    let msg = err.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        msg.contains("different devices") && msg.contains("to_device"),
        "{msg}"
    );
    // A 0-d host constant next to a device array is fine.
    assert_eq!((&a * &Array::scalar(2.0f32)).to_vec::<f32>(), vec![2.0; 3]);
}

/// `nabla::optim` on device arrays (the op-by-op path) against the
/// in-place passes on host arrays: three steps of SGD with Nesterov
/// momentum and weight decay, Adam and AdamW, f32 and f64.
#[test]
fn optimizer_steps_on_the_gpu_match_the_cpu() {
    use nabla::optim::{Adam, AdamW, Optimizer, Sgd};
    let Some(dev) = gpu() else { return };
    fn run<O: Optimizer>(opt: &O, dev: Device, dtype: DType) -> Array {
        let key = nabla::random::Key::new(21);
        let ks = key.split(4);
        let mut p = ks[0].normal(&[33, 17], dtype).to_device(dev);
        let mut s = opt.init(&p);
        for k in &ks[1..] {
            let g = k.normal(&[33, 17], dtype).to_device(dev);
            opt.update(&mut p, &g, &mut s);
        }
        assert_eq!(p.device(), dev);
        p.to_device(Device::Cpu)
    }
    for (dtype, tol) in [(DType::F32, 1e-5), (DType::F64, 1e-12)] {
        let sgd = Sgd::new(0.1)
            .momentum(0.9)
            .nesterov(true)
            .weight_decay(0.01);
        assert_close(
            &run(&sgd, dev, dtype),
            &run(&sgd, Device::Cpu, dtype),
            tol,
            "sgd",
        );
        let adam = Adam::new(0.01).weight_decay(0.1);
        assert_close(
            &run(&adam, dev, dtype),
            &run(&adam, Device::Cpu, dtype),
            tol,
            "adam",
        );
        let adamw = AdamW::new(0.01);
        assert_close(
            &run(&adamw, dev, dtype),
            &run(&adamw, Device::Cpu, dtype),
            tol,
            "adamw",
        );
    }
}
