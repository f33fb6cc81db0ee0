//! GPU benchmarks (issue: CUDA backend), run on the lent GPU machine by
//! `scripts/gpu-check.sh`: the MLP train step (784-512-512-10, tanh, MSE,
//! SGD, f32) at batch 256 and 4096 on the tape and at 256 through
//! `value_and_grad`, f32 GEMM 8192³, elementwise add /
//! tanh and a full sum on 64M f32 elements, an 8-op elementwise chain of
//! `#[differentiable]` code on 64M f32 (one fused region: its value and its
//! gradient), and the GPT train step with AdamW (8 layers, 8 heads, width
//! 512, context 256, batch 32, vocabulary 96) on the tape and through
//! `value_and_grad`. Every iteration ends with a
//! device synchronisation, so times are GPU times. The PyTorch CUDA twin is
//! `benches/compare/torch_gpu_twin.py`; `benches/compare/gpu_summary.py`
//! prints the ratios and bandwidths.
//!
//! Run: `cargo bench --features cuda --bench gpu` (prints a skip line and
//! exits without a GPU).

use criterion::{Criterion, Throughput};
use nabla::nn::models::{Gpt, GptConfig};
use nabla::optim::{AdamW, Optimizer};
use nabla::prelude::*;
use nabla::tree::Tree;
use std::hint::black_box;
use std::time::Duration;

const DEV: Device = Device::Cuda(0);

fn sync() {
    nabla::cuda::synchronize(0);
}

fn mlp_step(c: &mut Criterion, batch: usize) {
    nabla::manual_seed(0);
    let init = |fan_in: usize, shape: &[usize]| {
        nabla::randn_on(shape, DType::F32, DEV) * (1.0 / (fan_in as f32).sqrt())
    };
    let x = nabla::randn_on(&[batch, 784], DType::F32, DEV);
    let y = nabla::randn_on(&[batch, 10], DType::F32, DEV);
    let mut params = [
        init(784, &[784, 512]).requires_grad(),
        Array::zeros_on(&[512], DType::F32, DEV).requires_grad(),
        init(512, &[512, 512]).requires_grad(),
        Array::zeros_on(&[512], DType::F32, DEV).requires_grad(),
        init(512, &[512, 10]).requires_grad(),
        Array::zeros_on(&[10], DType::F32, DEV).requires_grad(),
    ];
    let mut g = c.benchmark_group("gpu_mlp_step");
    g.sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    g.bench_function(format!("b{batch}"), |b| {
        b.iter(|| {
            let h1 = (x.matmul(&params[0]) + &params[1]).tanh();
            let h2 = (h1.matmul(&params[2]) + &params[3]).tanh();
            let pred = h2.matmul(&params[4]) + &params[5];
            let loss = nabla::mse_loss(&pred, &y);
            loss.backward();
            for p in params.iter_mut() {
                let gr = p.grad();
                *p -= gr * 0.01f32;
                p.zero_grad();
            }
            sync();
            black_box(loss)
        })
    });
    g.finish();
}

/// The MLP's loss as differentiable code (`gpu_mlp_step/fn_b256`): its
/// `tanh(x·w + b)` and MSE regions run as generated kernels.
#[differentiable]
fn mlp_loss(p: &Mlp, x: &Array, y: &Array) -> Array {
    let h1 = (x.matmul(&p.w1) + &p.b1).tanh();
    let h2 = (h1.matmul(&p.w2) + &p.b2).tanh();
    let pred = h2.matmul(&p.w3) + &p.b3;
    nabla::mean(&(pred - y).square())
}

/// The MLP's parameters as a tree.
#[derive(Clone, Tree)]
struct Mlp {
    w1: Array,
    b1: Array,
    w2: Array,
    b2: Array,
    w3: Array,
    b3: Array,
}

/// The MLP step in the functional mode: `value_and_grad`, then SGD.
fn mlp_step_fn(c: &mut Criterion) {
    nabla::manual_seed(0);
    let batch = 256;
    let init = |fan_in: usize, shape: &[usize]| {
        nabla::randn_on(shape, DType::F32, DEV) * (1.0 / (fan_in as f32).sqrt())
    };
    let x = nabla::randn_on(&[batch, 784], DType::F32, DEV);
    let y = nabla::randn_on(&[batch, 10], DType::F32, DEV);
    let mut ps = Mlp {
        w1: init(784, &[784, 512]),
        b1: Array::zeros_on(&[512], DType::F32, DEV),
        w2: init(512, &[512, 512]),
        b2: Array::zeros_on(&[512], DType::F32, DEV),
        w3: init(512, &[512, 10]),
        b3: Array::zeros_on(&[10], DType::F32, DEV),
    };
    let mut g = c.benchmark_group("gpu_mlp_step");
    g.sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    g.bench_function("fn_b256", |b| {
        b.iter(|| {
            let (loss, grads): (Array, Mlp) = value_and_grad(mlp_loss)(&ps, &x, &y);
            let mut gs = Vec::new();
            grads.for_each_leaf(&mut |g| gs.push(g.clone()));
            let mut k = 0;
            ps.for_each_leaf_mut(&mut |p| {
                *p -= &gs[k] * 0.01f32;
                k += 1;
            });
            sync();
            black_box(loss)
        })
    });
    g.finish();
}

