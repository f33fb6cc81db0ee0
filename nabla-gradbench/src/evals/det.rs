//! `det`: the determinant of an `ell × ell` matrix and its gradient (the
//! cofactor matrix), through `nabla::linalg::det`.

use super::{Job, field, int, nums, value_or_gradient};
use nabla::linalg;
use nabla::prelude::*;
use serde_json::Value as Json;

#[differentiable]
fn det(a: &Array) -> Array {
    linalg::det(a)
}

pub fn job(function: &str, input: &Json) -> Result<Box<dyn Job>, String> {
    let ell = int(field(input, "ell")?, "ell")?;
    let a = nums(field(input, "A")?, "A")?;
    if a.len() != ell * ell {
        return Err(format!(
            "det: A has {} entries, ell = {ell} needs {}",
            a.len(),
            ell * ell
        ));
    }
    let a = Array::from_vec(a, &[ell, ell]);
    let a2 = a.clone();
    value_or_gradient(
        "det",
        function,
        ("primal", "gradient"),
        move || det(&a),
        move || grad(det)(&a2).reshape(&[ell * ell]),
    )
}
