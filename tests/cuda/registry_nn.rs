//! The op registry's newer ops and `nabla::nn` on the GPU: every
//! elementwise case of `jax_reference_more.json` forward and tape VJP on
//! the device (f64 1e-9, f32 1e-4), and PyTorch's tiny GPT loaded onto the
//! device giving PyTorch's loss (1e-5) and gradients (1e-4) on the tape and
//! through `#[differentiable]` code, with an AdamW step that matches the
//! same step on the CPU (1e-6).

use crate::common::*;
use crate::gpu_or_skip as gpu;
use nabla::nn::models::Gpt;
use nabla::optim::{AdamW, Optimizer};
use nabla::prelude::*;
use nabla::tree::{Tree, named_leaves};

#[test]
fn registry_ops_of_the_more_fixture_on_the_gpu() {
    let Some(dev) = gpu() else { return };
    let cases = cases_of("jax_reference_more.json", MORE_ELEMENTWISE);
    assert_eq!(cases.len(), 21 + 2 * 4);
    for case in cases {
        let (name, op, p) = (
            case["name"].as_str().unwrap(),
            case["op"].as_str().unwrap(),
            &case["params"],
        );
        let wants: Vec<Array> = case["vjp"].as_array().unwrap().iter().map(arr).collect();
        for (dtype, tol) in [(DType::F64, 1e-9), (DType::F32, 1e-4)] {
            let xs: Vec<Array> = case["inputs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|j| arr(j).cast(dtype).to_device(dev).requires_grad())
                .collect();
            let y = apply_more(op, p, &xs);
            assert_eq!(y.device(), dev, "{name}: output left the device");
            assert_close(
                &y,
                &arr(&case["output"]),
                tol,
                &format!("{name} forward {dtype} on {dev}"),
            );
            let ct = arr(&case["cotangent"]).cast(dtype).to_device(dev);
            (&y * &ct).sum().backward();
            for (k, (x, w)) in xs.iter().zip(&wants).enumerate() {
                assert_close(
                    &x.grad(),
                    w,
                    tol,
                    &format!("{name} tape vjp[{k}] {dtype} on {dev}"),
                );
            }
        }
    }
}

/// PyTorch's tiny GPT with its token ids and targets on `dev`.
fn torch_gpt_on(dev: Device) -> (Gpt, Array, Array, f64) {
    let (mut gpt, idx, targets, loss) = torch_gpt();
    gpt.for_each_leaf_mut(&mut |p| *p = p.to_device(dev));
    (gpt, idx.to_device(dev), targets.to_device(dev), loss)
}

#[differentiable]
fn gpt_loss(model: &Gpt, #[nondiff] idx: &Array, #[nondiff] targets: &Array) -> Array {
    model.loss(idx, targets)
}

fn check_grads(grads: &[(String, Array)], dev: Device, mode: &str) {
    let want = torch_gpt_expected();
    assert_eq!(grads.len(), 2 + 2 * 12 + 3);
    for (name, g) in grads {
        assert_eq!(g.device(), dev, "{mode}: gradient {name} left the device");
        assert_close(
            &g.to_device(Device::Cpu).cast(DType::F64),
            &want[&format!("grad.{name}")].cast(DType::F64),
            1e-4,
            &format!("{mode} grad {name} on {dev}"),
        );
    }
}

#[test]
fn pytorch_gpt_on_the_gpu_gives_pytorch_loss_and_gradients() {
    let Some(dev) = gpu() else { return };
    let (gpt, idx, targets, loss) = torch_gpt_on(dev);
    let logits = gpt.forward(&idx);
    assert_eq!(logits.device(), dev);
    assert_close(
        &logits.to_device(Device::Cpu).cast(DType::F64),
        &torch_gpt_expected()["logits"].cast(DType::F64),
        1e-5,
        "logits on the GPU",
    );

    // The tape.
    let mut tracked = gpt.clone();
    tracked.for_each_leaf_mut(&mut |p| *p = p.clone().requires_grad());
    let l = tracked.loss(&idx, &targets);
    assert!(
        (l.item() - loss).abs() <= 1e-5 * loss,
        "tape loss {}, PyTorch {loss}",
        l.item()
    );
    l.backward();
    let grads: Vec<(String, Array)> = named_leaves(&tracked)
        .into_iter()
        .map(|(n, p)| (n, p.grad()))
        .collect();
    check_grads(&grads, dev, "tape");

    // Generated code.
    let (value, g): (Array, Gpt) = value_and_grad(gpt_loss)(&gpt, &idx, &targets);
    let v = value.item();
    assert!(
        (v - loss).abs() <= 1e-5 * loss,
        "generated loss {v}, PyTorch {loss}"
    );
    check_grads(&named_leaves(&g), dev, "generated");

    // One AdamW step on the device equals the same step on the CPU.
    let opt = AdamW::new(1e-2).weight_decay(0.01);
    let cpu = |t: &Gpt| {
        let mut c = t.clone();
        c.for_each_leaf_mut(&mut |p| *p = p.to_device(Device::Cpu));
        c
    };
    let (mut p_gpu, mut p_cpu, g_cpu) = (gpt.clone(), cpu(&gpt), cpu(&g));
    let mut s_gpu = opt.init(&p_gpu);
    let mut s_cpu = opt.init(&p_cpu);
    opt.update(&mut p_gpu, &g, &mut s_gpu);
    opt.update(&mut p_cpu, &g_cpu, &mut s_cpu);
    for ((name, a), (_, b)) in named_leaves(&p_gpu).iter().zip(named_leaves(&p_cpu)) {
        assert_eq!(a.device(), dev, "AdamW moved {name} off the device");
        assert_close(
            &a.to_device(Device::Cpu).cast(DType::F64),
            &b.cast(DType::F64),
            1e-6,
            &format!("AdamW step {name} on {dev}"),
        );
    }
}
