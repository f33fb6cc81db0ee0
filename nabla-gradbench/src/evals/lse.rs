//! `lse`: `primal(x) = log Σ exp(x)` (shifted by the maximum) and its
//! gradient.

use super::{Job, field, list, nums, unknown};
use nabla::prelude::*;
use serde_json::Value as Json;

#[differentiable]
fn lse(x: &Array) -> Array {
    nabla::logsumexp(x)
}

struct Lse {
    x: Array,
    gradient: bool,
    out: Option<Array>,
}

impl Job for Lse {
    fn run(&mut self) {
        self.out = Some(if self.gradient {
            grad(lse)(&self.x)
        } else {
            lse(&self.x)
        });
    }
    fn output(&self) -> Json {
        let out = self.out.as_ref().expect("run first");
        if self.gradient {
            list(out)
        } else {
            Json::from(out.item())
        }
    }
}

pub fn job(function: &str, input: &Json) -> Result<Box<dyn Job>, String> {
    let gradient = match function {
        "primal" => false,
        "gradient" => true,
        f => return Err(unknown("lse", f)),
    };
    let x = nums(field(input, "x")?, "x")?;
    let x = Array::from_vec(x.clone(), &[x.len()]);
    Ok(Box::new(Lse {
        x,
        gradient,
        out: None,
    }))
}
