//! Times the standard library's `f64` functions against
//! `nabla_kernels::fastmath`'s `f64` versions on 4M-element slices, one
//! thread, each loop compiled for AVX2 + FMA and for AVX-512 (F, VL, DQ)
//! as the kernels' loops are, and the fastmath loops also for baseline
//! x86-64 (SSE2):
//!
//! ```text
//! cargo run --release -p nabla-kernels --example fastmath_speed_f64
//! ```
//!
//! Prints the median of 15 runs per loop in ns per element and the
//! speed-up of the widest fastmath loop over std's, then the op-by-op
//! `f64` kernels of the ops whose element formulas use these functions:
//! `ops::unary_into` on one thread into a reused buffer (the kernel's own
//! loop), and `elementwise::unary` (a fresh array, split between all
//! threads, so first-touch page faults and thread start-up count too). Each loop is its own
//! `#[inline(never)]` function (`fastmath_speed_f64::<name>::{std_avx2_inner,
//! fast_avx2_inner, fast_avx512_inner, fast_sse2}`), so its code can be
//! read with `objdump -d -C --no-show-raw-insn` on the binary: a
//! vectorised loop works on `ymm` (AVX2) or `zmm` (AVX-512) registers
//! with no call in its body.

use nabla_kernels::elementwise::{UnaryOp, unary};
use nabla_kernels::fastmath;
use nabla_kernels::ops::unary_into;
use std::mem::MaybeUninit;
use std::time::Instant;

const N: usize = 1 << 22;
const RUNS: usize = 15;

/// One loop over `d, s`, compiled with `$features`.
macro_rules! simd_loop {
    ($inner:ident, $outer:ident, $features:literal, $check:ident, $f:expr) => {
        /// # Safety
        /// The CPU must have the features named.
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = $features)]
        #[inline(never)]
        unsafe fn $inner(d: &mut [f64], s: &[f64]) {
            for (d, &x) in d.iter_mut().zip(s) {
                *d = $f(x);
            }
        }
        pub fn $outer(d: &mut [f64], s: &[f64]) {
            assert!($check());
            // SAFETY: the features were checked just above.
            unsafe { $inner(d, s) }
        }
    };
}

macro_rules! loops {
    ($($name:ident: $std:expr, $fast:expr;)*) => {
        $(
            mod $name {
                use super::*;
                simd_loop!(std_avx2_inner, std_avx2, "avx2,fma", avx2, $std);
                simd_loop!(fast_avx2_inner, fast_avx2, "avx2,fma", avx2, $fast);
                simd_loop!(fast_avx512_inner, fast_avx512, "avx512f,avx512vl,avx512dq,avx2,fma", avx512, $fast);
                #[inline(never)]
                pub fn fast_sse2(d: &mut [f64], s: &[f64]) {
                    for (d, &x) in d.iter_mut().zip(s) {
                        *d = $fast(x);
                    }
                }
            }
        )*
        /// `(name, [std avx2, fast sse2, fast avx2, fast avx512])` per function.
        fn all() -> Vec<(&'static str, [fn(&mut [f64], &[f64]); 4])> {
            vec![$((stringify!($name), [$name::std_avx2, $name::fast_sse2, $name::fast_avx2, $name::fast_avx512])),*]
        }
    };
}

fn avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

fn avx512() -> bool {
    avx2()
        && std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512vl")
        && std::arch::is_x86_feature_detected!("avx512dq")
}

fn sigmoid_std(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

loops! {
    exp: f64::exp, fastmath::exp_f64;
    exp_m1: f64::exp_m1, fastmath::exp_m1_f64;
    tanh: f64::tanh, fastmath::tanh_f64;
    sigmoid: sigmoid_std, fastmath::sigmoid_f64;
    ln: f64::ln, fastmath::ln_f64;
    ln_1p: f64::ln_1p, fastmath::ln_1p_f64;
    sin: f64::sin, fastmath::sin_f64;
    cos: f64::cos, fastmath::cos_f64;
}

/// Median time of `RUNS` runs of `f`, in ns per element.
fn time(mut f: impl FnMut()) -> f64 {
    let mut t: Vec<f64> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e9 / N as f64
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[RUNS / 2]
}

fn main() {
    if !avx512() {
        eprintln!("this machine has no AVX-512 (F, VL, DQ) + AVX2 + FMA");
        return;
    }
    // Inputs in each function's usual range: exp, exp_m1, tanh, sigmoid,
    // sin, cos on [-10, 10], ln on (0, 100], ln_1p on (0, 1].
    let unit: Vec<f64> = (0..N)
        .map(|i| ((i as u64 * 2_654_435_761) % N as u64) as f64 / N as f64)
        .collect();
    let mut d = vec![0.0f64; N];
    println!("{N} f64, median of {RUNS} runs, one thread (ns per element)");
    println!(
        "| function | std (AVX2 loop) | fastmath SSE2 | fastmath AVX2 | fastmath AVX-512 | speed-up |"
    );
    println!("|---|---|---|---|---|---|");
    for (name, [std, sse2, fast2, fast512]) in all() {
        let s: Vec<f64> = match name {
            "ln" => unit.iter().map(|u| 100.0 * u + 1e-3).collect(),
            "ln_1p" => unit.iter().map(|u| u + 1e-7).collect(),
            _ => unit.iter().map(|u| 20.0 * u - 10.0).collect(),
        };
        let mut t = [0.0; 4];
        for (t, f) in t.iter_mut().zip([std, sse2, fast2, fast512]) {
            *t = time(|| {
                f(&mut d, std::hint::black_box(&s));
                std::hint::black_box(&d);
            });
        }
        println!(
            "| {name} | {:.2} | {:.2} | {:.2} | {:.2} | {:.1}x |",
            t[0],
            t[1],
            t[2],
            t[3],
            t[0] / t[2].min(t[3])
        );
    }
    let x = ndarray::Array1::from_iter(unit.iter().map(|u| 20.0 * u - 10.0)).into_dyn();
    let xp = x.mapv(f64::abs);
    println!("\nop-by-op kernels, {N} f64 (ns per element)");
    println!("| op | unary_into, one thread | unary, all threads |");
    println!("|---|---|---|");
    let mut out = vec![MaybeUninit::<f64>::uninit(); N];
    let ops = [
        ("exp", UnaryOp::Exp(), &x),
        ("expm1", UnaryOp::ExpM1(), &x),
        ("tanh", UnaryOp::Tanh(), &x),
        ("sigmoid", UnaryOp::Sigmoid(), &x),
        ("log", UnaryOp::Ln(), &xp),
        ("log1p", UnaryOp::Ln1p(), &xp),
        ("sin", UnaryOp::Sin(), &x),
        ("cos", UnaryOp::Cos(), &x),
    ];
    for (name, op, x) in ops {
        let slice = x.as_slice().expect("contiguous");
        let into = time(|| {
            unary_into(std::hint::black_box(slice), &mut out, op);
            std::hint::black_box(&out);
        });
        let fresh = time(|| {
            std::hint::black_box(unary(std::hint::black_box(x.view()), op));
        });
        println!("| {name} | {into:.2} | {fresh:.2} |");
    }
}
