//! `nabla::nn` against PyTorch: the tiny GPT of `tests/fixtures/torch/`
//! (PyTorch 2.15, float32) loaded from PyTorch's own safetensors file
//! gives PyTorch's logits and loss, and the tape's gradients of the loss
//! are PyTorch's (tolerances of the fixture's README: logits and loss 1e-5
//! relative, gradients 1e-4).

use crate::common::{assert_close, torch_gpt, torch_gpt_expected};
use nabla::nn::models::{Gpt, GptConfig};
use nabla::optim::{Optimizer, Sgd};
use nabla::prelude::*;
use nabla::tree::named_leaves;
use serde_json::Value as Json;

#[test]
fn gpt_logits_and_loss_match_pytorch() {
    let (gpt, idx, targets, loss) = torch_gpt();
    let logits = gpt.forward(&idx);
    assert_eq!(logits.shape(), &[3, 16, 32]);
    let want = &torch_gpt_expected()["logits"];
    assert_close(
        &logits.cast(DType::F64),
        &want.cast(DType::F64),
        1e-5,
        "logits",
    );
    let got = gpt.loss(&idx, &targets).item();
    assert!(
        (got - loss).abs() <= 1e-5 * loss,
        "loss {got}, PyTorch {loss}"
    );
}

#[test]
fn gpt_gradients_on_the_tape_match_pytorch() {
    let (mut gpt, idx, targets, _) = torch_gpt();
    gpt.for_each_leaf_mut(&mut |p| *p = p.clone().requires_grad());
    gpt.loss(&idx, &targets).backward();
    let want = torch_gpt_expected();
    let params = named_leaves(&gpt);
    assert_eq!(params.len(), 2 + 2 * 12 + 3);
    for (name, p) in params {
        let w = &want[&format!("grad.{name}")];
        assert_close(
            &p.grad().cast(DType::F64),
            &w.cast(DType::F64),
            1e-4,
            &format!("grad {name}"),
        );
    }
}

/// The GPT's loss as differentiable code: `model.loss(..)` calls the
/// model's `#[differentiable]` methods (blocks, attention, layers).
#[differentiable]
fn gpt_loss(model: &Gpt, #[nondiff] idx: &Array, #[nondiff] targets: &Array) -> Array {
    model.loss(idx, targets)
}

#[test]
fn gpt_gradients_of_differentiable_code_match_pytorch() {
    let (gpt, idx, targets, loss) = torch_gpt();
    let (value, g): (Array, Gpt) = value_and_grad(gpt_loss)(&gpt, &idx, &targets);
    let got = value.item();
    assert!(
        (got - loss).abs() <= 1e-5 * loss,
        "loss {got}, PyTorch {loss}"
    );
    let want = torch_gpt_expected();
    let grads = named_leaves(&g);
    assert_eq!(grads.len(), 2 + 2 * 12 + 3);
    for (name, gr) in &grads {
        assert_close(
            &gr.cast(DType::F64),
            &want[&format!("grad.{name}")].cast(DType::F64),
            1e-4,
            &format!("grad {name}"),
        );
    }
    // One SGD step (momentum, Nesterov, weight decay) from these
    // gradients is torch.optim's step from PyTorch's gradients. (Adam's
    // first step is `lr · g / (|g| + eps)`: on gradients that are zero up
    // to rounding, e.g. the key bias, whose shift the softmax cancels, it
    // is `lr` times the sign of the rounding noise; its comparison starts
    // from PyTorch's gradients, in `io::one_optimizer_step_..`.)
    let sgd = Sgd::new(0.1)
        .momentum(0.9)
        .nesterov(true)
        .weight_decay(0.01);
    let mut p = gpt.clone();
    let mut s = sgd.init(&p);
    sgd.update(&mut p, &g, &mut s);
    for (name, a) in named_leaves(&p) {
        assert_close(
            &a.cast(DType::F64),
            &want[&format!("sgd_momentum1.{name}")].cast(DType::F64),
            1e-6,
            &format!("SGD step {name}"),
        );
    }
}

