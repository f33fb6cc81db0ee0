//! `det`: the determinant of an `ell × ell` matrix and its gradient (the
//! cofactor matrix), through `nabla::linalg::det`.

use super::{Job, field, int, list, nums, unknown};
use nabla::linalg;
use nabla::prelude::*;
use serde_json::Value as Json;

#[differentiable]
fn det(a: &Array) -> Array {
    linalg::det(a)
}

struct Det {
    a: Array,
    gradient: bool,
    out: Option<Array>,
}

impl Job for Det {
    fn run(&mut self) {
        self.out = Some(if self.gradient {
            grad(det)(&self.a)
        } else {
            det(&self.a)
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
        f => return Err(unknown("det", f)),
    };
    let ell = int(field(input, "ell")?, "ell")?;
    let a = nums(field(input, "A")?, "A")?;
    if a.len() != ell * ell {
        return Err(format!(
            "det: A has {} entries, ell = {ell} needs {}",
            a.len(),
            ell * ell
        ));
    }
    Ok(Box::new(Det {
        a: Array::from_vec(a, &[ell, ell]),
        gradient,
        out: None,
    }))
}
