//! `ln x` and `ln(1 + x)`.
//!
//! Both split an `f64` `u` into `2^k·(1 + f)` with `1 + f` in `[√½, √2)`
//! (with bit operations only), then `ln u = k·ln 2 + ln(1 + f)`, where
//! `ln(1 + f) = 2·atanh(s)` with `s = f / (2 + f)`, `|s| ≤ 0.172`, is an
//! odd polynomial in `s`. The `f32` argument converts to `f64` exactly
//! (subnormals become normal numbers), and the result rounds once.

/// Bits of √½ as an `f64`.
const SQRT_HALF_BITS: u64 = 0x3fe6_a09e_667f_3bcd;
/// Bits of 1.0 as an `f64`.
const ONE_BITS: u64 = 0x3ff0_0000_0000_0000;
/// The bits of 2^52 as an `f64`: or-ing a small integer `n` into them
/// gives `2^52 + n`.
const TWO_52_BITS: u64 = 0x4330_0000_0000_0000;

/// `(2·atanh s − 2s) / s³` on `|s| ≤ (√2 − 1)/(√2 + 1)`, in powers of
/// `s²` (a weighted least-squares fit with Lawson reweighting towards
/// minimax; relative error of `ln(1 + f)` below 4.8e-12).
const ATANH: [f64; 4] = [
    0.666_666_656_478_103_9,
    0.400_003_347_412_198_4,
    0.285_373_328_387_96,
    0.235_817_576_952_567_75,
];

/// `ln(1 + f)` for `1 + f` in `[√½, √2]`.
#[inline(always)]
fn ln_1p_reduced(f: f64) -> f64 {
    let s = f / (2.0 + f);
    let z = s * s;
    2.0 * s + s * z * (ATANH[0] + z * (ATANH[1] + z * (ATANH[2] + z * ATANH[3])))
}

/// `(k, f)` with `u = 2^k·(1 + f)`, `1 + f` in `[√½, √2)`, for a positive
/// finite normal `u`; `k` is an integer-valued `f64`.
#[inline(always)]
pub(super) fn split(u: f64) -> (f64, f64) {
    // Offsetting the bits moves the exponent's boundary from 1 to √½: the
    // exponent field of `t` is k + 1023, its significand that of (1 + f)/√½.
    let t = u.to_bits().wrapping_add(ONE_BITS - SQRT_HALF_BITS);
    let k = f64::from_bits(TWO_52_BITS | (t >> 52)) - f64::from_bits(TWO_52_BITS | 1023);
    let m = f64::from_bits((t & 0x000f_ffff_ffff_ffff) + SQRT_HALF_BITS);
    (k, m - 1.0) // exact: m is within a factor 2 of 1
}

/// `ln x` (natural logarithm) for `f32`.
///
/// Within 1 ulp of the correctly rounded value for every `f32`, and
/// correctly rounded for nearly all (the `f64` evaluation's relative error
/// is below 5e-12 before the one rounding). Checked against
/// `(x as f64).ln()` rounded to `f32` over every positive `f32`, subnormals
/// included (test `ln_f32_is_within_one_ulp_everywhere`, ignored by
/// default). `ln(±0) = −∞`, `ln(+∞) = +∞`, negative and NaN give NaN.
///
/// ```
/// use nabla_kernels::fastmath::ln_f32;
/// assert_eq!(ln_f32(1.0), 0.0);
/// assert_eq!(ln_f32(10.0), 10.0f64.ln() as f32);
/// assert_eq!(ln_f32(0.0), f32::NEG_INFINITY);
/// assert!(ln_f32(-1.0).is_nan());
/// ```
#[inline(always)]
pub fn ln_f32(x: f32) -> f32 {
    let (k, f) = split(x as f64);
    let y = (k * std::f64::consts::LN_2 + ln_1p_reduced(f)) as f32;
    let y = if x == 0.0 { f32::NEG_INFINITY } else { y };
    let y = if x == f32::INFINITY { x } else { y };
    if x >= 0.0 { y } else { f32::NAN } // negative or NaN
}

