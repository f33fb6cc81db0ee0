//! `hello`: `square(x) = x²` and `double(x)`, its derivative, by `grad`.
//! The input is one number, so the function is one of `f64`: its
//! generated derivative is straight-line `f64` code.

use super::{Job, num, unknown};
use nabla::prelude::*;
use serde_json::Value as Json;

#[differentiable]
fn square(x: f64) -> f64 {
    x * x
}

struct Hello {
    x: f64,
    derivative: bool,
    out: f64,
}

impl Job for Hello {
    fn run(&mut self) {
        let x = std::hint::black_box(self.x);
        self.out = if self.derivative {
            grad(square)(x)
        } else {
            square(x)
        };
    }
    fn output(&self) -> Json {
        Json::from(self.out)
    }
}

pub fn job(function: &str, input: &Json) -> Result<Box<dyn Job>, String> {
    let derivative = match function {
        "square" => false,
        "double" => true,
        f => return Err(unknown("hello", f)),
    };
    Ok(Box::new(Hello {
        x: num(input, "hello input")?,
        derivative,
        out: 0.0,
    }))
}
