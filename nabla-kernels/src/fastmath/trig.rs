//! `sin x` and `cos x`.
//!
//! Both reduce `a = |x|` by an integer multiple `h` of π/2 to `r = a −
//! h·π/2` in `[−π/2, π/2]` and evaluate one odd polynomial for `sin r`,
//! all in `f64`, then round once. For the sine `h = 2n` with `n` the
//! integer nearest `a/π`, so `sin a = (−1)^n sin r`; for the cosine `h =
//! 2n − 1` with `n` the integer nearest `a/π + 1/2`, so `cos a = sin(a +
//! π/2) = (−1)^n sin r`.
//!
//! The reduction is Cody–Waite's: π/2 is split into `P1 + P2 + P3`,
//! where `P1` and `P2` have 25 significant bits, so for `h < 2^28` the
//! products `h·P1` and `h·P2` and the first two subtractions are exact
//! and `r` keeps a relative error below 2^-49 (no `f32` comes closer than
//! 2^-29.8·π/2 to a multiple of π/2, found from the continued fraction of
//! `2^e·(2/π)` for every exponent `e`). That covers `|x| < 4.2e8`.
//!
//! An exact reduction over the whole `f32` range needs 2/π to ~190 bits,
//! picked by the exponent of `x` (Payne–Hanek). Done with a table, every
//! element pays for it: the loads, indexed per lane, are gathered one lane
//! at a time, which made the loop 5× slower than this one (and 2× slower
//! than the C library's `sinf`); a select that calls the C library for
//! large `|x|` stops LLVM from vectorising the loop at all (see
//! `docs/performance.md`). So above `h = 2^28` the products round, which
//! perturbs the argument by at most `|x|·2^-50` (far below the spacing of
//! `f32` values there, `|x|·2^-23`), and above 2^52 the functions give
//! NaN.

use super::ROUND;

/// π/2 = `P1 + P2 + P3` (to 2^-109): `P1` and `P2` hold 25 significant
/// bits each, so `h·P1` and `h·P2` are exact for `h < 2^28`.
const P1: f64 = 1.570_796_310_901_641_8; // 0x1.921fb5p+0
const P2: f64 = 1.589_325_471_229_585_7e-8; // 0x1.110b46p-26
const P3: f64 = 6.123_233_995_736_766e-17;

/// `(sin r − r) / r³` on `|r| ≤ π/2`, in powers of `r²` (a weighted
/// least-squares fit with Lawson reweighting towards minimax; relative
/// error of `sin r` below 2.4e-11).
const SIN: [f64; 5] = [
    -0.166_666_666_261_076_6,
    0.008_333_331_106_771_882,
    -0.000_198_408_679_634_469_7,
    2.752_537_144_788_511e-6,
    -2.388_867_527_107_878_2e-8,
];

/// Above this `|x|` the reduction's integer `n` no longer fits the
/// rounding trick; the result is NaN.
const LIMIT: f32 = 4_503_599_627_370_496.0; // 2^52

/// `sin(a + shift·π/2)` for `a = |x|` (`shift` 0 for the sine, 1 for the
/// cosine), in `f64`.
#[inline(always)]
fn sin_shifted(a: f32, shift: f64) -> f64 {
    let a = a as f64;
    let t = (a * std::f64::consts::FRAC_1_PI + 0.5 * shift) + ROUND;
    let n = t - ROUND;
    let h = 2.0 * n - shift;
    let r = ((a - h * P1) - h * P2) - h * P3;
    let z = r * r;
    let s = r + r * z * (SIN[0] + z * (SIN[1] + z * (SIN[2] + z * (SIN[3] + z * SIN[4]))));
    // (−1)^n: the parity of n is the low bit of t.
    f64::from_bits(s.to_bits() ^ (t.to_bits() << 63))
}