/// `ln(1 + x)` for `f32`, accurate for small `x`.
///
/// Within 1 ulp of the correctly rounded value for every `f32`, and
/// correctly rounded for nearly all (as [`ln_f32`]). Checked against
/// `(x as f64).ln_1p()` rounded to `f32` over every `f32` above −1 (test
/// `ln_1p_f32_is_within_one_ulp_everywhere`, ignored by default). Tiny
/// `x` (below 2^-25 in magnitude, subnormals included) give `x` itself,
/// `−0` gives `−0`, `−1` gives `−∞`, `+∞` gives `+∞`; below −1 and NaN
/// give NaN.
///
/// ```
/// use nabla_kernels::fastmath::ln_1p_f32;
/// assert_eq!(ln_1p_f32(1e-10), 1e-10);
/// assert_eq!(ln_1p_f32(0.5), 0.5f64.ln_1p() as f32);
/// assert_eq!(ln_1p_f32(-1.0), f32::NEG_INFINITY);
/// assert!(ln_1p_f32(-2.0).is_nan());
/// ```
#[inline(always)]
pub fn ln_1p_f32(x: f32) -> f32 {
    let x64 = x as f64;
    // 1 + x is exact unless |x| < 2^-29 (then k = 0 and f is x itself) or
    // x ≥ 2^53 (then the rounding is far below an f32 ulp of the result).
    let (k, f) = split(1.0 + x64);
    let f = if k == 0.0 { x64 } else { f };
    let y = (k * std::f64::consts::LN_2 + ln_1p_reduced(f)) as f32;
    let y = if x == 0.0 { x } else { y }; // keeps the sign of zero
    let y = if x == -1.0 { f32::NEG_INFINITY } else { y };
    let y = if x == f32::INFINITY { x } else { y };
    if x >= -1.0 { y } else { f32::NAN } // below −1 or NaN
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{exhaustive, patterns, ulps, worst};
    use super::*;

    #[test]
    fn ln_f32_from_subnormals_to_max() {
        // Every 4001st positive pattern: subnormals to 3.4e38.
        let (w, x) = worst(patterns(f32::from_bits(1), f32::MAX, 4001), ln_f32, f64::ln);
        assert!(w <= 1, "{w} ulp at {x:e}");
        // Dense around 1, where ln is small.
        let near_one = (0..=100_000).map(|i| 0.5 + i as f32 * 1.5e-5);
        let (w, x) = worst(near_one, ln_f32, f64::ln);
        assert!(w <= 1, "{w} ulp at {x:e}");
        let around_one =
            (-2000..=2000).map(|d| f32::from_bits((1.0f32.to_bits() as i32 + d) as u32));
        let (w, x) = worst(around_one, ln_f32, f64::ln);
        assert!(w <= 1, "{w} ulp at {x:e}");
    }

    #[test]
    fn ln_f32_special_values() {
        assert_eq!(ln_f32(0.0), f32::NEG_INFINITY);
        assert_eq!(ln_f32(-0.0), f32::NEG_INFINITY);
        assert_eq!(ln_f32(f32::INFINITY), f32::INFINITY);
        for x in [-1.0f32, -1e-45, f32::NEG_INFINITY, f32::NAN, -f32::NAN] {
            assert!(ln_f32(x).is_nan(), "ln({x:e})");
        }
        assert_eq!(ln_f32(1.0), 0.0);
        for x in [
            1e-45f32,
            f32::MIN_POSITIVE,
            f32::MAX,
            std::f32::consts::E,
            2.0,
            0.5,
        ] {
            assert!(ulps(ln_f32(x), (x as f64).ln() as f32) <= 1, "ln({x:e})");
        }
    }

    #[test]
    fn ln_1p_f32_from_minus_one_to_1e30() {
        // Positive: every 4001st pattern from the smallest subnormal up to
        // 1e30.
        let (w, x) = worst(
            patterns(f32::from_bits(1), 1e30, 4001),
            ln_1p_f32,
            f64::ln_1p,
        );
        assert!(w <= 1, "{w} ulp at {x:e}");
        // Negative: every 4001st pattern down to −1 (exclusive).
        let neg = patterns(f32::from_bits(1), 1.0, 4001)
            .map(|x| -x)
            .filter(|&x| x > -1.0);
        let (w, x) = worst(neg, ln_1p_f32, f64::ln_1p);
        assert!(w <= 1, "{w} ulp at {x:e}");
        // Dense on (−1, 1], softplus's range is (0, 1].
        let dense = (1..=200_000).map(|i| -1.0 + i as f32 * 1e-5);
        let (w, x) = worst(dense, ln_1p_f32, f64::ln_1p);
        assert!(w <= 1, "{w} ulp at {x:e}");
        // The patterns next to −1 and around ±(√2 − 1), where k changes.
        let mut xs: Vec<f32> = (1..3000)
            .map(|d| f32::from_bits((-1.0f32).to_bits() - d))
            .collect();
        for c in [
            std::f32::consts::SQRT_2 - 1.0,
            std::f32::consts::FRAC_1_SQRT_2 - 1.0,
        ] {
            xs.extend((-500..=500).map(|d| f32::from_bits((c.to_bits() as i32 + d) as u32)));
        }
        let (w, x) = worst(xs, ln_1p_f32, f64::ln_1p);
        assert!(w <= 1, "{w} ulp at {x:e}");
    }

    #[test]
    fn ln_1p_f32_special_values() {
        for x in [
            1e-45f32,
            -1e-45,
            1e-30,
            -1e-30,
            1e-8,
            -1e-8,
            0.0,
            -0.0,
            f32::MIN_POSITIVE,
        ] {
            assert_eq!(ln_1p_f32(x).to_bits(), x.to_bits(), "ln_1p({x:e})");
        }
        assert_eq!(ln_1p_f32(-1.0), f32::NEG_INFINITY);
        assert_eq!(ln_1p_f32(f32::INFINITY), f32::INFINITY);
        for x in [-1.000_000_1f32, -2.0, f32::NEG_INFINITY, f32::NAN] {
            assert!(ln_1p_f32(x).is_nan(), "ln_1p({x:e})");
        }
        for x in [f32::MAX, 1e30, 1.0, -0.5, -0.999_999_94] {
            assert!(
                ulps(ln_1p_f32(x), (x as f64).ln_1p() as f32) <= 1,
                "ln_1p({x:e})"
            );
        }
    }

    /// Every positive `f32`: run with `cargo test --release -p
    /// nabla-kernels -- --ignored ln_f32_is_within_one_ulp_everywhere`.
    #[test]
    #[ignore = "about 20 s in release mode on two cores"]
    fn ln_f32_is_within_one_ulp_everywhere() {
        let w = exhaustive(1, f32::MAX.to_bits(), |x| {
            ulps(ln_f32(x), (x as f64).ln() as f32)
        });
        assert!(w <= 1, "worst error {w} ulp");
    }

    /// Every `f32` above −1: run with `cargo test --release -p
    /// nabla-kernels -- --ignored ln_1p_f32_is_within_one_ulp_everywhere`.
    #[test]
    #[ignore = "about 35 s in release mode on two cores"]
    fn ln_1p_f32_is_within_one_ulp_everywhere() {
        let check = |x: f32| ulps(ln_1p_f32(x), (x as f64).ln_1p() as f32);
        let pos = exhaustive(1, f32::MAX.to_bits(), check);
        let neg = exhaustive((-0.0f32).to_bits() + 1, (-1.0f32).to_bits() - 1, check);
        assert!(pos.max(neg) <= 1, "worst error {} ulp", pos.max(neg));
    }
}
