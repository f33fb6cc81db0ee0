//! Special functions no dependency provides: digamma and polygamma (f64).
//!
//! Both shift `x` upwards with the recurrence `ψ⁽ⁿ⁾(x) = ψ⁽ⁿ⁾(x + 1) -
//! (-1)ⁿ n! / xⁿ⁺¹` until `x ≥ 20`, then sum the asymptotic series with
//! Bernoulli numbers, which there is accurate to a few ulps. The recurrence
//! also covers negative non-integer `x` down to `-20`; below that the
//! reflection formula maps `x` to `1 - x`, so no input takes more than
//! about 40 steps. Orders above [`MAX_ORDER`] give NaN: their `n!`
//! overflows `f64`.

/// `B₂ₖ / (2k)` for k = 1..=8, the digamma series' coefficients.
const B2K_OVER_2K: [f64; 8] = [
    1.0 / 12.0,
    -1.0 / 120.0,
    1.0 / 252.0,
    -1.0 / 240.0,
    1.0 / 132.0,
    -691.0 / 32760.0,
    1.0 / 12.0,
    -3617.0 / 8160.0,
];

/// Bernoulli numbers `B₂ₖ`, k = 1..=8.
const B2K: [f64; 8] = [
    1.0 / 6.0,
    -1.0 / 30.0,
    1.0 / 42.0,
    -1.0 / 30.0,
    5.0 / 66.0,
    -691.0 / 2730.0,
    7.0 / 6.0,
    -3617.0 / 510.0,
];

/// Where the asymptotic series takes over.
const LARGE: f64 = 20.0;

/// The largest polygamma order: `171!` overflows `f64`.
pub const MAX_ORDER: i32 = 170;

/// `tan(πx)`, on the fractional part of `x` (exact), so that it stays
/// accurate for large `|x|`.
fn tan_pi(x: f64) -> f64 {
    (std::f64::consts::PI * (x - x.floor())).tan()
}

/// `Pₙ(c)` with `dⁿ/dxⁿ cot(πx) = πⁿ Pₙ(cot πx)`: `P₀(c) = c`,
/// `Pₖ₊₁(c) = -(1 + c²) Pₖ'(c)` (on the polynomial's coefficients).
fn cot_derivative(n: i32, c: f64) -> f64 {
    let n = n as usize;
    let mut p = vec![0.0; n + 2];
    p[1] = 1.0;
    for k in 0..n {
        // p has degree k + 1; its derivative times -(1 + c²).
        let d: Vec<f64> = (1..=k + 1).map(|j| j as f64 * p[j]).collect();
        p.iter_mut().for_each(|v| *v = 0.0);
        for (j, &dj) in d.iter().enumerate() {
            p[j] -= dj;
            p[j + 2] -= dj;
        }
    }
    p.iter().rev().fold(0.0, |acc, &v| acc * c + v)
}

/// The digamma function `ψ(x) = Γ'(x) / Γ(x)`: NaN at the poles
/// (0, -1, -2, …).
///
/// ```
/// let g = nabla_kernels::special::digamma(1.0);
/// assert!((g + 0.5772156649015329).abs() < 1e-15);
/// ```
pub fn digamma(mut x: f64) -> f64 {
    if x.is_nan() || (x <= 0.0 && x == x.floor()) {
        return f64::NAN;
    }
    if x < -LARGE {
        // Reflection: ψ(x) = ψ(1 - x) - π cot(πx).
        return digamma(1.0 - x) - std::f64::consts::PI / tan_pi(x);
    }
    let mut acc = 0.0;
    while x < LARGE {
        acc -= 1.0 / x;
        x += 1.0;
    }
    let inv2 = 1.0 / (x * x);
    let mut series = 0.0;
    let mut pow = inv2;
    for c in B2K_OVER_2K {
        series += c * pow;
        pow *= inv2;
    }
    acc + x.ln() - 0.5 / x - series
}