/// `sin x` for `f32`.
///
/// Within 1 ulp of the correctly rounded value for `|x| < 4.2e8`, and
/// correctly rounded for nearly all (the `f64` evaluation's relative error
/// is below 3e-11 before the one rounding to `f32`): checked against
/// `(x as f64).sin()` rounded to `f32` for every such `f32` (test
/// `sin_cos_f32_are_within_one_ulp_everywhere`, ignored by default).
/// Above, the reduction is inexact (see the module source): the result
/// is within `|x|·2^-50` of the true value (before its rounding to `f32`)
/// up to `|x| = 2^52`, NaN beyond.
/// Odd: `sin(−0) = −0`; infinities and NaN give NaN.
///
/// ```
/// use nabla_kernels::fastmath::sin_f32;
/// assert_eq!(sin_f32(0.5), 0.5f64.sin() as f32);
/// assert_eq!(sin_f32(-0.0).to_bits(), (-0.0f32).to_bits());
/// assert!(sin_f32(f32::INFINITY).is_nan());
/// ```
#[inline(always)]
pub fn sin_f32(x: f32) -> f32 {
    let a = x.abs();
    let v = sin_shifted(a, 0.0);
    // sin is odd: the sign of x, exclusive-or the reduction's sign.
    let sign = ((x.to_bits() & 0x8000_0000) as u64) << 32;
    let y = f64::from_bits(v.to_bits() ^ sign) as f32;
    if a < LIMIT { y } else { f32::NAN }
}

