//! `ln x` and `ln(1 + x)` for `f64`.
//!
//! Both split a positive `u` into `2^k·(1 + f)` with `1 + f` in
//! `[√½, √2)` (`super::log::split`, bit operations only), and use
//! `ln(1 + f) = f − f²/2 + s·(f²/2 + R(s²))` with `s = f/(2 + f)` and
//! `R(z) = 2z/3 + 2z²/5 + …` (from `ln(1 + f) = 2·atanh s`; a Chebyshev
//! fit of degree 8 in `z`, relative error below 2^-53 of a term that is
//! itself below 3% of the result). Only the small terms carry the
//! division's and the polynomial's errors; `k·ln 2 + f` is summed with
//! its rounding error kept, so the result rounds essentially once.

use super::dd::{fast_two_sum, horner, two_sum};
use super::log::split;

/// ln 2 to 40 significant bits (`k·LN2_HI` is exact for `|k| < 2^13`).
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fefa_4000);
/// ln 2 − `LN2_HI`.
const LN2_LO: f64 = f64::from_bits(0xbd48_432a_1b0e_2634);
/// 2^54: scales subnormal arguments to normal numbers.
const TWO_54: f64 = 18_014_398_509_481_984.0;

/// `R(z)/z` on `z ≤ ((√2 − 1)/(√2 + 1))²`, in powers of `z`.
const R: [f64; 8] = [
    0.666_666_666_666_666_6,
    0.400_000_000_000_008_85,
    0.285_714_285_707_991_46,
    0.222_222_223_927_253_58,
    0.181_817_955_321_172_2,
    0.153_862_455_745_631_2,
    0.132_686_159_794_412_76,
    0.130_882_687_486_821_47,
];

/// `ln(2^k·(1 + f)) + extra` for `1 + f` in `[√½, √2]`, `extra` tiny.
#[inline(always)]
fn ln_reduced(k: f64, f: f64, extra: f64) -> f64 {
    let s = f / (2.0 + f);
    let z = s * s;
    let hfsq = 0.5 * f * f;
    let small = s * (hfsq + z * horner(z, &R)) - hfsq;
    // |k·LN2_HI| ≥ ln 2 > |f| unless k = 0.
    let (hi, lo) = fast_two_sum(k * LN2_HI, f);
    hi + (lo + (small + (k * LN2_LO + extra)))
}

/// `ln x` (natural logarithm) for `f64`.
///
/// Within 1 ulp of the correctly rounded value (correctly rounded for
/// nearly all `x`), subnormals included; `ln(±0) = −∞`, `ln(+∞) = +∞`,
/// `ln 1 = 0`, negative `x` and NaN give NaN. Checked against correctly
/// rounded references in `tests/fastmath_f64.rs`.
///
/// ```
/// use nabla_kernels::fastmath::ln_f64;
/// assert_eq!(ln_f64(1.0), 0.0);
/// assert_eq!(ln_f64(std::f64::consts::E), 1.0);
/// assert_eq!(ln_f64(0.0), f64::NEG_INFINITY);
/// assert!(ln_f64(-1.0).is_nan());
/// ```
#[inline(always)]
pub fn ln_f64(x: f64) -> f64 {
    let sub = x < f64::MIN_POSITIVE;
    let (k, f) = split(if sub { x * TWO_54 } else { x });
    let k = if sub { k - 54.0 } else { k };
    let y = ln_reduced(k, f, 0.0);
    let y = if x == 0.0 { f64::NEG_INFINITY } else { y };
    let y = if x == f64::INFINITY { x } else { y };
    if x >= 0.0 { y } else { f64::NAN } // negative or NaN
}

/// `ln(1 + x)` for `f64`, accurate for small `x`.
///
/// `1 + x = u + c` exactly (TwoSum), then `ln(1 + x) = ln u + c/u` to
/// far below an ulp. Within 1 ulp of the correctly rounded value
/// (correctly rounded for nearly all `x`); tiny `x` (subnormals
/// included) give `x`, `±0` gives `±0`, `−1` gives `−∞`, `+∞` gives
/// `+∞`; below −1 and NaN give NaN. Checked against correctly rounded
/// references in `tests/fastmath_f64.rs`.
///
/// ```
/// use nabla_kernels::fastmath::ln_1p_f64;
/// assert_eq!(ln_1p_f64(1e-20), 1e-20);
/// assert_eq!(ln_1p_f64(-1.0), f64::NEG_INFINITY);
/// assert!(ln_1p_f64(-2.0).is_nan());
/// assert!((ln_1p_f64(1.0) - std::f64::consts::LN_2).abs() < 1.2e-16);
/// ```
#[inline(always)]
pub fn ln_1p_f64(x: f64) -> f64 {
    let (u, c) = two_sum(1.0, x);
    let (k, f) = split(u);
    let y = ln_reduced(k, f, c / u);
    let y = if x == 0.0 { x } else { y }; // keeps the sign of zero
    let y = if x == -1.0 { f64::NEG_INFINITY } else { y };
    let y = if x == f64::INFINITY { x } else { y };
    if x >= -1.0 { y } else { f64::NAN } // below −1 or NaN
}
