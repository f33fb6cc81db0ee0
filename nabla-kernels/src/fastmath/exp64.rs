//! `e^x`, `e^x − 1`, `tanh x` and the logistic sigmoid for `f64`.
//!
//! All four reduce `x = k·ln 2 + r + c` with `k` an integer, `|r| ≤ ln2/2`
//! and `c` the rounding error of `r` (ln 2 in two parts, the first with
//! 40 significant bits so that `k·LN2_HI` and `x − k·LN2_HI` are exact),
//! then `e^{r+c} − 1 = r + (c + r²·Q(r))` with `Q` a degree-10 polynomial
//! (a Chebyshev fit of `(e^r − 1 − r)/r²`, relative error below 2^-57).
//! The leading `1 + r` (for `e^x`) or `2^k − 1 + 2^k·r` (for `e^x − 1`)
//! is formed with its rounding error kept, so the only sizeable error is
//! the last rounding. `tanh` and the sigmoid divide in double-double
//! (one Newton step with an exact product), which a plain division
//! (0.5 ulp) after a rounded `e^x` (0.5 ulp) cannot do within 1 ulp.

use super::ROUND;
use super::dd::{fast_two_sum, horner, pow2, two_prod, two_sum};

const LOG2E: f64 = std::f64::consts::LOG2_E;
/// ln 2 to 40 significant bits.
const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fefa_4000);
/// ln 2 − `LN2_HI`.
const LN2_LO: f64 = f64::from_bits(0xbd48_432a_1b0e_2634);

/// `(e^r − 1 − r) / r²` on `|r| ≤ ln2/2`, in powers of `r`.
const Q: [f64; 11] = [
    0.5,
    0.166_666_666_666_666_7,
    0.041_666_666_666_666_67,
    0.008_333_333_333_325_973,
    0.001_388_888_888_888_363_3,
    0.000_198_412_698_753_854_8,
    2.480_158_732_595_111e-5,
    2.755_725_468_572_880_3e-6,
    2.755_727_313_289_604e-7,
    2.510_551_354_184_708_6e-8,
    2.091_489_872_717_552_4e-9,
];

/// `x ≈ k·ln 2 + r + c`: returns `(k, r, c)` for `|x| < 2^50`, `k` an
/// integer-valued `f64`.
#[inline(always)]
fn reduce(x: f64) -> (f64, f64, f64) {
    let k = (x * LOG2E + ROUND) - ROUND;
    let hi = x - k * LN2_HI; // exact
    let (r, c) = two_sum(hi, -(k * LN2_LO));
    (k, r, c)
}

/// `e^{r+c} − 1 − r`.
#[inline(always)]
fn tail(r: f64, c: f64) -> f64 {
    c + r * r * horner(r, &Q)
}

/// `e^x = 2^k·(h + l)` with `h + l` in `[0.7, 1.42]` (double-double), for
/// `x` clamped to `[−746, 710]` (beyond, the result rounds to 0 or ∞).
#[inline(always)]
fn exp_parts(x: f64) -> (f64, f64, f64) {
    let x = if x < -746.0 { -746.0 } else { x };
    let x = if x > 710.0 { 710.0 } else { x };
    let (k, r, c) = reduce(x);
    let h = 1.0 + r;
    let l = ((1.0 - h) + r) + tail(r, c);
    (k, h, l)
}

/// `2^k` as two factors `(2^k1, 2^k2)`, each a normal number, for an
/// integer-valued `k` in `[−1076, 1024]`: multiplying by the first is
/// exact, so only the second rounds (once, also into subnormals).
#[inline(always)]
fn pow2_split(k: f64) -> (f64, f64) {
    let k1 = (k * 0.5 + ROUND) - ROUND;
    (pow2(k1), pow2(k - k1))
}

/// `e^x` for `f64`.
///
/// Within 1 ulp of the correctly rounded value (correctly rounded for
/// nearly all `x`), subnormal results included; `e^x` overflows to `+∞`
/// above 709.78 and rounds to 0 below −745.13; `e^{±0} = 1`,
/// `e^{−∞} = 0`, `e^{+∞} = +∞`, NaN gives NaN. Checked against
/// correctly rounded references in `tests/fastmath_f64.rs`.
///
/// ```
/// use nabla_kernels::fastmath::exp_f64;
/// assert_eq!(exp_f64(0.0), 1.0);
/// assert_eq!(exp_f64(1.0), std::f64::consts::E);
/// assert_eq!(exp_f64(-800.0), 0.0);
/// assert_eq!(exp_f64(710.0), f64::INFINITY);
/// ```
#[inline(always)]
pub fn exp_f64(x: f64) -> f64 {
    let (k, h, l) = exp_parts(x);
    let (s1, s2) = pow2_split(k);
    (h + l) * s1 * s2
}

