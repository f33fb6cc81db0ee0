//! Vectorisable transcendental functions for `f32` kernels.
//!
//! The C library's `expf`/`tanhf` are called one element at a time and stop
//! LLVM from vectorising a loop. These versions use only arithmetic,
//! comparisons and integer bit operations, so a loop over them becomes SIMD
//! code. They compute in `f64` and round once to `f32`, which keeps the
//! result within an ulp or so of the correctly rounded value.

const LOG2E: f64 = std::f64::consts::LOG2_E;
const LN2_HI: f64 = 6.931_471_803_691_238e-1;
const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
/// Adding then subtracting 1.5·2^52 rounds to the nearest integer.
const ROUND: f64 = 6_755_399_441_055_744.0;

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

/// `tanh x` for `f32`.
///
/// ```
/// let y = nabla_kernels::fastmath::tanh_f32(0.5);
/// assert!((y - 0.5f32.tanh()).abs() < 1e-7);
/// ```
#[inline(always)]
pub fn tanh_f32(x: f32) -> f32 {
    let x64 = x as f64;
    let a = if x64 < 0.0 { -x64 } else { x64 };
    let e = exp_for_f32(-2.0 * a);
    let big = (1.0 - e) / (1.0 + e);
    // Near zero 1 - e cancels; the series is exact to f64 precision there.
    let small = a - a * a * a * (1.0 / 3.0);
    let t = if a < 1e-4 { small } else { big };
    let y = (if x64 < 0.0 { -t } else { t }) as f32;
    if x.is_nan() { x } else { y }
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
    use super::*;

    fn ulps(a: f32, b: f32) -> u32 {
        (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs() as u32
    }

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
    }
}
