//! The fused passes' copies for each instruction set (baseline x86-64,
//! AVX2 + FMA, AVX-512; `nabla::fused::limit_simd`) on the same inputs:
//! values and gradients bit for bit, with tails of every length up to
//! two blocks and more, and NaN, ±inf, subnormals and ±0 among the
//! inputs. The passes contract nothing into FMAs, so the copies round
//! alike. (Tests running meanwhile may move the cap; every copy must give
//! these bits, so that only weakens a run, never fails it.)

use super::{dag, rosen, wide};
use nabla::prelude::*;

/// `n` values of `dtype`: specials every third element among values in
/// `[-2, 2]`.
fn awkward(n: usize, dtype: DType, seed: u64) -> Array {
    let specials = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        f64::from(f32::from_bits(1)),
        f64::from_bits(1),
        1e-300,
    ];
    nabla::manual_seed(seed);
    let r = nabla::rand(&[n], DType::F64).to_vec::<f64>();
    let v: Vec<f64> = r
        .iter()
        .enumerate()
        .map(|(i, &u)| {
            if i % 3 == 1 {
                specials[i / 3 % specials.len()]
            } else {
                4.0 * u - 2.0
            }
        })
        .collect();
    Array::from_vec(v, &[n]).cast(dtype)
}

fn bits(a: &Array) -> Vec<u64> {
    a.cast(DType::F64)
        .to_vec::<f64>()
        .iter()
        .map(|v| v.to_bits())
        .collect()
}

#[test]
fn every_instruction_set_gives_the_same_bits() {
    let wide_cpu = std::arch::is_x86_feature_detected!("avx512f");
    if !wide_cpu {
        eprintln!("note: this CPU lacks AVX-512; level 2 runs the AVX2 copies");
    }
    for dtype in [DType::F32, DType::F64] {
        for n in (2..=40).chain([4099]) {
            let (x, w) = (awkward(n, dtype, n as u64), awkward(n, dtype, 7 + n as u64));
            let (xw, s) = (x.reshape(&[1, n]), Array::scalar(-0.3f64).cast(dtype));
            let run = |level: u8| {
                nabla::fused::limit_simd(level);
                let (dx, dw) = grad!(dag, argnums = (0, 1))(&x, &w);
                let (wx, wb, ws) = grad!(wide, argnums = (0, 1, 2))(&xw, &w, &s);
                [
                    rosen(&x),
                    grad(rosen)(&x),
                    dag(&x, &w),
                    dx,
                    dw,
                    wide(&xw, &w, &s),
                    wx,
                    wb,
                    ws,
                ]
                .map(|a| bits(&a))
            };
            let base = run(0);
            for level in [1, 2] {
                let got = run(level);
                for (k, (g, b)) in got.iter().zip(&base).enumerate() {
                    assert_eq!(g, b, "output {k} at level {level}, n {n}, {dtype:?}");
                }
            }
            nabla::fused::limit_simd(u8::MAX);
        }
    }
}
