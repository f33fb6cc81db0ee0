//! Criterion benchmarks of the runtime foundation: the `gemm`, `eltwise`
//! and `mlp_step` workloads of `BENCHMARKS.md`.
//!
//! Run: `cargo bench --bench runtime` (add a filter such as `gemm` to run
//! one group). For the side-by-side ratios against PyTorch use
//! `benches/compare/run.sh`; see `docs/performance.md`.

mod common;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use std::time::Duration;

fn gemm(c: &mut Criterion) {
    let (a, b) = common::gemm_inputs();
    let n = common::GEMM_N as u64;
    let mut g = c.benchmark_group("gemm");
    g.sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    // Throughput in flops (2 n³), so criterion prints Gelem/s ≈ GFLOP/s.
    g.throughput(Throughput::Elements(2 * n * n * n));
    g.bench_function("f32_1024", |bch| {
        bch.iter(|| black_box(black_box(&a).matmul(black_box(&b))))
    });
    g.finish();
}

fn eltwise(c: &mut Criterion) {
    let (a, b) = common::eltwise_inputs();
    let mut g = c.benchmark_group("eltwise");
    g.sample_size(30)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2));
    g.throughput(Throughput::Elements(common::ELTWISE_N as u64));
    g.bench_function("add_f32_1m", |bch| {
        bch.iter(|| black_box(black_box(&a) + black_box(&b)))
    });
    g.bench_function("tanh_f32_1m", |bch| {
        bch.iter(|| black_box(black_box(&a).tanh()))
    });
    g.finish();
}

fn mlp_step(c: &mut Criterion) {
    let mut mlp = common::Mlp::new();
    let mut g = c.benchmark_group("mlp_step");
    g.sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    g.bench_function("imperative_784_512_512_10_b256", |bch| {
        bch.iter(|| black_box(mlp.step()))
    });
    g.finish();
}

criterion_group!(benches, gemm, eltwise, mlp_step);
criterion_main!(benches);