/// `(v, w, g)` with `e^x − 1 ≈ (v + w)·g`, `|w| ≤ ulp(v)` up to
/// roundings far below it, for `x` clamped to `[−40, 710]` (below −40,
/// `e^x − 1` rounds to −1).
#[inline(always)]
fn exp_m1_parts(x: f64) -> (f64, f64, f64) {
    let x = if x < -40.0 { -40.0 } else { x };
    let x = if x > 710.0 { 710.0 } else { x };
    let (k, r, c) = reduce(x);
    // k = 1024 (x above 709.09): 2^1024 overflows, so scale by 2^1023 and
    // double at the end (the −1 is far below the rounding there).
    let big = k > 1023.0;
    let k = if big { 1023.0 } else { k };
    let s = pow2(k);
    // e^x − 1 = (2^k − 1) + 2^k·r + 2^k·tail: 2^k − 1 is exact for
    // |k| ≤ 53, and above, its rounding error (−1) is `t_err`.
    let t = s - 1.0;
    let t_err = (s - t) - 1.0;
    let (v, e) = two_sum(t, s * r);
    let w = e + (s * tail(r, c) + t_err);
    (v, w, if big { 2.0 } else { 1.0 })
}

/// `e^x − 1` for `f64`, accurate for small `x`.
///
/// Within 1 ulp of the correctly rounded value (correctly rounded for
/// nearly all `x`); tiny `x` (subnormals included) give `x`, `±0` gives
/// `±0`, below −37.5 the result is −1, above 709.78 it overflows to
/// `+∞`; `−∞` gives −1, NaN gives NaN. Checked against correctly rounded
/// references in `tests/fastmath_f64.rs`.
///
/// ```
/// use nabla_kernels::fastmath::exp_m1_f64;
/// assert_eq!(exp_m1_f64(1e-20), 1e-20);
/// assert_eq!(exp_m1_f64(-50.0), -1.0);
/// assert!((exp_m1_f64(1.0) - (std::f64::consts::E - 1.0)).abs() < 4e-16);
/// ```
#[inline(always)]
pub fn exp_m1_f64(x: f64) -> f64 {
    let (v, w, g) = exp_m1_parts(x);
    let y = (v + w) * g;
    if x == 0.0 { x } else { y } // keeps the sign of zero
}

/// `tanh x` for `f64`.
///
/// `tanh |x| = −E / (2 + E)` with `E = e^{−2|x|} − 1` in double-double
/// and the quotient refined by one Newton step. Within 1 ulp of the
/// correctly rounded value (correctly rounded for nearly all `x`); odd,
/// `tanh(±0) = ±0`, tiny `x` give `x`, `|x| ≥ 19.1` gives `±1`,
/// `tanh(±∞) = ±1`, NaN gives NaN. Checked against correctly rounded
/// references in `tests/fastmath_f64.rs`.
///
/// ```
/// use nabla_kernels::fastmath::tanh_f64;
/// assert_eq!(tanh_f64(-0.0).to_bits(), (-0.0f64).to_bits());
/// assert_eq!(tanh_f64(30.0), 1.0);
/// assert!((tanh_f64(0.5) - 0.5f64.tanh()).abs() <= 1.2e-16);
/// ```
#[inline(always)]
pub fn tanh_f64(x: f64) -> f64 {
    let a = x.abs();
    let (v, w, _) = exp_m1_parts(-2.0 * a);
    let (eh, el) = fast_two_sum(v, w); // E, in (−1, 0]
    let (dh, dl) = fast_two_sum(2.0, eh); // 2 + E
    let dl = dl + el;
    let q0 = -eh / dh;
    let (p, pe) = two_prod(q0, dh);
    // −E − q0·(2 + E), with −eh − p exact (the two are within a factor 2).
    let rem = (((-eh - p) - pe) - el) - q0 * dl;
    let t = q0 + rem / dh;
    f64::from_bits(t.to_bits() | (x.to_bits() & 0x8000_0000_0000_0000))
}

/// The logistic sigmoid `1 / (1 + e^{−x})` for `f64`.
///
/// From `e^{−|x|}` in double-double: `1 / (1 + e^{−|x|})` for `x ≥ 0`,
/// `e^{−|x|} / (1 + e^{−|x|})` below, each quotient refined by one Newton
/// step. Within 1 ulp of the correctly rounded value (correctly rounded
/// for nearly all `x`), subnormal results included; `σ(±0) = 0.5`,
/// `σ(+∞) = 1`, `σ(−∞) = 0`, NaN gives NaN. Checked against correctly
/// rounded references in `tests/fastmath_f64.rs`.
///
/// ```
/// use nabla_kernels::fastmath::sigmoid_f64;
/// assert_eq!(sigmoid_f64(0.0), 0.5);
/// assert_eq!(sigmoid_f64(40.0), 1.0);
/// assert_eq!(sigmoid_f64(-800.0), 0.0);
/// ```
#[inline(always)]
pub fn sigmoid_f64(x: f64) -> f64 {
    let (k, h, l) = exp_parts(-x.abs());
    let (h, l) = fast_two_sum(h, l); // l holds r²/2: fold it into h
    let (s1, s2) = pow2_split(k);
    let (eh, el) = (h * s1 * s2, l * s1 * s2); // e^{−|x|}
    let (dh, dl) = fast_two_sum(1.0, eh);
    let dl = dl + el;
    let neg = x < 0.0;
    let nh = if neg { eh } else { 1.0 };
    let nl = if neg { el } else { 0.0 };
    let q0 = nh / dh;
    let (p, pe) = two_prod(q0, dh);
    let rem = (((nh - p) - pe) + nl) - q0 * dl;
    let y = q0 + rem / dh;
    if x.is_nan() { x } else { y }
}
