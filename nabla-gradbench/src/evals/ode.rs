//! `ode`: `s` classic Runge–Kutta steps of `y₀' = x₀`, `yᵢ' = xᵢ yᵢ₋₁`
//! from `y = 0` to `t = 2` (`primal`), and the gradient of the last
//! component in `x` (`gradient`, by differentiating the solver: GradBench's
//! reference uses the exact solution instead; they agree where RK4 is
//! exact, n ≤ 4, and at GradBench's sizes, where both vanish).

use super::{Job, field, int, list, nums, unknown};
use nabla::prelude::*;
use serde_json::Value as Json;

/// `pad`'s widths for one element in front.
fn one_in_front() -> Vec<(usize, usize)> {
    vec![(1, 0)]
}

/// The right-hand side: `x ⊙ [1, y₀, …, y_{n−2}]`.
#[differentiable]
fn rhs(x: &Array, y: &Array) -> Array {
    let n = y.shape()[0];
    let shifted = nabla::pad(&y.slice_axis(0, 0..n - 1), &one_in_front(), 1.0);
    x * &shifted
}

#[differentiable]
fn solve(x: &Array, #[nondiff] steps: usize) -> Array {
    let h = 2.0 / steps as f64;
    let mut y = x.zeros_like();
    for _ in 0..steps {
        let k1 = rhs(x, &y);
        let k2 = rhs(x, &(&y + &(&k1 * (h / 2.0))));
        let k3 = rhs(x, &(&y + &(&k2 * (h / 2.0))));
        let k4 = rhs(x, &(&y + &(&k3 * h)));
        y = &y + &((k1 + k2 * 2.0 + k3 * 2.0 + k4) * (h / 6.0));
    }
    y
}

/// The last component of the solution.
#[differentiable]
fn last(x: &Array, #[nondiff] steps: usize) -> Array {
    let n = x.shape()[0];
    nabla::sum(&solve(x, steps).slice_axis(0, n - 1..n))
}

struct Ode {
    x: Array,
    s: usize,
    gradient: bool,
    out: Option<Array>,
}

impl Job for Ode {
    fn run(&mut self) {
        self.out = Some(if self.gradient {
            grad(last)(&self.x, self.s)
        } else {
            solve(&self.x, self.s)
        });
    }
    fn output(&self) -> Json {
        list(self.out.as_ref().expect("run first"))
    }
}

pub fn job(function: &str, input: &Json) -> Result<Box<dyn Job>, String> {
    let gradient = match function {
        "primal" => false,
        "gradient" => true,
        f => return Err(unknown("ode", f)),
    };
    let x = nums(field(input, "x")?, "x")?;
    let s = int(field(input, "s")?, "s")?;
    if x.is_empty() || s == 0 {
        return Err(format!(
            "ode: needs n ≥ 1 and s ≥ 1, got n = {}, s = {s}",
            x.len()
        ));
    }
    Ok(Box::new(Ode {
        x: Array::from_vec(x.clone(), &[x.len()]),
        s,
        gradient,
        out: None,
    }))
}
