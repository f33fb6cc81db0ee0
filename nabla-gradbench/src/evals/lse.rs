//! `lse`: `primal(x) = log Σ exp(x)` (shifted by the maximum) and its
//! gradient.

use super::{Job, field, nums, value_or_gradient};
use nabla::prelude::*;
use serde_json::Value as Json;

#[differentiable]
fn lse(x: &Array) -> Array {
    nabla::logsumexp(x)
}

pub fn job(function: &str, input: &Json) -> Result<Box<dyn Job>, String> {
    let x = nums(field(input, "x")?, "x")?;
    let x = Array::from_vec(x.clone(), &[x.len()]);
    let x2 = x.clone();
    value_or_gradient(
        "lse",
        function,
        ("primal", "gradient"),
        move || lse(&x),
        move || grad(lse)(&x2),
    )
}
