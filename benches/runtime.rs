//! Criterion benchmarks of the runtime foundation: the `gemm`, `eltwise`
//! and `mlp_step` workloads of `BENCHMARKS.md`, and `small_ops`, the fixed
//! cost of one op on the few-element arrays nested transforms produce (what
//! bounds the seed Hessian; `docs/performance.md`).
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

/// One op on arrays of 6 to 72 elements, the shapes inside the seed
/// Hessian: here the per-op fixed cost (allocation, shape and layout
/// bookkeeping), not arithmetic, is what is measured.
fn small_ops(c: &mut Criterion) {
    use nabla::{Array, DType};
    let x = Array::ones(&[2, 3], DType::F32);
    let basis = Array::ones(&[6, 2, 3], DType::F32);
    let (t, ct) = (
        Array::ones(&[6, 1, 2, 3], DType::F32),
        Array::ones(&[2, 2, 1], DType::F32),
    );
    let t4 = Array::ones(&[6, 2, 2, 3], DType::F32);
    let mut g = c.benchmark_group("small_ops");
    g.sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(1));
    g.bench_function("sin_2x3", |bch| bch.iter(|| black_box(black_box(&x).sin())));
    g.bench_function("mul_2x3", |bch| {
        bch.iter(|| black_box(black_box(&x) * black_box(&x)))
    });
    g.bench_function("mul_scaled_row_6x2x3", |bch| {
        bch.iter(|| black_box(black_box(&x).mul_scaled(black_box(&basis), -1.0)))
    });
    g.bench_function("mul_broadcast_6x2x2x3", |bch| {
        bch.iter(|| black_box(black_box(&t) * black_box(&ct)))
    });
    g.bench_function("reshape_view_2x3", |bch| {
        bch.iter(|| black_box(black_box(&x).reshape(&[3, 2])))
    });
    g.bench_function("permute_copy_to_5d", |bch| {
        bch.iter(|| {
            black_box(
                black_box(&t4)
                    .permute(&[1, 2, 3, 0])
                    .reshape(&[2, 2, 3, 2, 3]),
            )
        })
    });
    g.finish();
}

criterion_group!(benches, gemm, eltwise, mlp_step, small_ops);
criterion_main!(benches);