fn gemm(c: &mut Criterion) {
    let n = 8192;
    let a = nabla::randn_on(&[n, n], DType::F32, DEV);
    let b = nabla::randn_on(&[n, n], DType::F32, DEV);
    let mut g = c.benchmark_group("gpu_gemm");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    g.throughput(Throughput::Elements(2 * (n as u64).pow(3)));
    g.bench_function("f32_8192", |bch| {
        bch.iter(|| {
            let y = a.matmul(&b);
            sync();
            black_box(y)
        })
    });
    g.finish();
}

fn eltwise(c: &mut Criterion) {
    let n = 64 << 20;
    let a = nabla::randn_on(&[n], DType::F32, DEV);
    let b = nabla::randn_on(&[n], DType::F32, DEV);
    let mut g = c.benchmark_group("gpu_eltwise");
    g.sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2));
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("add_f32_64m", |bch| {
        bch.iter(|| {
            let y = &a + &b;
            sync();
            black_box(y)
        })
    });
    g.bench_function("tanh_f32_64m", |bch| {
        bch.iter(|| {
            let y = a.tanh();
            sync();
            black_box(y)
        })
    });
    g.bench_function("sum_f32_64m", |bch| {
        bch.iter(|| {
            let y = a.sum();
            sync();
            black_box(y)
        })
    });
    g.finish();
}

/// Eight elementwise ops in one region: `ln(tanh(sin(2x) + x) / 2 + 1) · x`.
#[differentiable]
fn chain8(x: &Array) -> Array {
    (((x * 2.0).sin() + x).tanh() * 0.5 + 1.0).ln() * x
}

#[differentiable]
fn chain8_sum(x: &Array) -> Array {
    nabla::sum(&((((x * 2.0).sin() + x).tanh() * 0.5 + 1.0).ln() * x))
}

fn chain(c: &mut Criterion) {
    let n = 64 << 20;
    let x = nabla::randn_on(&[n], DType::F32, DEV);
    let mut g = c.benchmark_group("gpu_chain8");
    g.sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2));
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("fwd_f32_64m", |bch| {
        bch.iter(|| {
            let y = chain8(&x);
            sync();
            black_box(y)
        })
    });
    g.bench_function("grad_f32_64m", |bch| {
        bch.iter(|| {
            let y = nabla::grad(chain8_sum)(&x);
            sync();
            black_box(y)
        })
    });
    g.finish();
}

/// The GPU GPT: 8 layers, 8 heads, width 512, context 256.
const GPT: GptConfig = GptConfig {
    vocab: 96,
    context: 256,
    layers: 8,
    heads: 8,
    embd: 512,
};
const GPT_BATCH: usize = 32;

#[differentiable]
fn gpt_loss(model: &Gpt, #[nondiff] idx: &Array, #[nondiff] targets: &Array) -> Array {
    model.loss(idx, targets)
}

/// The benchmarked GPT on the device, its optimizer, and random token ids
/// and targets.
fn gpt_setup() -> (Gpt, AdamW, Array, Array) {
    let mut model = Gpt::new(&GPT, Key::new(0));
    model.for_each_leaf_mut(&mut |p| *p = p.to_device(DEV));
    let opt = AdamW::new(3e-4).weight_decay(0.01);
    let n = GPT_BATCH * GPT.context;
    let ids = |k: Key| {
        let u = k.uniform(&[n], DType::F64).to_vec::<f64>();
        let v: Vec<i64> = u.iter().map(|x| (x * GPT.vocab as f64) as i64).collect();
        Array::from_vec(v, &[GPT_BATCH, GPT.context]).to_device(DEV)
    };
    let [ki, kt] = Key::new(1).split2();
    (model, opt, ids(ki), ids(kt))
}

