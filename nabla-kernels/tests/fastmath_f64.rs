//! The `f64` functions of `nabla_kernels::fastmath` against correctly
//! rounded references (`fixtures/fastmath_f64/`, from `mpmath`), against
//! the standard library on random sweeps, and on the special values.
//! `cargo test -p nabla-kernels --test fastmath_f64 -- --nocapture`
//! prints the largest error seen per function.

use nabla_kernels::fastmath::{
    cos_f64, exp_f64, exp_m1_f64, ln_1p_f64, ln_f64, sigmoid_f64, sin_f64, tanh_f64,
};

type F = fn(f64) -> f64;

/// Each function, its fixture and its standard-library twin.
const FUNCTIONS: [(&str, F, &[u8], F); 8] = [
    (
        "exp",
        exp_f64,
        include_bytes!("fixtures/fastmath_f64/exp.bin"),
        f64::exp,
    ),
    (
        "exp_m1",
        exp_m1_f64,
        include_bytes!("fixtures/fastmath_f64/exp_m1.bin"),
        f64::exp_m1,
    ),
    (
        "tanh",
        tanh_f64,
        include_bytes!("fixtures/fastmath_f64/tanh.bin"),
        f64::tanh,
    ),
    (
        "sigmoid",
        sigmoid_f64,
        include_bytes!("fixtures/fastmath_f64/sigmoid.bin"),
        sigmoid_std,
    ),
    (
        "ln",
        ln_f64,
        include_bytes!("fixtures/fastmath_f64/ln.bin"),
        f64::ln,
    ),
    (
        "ln_1p",
        ln_1p_f64,
        include_bytes!("fixtures/fastmath_f64/ln_1p.bin"),
        f64::ln_1p,
    ),
    (
        "sin",
        sin_f64,
        include_bytes!("fixtures/fastmath_f64/sin.bin"),
        f64::sin,
    ),
    (
        "cos",
        cos_f64,
        include_bytes!("fixtures/fastmath_f64/cos.bin"),
        f64::cos,
    ),
];

fn sigmoid_std(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        x.exp() / (1.0 + x.exp())
    }
}

/// The position of `x` on a line of all `f64` in order (−0 and +0 share
/// one), so that neighbours differ by 1.
fn ordinal(x: f64) -> i64 {
    let b = x.to_bits();
    if b >> 63 == 1 {
        -((b & !(1 << 63)) as i64)
    } else {
        b as i64
    }
}

/// Distance in ulps (NaN against NaN is 0, NaN against a number is far).
fn ulps(a: f64, b: f64) -> u64 {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => 0,
        (false, false) => ordinal(a).abs_diff(ordinal(b)),
        _ => u64::MAX,
    }
}

/// The `(x, reference)` records of a fixture.
fn records(bytes: &[u8]) -> impl Iterator<Item = (f64, f64)> + '_ {
    assert_eq!(bytes.len() % 16, 0, "a fixture holds 16-byte records");
    bytes.chunks_exact(16).map(|r| {
        let word = |i: usize| f64::from_bits(u64::from_le_bytes(r[i..i + 8].try_into().unwrap()));
        (word(0), word(8))
    })
}

