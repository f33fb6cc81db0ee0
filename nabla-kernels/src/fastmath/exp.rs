//! `e^x`, `tanh x` and the logistic sigmoid.

use super::ROUND;

const LOG2E: f64 = std::f64::consts::LOG2_E;
const LN2_HI: f64 = 6.931_471_803_691_238e-1;
const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;

/// `e^z` for `z` in the range that matters for an `f32` result.
#[inline(always)]
pub fn exp_for_f32(z: f64) -> f64 {
    // Beyond these bounds the f32 result is 0 or +inf anyway.
    let z = if z < -110.0 { -110.0 } else { z };
    let z = if z > 90.0 { 90.0 } else { z };
    let t = z * LOG2E + ROUND;
    let k = t - ROUND;
    let r = (z - k * LN2_HI) - k * LN2_LO; // |r| <= ln2/2
    // Taylor series to r^8/8!: relative error below 1e-9 on |r| <= 0.35.
    let p = 1.0
        + r * (1.0
            + r * (0.5
                + r * (1.0 / 6.0
                    + r * (1.0 / 24.0
                        + r * (1.0 / 120.0
                            + r * (1.0 / 720.0 + r * (1.0 / 5040.0 + r * (1.0 / 40320.0))))))));
    // 2^k from the integer sitting in the low bits of t.
    let ki = (t.to_bits() as i64).wrapping_sub(ROUND.to_bits() as i64);
    let scale = f64::from_bits(((ki + 1023) as u64) << 52);
    p * scale
}

/// `e^x` for `f32`.
///
/// ```
/// let y = nabla_kernels::fastmath::exp_f32(1.0);
/// assert!((y - std::f32::consts::E).abs() < 1e-6);
/// ```
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    let x64 = x as f64;
    let y = exp_for_f32(x64) as f32;
    if x.is_nan() { x } else { y } // NaN in, NaN out
}

/// `tanh x` for `f32`, computed in `f32` (8 lanes per AVX2 vector).
///
/// Below `|x| = 1` an odd polynomial `a + a·s·P(s)`, `s = a²` (`P` a
/// weighted least-squares fit of degree 6, approximation error 0.1 ulp);
/// above, `1 − 2/(e^{2a} + 1)` with `e^{2a}` from a Cody–Waite reduction
/// and a degree-6 polynomial (0.2 ulp). Checked against the correctly
/// rounded value for every `f32` in `[0, 20]` (the rest is 1): at most 1
/// ulp (test `tanh_f32_is_within_one_ulp_everywhere`, ignored by default
/// because it takes ~30 s in release mode).
///
/// ```
/// let y = nabla_kernels::fastmath::tanh_f32(0.5);
/// assert!((y - 0.5f32.tanh()).abs() < 1e-7);
/// ```
#[inline(always)]
pub fn tanh_f32(x: f32) -> f32 {
    /// `(tanh a / a − 1) / a²` on `[0, 1]`, in powers of `a²`.
    const P: [f32; 7] = [
        -3.333_329_6e-1,
        1.333_236e-1,
        -5.388_112_7e-2,
        2.149_139_2e-2,
        -7.954_209e-3,
        2.307_980_8e-3,
        -3.605_234e-4,
    ];
    let a = x.abs();
    let s = a * a;
    let p = P[0] + s * (P[1] + s * (P[2] + s * (P[3] + s * (P[4] + s * (P[5] + s * P[6])))));
    let small = a + a * s * p;
    // e^{2a} for 2a ≤ 20 (beyond a = 9.01 the f32 result is 1 anyway).
    let e = exp_f32_within_20(if a < 10.0 { 2.0 * a } else { 20.0 });
    let big = 1.0 - 2.0 / (e + 1.0);
    let t = if a < 1.0 { small } else { big };
    let y = f32::from_bits(t.to_bits() | (x.to_bits() & 0x8000_0000));
    if x.is_nan() { x } else { y }
}

