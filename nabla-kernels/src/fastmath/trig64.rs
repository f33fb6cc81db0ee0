//! `sin x` and `cos x` for `f64`.
//!
//! Both reduce `a = |x|` to `r = a − n·π/2` in `[−π/4, π/4]` with `n` the
//! integer nearest `a·2/π`, then evaluate `sin r` or `cos r` (picked by
//! `n mod 4`, with its sign). The reduction is Cody–Waite's with π/2
//! split into `P1 + … + P5` (to 2^-167): `P1`–`P4` have 27 significant
//! bits, so for `n < 2^26` (`|x| < 2^26`) every product `n·Pi` but the
//! last is exact, the first subtraction is exact (Sterbenz) and the next
//! three are TwoSums; `r` comes out as a double-double `rh + rl` with a
//! relative error far below 2^-70 even where `a` is closest to a multiple
//! of π/2.
//!
//! For `2^26 ≤ |x| < 2^51` the products round: the result is then within
//! 1 ulp of `sin(x + δ)` (`cos(x + δ)`) for some `|δ| ≤ ulp(x)`, a
//! perturbation of the size of the argument's own rounding, and not
//! within 1 ulp of `sin x`. An exact reduction there needs 2/π to ~1100
//! bits picked by the exponent of `x` (Payne–Hanek), which costs every
//! element table loads that vector loops gather one lane at a time (see
//! `trig.rs` for the `f32` version's figures). From `|x| = 2^51` on (where
//! `n` no longer fits the rounding trick) the result is NaN, as for `±∞`
//! and NaN.

use super::ROUND;
use super::dd::{fast_two_sum, horner, two_prod, two_sum};

/// π/2 = `P1 + P2 + P3 + P4 + P5` to 2^-167; `P1`–`P4` hold 27
/// significant bits each.
const P1: f64 = f64::from_bits(0x3ff9_21fb_5400_0000);
const P2: f64 = f64::from_bits(0x3e11_0b46_1000_0000);
const P3: f64 = f64::from_bits(0x3c5a_6263_3000_0000);
const P4: f64 = f64::from_bits(0x3a94_5c06_e000_0000);
const P5: f64 = f64::from_bits(0x38cc_d129_024e_088a);

/// From this `|x|` on the result is NaN.
const LIMIT: f64 = 2_251_799_813_685_248.0; // 2^51

/// `(sin r − r) / r³` on `|r| ≤ π/4`, in powers of `r²`.
const S: [f64; 7] = [
    -0.166_666_666_666_666_66,
    0.008_333_333_333_333_331,
    -0.000_198_412_698_412_650_6,
    2.755_731_921_933_443_6e-6,
    -2.505_210_623_080_540_3e-8,
    1.605_853_135_872_901_8e-10,
    -7.586_681_777_999_908e-13,
];

/// `(cos r − 1 + r²/2) / r⁴` on `|r| ≤ π/4`, in powers of `r²`.
const C: [f64; 6] = [
    0.041_666_666_666_666_664,
    -0.001_388_888_888_888_739_5,
    2.480_158_729_876_281_6e-5,
    -2.755_731_727_024_068e-7,
    2.087_614_595_808_494e-9,
    -1.138_261_007_099_832_5e-11,
];

/// `(n, rh, rl)`: `a = n·π/2 + rh + rl`, `n` in the low bits of the
/// returned `f64` (the rounding trick's sum), for `0 ≤ a < 2^51`.
#[inline(always)]
fn reduce(a: f64) -> (u64, f64, f64) {
    let t = a * std::f64::consts::FRAC_2_PI + ROUND;
    let n = t - ROUND;
    let r1 = a - n * P1;
    let (r2, e2) = two_sum(r1, -(n * P2));
    let (r3, e3) = two_sum(r2, -(n * P3));
    let (r4, e4) = two_sum(r3, -(n * P4));
    let (rh, rl) = fast_two_sum(r4, ((e2 + e3) + e4) - n * P5);
    (t.to_bits(), rh, rl)
}

/// `sin(a + shift·π/2)` for `a = |x|` (`shift` 0 for the sine, 1 for the
/// cosine), without the sign of `x`.
#[inline(always)]
fn sin_shifted(a: f64, shift: u64) -> f64 {
    let (n, rh, rl) = reduce(a);
    let q = n.wrapping_add(shift);
    let z = rh * rh;
    // sin(rh + rl) ≈ sin rh + rl·cos rh.
    let sin_r = rh + (rh * z * horner(z, &S) + (rl - 0.5 * z * rl));
    // cos(rh + rl) ≈ cos rh − rl·sin rh, with 1 − rh²/2 to double-double.
    let (zh, zl) = two_prod(rh, rh);
    let hz = 0.5 * zh;
    let w = 1.0 - hz;
    let cos_r = w + ((((1.0 - w) - hz) - 0.5 * zl) + (zh * zh * horner(zh, &C) - rh * rl));
    let v = if q & 1 == 0 { sin_r } else { cos_r };
    // Quadrants 2 and 3 flip the sign.
    f64::from_bits(v.to_bits() ^ ((q & 2) << 62))
}

/// `sin x` for `f64`.
///
/// Within 1 ulp of the correctly rounded value for `|x| < 2^26` (6.7e7;
/// correctly rounded for nearly all); above, within 1 ulp of `sin(x + δ)`
/// for some `|δ| ≤ ulp(x)` up to `2^51`, NaN from there on (see the
/// module source). Odd: `sin(±0) = ±0`, tiny `x` give `x`; `±∞` and NaN
/// give NaN. Checked against correctly rounded references in
/// `tests/fastmath_f64.rs`.
///
/// ```
/// use nabla_kernels::fastmath::sin_f64;
/// assert_eq!(sin_f64(-0.0).to_bits(), (-0.0f64).to_bits());
/// assert_eq!(sin_f64(1e-300), 1e-300);
/// assert!((sin_f64(3.0) - 3.0f64.sin()).abs() < 5e-17);
/// assert!(sin_f64(f64::INFINITY).is_nan());
/// ```
#[inline(always)]
pub fn sin_f64(x: f64) -> f64 {
    let a = x.abs();
    let v = sin_shifted(a, 0);
    let y = f64::from_bits(v.to_bits() ^ (x.to_bits() & 0x8000_0000_0000_0000));
    if a < LIMIT { y } else { f64::NAN }
}

/// `cos x` for `f64`.
///
/// The same reduction and polynomials as [`sin_f64`], with the same
/// accuracy: within 1 ulp of the correctly rounded value for
/// `|x| < 2^26`, within 1 ulp of `cos(x + δ)` for some `|δ| ≤ ulp(x)` up
/// to `2^51`, NaN from there on and for `±∞` and NaN. Even: `cos(±0) =
/// 1`.
///
/// ```
/// use nabla_kernels::fastmath::cos_f64;
/// assert_eq!(cos_f64(0.0), 1.0);
/// assert!((cos_f64(3.0) - 3.0f64.cos()).abs() < 2.3e-16);
/// assert!(cos_f64(f64::NAN).is_nan());
/// ```
#[inline(always)]
pub fn cos_f64(x: f64) -> f64 {
    let a = x.abs();
    let y = sin_shifted(a, 1);
    if a < LIMIT { y } else { f64::NAN }
}