/// `cos x` for `f32`.
///
/// The same reduction and polynomial as [`sin_f32`], with the same
/// accuracy (test `sin_cos_f32_are_within_one_ulp_everywhere`): within 1
/// ulp for `|x| < 4.2e8`, within `|x|·2^-50` up to 2^52, NaN beyond and
/// for infinities and NaN.
///
/// ```
/// use nabla_kernels::fastmath::cos_f32;
/// assert_eq!(cos_f32(0.0), 1.0);
/// assert_eq!(cos_f32(2.0), 2.0f64.cos() as f32);
/// assert!(cos_f32(f32::NAN).is_nan());
/// ```
#[inline(always)]
pub fn cos_f32(x: f32) -> f32 {
    let a = x.abs();
    let y = sin_shifted(a, 1.0) as f32;
    if a < LIMIT { y } else { f32::NAN }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{exhaustive, patterns, ulps, worst};
    use super::*;

    /// Where `sin_f32` and `cos_f32` are within 1 ulp.
    const EXACT: f32 = 4.2e8;

    #[test]
    fn sin_cos_f32_dense_sweep() {
        let xs = || (0..=145_985).map(|i| -100.0 + i as f32 * 0.001_37);
        let (ws, xs_) = worst(xs(), sin_f32, f64::sin);
        let (wc, xc) = worst(xs(), cos_f32, f64::cos);
        assert!(
            ws <= 1 && wc <= 1,
            "sin {ws} ulp at {xs_:e}, cos {wc} ulp at {xc:e}"
        );
    }

    #[test]
    fn sin_cos_f32_near_multiples_of_half_pi() {
        // The f32 nearest k·π/2 and its neighbours, where one of sin and
        // cos is close to 0 and the reduction cancels most.
        let mut xs = Vec::new();
        for k in (1..3000).chain((1..2000).map(|i| i * 104_729)) {
            let c = (k as f64 * std::f64::consts::FRAC_PI_2) as f32;
            for d in -3i32..=3 {
                let x = f32::from_bits((c.to_bits() as i32 + d) as u32);
                xs.extend([x, -x]);
            }
        }
        // The f32 closest to multiples of π/2 relative to their size (from
        // the continued fractions of 2^e·(2/π)).
        xs.extend([
            4.712_389,
            252.898_21,
            505.796_42,
            1_011.592_83,
            52_516.434,
            2_709_675.5,
            42_781_604.0,
            85_563_208.0,
        ]);
        let (ws, xs_) = worst(xs.iter().copied(), sin_f32, f64::sin);
        let (wc, xc) = worst(xs.iter().copied(), cos_f32, f64::cos);
        assert!(
            ws <= 1 && wc <= 1,
            "sin {ws} ulp at {xs_:e}, cos {wc} ulp at {xc:e}"
        );
    }

    #[test]
    fn sin_cos_f32_over_the_exact_range() {
        // Every 3001st pattern from the smallest subnormal to 4.2e8, and
        // its negative.
        let pos = || patterns(f32::from_bits(1), EXACT, 3001);
        for xs in [pos().collect::<Vec<_>>(), pos().map(|x| -x).collect()] {
            let (ws, xs_) = worst(xs.iter().copied(), sin_f32, f64::sin);
            let (wc, xc) = worst(xs.iter().copied(), cos_f32, f64::cos);
            assert!(
                ws <= 1 && wc <= 1,
                "sin {ws} ulp at {xs_:e}, cos {wc} ulp at {xc:e}"
            );
        }
        let big = || patterns(1e4, 1e8, 389);
        let (ws, xs_) = worst(big(), sin_f32, f64::sin);
        let (wc, xc) = worst(big(), cos_f32, f64::cos);
        assert!(
            ws <= 1 && wc <= 1,
            "sin {ws} ulp at {xs_:e}, cos {wc} ulp at {xc:e}"
        );
    }

    #[test]
    fn sin_cos_f32_beyond_the_exact_range() {
        // Within |x|·2^-50 (plus the rounding to f32) up to 2^52.
        for x in patterns(EXACT, LIMIT, 1009).filter(|&x| x < LIMIT) {
            let bound = x as f64 * 2f64.powi(-50);
            for (ours, want) in [
                (sin_f32(x), (x as f64).sin()),
                (cos_f32(x), (x as f64).cos()),
            ] {
                let err = (ours as f64 - want).abs();
                assert!(err <= bound + 6e-8, "{x:e}: {ours:e} vs {want:e}");
            }
            assert_eq!(sin_f32(-x), -sin_f32(x), "sin is odd at {x:e}");
            assert_eq!(cos_f32(-x), cos_f32(x), "cos is even at {x:e}");
        }
        for x in [LIMIT, -LIMIT, 1e20, f32::MAX, -f32::MAX] {
            assert!(sin_f32(x).is_nan() && cos_f32(x).is_nan(), "{x:e}");
        }
    }

    #[test]
    fn sin_cos_f32_special_values() {
        for x in [
            0.0f32,
            -0.0,
            1e-30,
            -1e-30,
            1e-45,
            -1e-45,
            f32::MIN_POSITIVE,
        ] {
            assert_eq!(sin_f32(x).to_bits(), x.to_bits(), "sin({x:e})");
            assert_eq!(cos_f32(x), 1.0);
        }
        for x in [f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -f32::NAN] {
            assert!(sin_f32(x).is_nan() && cos_f32(x).is_nan());
        }
        for x in [
            EXACT,
            -EXACT,
            0.5,
            -0.5,
            1.0,
            1e4,
            1e8,
            std::f32::consts::FRAC_PI_2,
        ] {
            assert!(ulps(sin_f32(x), (x as f64).sin() as f32) <= 1, "sin({x:e})");
            assert!(ulps(cos_f32(x), (x as f64).cos() as f32) <= 1, "cos({x:e})");
        }
        for x in [-3.0f32, -1.0, 0.25, 2.0, 1e3] {
            assert_eq!(
                sin_f32(-x).to_bits(),
                (-sin_f32(x)).to_bits(),
                "sin is odd at {x:e}"
            );
            assert_eq!(cos_f32(-x), cos_f32(x), "cos is even at {x:e}");
        }
    }

    /// Every `f32` of magnitude below 4.2e8: run with `cargo test
    /// --release -p nabla-kernels -- --ignored
    /// sin_cos_f32_are_within_one_ulp_everywhere`.
    #[test]
    #[ignore = "about a minute in release mode on two cores"]
    fn sin_cos_f32_are_within_one_ulp_everywhere() {
        let check = |x: f32| {
            let (s, c) = ((x as f64).sin() as f32, (x as f64).cos() as f32);
            ulps(sin_f32(x), s).max(ulps(cos_f32(x), c))
        };
        let pos = exhaustive(0, EXACT.to_bits(), check);
        let neg = exhaustive((-0.0f32).to_bits(), (-EXACT).to_bits(), check);
        assert!(pos.max(neg) <= 1, "worst error {} ulp", pos.max(neg));
    }
}
