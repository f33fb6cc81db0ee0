//! Every instruction set's copy of the vector loops against the baseline
//! copy on the same inputs: tails of every length up to well past the
//! widest unrolled vector loop, outputs at several alignments, and NaN,
//! ±inf, subnormals and ±0 among ordinary values. The elementwise loops
//! and the optimizer updates are one source compiled several times with no
//! FMA contraction, so they must agree bit for bit; the dot products
//! (`dots`) use FMA and other lane sums in their vector copies, so they
//! agree within the dot product's rounding bound. Copies the CPU cannot
//! run are skipped with a note ([`Isa::each`]).

use crate::Float;
use crate::elementwise::{Isa, fill2_best_on, update1_best_on, update2_best_on};
use crate::ops::{EVERY_BINARY_OP, binary_into_on, every_unary_op, unary_into_on};
use std::mem::MaybeUninit;

/// The element types under test, with their bits.
trait Elem: Float {
    fn bits(self) -> u64;
    /// Awkward values: NaN, ±inf, ±0, subnormals, the extremes.
    fn specials() -> Vec<Self>;
}

impl Elem for f32 {
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
    fn specials() -> Vec<f32> {
        vec![
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.0,
            -0.0,
            f32::from_bits(1),
            -f32::from_bits(1),
            f32::from_bits(0x007f_ffff),
            f32::MIN_POSITIVE,
            f32::MAX,
            f32::MIN,
            f32::EPSILON,
        ]
    }
}

impl Elem for f64 {
    fn bits(self) -> u64 {
        self.to_bits()
    }
    fn specials() -> Vec<f64> {
        vec![
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.0,
            -0.0,
            f64::from_bits(1),
            -f64::from_bits(1),
            f64::from_bits(0x000f_ffff_ffff_ffff),
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::MIN,
            f64::EPSILON,
        ]
    }
}

/// The longest tail tested: every length `0..=TAILS` runs (the widest
/// loop is 16 `f32` lanes, unrolled up to four times).
const TAILS: usize = 70;

/// Lengths at which the loops split off an unaligned head, run at
/// several output alignments.
const LONG: [usize; 2] = [100, 263];

/// `n` inputs: the special values spread among ordinary ones from a
/// fixed linear congruential sequence in `[-scale, scale]`, shifted by
/// `seed` so that two operands do not pair specials with themselves.
fn inputs<T: Elem>(n: usize, seed: u64, scale: f64) -> Vec<T> {
    let specials = T::specials();
    let mut s = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|i| {
            s = s
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            if (i as u64 + seed).is_multiple_of(3) {
                specials[(i / 3 + seed as usize) % specials.len()]
            } else {
                T::from_f64(((s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) * scale)
            }
        })
        .collect()
}

/// The lengths and output offsets every loop runs with.
fn cases() -> impl Iterator<Item = (usize, usize)> {
    (0..=TAILS)
        .map(|n| (n, 0))
        .chain(LONG.iter().flat_map(|&n| [0, 1, 3, 5].map(|o| (n, o))))
}

/// `fill(out)` into a buffer at offset `off`, as a vector.
fn filled<T: Copy>(n: usize, off: usize, fill: impl FnOnce(&mut [MaybeUninit<T>])) -> Vec<T> {
    let mut buf: Vec<MaybeUninit<T>> = vec![MaybeUninit::uninit(); n + off];
    fill(&mut buf[off..]);
    buf[off..]
        .iter()
        // SAFETY: the loop under test wrote every one of the `n` slots
        // (each `fill` here writes its whole output).
        .map(|v| unsafe { v.assume_init() })
        .collect()
}

#[track_caller]
fn same_bits<T: Elem>(got: &[T], want: &[T], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(
            g.bits() == w.bits(),
            "{what}: element {i} is {g:?} ({:#x}), the baseline gives {w:?} ({:#x})",
            g.bits(),
            w.bits()
        );
    }
}

fn unary_ops_agree<T: Elem>() {
    let isas = Isa::each();
    for op in every_unary_op() {
        for (n, off) in cases() {
            let x: Vec<T> = inputs(n, 1, 4.0);
            let base = filled(n, off, |o| unary_into_on(Isa::BASELINE, &x, o, op));
            for &isa in &isas[1..] {
                let got = filled(n, off, |o| unary_into_on(isa, &x, o, op));
                same_bits(&got, &base, &format!("{op:?} {isa:?} n {n} offset {off}"));
            }
        }
    }
}

