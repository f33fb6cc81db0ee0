//! Exact building blocks of the `f64` functions: error-free sums and
//! products (double-double steps), powers of two from integer-valued
//! `f64`, and Horner's rule over a constant table.
//!
//! None uses a fused multiply-add: `f64::mul_add` is a library call on
//! baseline x86-64, which would stop loops from vectorising, and the same
//! arithmetic on every instruction set gives the same bits.

use super::ROUND;

/// Veltkamp's splitting constant, 2^27 + 1.
const SPLIT: f64 = 134_217_729.0;

/// `a + b = s + e` exactly, for any finite `a` and `b` (Knuth's TwoSum).
#[inline(always)]
pub(super) fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// `a + b = s + e` exactly when `a` is 0 or its exponent is at least
/// `b`'s (Dekker's Fast2Sum).
#[inline(always)]
pub(super) fn fast_two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    (s, b - (s - a))
}

/// `a = hi + lo` with `hi` holding the top 26 significant bits.
#[inline(always)]
fn split(a: f64) -> (f64, f64) {
    let c = SPLIT * a;
    let hi = c - (c - a);
    (hi, a - hi)
}

/// `a·b = p + e` exactly when nothing overflows or underflows (Dekker's
/// product).
#[inline(always)]
pub(super) fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    let (ah, al) = split(a);
    let (bh, bl) = split(b);
    (p, ((ah * bh - p) + ah * bl + al * bh) + al * bl)
}

/// `2^k` for an integer-valued `k` in `[−1022, 1023]`: the sum `k + 1023 +
/// ROUND` holds `k + 1023` in its low significand bits, which the shift
/// moves into the exponent field.
#[inline(always)]
pub(super) fn pow2(k: f64) -> f64 {
    f64::from_bits((k + (ROUND + 1023.0)).to_bits() << 52)
}

/// `c[0] + x·(c[1] + x·(…))`.
#[inline(always)]
pub(super) fn horner<const N: usize>(x: f64, c: &[f64; N]) -> f64 {
    let mut p = c[N - 1];
    for &k in c[..N - 1].iter().rev() {
        p = p * x + k;
    }
    p
}