/// A deterministic stream of random `u64` (SplitMix64).
fn random_bits(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed;
    move || {
        s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

#[test]
fn within_one_ulp_of_the_correctly_rounded_value() {
    for (name, f, fixture, _) in FUNCTIONS {
        let (mut worst, mut at, mut inexact, mut n) = (0, 0.0, 0, 0);
        for (x, want) in records(fixture) {
            let u = ulps(f(x), want);
            if u > worst {
                (worst, at) = (u, x);
            }
            inexact += usize::from(u > 0);
            n += 1;
        }
        println!("{name}: {n} references, {inexact} not correctly rounded, at most {worst} ulp");
        assert!(n > 5000, "{name}: only {n} records");
        assert!(
            worst <= 1,
            "{name}({at:e}) = {:e}, {worst} ulp from the reference",
            f(at)
        );
    }
}

#[test]
fn within_two_ulps_of_std_on_random_patterns() {
    // 1 ulp from the correctly rounded value and std's own error (within 1
    // ulp as well) give at most 2 ulps between the two.
    let mut next = random_bits(48);
    for (name, f, _, std) in FUNCTIONS {
        let mut worst = (0, 0.0);
        for i in 0..200_000 {
            // Half any bit pattern, half |x| < 8 (most of the action).
            let b = next();
            let x = if i % 2 == 0 {
                f64::from_bits(b)
            } else {
                (b >> 11) as f64 * 2f64.powi(-50) - 8.0
            };
            let x = if matches!(name, "sin" | "cos") && x.abs() >= 67_108_864.0 {
                x % 67_108_864.0
            } else {
                x
            };
            let u = ulps(f(x), std(x));
            if u > worst.0 {
                worst = (u, x);
            }
        }
        println!("{name}: at most {} ulp from std", worst.0);
        assert!(
            worst.0 <= 2,
            "{name}({:e}): {} ulp from std",
            worst.1,
            worst.0
        );
    }
}

#[test]
fn special_values() {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let tiny = [5e-324, 1e-310, f64::MIN_POSITIVE, 1e-300, 1e-20];
    for x in [0.0, -0.0].into_iter().chain(tiny).chain(tiny.map(|t| -t)) {
        for (name, f) in [
            ("exp_m1", exp_m1_f64 as F),
            ("tanh", tanh_f64),
            ("sin", sin_f64),
        ] {
            assert_eq!(f(x).to_bits(), x.to_bits(), "{name}({x:e})");
        }
        assert_eq!(ln_1p_f64(x).to_bits(), x.to_bits(), "ln_1p({x:e})");
        assert_eq!(exp_f64(x), 1.0, "exp({x:e})");
        assert_eq!(cos_f64(x), 1.0, "cos({x:e})");
        assert_eq!(sigmoid_f64(x), 0.5, "sigmoid({x:e})");
    }
    for (name, f) in FUNCTIONS.map(|(n, f, _, _)| (n, f)) {
        assert!(f(nan).is_nan() && f(-nan).is_nan(), "{name}(NaN)");
    }
    let cases: [(&str, F, f64, f64); 16] = [
        ("exp", exp_f64, inf, inf),
        ("exp", exp_f64, -inf, 0.0),
        ("exp", exp_f64, 709.8, inf),
        ("exp", exp_f64, -745.2, 0.0),
        ("exp", exp_f64, -745.0, 5e-324),
        ("exp_m1", exp_m1_f64, inf, inf),
        ("exp_m1", exp_m1_f64, -inf, -1.0),
        ("exp_m1", exp_m1_f64, 709.8, inf),
        ("tanh", tanh_f64, inf, 1.0),
        ("tanh", tanh_f64, -inf, -1.0),
        ("sigmoid", sigmoid_f64, inf, 1.0),
        ("sigmoid", sigmoid_f64, -inf, 0.0),
        ("ln", ln_f64, inf, inf),
        ("ln", ln_f64, 0.0, -inf),
        ("ln", ln_f64, -0.0, -inf),
        ("ln_1p", ln_1p_f64, -1.0, -inf),
    ];
    for (name, f, x, want) in cases {
        assert_eq!(f(x).to_bits(), want.to_bits(), "{name}({x:e})");
    }
    assert_eq!(ln_1p_f64(inf), inf);
    assert_eq!(ln_f64(1.0).to_bits(), 0);
    assert_eq!(exp_m1_f64(-40.0), -1.0);
    for x in [-1e-300, -1.0, -inf] {
        assert!(ln_f64(x).is_nan(), "ln({x:e})");
    }
    for x in [-1.000_000_000_000_000_2, -2.0, -inf] {
        assert!(ln_1p_f64(x).is_nan(), "ln_1p({x:e})");
    }
    for x in [inf, -inf, 2f64.powi(51), -2f64.powi(51), 1e300] {
        assert!(sin_f64(x).is_nan() && cos_f64(x).is_nan(), "sin/cos({x:e})");
    }
    // Odd and even functions, bit for bit.
    let mut next = random_bits(7);
    for _ in 0..10_000 {
        let x = (next() >> 11) as f64 * 2f64.powi(-53) * 100.0;
        for (name, f) in [("tanh", tanh_f64 as F), ("sin", sin_f64)] {
            assert_eq!(f(-x).to_bits(), (-f(x)).to_bits(), "{name} is odd at {x:e}");
        }
        assert_eq!(
            cos_f64(-x).to_bits(),
            cos_f64(x).to_bits(),
            "cos is even at {x:e}"
        );
        let s = sigmoid_f64(x) + sigmoid_f64(-x);
        assert!(
            (s - 1.0).abs() <= 2.3e-16,
            "sigmoid(x) + sigmoid(−x) = {s} at {x:e}"
        );
    }
}

#[test]
fn sin_cos_beyond_the_exact_range_are_sines_of_a_nearby_argument() {
    // For 2^26 ≤ |x| < 2^51: within 1 ulp of sin(x + δ), |δ| ≤ ulp(x), so
    // within ulp(x) + 2 ulp of the result from std.
    let mut next = random_bits(26);
    for _ in 0..100_000 {
        let x = f64::from_bits(
            (next() % (2f64.powi(51).to_bits() - 2f64.powi(26).to_bits()))
                + 2f64.powi(26).to_bits(),
        );
        let bound = x * f64::EPSILON + 4.5e-16;
        for (ours, want) in [(sin_f64(x), x.sin()), (cos_f64(x), x.cos())] {
            assert!((ours - want).abs() <= bound, "{x:e}: {ours:e} vs {want:e}");
        }
        assert_eq!(sin_f64(-x), -sin_f64(x));
        assert_eq!(cos_f64(-x), cos_f64(x));
    }
}
