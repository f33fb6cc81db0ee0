//! `llsq`: least squares of a polynomial fit to a sign function,
//! `½ Σᵢ (sᵢ − Σⱼ xⱼ tᵢʲ)²` with `tᵢ = −1 + 2i/(n − 1)`, and its gradient.

use super::{Job, field, int, nums, value_or_gradient};
use nabla::prelude::*;
use serde_json::Value as Json;

/// The objective for the powers `tt [m, n]` (`tt[j, i] = tᵢʲ`) and signs
/// `s [n]`.
#[differentiable]
fn llsq(x: &Array, tt: &Array, s: &Array) -> Array {
    let r = s - &x.matmul(tt);
    nabla::sum(&(&r * &r)) * 0.5
}

/// The sample points' powers, one row per power (each row the previous
/// times `t`, a loop over independent elements), and signs: part of the
/// timed work, as in `manual` and the `jax` tool.
fn design(n: usize, m: usize) -> (Array, Array) {
    let t: Vec<f64> = (0..n)
        .map(|i| -1.0 + (i as f64 * 2.0) / (n as f64 - 1.0))
        .collect();
    let s: Vec<f64> = t
        .iter()
        .map(|&ti| {
            if ti > 0.0 {
                1.0
            } else if ti < 0.0 {
                -1.0
            } else {
                0.0
            }
        })
        .collect();
    let mut tt = vec![1.0; n * m];
    for j in 1..m {
        let (done, row) = tt.split_at_mut(j * n);
        let prev = &done[(j - 1) * n..];
        for ((p, q), ti) in row[..n].iter_mut().zip(prev).zip(&t) {
            *p = q * ti;
        }
    }
    (Array::from_vec(tt, &[m, n]), Array::from_vec(s, &[n]))
}

pub fn job(function: &str, input: &Json) -> Result<Box<dyn Job>, String> {
    let x = nums(field(input, "x")?, "x")?;
    let n = int(field(input, "n")?, "n")?;
    if n < 2 {
        return Err(format!(
            "llsq: n = {n}; at least 2 sample points are needed"
        ));
    }
    let m = x.len();
    let x = Array::from_vec(x, &[m]);
    let x2 = x.clone();
    value_or_gradient(
        "llsq",
        function,
        ("primal", "gradient"),
        move || {
            let (t, s) = design(n, m);
            llsq(&x, &t, &s)
        },
        move || {
            let (t, s) = design(n, m);
            grad(llsq)(&x2, &t, &s)
        },
    )
}