#[test]
fn every_unary_op_gives_the_baseline_bits_on_every_instruction_set() {
    unary_ops_agree::<f32>();
    unary_ops_agree::<f64>();
}

fn binary_ops_agree<T: Elem>() {
    let isas = Isa::each();
    for &op in EVERY_BINARY_OP {
        for (n, off) in cases() {
            let (a, b): (Vec<T>, Vec<T>) = (inputs(n, 1, 4.0), inputs(n, 2, 4.0));
            let base = filled(n, off, |o| binary_into_on(Isa::BASELINE, &a, &b, o, op));
            for &isa in &isas[1..] {
                let got = filled(n, off, |o| binary_into_on(isa, &a, &b, o, op));
                same_bits(&got, &base, &format!("{op:?} {isa:?} n {n} offset {off}"));
            }
        }
    }
}

#[test]
fn every_binary_op_gives_the_baseline_bits_on_every_instruction_set() {
    binary_ops_agree::<f32>();
    binary_ops_agree::<f64>();
}

fn updates_agree<T: Elem>() {
    let isas = Isa::each();
    let c = T::from_f64(-1.75);
    for (n, off) in cases() {
        let (x, a, b): (Vec<T>, Vec<T>, Vec<T>) = (
            inputs(n + off, 3, 8.0),
            inputs(n, 4, 8.0),
            inputs(n, 5, 8.0),
        );
        let run = |isa: Isa| {
            let (mut x1, mut x2) = (x.clone(), x.clone());
            // The closures of `add_into` and `add_mul_scaled_into`.
            update1_best_on(isa, &mut x1[off..], &a, &|x, a| x + a);
            update2_best_on(isa, &mut x2[off..], &a, &b, &|x, a, b| x + a * b * c);
            (x1, x2)
        };
        let (b1, b2) = run(Isa::BASELINE);
        for &isa in &isas[1..] {
            let (g1, g2) = run(isa);
            same_bits(&g1, &b1, &format!("update1 {isa:?} n {n} offset {off}"));
            same_bits(&g2, &b2, &format!("update2 {isa:?} n {n} offset {off}"));
        }
        // `fill2` under a closure that is no registry op (`mul_scaled`'s).
        let base = filled(n, off, |o| {
            fill2_best_on(Isa::BASELINE, o, &a, &b, &|a, b| a * b * c)
        });
        for &isa in &isas[1..] {
            let got = filled(n, off, |o| fill2_best_on(isa, o, &a, &b, &|a, b| a * b * c));
            same_bits(
                &got,
                &base,
                &format!("mul_scaled {isa:?} n {n} offset {off}"),
            );
        }
    }
}

#[test]
fn in_place_updates_give_the_baseline_bits_on_every_instruction_set() {
    updates_agree::<f32>();
    updates_agree::<f64>();
}

fn optimizers_agree<T: Elem>() {
    use crate::optim::{AdamStep, SgdStep, adam_on, sgd_on};
    let isas = Isa::each();
    let f = T::from_f64;
    let sgd_steps = [
        SgdStep {
            lr: f(0.1),
            momentum: f(0.0),
            dampening: f(0.0),
            weight_decay: f(0.0),
            nesterov: false,
            first: true,
        },
        SgdStep {
            lr: f(0.05),
            momentum: f(0.9),
            dampening: f(0.1),
            weight_decay: f(1e-2),
            nesterov: true,
            first: false,
        },
    ];
    let adam = AdamStep {
        decay: f(0.999),
        l2: f(1e-3),
        one_minus_beta1: f(0.1),
        beta2: f(0.999),
        one_minus_beta2: f(0.001),
        step_size: f(0.01),
        bias_correction2_sqrt: f(0.3),
        eps: f(1e-8),
    };
    for (n, _) in cases() {
        let (p, g, b): (Vec<T>, Vec<T>, Vec<T>) =
            (inputs(n, 6, 2.0), inputs(n, 7, 2.0), inputs(n, 8, 2.0));
        let v: Vec<T> = b.iter().map(|&x| x * x).collect();
        let run = |isa: Isa| {
            let mut out = Vec::new();
            for s in &sgd_steps {
                let (mut p1, mut b1) = (p.clone(), b.clone());
                let buf = (s.momentum != T::ZERO).then_some(&mut b1[..]);
                sgd_on(isa, &mut p1, &g, buf, s);
                out.push(p1);
                out.push(b1);
            }
            let (mut p2, mut m2, mut v2) = (p.clone(), b.clone(), v.clone());
            adam_on(isa, &mut p2, &g, &mut m2, &mut v2, &adam);
            out.extend([p2, m2, v2]);
            out
        };
        let base = run(Isa::BASELINE);
        for &isa in &isas[1..] {
            for (k, (got, want)) in run(isa).iter().zip(&base).enumerate() {
                same_bits(got, want, &format!("optimizer output {k} {isa:?} n {n}"));
            }
        }
    }
}

