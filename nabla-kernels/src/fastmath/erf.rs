//! The error function.

use super::exp::exp_for_f32;

/// `erf x` for `f32`, computed in `f64` and rounded once.
///
/// Below `|x| = 1` the Taylor series `2/√π · Σ (−1)ⁿ x²ⁿ⁺¹ / (n! (2n+1))`
/// to `n = 12` (relative error below 1e-11); on `[1, 4)`
/// `1 − e^{−x² + g(x)}` with `g = ln erfc x + x²` a degree-10 polynomial
/// (a Chebyshev least-squares fit in `u = (x − 2.5)/1.5`, relative error
/// of `erfc` below 2e-9); from 4 on `±1` (the `f32` value of `erf` from
/// 3.92 on). Within one ulp of the correctly rounded value for every `f32`
/// in `[0, 4]` (test `erf_f32_is_within_one_ulp_everywhere`, ignored by
/// default; a sampled version runs always).
///
/// ```
/// let y = nabla_kernels::fastmath::erf_f32(0.5);
/// assert!((y - 0.520_499_9).abs() < 1e-7);
/// ```
#[inline(always)]
pub fn erf_f32(x: f32) -> f32 {
    /// `n! (2n+1)` for `n = 0..=12`, the Taylor series' denominators.
    const DEN: [f64; 13] = [
        1.0,
        3.0,
        10.0,
        42.0,
        216.0,
        1320.0,
        9360.0,
        75600.0,
        685_440.0,
        6_894_720.0,
        76_204_800.0,
        918_086_400.0,
        11_975_040_000.0,
    ];
    /// `g(u)` on `u ∈ [−1, 1]`, in powers of `u`.
    const G: [f64; 11] = [
        -1.556_815_272_428_753_6,
        -0.529_021_110_578_214_5,
        0.126_239_078_228_072_84,
        -0.036_646_308_665_258_14,
        0.010_962_973_338_106_793,
        -0.003_194_743_318_333_001,
        0.000_876_392_922_053_602_5,
        -0.000_221_709_400_773_091_42,
        4.728_429_804_322_168_4e-5,
        -2.530_671_806_671_366e-6,
        -2.367_065_746_723_448e-6,
    ];
    let a = (x as f64).abs();
    // Small: the alternating series in a².
    let s = a * a;
    let mut t = 0.0;
    let mut sign = if DEN.len() % 2 == 1 { 1.0 } else { -1.0 };
    for d in DEN.iter().rev() {
        t = t * s + sign / d;
        sign = -sign;
    }
    let small = std::f64::consts::FRAC_2_SQRT_PI * a * t;
    // Large: 1 − erfc, erfc from the fitted exponent.
    let c = if a < 4.0 { a } else { 4.0 };
    let u = (c - 2.5) / 1.5;
    let mut g = 0.0;
    for k in G.iter().rev() {
        g = g * u + k;
    }
    let large = 1.0 - exp_for_f32(g - c * c);
    let y = if a < 1.0 {
        small
    } else if a < 4.0 {
        large
    } else {
        1.0
    } as f32;
    let y = f32::from_bits(y.to_bits() | (x.to_bits() & 0x8000_0000));
    if x.is_nan() { x } else { y }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{exhaustive, patterns, ulps, worst};
    use super::erf_f32;

    #[test]
    fn sampled_within_one_ulp() {
        let (w, at) = worst(patterns(0.0, 5.0, 97), erf_f32, libm::erf);
        assert!(w <= 1, "{w} ulps at {at}");
        let (w, at) = worst(patterns(0.0, 5.0, 97).map(|x| -x), erf_f32, libm::erf);
        assert!(w <= 1, "{w} ulps at {at}");
        assert!(erf_f32(f32::NAN).is_nan());
        assert_eq!(erf_f32(f32::INFINITY), 1.0);
        assert_eq!(erf_f32(f32::NEG_INFINITY), -1.0);
        assert_eq!(erf_f32(-0.0).to_bits(), (-0.0f32).to_bits());
    }

    #[test]
    #[ignore = "every f32 in [0, 4]: about 20 s in release mode"]
    fn erf_f32_is_within_one_ulp_everywhere() {
        let w = exhaustive(0, 4.0f32.to_bits(), |x| {
            ulps(erf_f32(x), libm::erf(x as f64) as f32)
        });
        assert!(w <= 1, "{w} ulps");
    }
}
