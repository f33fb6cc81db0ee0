//! Vectorisable transcendental functions for `f32` and `f64` kernels.
//!
//! The C library's `expf`, `tanhf`, `sinf`, `log1pf`, … are called one
//! element at a time and stop LLVM from vectorising a loop. These versions
//! use only arithmetic, comparisons, integer bit operations and (for the
//! sine's argument reduction) loads from a constant table, with selects
//! (`if c { a } else { b }` on values) instead of branches, so a loop over
//! them becomes SIMD code. Most compute in `f64` and round once to `f32`,
//! which keeps the result within an ulp of the correctly rounded value
//! (each function's documentation gives its figure and the test that
//! checks it). The `f64` versions reach 1 ulp with double-double steps
//! (error-free sums and products, `dd.rs`) where one rounding too many
//! would cost it, and are checked against correctly rounded references
//! (`tests/fastmath_f64.rs`, fixtures from `mpmath`).
//!
//! | file | functions |
//! |---|---|
//! | `exp.rs` | [`exp_f32`], [`tanh_f32`], [`sigmoid_f32`], [`exp_for_f32`] |
//! | `trig.rs` | [`sin_f32`], [`cos_f32`] |
//! | `log.rs` | [`ln_f32`], [`ln_1p_f32`] |
//! | `erf.rs` | [`erf_f32`] |
//! | `exp64.rs` | [`exp_f64`], [`exp_m1_f64`], [`tanh_f64`], [`sigmoid_f64`] |
//! | `trig64.rs` | [`sin_f64`], [`cos_f64`] |
//! | `log64.rs` | [`ln_f64`], [`ln_1p_f64`] |
//! | `dd.rs` | double-double steps shared by the `f64` functions |

mod dd;
mod erf;
mod exp;
mod exp64;
mod log;
mod log64;
mod trig;
mod trig64;

pub use erf::erf_f32;
pub use exp::{exp_f32, exp_for_f32, sigmoid_f32, tanh_f32};
pub use exp64::{exp_f64, exp_m1_f64, sigmoid_f64, tanh_f64};
pub use log::{ln_1p_f32, ln_f32};
pub use log64::{ln_1p_f64, ln_f64};
pub use trig::{cos_f32, sin_f32};
pub use trig64::{cos_f64, sin_f64};

/// Adding then subtracting 1.5·2^52 rounds an `f64` below 2^51 in
/// magnitude to the nearest integer; in between, the integer sits in the
/// low bits of the sum (two's complement, modulo 2^51).
const ROUND: f64 = 6_755_399_441_055_744.0;

#[cfg(test)]
mod test_support {
    /// Distance in ulps between two `f32` of the same sign (bit patterns
    /// of opposite signs are far apart, so a wrong sign fails).
    pub(super) fn ulps(a: f32, b: f32) -> u32 {
        (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs() as u32
    }

    /// The largest `ulps(f(x), reference(x))` over `xs`, with the `x` where
    /// it occurs.
    pub(super) fn worst(
        xs: impl IntoIterator<Item = f32>,
        f: impl Fn(f32) -> f32,
        reference: impl Fn(f64) -> f64,
    ) -> (u32, f32) {
        let mut w = (0, 0.0);
        for x in xs {
            let u = ulps(f(x), reference(x as f64) as f32);
            if u > w.0 {
                w = (u, x);
            }
        }
        w
    }

    /// Every `step`-th `f32` bit pattern from `lo` up to `hi` (both
    /// non-negative).
    pub(super) fn patterns(lo: f32, hi: f32, step: u32) -> impl Iterator<Item = f32> {
        (lo.to_bits()..=hi.to_bits())
            .step_by(step as usize)
            .map(f32::from_bits)
    }

    /// Runs `check` (an error in ulps) on every `f32` bit pattern in
    /// `lo..=hi` (as `u32`), split between the available threads; returns
    /// the largest error and prints how many were not 0 (not the
    /// reference's rounding).
    pub(super) fn exhaustive(lo: u32, hi: u32, check: impl Fn(f32) -> u32 + Sync) -> u32 {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
        let (lo, hi) = (lo as u64, hi as u64 + 1);
        let chunk = (hi - lo).div_ceil(threads);
        let (worst, inexact) = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    let check = &check;
                    s.spawn(move || {
                        let (a, b) = (lo + t * chunk, (lo + (t + 1) * chunk).min(hi));
                        (a..b).fold((0, 0u64), |(w, n), bits| {
                            let e = check(f32::from_bits(bits as u32));
                            (w.max(e), n + u64::from(e > 0))
                        })
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap())
                .fold((0, 0), |(w, n), (w2, n2)| (w.max(w2), n + n2))
        });
        println!("{inexact} of {} differ from the reference", hi - lo);
        worst
    }
}