/// `e^z` in `f32` arithmetic for `z` in `[-20, 20]`, within about an ulp.
#[inline(always)]
pub(super) fn exp_f32_within_20(z: f32) -> f32 {
    /// `(e^r − 1 − r) / r²` on `|r| ≤ ln2/2`, in powers of `r`.
    const Q: [f32; 5] = [
        5.0e-1,
        1.666_657_6e-1,
        4.166_646_7e-2,
        8.363_176e-3,
        1.393_364e-3,
    ];
    // ln 2 split so that k·LN2_HI is exact for the k that occur here.
    const LN2_HI: f32 = 0.693_145_75;
    const LN2_LO: f32 = 1.428_606_8e-6;
    const ROUND: f32 = 12_582_912.0; // 1.5·2^23: adding it rounds to an integer
    let t = z * std::f32::consts::LOG2_E + ROUND;
    let k = t - ROUND;
    let r = (z - k * LN2_HI) - k * LN2_LO;
    let q = Q[0] + r * (Q[1] + r * (Q[2] + r * (Q[3] + r * Q[4])));
    let p = 1.0 + (r + r * r * q);
    let ki = (t.to_bits() as i32).wrapping_sub(ROUND.to_bits() as i32);
    p * f32::from_bits(((ki + 127) as u32) << 23)
}

/// `1 / (1 + e^-x)` for `f32`.
///
/// ```
/// assert_eq!(nabla_kernels::fastmath::sigmoid_f32(0.0), 0.5);
/// ```
#[inline(always)]
pub fn sigmoid_f32(x: f32) -> f32 {
    let y = (1.0 / (1.0 + exp_for_f32(-(x as f64)))) as f32;
    if x.is_nan() { x } else { y }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::ulps;
    use super::*;

    #[test]
    fn close_to_the_c_library() {
        let mut worst = [0u32; 3];
        let mut x = -30.0f32;
        while x < 30.0 {
            let reference = [
                (x as f64).exp() as f32,
                (x as f64).tanh() as f32,
                (1.0 / (1.0 + (-(x as f64)).exp())) as f32,
            ];
            let ours = [exp_f32(x), tanh_f32(x), sigmoid_f32(x)];
            for i in 0..3 {
                worst[i] = worst[i].max(ulps(ours[i], reference[i]));
            }
            x += 0.000_731;
        }
        assert!(
            worst.iter().all(|&w| w <= 1),
            "worst ulp errors exp/tanh/sigmoid: {worst:?}"
        );
        for v in [1e-6f32, -1e-6, 1e-30, 0.0, -0.0] {
            assert_eq!(tanh_f32(v), v.tanh());
        }
        assert!(exp_f32(f32::NAN).is_nan() && tanh_f32(f32::NAN).is_nan());
        assert_eq!(exp_f32(200.0), f32::INFINITY);
        assert_eq!(exp_f32(-200.0), 0.0);
        assert_eq!(tanh_f32(50.0), 1.0);
        assert_eq!(tanh_f32(f32::INFINITY), 1.0);
        assert_eq!(tanh_f32(f32::NEG_INFINITY), -1.0);
        assert!(tanh_f32(-0.0).is_sign_negative() && tanh_f32(-0.0) == 0.0);
        // Every 4096th f32 pattern in [0, 20] and its negative.
        let mut bits = 0u32;
        while f32::from_bits(bits) <= 20.0 {
            let x = f32::from_bits(bits);
            for x in [x, -x] {
                let want = (x as f64).tanh() as f32;
                assert!(
                    ulps(tanh_f32(x), want) <= 1,
                    "tanh({x:e}) = {:e}, want {want:e}",
                    tanh_f32(x)
                );
            }
            bits += 4096;
        }
    }

    /// All f32 in [0, 20]: run with `cargo test --release -p nabla-kernels
    /// -- --ignored tanh_f32_is_within_one_ulp_everywhere`.
    #[test]
    #[ignore = "about 30 s in release mode"]
    fn tanh_f32_is_within_one_ulp_everywhere() {
        let mut bits = 0u32;
        let mut worst = 0;
        while f32::from_bits(bits) <= 20.0 {
            let x = f32::from_bits(bits);
            worst = worst.max(ulps(tanh_f32(x), (x as f64).tanh() as f32));
            bits += 1;
        }
        assert!(worst <= 1, "worst error {worst} ulp");
    }
}