fn gpt(c: &mut Criterion) {
    let (mut model, opt, idx, targets) = gpt_setup();
    let mut g = c.benchmark_group("gpu_gpt_step");
    g.sampling_mode(criterion::SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    let mut tape = model.clone();
    tape.for_each_leaf_mut(&mut |p| *p = p.clone().requires_grad());
    let mut state = opt.init(&tape);
    g.bench_function("tape", |b| {
        b.iter(|| {
            let loss = tape.loss(&idx, &targets);
            loss.backward();
            opt.step(&mut tape, &mut state);
            tape.for_each_leaf(&mut |p| p.zero_grad());
            black_box(loss.item())
        })
    });
    let mut state = opt.init(&model);
    g.bench_function("fn", |b| {
        b.iter(|| {
            let (loss, grads): (Array, Gpt) = value_and_grad(gpt_loss)(&model, &idx, &targets);
            opt.update(&mut model, &grads, &mut state);
            black_box(loss.item())
        })
    });
    g.finish();
}

/// With `NABLA_GPU_PROFILE=1`: the GPU time of three functional GPT steps
/// by kernel (after two warm-up steps), instead of the benchmarks.
fn gpt_profile() -> bool {
    if std::env::var("NABLA_GPU_PROFILE").as_deref() != Ok("1") {
        return false;
    }
    let (mut model, opt, idx, targets) = gpt_setup();
    let mut state = opt.init(&model);
    for step in 0..5 {
        if step == 2 {
            sync();
            nabla::cuda::profile_report(0);
        }
        let (loss, grads): (Array, Gpt) = value_and_grad(gpt_loss)(&model, &idx, &targets);
        opt.update(&mut model, &grads, &mut state);
        black_box(loss.item());
    }
    sync();
    println!("GPU time by kernel, 3 GPT steps (fn):");
    println!("{}", nabla::cuda::profile_report(0).unwrap_or_default());
    true
}

/// Pieces of the GPT step timed alone (each ends with a synchronisation),
/// to see which part of the step costs what against PyTorch's same pieces.
fn gpt_parts(c: &mut Criterion) {
    let mut g = c.benchmark_group("gpu_parts");
    g.sampling_mode(criterion::SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    let k = Key::new(5);
    let rows = GPT_BATCH * GPT.context;
    let wide = k.normal(&[rows, 4 * GPT.embd], DType::F32).to_device(DEV);
    g.bench_function("sum0_8192x2048", |b| {
        b.iter(|| {
            let y = wide.sum_axes(&[0], false);
            sync();
            black_box(y)
        })
    });
    let heads = GPT.embd / GPT.heads;
    let scores = k
        .normal(
            &[GPT_BATCH, GPT.heads, GPT.context, GPT.context],
            DType::F32,
        )
        .to_device(DEV);
    g.bench_function("softmax_32x8x256x256", |b| {
        b.iter(|| {
            let y = scores.softmax(-1);
            sync();
            black_box(y)
        })
    });
    let x = k
        .normal(&[GPT_BATCH, GPT.context, GPT.embd], DType::F32)
        .to_device(DEV);
    let mut ln = nabla::nn::LayerNorm::new(GPT.embd);
    ln.for_each_leaf_mut(&mut |p| *p = p.to_device(DEV));
    g.bench_function("layernorm_32x256x512", |b| {
        b.iter(|| {
            let y = ln.forward(&x);
            sync();
            black_box(y)
        })
    });
    let mut lin = nabla::nn::Linear::new(GPT.embd, 3 * GPT.embd, true, Key::new(6));
    lin.for_each_leaf_mut(&mut |p| *p = p.to_device(DEV));
    g.bench_function("linear_8192x512_to_1536", |b| {
        b.iter(|| {
            let y = lin.forward(&x);
            sync();
            black_box(y)
        })
    });
    let q = k
        .normal(&[GPT_BATCH, GPT.heads, GPT.context, heads], DType::F32)
        .to_device(DEV);
    g.bench_function("attn_scores_32x8x256x64", |b| {
        b.iter(|| {
            let y = q.matmul(&q.permute(&[0, 1, 3, 2]));
            sync();
            black_box(y)
        })
    });
    let mut model = Gpt::new(&GPT, Key::new(0));
    model.for_each_leaf_mut(&mut |p| *p = p.to_device(DEV).requires_grad());
    let n = rows;
    let ids = |k: Key| {
        let u = k.uniform(&[n], DType::F64).to_vec::<f64>();
        let v: Vec<i64> = u.iter().map(|x| (x * GPT.vocab as f64) as i64).collect();
        Array::from_vec(v, &[GPT_BATCH, GPT.context]).to_device(DEV)
    };
    let [ki, kt] = Key::new(1).split2();
    let (idx, targets) = (ids(ki), ids(kt));
    g.bench_function("gpt_forward", |b| {
        b.iter(|| black_box(model.loss(&idx, &targets).item()))
    });
    g.bench_function("gpt_forward_backward", |b| {
        b.iter(|| {
            let l = model.loss(&idx, &targets);
            l.backward();
            model.for_each_leaf(&mut |p| p.zero_grad());
            black_box(l.item())
        })
    });
    model.loss(&idx, &targets).backward();
    let opt = AdamW::new(3e-4).weight_decay(0.01);
    let mut state = opt.init(&model);
    g.bench_function("adamw_step", |b| {
        b.iter(|| {
            opt.step(&mut model, &mut state);
            sync();
        })
    });
    g.finish();
}

fn main() {
    if let Some(why) = nabla::cuda::unavailable_reason() {
        println!("gpu bench skipped: {why}");
        return;
    }
    if gpt_profile() {
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    mlp_step(&mut c, 256);
    mlp_step(&mut c, 4096);
    mlp_step_fn(&mut c);
    gemm(&mut c);
    eltwise(&mut c);
    chain(&mut c);
    gpt(&mut c);
    gpt_parts(&mut c);
    c.final_summary();
}
