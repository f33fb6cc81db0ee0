//! Times the C library's `f32` functions against `nabla_kernels::fastmath`
//! on 4M-element slices, one thread, each loop compiled for AVX2 + FMA as
//! the kernels' loops are (and the fastmath loops also for baseline
//! x86-64, SSE2):
//!
//! ```text
//! cargo run --release -p nabla-kernels --example fastmath_speed
//! ```
//!
//! Prints the median of 15 runs per loop in ms and the speed-up over the
//! C library (the AVX2 loops over 4M elements, and again over 16K elements
//! at a time, which stay in cache, so memory bandwidth does not cap the
//! speed-up), then the op-by-op `f32` kernels (`elementwise::unary`, split
//! between all threads) of the ops whose element formulas use these
//! functions. Each loop is its own `#[inline(never)]` function
//! (`fastmath_speed::<name>::{libm_avx2_inner, fast_avx2_inner,
//! fast_sse2}`), so its code can be read with `objdump -d -C
//! --no-show-raw-insn` on the binary: a vectorised loop works on `ymm`
//! registers (AVX2) with no call in its body.

use nabla_kernels::elementwise::{UnaryOp, unary};
use nabla_kernels::fastmath;
use std::time::Instant;

const N: usize = 1 << 22;
const RUNS: usize = 15;
/// Elements per pass in the cache-resident timing.
const CACHED: usize = 1 << 14;

macro_rules! loops {
    ($($name:ident: $libm:expr, $fast:expr;)*) => {
        $(
            paste_loops!($name, $libm, $fast);
        )*
        /// `(name, libm avx2, fast avx2, fast sse2)` per function.
        #[allow(clippy::type_complexity)]
        fn all() -> Vec<(&'static str, fn(&mut [f32], &[f32]), fn(&mut [f32], &[f32]), fn(&mut [f32], &[f32]))> {
            vec![$((stringify!($name), $name::libm_avx2, $name::fast_avx2, $name::fast_sse2)),*]
        }
    };
}

macro_rules! paste_loops {
    ($name:ident, $libm:expr, $fast:expr) => {
        mod $name {
            use super::*;
            /// # Safety
            /// The CPU must have AVX2 and FMA.
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            #[inline(never)]
            unsafe fn libm_avx2_inner(d: &mut [f32], s: &[f32]) {
                for (d, &x) in d.iter_mut().zip(s) {
                    *d = $libm(x);
                }
            }
            /// # Safety
            /// The CPU must have AVX2 and FMA.
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            #[inline(never)]
            unsafe fn fast_avx2_inner(d: &mut [f32], s: &[f32]) {
                for (d, &x) in d.iter_mut().zip(s) {
                    *d = $fast(x);
                }
            }
            pub fn libm_avx2(d: &mut [f32], s: &[f32]) {
                assert!(avx2());
                // SAFETY: the features were checked just above.
                unsafe { libm_avx2_inner(d, s) }
            }
            pub fn fast_avx2(d: &mut [f32], s: &[f32]) {
                assert!(avx2());
                // SAFETY: the features were checked just above.
                unsafe { fast_avx2_inner(d, s) }
            }
            #[inline(never)]
            pub fn fast_sse2(d: &mut [f32], s: &[f32]) {
                for (d, &x) in d.iter_mut().zip(s) {
                    *d = $fast(x);
                }
            }
        }
    };
}

fn avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

loops! {
    sin: f32::sin, fastmath::sin_f32;
    cos: f32::cos, fastmath::cos_f32;
    ln: f32::ln, fastmath::ln_f32;
    ln_1p: f32::ln_1p, fastmath::ln_1p_f32;
    exp: f32::exp, fastmath::exp_f32;
    tanh: f32::tanh, fastmath::tanh_f32;
}

/// Median time of `RUNS` calls of `f` on 4M elements, in ms: one pass
/// over the whole slices, or (`cached`) 256 passes over the first 16K
/// elements, which stay in L1/L2 cache.
fn time(f: fn(&mut [f32], &[f32]), d: &mut [f32], s: &[f32], cached: bool) -> f64 {
    let mut t: Vec<f64> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            if cached {
                for _ in 0..N / CACHED {
                    f(&mut d[..CACHED], std::hint::black_box(&s[..CACHED]));
                }
            } else {
                f(d, std::hint::black_box(s));
            }
            std::hint::black_box(&d);
            start.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[RUNS / 2]
}

fn main() {
    if !avx2() {
        eprintln!("this machine has no AVX2 + FMA");
        return;
    }
    // Inputs in each function's usual range: sin/cos on [-10, 10], ln on
    // (0, 100], ln_1p on (0, 1] (softplus's range), exp/tanh on [-10, 10].
    let unit: Vec<f32> = (0..N)
        .map(|i| ((i as u64 * 2_654_435_761) % N as u64) as f32 / N as f32)
        .collect();
    let mut d = vec![0.0f32; N];
    println!(
        "{N} f32 (one pass over 16 MiB, or 256 passes over 16K in cache), median of {RUNS} runs, one thread (ms)"
    );
    println!(
        "| function | libm | fastmath AVX2 | fastmath SSE2 | speed-up | libm, cached | fastmath AVX2, cached | speed-up, cached |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (name, libm, fast, sse2) in all() {
        let s: Vec<f32> = match name {
            "ln" => unit.iter().map(|u| 100.0 * u + 1e-3).collect(),
            "ln_1p" => unit.iter().map(|u| u + 1e-7).collect(),
            _ => unit.iter().map(|u| 20.0 * u - 10.0).collect(),
        };
        let (tl, tf, ts) = (
            time(libm, &mut d, &s, false),
            time(fast, &mut d, &s, false),
            time(sse2, &mut d, &s, false),
        );
        let (cl, cf) = (time(libm, &mut d, &s, true), time(fast, &mut d, &s, true));
        println!(
            "| {name} | {tl:.2} | {tf:.2} | {ts:.2} | {:.1}x | {cl:.2} | {cf:.2} | {:.1}x |",
            tl / tf,
            cl / cf
        );
    }
    let x = ndarray::Array1::from_iter(unit.iter().map(|u| 20.0 * u - 10.0)).into_dyn();
    let xp = x.mapv(f32::abs);
    println!("\nop-by-op kernels, {N} f32, all threads (ms)");
    println!("| op | kernel |");
    println!("|---|---|");
    let ops = [
        ("sin", UnaryOp::Sin(), &x),
        ("cos", UnaryOp::Cos(), &x),
        ("log", UnaryOp::Ln(), &xp),
        ("log1p", UnaryOp::Ln1p(), &xp),
        ("log_sigmoid", UnaryOp::LogSigmoid(), &x),
    ];
    for (name, op, x) in ops {
        let mut t: Vec<f64> = (0..RUNS)
            .map(|_| {
                let start = Instant::now();
                std::hint::black_box(unary(std::hint::black_box(x.view()), op));
                start.elapsed().as_secs_f64() * 1e3
            })
            .collect();
        t.sort_by(f64::total_cmp);
        println!("| {name} | {:.2} |", t[RUNS / 2]);
    }
}