/// The polygamma function `ψ⁽ⁿ⁾(x)`, the `n`-th derivative of digamma
/// (`n = 0` is digamma itself; negative `n` and `n` above [`MAX_ORDER`]
/// give NaN).
///
/// ```
/// // ψ'(1) = π²/6
/// let t = nabla_kernels::special::polygamma(1, 1.0);
/// assert!((t - std::f64::consts::PI.powi(2) / 6.0).abs() < 1e-14);
/// ```
pub fn polygamma(n: i32, mut x: f64) -> f64 {
    if n == 0 {
        return digamma(x);
    }
    if !(0..=MAX_ORDER).contains(&n) || x.is_nan() || (x <= 0.0 && x == x.floor()) {
        return f64::NAN;
    }
    if x < -LARGE {
        // Reflection, differentiated n times:
        // ψ⁽ⁿ⁾(x) = (-1)ⁿ ψ⁽ⁿ⁾(1 - x) - πⁿ⁺¹ Pₙ(cot πx).
        let sign = if n % 2 == 0 { 1.0 } else { -1.0 };
        let cot = 1.0 / tan_pi(x);
        return sign * polygamma(n, 1.0 - x)
            - std::f64::consts::PI.powi(n + 1) * cot_derivative(n, cot);
    }
    let nf = n as f64;
    // n! and the sign (-1)^(n+1).
    let fact: f64 = (1..=n).map(f64::from).product();
    let sign = if n % 2 == 1 { 1.0 } else { -1.0 };
    let mut acc = 0.0;
    while x < LARGE {
        acc += 1.0 / x.powi(n + 1);
        x += 1.0;
    }
    // Asymptotic: (n-1)!/xⁿ + n!/(2xⁿ⁺¹) + Σ B₂ₖ (2k+n-1)!/((2k)! x²ᵏ⁺ⁿ).
    let mut series = fact / nf / x.powi(n) + fact / (2.0 * x.powi(n + 1));
    // ratio = (2k+n-1)! / (2k)!, built up term by term.
    let mut ratio = fact * (nf + 1.0) / 2.0;
    let inv2 = 1.0 / (x * x);
    let mut pow = 1.0 / x.powi(n + 1) / x; // x^-(n+2)
    for (k, b) in (1..=8).zip(B2K) {
        let kf = f64::from(k);
        if k > 1 {
            ratio *=
                (2.0 * kf + nf - 2.0) * (2.0 * kf + nf - 1.0) / ((2.0 * kf - 1.0) * (2.0 * kf));
        }
        series += b * ratio * pow;
        pow *= inv2;
    }
    sign * (fact * acc + series)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Central differences of ψ⁽ⁿ⁾ against ψ⁽ⁿ⁺¹⁾, and ψ against ln Γ'.
    #[test]
    fn each_is_the_derivative_of_the_previous() {
        for &x in &[-1.3, -0.4, 0.3, 1.0, 1.7, 4.2, 19.5, 20.5, 73.0] {
            let h = 1e-5;
            let dl = (libm::lgamma(x + h) - libm::lgamma(x - h)) / (2.0 * h);
            assert!(
                (dl - digamma(x)).abs() < 1e-7 * (1.0 + dl.abs()),
                "digamma({x})"
            );
            for n in 0..4 {
                let d = (polygamma(n, x + h) - polygamma(n, x - h)) / (2.0 * h);
                let want = polygamma(n + 1, x);
                assert!(
                    (d - want).abs() < 1e-5 * (1.0 + want.abs()),
                    "polygamma({n}+1, {x}): {d} vs {want}"
                );
            }
        }
    }

    /// Below -20 the reflection takes over: it must satisfy the
    /// recurrence `ψ⁽ⁿ⁾(x) = ψ⁽ⁿ⁾(x + 1) - (-1)ⁿ n! / xⁿ⁺¹` with the
    /// values above -20, and stay fast (a few steps) far out.
    #[test]
    fn reflection_below_minus_twenty() {
        for &x in &[-20.5, -20.9, -25.3, -1e6 - 0.5] {
            for n in 0..4 {
                let fact: f64 = (1..=n).map(f64::from).product();
                let sign = if n % 2 == 0 { 1.0 } else { -1.0 };
                let want = polygamma(n, x + 1.0) - sign * fact / x.powi(n + 1);
                let got = polygamma(n, x);
                assert!(
                    (got - want).abs() < 1e-9 * (1.0 + want.abs()),
                    "polygamma({n}, {x}): {got} vs {want}"
                );
            }
        }
        let t = std::time::Instant::now();
        assert!(digamma(-1e15 - 0.5).is_finite());
        assert!(polygamma(3, -1e15 - 0.5).is_finite());
        assert!(polygamma(i32::MAX, 1.5).is_nan() && polygamma(MAX_ORDER + 1, 2.0).is_nan());
        assert!(t.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn known_values() {
        // ψ(1/2) = -γ - 2 ln 2; ψ''(1) = -2 ζ(3); ψ'(1/2) = π²/2.
        let gamma = 0.5772156649015329;
        assert!((digamma(0.5) - (-gamma - 2.0 * std::f64::consts::LN_2)).abs() < 1e-15);
        assert!((polygamma(2, 1.0) + 2.0 * 1.2020569031595942).abs() < 1e-14);
        assert!((polygamma(1, 0.5) - std::f64::consts::PI.powi(2) / 2.0).abs() < 1e-13);
        assert!(digamma(0.0).is_nan() && digamma(-2.0).is_nan() && polygamma(1, -1.0).is_nan());
    }
}