#[test]
fn gpt_rejects_bad_inputs_with_the_fix() {
    let cfg = GptConfig {
        vocab: 5,
        context: 4,
        layers: 1,
        heads: 2,
        embd: 8,
    };
    let gpt = Gpt::new(&cfg, Key::new(1));
    let too_long = std::panic::catch_unwind(|| gpt.forward(&Array::zeros(&[1, 5], DType::I64)));
    let msg = too_long.unwrap_err().downcast::<String>().unwrap();
    assert!(msg.contains("5 tokens exceed the context of 4"), "{msg}");
    let bad_token =
        std::panic::catch_unwind(|| gpt.forward(&Array::from_vec(vec![7i64, 0], &[1, 2])));
    let msg = bad_token.unwrap_err().downcast::<String>().unwrap();
    assert!(
        msg.contains("embedding: index 7 is out of range for an axis of length 5"),
        "{msg}"
    );
}

/// The one case of `op` in `jax_reference_more.json`.
fn jax_case(op: &str) -> Json {
    let all = crate::common::fixture("jax_reference_more.json");
    all["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["op"] == op)
        .unwrap_or_else(|| panic!("no {op} case"))
        .clone()
}

/// Runs `f` on the case's inputs (as leaves that require grad) in `dt`,
/// and checks the output and the tape's VJP of the case's cotangent
/// against JAX.
fn check_layer(op: &str, dt: DType, f: impl Fn(&Json, &[Array]) -> Array) {
    let c = jax_case(op);
    let tol = if dt == DType::F64 { 1e-10 } else { 1e-5 };
    let xs: Vec<Array> = c["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| crate::common::arr(x).cast(dt).requires_grad())
        .collect();
    let y = f(&c["params"], &xs);
    let what = format!("{op} {dt}");
    assert_close(
        &y.cast(DType::F64),
        &crate::common::arr(&c["output"]),
        tol,
        &what,
    );
    (&y * &crate::common::arr(&c["cotangent"]).cast(dt))
        .sum()
        .backward();
    for (k, (x, want)) in xs.iter().zip(c["vjp"].as_array().unwrap()).enumerate() {
        let g = x.grad().cast(DType::F64);
        assert_close(
            &g,
            &crate::common::arr(want),
            tol,
            &format!("{what} vjp {k}"),
        );
    }
}

#[test]
fn normalisation_layers_and_embedding_match_jax() {
    use nabla::nn::{Embedding, LayerNorm, RmsNorm};
    use nabla::tree::Setting;
    let eps = |p: &Json| Setting(p["eps"].as_f64().unwrap());
    for dt in [DType::F64, DType::F32] {
        check_layer("layer_norm", dt, |p, xs| {
            let ln = LayerNorm {
                weight: xs[1].clone(),
                bias: xs[2].clone(),
                eps: eps(p),
            };
            ln.forward(&xs[0])
        });
        check_layer("rms_norm", dt, |p, xs| {
            let rms = RmsNorm {
                weight: xs[1].clone(),
                eps: eps(p),
            };
            rms.forward(&xs[0])
        });
        check_layer("embedding", dt, |p, xs| {
            let idx: Vec<i64> = p["indices"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_i64().unwrap())
                .collect();
            let shape = crate::common::usizes(&p["indices_shape"]);
            let e = Embedding {
                weight: xs[0].clone(),
            };
            e.forward(&Array::from_vec(idx, &shape))
        });
    }
}

/// The initialisers draw with `torch.nn.init`'s bounds and standard
/// deviations (fans as PyTorch computes them: `(72, 144)` for a
/// `[16, 8, 3, 3]` kernel); sample statistics of 64K draws within 2%.
#[test]
fn initialisers_follow_torch_formulas() {
    use nabla::nn::init::{self, Fan};
    let shape = [256, 256];
    let stats = |a: &Array| {
        let v = a.to_vec::<f64>();
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let std = (v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n).sqrt();
        let max = v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        (mean, std, max)
    };
    let close = |got: f64, want: f64, what: &str| {
        assert!(
            (got - want).abs() <= 0.02 * want,
            "{what}: {got}, want {want}"
        );
    };
    // Xavier: std √(2 / (256 + 256)) = 1/16; uniform bound √3 / 16.
    let (m, s, max) = stats(&init::xavier_uniform(&shape, 1.0, DType::F64, Key::new(1)));
    assert!(m.abs() < 0.005 && max <= 3f64.sqrt() / 16.0);
    close(s, 1.0 / 16.0, "xavier_uniform std");
    close(max, 3f64.sqrt() / 16.0, "xavier_uniform reaches its bound");
    close(
        stats(&init::xavier_normal(&shape, 2.0, DType::F64, Key::new(2))).1,
        2.0 / 16.0,
        "xavier_normal std",
    );
    // Kaiming, ReLU and fan_in 256: std √2 / 16.
    let (_, s, max) = stats(&init::kaiming_uniform(
        &shape,
        0.0,
        Fan::In,
        DType::F64,
        Key::new(3),
    ));
    assert!(max <= 3f64.sqrt() * 2f64.sqrt() / 16.0);
    close(s, 2f64.sqrt() / 16.0, "kaiming_uniform std");
    // Leaky ReLU 0.2, fan_out of a [64, 8, 4, 4] kernel (64 · 16 = 1024):
    // PyTorch's gain 1.3867504905630728 / 32.
    let conv = init::kaiming_normal(&[64, 8, 4, 4], 0.2, Fan::Out, DType::F64, Key::new(4));
    close(
        stats(&conv).1,
        1.3867504905630728 / 32.0,
        "kaiming_normal std",
    );
    assert_eq!(init::fans(&[16, 8, 3, 3]), (72, 144));
}

/// Dropout: the identity in evaluation; in training about `p` of the
/// elements zeroed, the rest scaled by `1/(1−p)`, the same mask for the
/// same key, and the gradient through the same mask.
#[test]
fn dropout_drops_scales_and_passes_gradients_through_the_mask() {
    use nabla::nn::Dropout;
    let x = (Array::arange(65536, DType::F32) * 1e-3 + 1.0).requires_grad();
    let drop = Dropout::new(0.25);
    assert_eq!(drop.forward(&x, None).to_vec::<f32>(), x.to_vec::<f32>());
    let y = drop.forward(&x, Some(Key::new(7)));
    let (xs, ys) = (x.to_vec::<f32>(), y.to_vec::<f32>());
    let zeros = ys.iter().filter(|&&v| v == 0.0).count() as f64 / ys.len() as f64;
    assert!((zeros - 0.25).abs() < 0.01, "dropped fraction {zeros}");
    for (a, b) in xs.iter().zip(&ys) {
        assert!(
            *b == 0.0 || (b - a / 0.75).abs() <= 1e-6 * b.abs(),
            "{a} -> {b}"
        );
    }
    assert_eq!(drop.forward(&x, Some(Key::new(7))).to_vec::<f32>(), ys);
    assert_ne!(drop.forward(&x, Some(Key::new(8))).to_vec::<f32>(), ys);
    y.sum().backward();
    for (g, b) in x.grad().to_vec::<f32>().iter().zip(&ys) {
        assert_eq!(*g == 0.0, *b == 0.0);
        assert!(*g == 0.0 || (g - 1.0 / 0.75).abs() < 1e-6);
    }
    assert_eq!(
        Dropout::new(1.0)
            .forward(&x, Some(Key::new(1)))
            .to_vec::<f32>(),
        vec![0.0; 65536]
    );
    let none = std::panic::catch_unwind(|| Dropout::new(1.5)).unwrap_err();
    assert!(
        none.downcast::<String>()
            .unwrap()
            .contains("pass p in [0, 1]")
    );
}
