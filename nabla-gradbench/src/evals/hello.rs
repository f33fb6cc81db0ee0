//! `hello`: `square(x) = x²` and `double(x)`, its derivative, by `grad`.

use super::{Job, num, unknown};
use nabla::prelude::*;
use serde_json::Value as Json;

#[differentiable]
fn square(x: &Array) -> Array {
    x * x
}

struct Hello {
    x: Array,
    derivative: bool,
    out: f64,
}

impl Job for Hello {
    fn run(&mut self) {
        let y = if self.derivative {
            grad(square)(&self.x)
        } else {
            square(&self.x)
        };
        self.out = y.item();
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
    let x = Array::scalar(num(input, "hello input")?);
    Ok(Box::new(Hello {
        x,
        derivative,
        out: 0.0,
    }))
}
