//! The error function.

use super::exp::exp_f32_within_20;

/// `erf x` for `f32`, computed in `f32` (16 lanes per AVX-512 vector).
///
/// Below `|x| = 1`, `a + a·q(a²)` with `q ≈ erf(a)/a − 1` a weighted
/// least-squares polynomial of degree 6 (approximation error 0.2 ulp); on
/// `[1, 4)`, `1 − e^{g(x) − x²}` with `g ≈ ln erfc x + x²` a degree-8
/// polynomial in `u = (x − 2.5)/1.5`, fitted with weight `erfc x` (its
/// error times `erfc x` stays below 0.07 ulp of `erf x`); from 4 on `±1`
/// (the `f32` value of `erf` from 3.92 on). Within one ulp of the
/// correctly rounded value for every `f32` in `[0, 4]` (test
/// `erf_f32_is_within_one_ulp_everywhere`, ignored by default; a sampled
/// version runs always).
///
/// ```
/// let y = nabla_kernels::fastmath::erf_f32(0.5);
/// assert!((y - 0.520_499_9).abs() < 1e-7);
/// ```
#[inline(always)]
pub fn erf_f32(x: f32) -> f32 {
    /// `q(s)` on `s ∈ [0, 1]`, in powers of `s`.
    const Q: [f32; 7] = [
        0.128_379_17,
        -0.376_126_26,
        0.112_835_97,
        -0.026_854_329,
        0.005_189_312,
        -0.000_801_885_5,
        7.882_497_5e-5,
    ];
    /// `g(u)` on `u ∈ [−1, 1]`, in powers of `u`.
    const G: [f32; 9] = [
        -1.556_815_3,
        -0.529_021_14,
        0.126_241_55,
        -0.036_633_8,
        0.010_975_469,
        -0.003_235_607,
        0.000_759_687_16,
        -0.000_332_585_9,
        9.938_137e-6,
    ];
    let a = x.abs();
    let s = a * a;
    let mut q = 0.0;
    for k in Q.iter().rev() {
        q = q * s + k;
    }
    let small = a + a * q;
    let c = if a < 4.0 { a } else { 4.0 };
    let u = (c - 2.5) * (1.0 / 1.5);
    let mut g = 0.0;
    for k in G.iter().rev() {
        g = g * u + k;
    }
    let large = 1.0 - exp_f32_within_20(g - c * c);
    let y = if a < 1.0 {
        small
    } else if a < 4.0 {
        large
    } else {
        1.0
    };
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
