//! Reproducibility: seeded draws do not depend on other threads, and
//! parallel kernels give the same bits run to run and whatever the number
//! of threads. Its own test binary: it builds thread pools of its own and
//! flips `nabla::set_deterministic`, a process-wide switch.

use nabla::prelude::*;
use nabla::random::Key;
use std::sync::Mutex;

/// Thread counts the kernels are run with (the machine may have fewer
/// cores: the pool still splits the work this many ways).
const THREADS: [usize; 4] = [1, 2, 3, 8];

/// `f`'s result in a rayon pool of `threads` threads.
fn in_pool<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool")
        .install(f)
}

/// The bits of every array `f` returns.
fn bits(arrays: &[Array]) -> Vec<Vec<u64>> {
    arrays
        .iter()
        .map(|a| {
            a.cast(DType::F64)
                .to_vec::<f64>()
                .iter()
                .map(|v| v.to_bits())
                .collect()
        })
        .collect()
}

/// Tests that flip `set_deterministic` run one at a time.
static SWITCH: Mutex<()> = Mutex::new(());

/// How many elements of each result differ between `got` and `want`.
fn differences(got: &[Vec<u64>], want: &[Vec<u64>]) -> Vec<usize> {
    got.iter()
        .zip(want)
        .map(|(g, e)| g.iter().zip(e).filter(|(a, b)| a != b).count())
        .collect()
}

/// Runs `f` twice for each thread count and checks every run gives the
/// same bits as the first, with `set_deterministic(deterministic)`.
fn same_bits_everywhere(name: &str, deterministic: bool, f: impl Fn() -> Vec<Array> + Sync) {
    let _one = SWITCH.lock().unwrap_or_else(|e| e.into_inner());
    nabla::set_deterministic(deterministic);
    let first = bits(&in_pool(THREADS[0], &f));
    for &t in &THREADS {
        for run in 0..2 {
            let differ = differences(&bits(&in_pool(t, &f)), &first);
            assert!(
                differ.iter().all(|&d| d == 0),
                "{name}: elements differing per result with {t} threads (run {run}) from 1 thread: {differ:?}"
            );
        }
    }
    nabla::set_deterministic(false);
}

/// Runs `f` three times in a pool of `threads` threads and checks the runs
/// agree.
fn same_bits_run_to_run(name: &str, threads: usize, f: impl Fn() -> Vec<Array> + Sync) {
    let _one = SWITCH.lock().unwrap_or_else(|e| e.into_inner());
    nabla::set_deterministic(false);
    let first = bits(&in_pool(threads, &f));
    for run in 1..3 {
        let differ = differences(&bits(&in_pool(threads, &f)), &first);
        assert!(
            differ.iter().all(|&d| d == 0),
            "{name}: run {run} with {threads} threads differs from run 0: {differ:?}"
        );
    }
}

fn normal(key: u64, shape: &[usize], dtype: DType) -> Array {
    Key::new(key).normal(shape, dtype)
}

#[differentiable]
fn mlp_loss(w1: &Array, w2: &Array, x: &Array, y: &Array) -> Array {
    let h = x.matmul(w1).tanh();
    nabla::mean(&(h.matmul(w2) - y).powi(2))
}

#[differentiable]
fn fused_sum(x: &Array) -> Array {
    nabla::sum(&(x.sin() * x + 1.0).powi(2))
}

#[test]
fn reductions_are_bitwise_reproducible() {
    let x = normal(1, &[1 << 20], DType::F32);
    let m = normal(2, &[600, 700], DType::F32);
    let wide = normal(3, &[40, 50_000], DType::F64);
    same_bits_everywhere("reductions", false, || {
        vec![
            x.sum(),
            x.mean(),
            m.sum_axes(&[0], false),
            m.sum_axes(&[1], false),
            wide.sum_axes(&[0], false),
            m.max_axes(&[0], false),
            m.cumsum(0),
            m.softmax(-1),
            nabla::logsumexp(&m),
            fused_sum(&x),
            nabla::grad(fused_sum)(&x),
        ]
    });
}

#[test]
fn products_are_bitwise_reproducible() {
    let a = normal(4, &[300, 513], DType::F32);
    let b = normal(5, &[513, 257], DType::F32);
    let bt = normal(6, &[257, 513], DType::F32);
    let batch = normal(7, &[64, 20, 30], DType::F64);
    let batch_b = normal(8, &[64, 30, 10], DType::F64);
    let big_a = normal(9, &[64, 2048], DType::F32);
    let big_b = normal(10, &[2048, 64], DType::F32);
    same_bits_everywhere("products", false, || {
        vec![
            a.matmul(&b),
            a.matmul(&bt.transpose()),
            batch.matmul(&batch_b),
            big_a.matmul(&big_b),
            a.matmul(&a.transpose()),
        ]
    });
}