#[test]
fn optimizer_steps_give_the_baseline_bits_on_every_instruction_set() {
    optimizers_agree::<f32>();
    optimizers_agree::<f64>();
}

#[test]
fn outer_product_rows_give_the_baseline_bits_on_every_instruction_set() {
    let isas = Isa::each();
    // Rows of at least one element (`matmul` returns early for empty ones).
    for (n, off) in cases().filter(|&(n, _)| n > 0) {
        let row: Vec<f32> = inputs(n, 9, 3.0);
        let scales = ndarray::Array1::from(inputs::<f32>(5, 10, 3.0));
        let base = filled(5 * n, off, |o| {
            crate::matmul::scale_rows_on(Isa::BASELINE, o, scales.view(), &row)
        });
        for &isa in &isas[1..] {
            let got = filled(5 * n, off, |o| {
                crate::matmul::scale_rows_on(isa, o, scales.view(), &row)
            });
            same_bits(
                &got,
                &base,
                &format!("scale_rows {isa:?} n {n} offset {off}"),
            );
        }
    }
}

/// Whether `got` is `want` to the rounding of a `k`-term dot product
/// whose terms' magnitudes sum to `mag` (both NaN, or both the same
/// infinity, or within `2·k·ε·mag` plus the subnormal spacing).
fn dot_close<T: Elem>(got: T, want: T, k: usize, mag: f64, eps: f64, tiny: f64) -> bool {
    let (g, w) = (got.to_f64(), want.to_f64());
    if g.is_nan() || w.is_nan() {
        return g.is_nan() && w.is_nan();
    }
    if g.is_infinite() || w.is_infinite() {
        return g == w;
    }
    (g - w).abs() <= 2.0 * k as f64 * eps * mag + 2.0 * tiny
}

fn dots_agree<T: Elem>(eps: f64, tiny: f64) {
    let isas = Isa::each();
    for (m, n) in [(1, 1), (4, 4), (5, 7), (3, 9)] {
        for k in (0..=TAILS).chain([255, 256, 257]) {
            for specials in [false, true] {
                // Ordinary values only, then with NaN, ±inf, ±0 and
                // subnormals among them; never values near the overflow
                // threshold, whose sums overflow or not by their order.
                let pick = |len, seed| -> Vec<T> {
                    inputs::<T>(len, seed, 2.0)
                        .into_iter()
                        .map(|v| {
                            let x = v.to_f64();
                            let huge = x.is_finite() && x.abs() > 1e30;
                            let keep = !huge && (specials || x.is_finite());
                            if keep { v } else { T::from_f64(0.5) }
                        })
                        .collect()
                };
                let (a, b) = (pick(m * k, 11), pick(n * k, 12));
                let run = |isa: Isa| {
                    let mut o = vec![T::ZERO; m * n];
                    // SAFETY: `a` holds `m` rows of `k`, `b` `n` rows of
                    // `k`, `o` `m` rows of `n`; `isa` comes from `Isa::each`.
                    unsafe {
                        crate::dots::dots_on(
                            isa,
                            m,
                            n,
                            k,
                            a.as_ptr(),
                            k,
                            b.as_ptr(),
                            k,
                            o.as_mut_ptr(),
                            n,
                        )
                    };
                    o
                };
                let base = run(Isa::BASELINE);
                for &isa in &isas[1..] {
                    let got = run(isa);
                    for i in 0..m {
                        for j in 0..n {
                            let mag: f64 = (0..k)
                                .map(|p| (a[i * k + p].to_f64() * b[j * k + p].to_f64()).abs())
                                .sum();
                            let (g, w) = (got[i * n + j], base[i * n + j]);
                            assert!(
                                dot_close(g, w, k, mag, eps, tiny),
                                "dots {isa:?} ({m}, {n}, {k}) specials {specials} at ({i}, {j}): \
                                 {g:?} against the baseline's {w:?}"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn dot_products_agree_with_the_baseline_within_rounding_on_every_instruction_set() {
    dots_agree::<f32>(f32::EPSILON as f64, f32::from_bits(1) as f64);
    dots_agree::<f64>(f64::EPSILON, f64::from_bits(1));
}
