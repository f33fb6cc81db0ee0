//! GPU benchmarks (issue: CUDA backend), run on the lent GPU machine by
//! `scripts/gpu-check.sh`: the MLP train step (784-512-512-10, tanh, MSE,
//! SGD, f32) at batch 256 and 4096, f32 GEMM 8192³, and elementwise add /
//! tanh and a full sum on 64M f32 elements. Every iteration ends with a
//! device synchronisation, so times are GPU times. The PyTorch CUDA twin is
//! `benches/compare/torch_gpu_twin.py`; `benches/compare/gpu_summary.py`
//! prints the ratios and bandwidths.
//!
//! Run: `cargo bench --features cuda --bench gpu` (prints a skip line and
//! exits without a GPU).

use criterion::{Criterion, Throughput};
use nabla::prelude::*;
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

fn main() {
    if let Some(why) = nabla::cuda::unavailable_reason() {
        println!("gpu bench skipped: {why}");
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    mlp_step(&mut c, 256);
    mlp_step(&mut c, 4096);
    gemm(&mut c);
    eltwise(&mut c);
    c.final_summary();
}