/// Factorisations of matrices large enough for `faer` to split them
/// between threads.
fn factorisations() -> Vec<Array> {
    let a = normal(17, &[300, 300], DType::F64);
    let spd = a.matmul(&a.transpose()) + Array::eye(300, DType::F64) * 300.0;
    let b = normal(18, &[300, 40], DType::F64);
    {
        let (q, r) = nabla::linalg::qr(&a);
        let (w, v) = nabla::linalg::eigh(&spd);
        vec![
            nabla::linalg::solve(&a, &b),
            nabla::linalg::inv(&a),
            nabla::linalg::cholesky(&spd),
            nabla::linalg::det(&spd),
            q,
            r,
            w,
            v,
        ]
    }
}

#[test]
fn linear_algebra_is_bitwise_reproducible_run_to_run() {
    same_bits_run_to_run("linalg", 3, factorisations);
}

#[test]
fn deterministic_linear_algebra_is_the_same_whatever_the_thread_count() {
    same_bits_everywhere("linalg", true, factorisations);
}

#[test]
fn without_the_switch_a_qr_follows_the_thread_count() {
    // What the switch is for: if this starts passing bitwise, `faer` no
    // longer blocks by thread count and the switch's docs should say so.
    let _one = SWITCH.lock().unwrap_or_else(|e| e.into_inner());
    nabla::set_deterministic(false);
    let one = bits(&in_pool(1, factorisations));
    let two = bits(&in_pool(2, factorisations));
    assert_ne!(differences(&one, &two)[4], 0);
}

#[test]
fn gradients_are_bitwise_reproducible() {
    let w1 = normal(11, &[256, 512], DType::F32);
    let w2 = normal(12, &[512, 64], DType::F32);
    let x = normal(13, &[128, 256], DType::F32);
    let y = normal(14, &[128, 64], DType::F32);
    let conv_x = normal(15, &[4, 3, 32, 32], DType::F32);
    let conv_w = normal(16, &[8, 3, 3, 3], DType::F32);
    same_bits_everywhere("gradients", false, || {
        let (g1, g2) = nabla::grad!(mlp_loss, argnums = (0, 1))(&w1, &w2, &x, &y);
        let a = w1.clone().requires_grad();
        let b = w2.clone().requires_grad();
        let h = x.matmul(&a).tanh();
        (h.matmul(&b) - &y).powi(2).mean().backward();
        let cw = conv_w.clone().requires_grad();
        nabla::conv(&conv_x, &cw, &[1, 1], &[1, 1], &[1, 1], 1)
            .sin()
            .sum()
            .backward();
        vec![g1, g2, a.grad(), b.grad(), cw.grad()]
    });
}

#[test]
fn a_seeded_thread_draws_the_same_whatever_other_threads_draw() {
    let draws = |noise: bool| {
        std::thread::scope(|s| {
            let others: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(move || {
                        for _ in 0..50 {
                            if noise {
                                drop(nabla::randn(&[7], DType::F32));
                            }
                        }
                    })
                })
                .collect();
            nabla::manual_seed(42);
            let mine: Vec<Vec<f32>> = (0..50)
                .map(|_| nabla::randn(&[3], DType::F32).to_vec())
                .collect();
            for o in others {
                o.join().unwrap();
            }
            mine
        })
    };
    assert_eq!(draws(false), draws(true));
    // Draws inside a pool of any size are the same too.
    let in_pools: Vec<Vec<f32>> = THREADS
        .iter()
        .map(|&t| {
            in_pool(t, || {
                nabla::manual_seed(3);
                nabla::rand(&[1000], DType::F32).to_vec()
            })
        })
        .collect();
    assert!(in_pools.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn seeding_one_thread_leaves_another_threads_stream_alone() {
    nabla::manual_seed(5);
    let a = nabla::randn(&[4], DType::F64).to_vec::<f64>();
    nabla::manual_seed(5);
    std::thread::spawn(|| nabla::manual_seed(99))
        .join()
        .unwrap();
    assert_eq!(nabla::randn(&[4], DType::F64).to_vec::<f64>(), a);
}
