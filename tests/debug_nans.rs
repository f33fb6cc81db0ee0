//! `nabla::debug_nans`: the first primitive that makes a NaN or infinity
//! from finite inputs panics, naming the op, the shapes, the dtype, where it
//! was called and, in a backward pass, the rule. Its own test binary: the
//! switch is process-wide, and other tests expect NaNs to flow.

use nabla::prelude::*;
use std::sync::Mutex;

/// Tests here flip the switch; one at a time.
static SWITCH: Mutex<()> = Mutex::new(());

/// The panic message of `f` run with checking on.
fn report(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let _one = SWITCH.lock().unwrap_or_else(|e| e.into_inner());
    nabla::debug_nans(true);
    let r = std::panic::catch_unwind(f);
    nabla::debug_nans(false);
    match r {
        Ok(()) => String::new(),
        Err(p) => p
            .downcast::<String>()
            .map(|s| *s)
            .unwrap_or_else(|_| "a non-string panic".into()),
    }
}

fn arr(v: &[f64]) -> Array {
    Array::from_vec(v.to_vec(), &[v.len()])
}

#[test]
fn the_forward_op_that_makes_a_nan_is_named_with_its_line() {
    let x = arr(&[1.0, -2.0, 3.0]);
    let line = line!() + 1;
    let msg = report(|| drop(x.ln()));
    assert!(
        msg.starts_with(
            "debug_nans: `log` turned finite inputs into NaN (1 of 3 elements, the first at [1])"
        ),
        "{msg}"
    );
    assert!(msg.contains("operands of shapes [[3]], f64"), "{msg}");
    assert!(msg.contains("in the forward pass"), "{msg}");
    assert!(
        msg.contains(&format!("tests/debug_nans.rs:{line}")),
        "{msg}"
    );
    // Infinity from finite operands: a division by zero.
    let msg = report(|| drop(arr(&[1.0, 2.0]) / arr(&[0.0, 1.0])));
    assert!(
        msg.starts_with("debug_nans: `div` turned finite inputs into infinity"),
        "{msg}"
    );
    // f32 overflow of a cast.
    let msg = report(|| drop(arr(&[1e300]).cast(DType::F32)));
    assert!(
        msg.starts_with("debug_nans: `cast` turned finite inputs into infinity"),
        "{msg}"
    );
}

#[test]
fn a_nan_already_in_an_input_is_not_reported_again() {
    let x = arr(&[f64::NAN, 1.0]);
    assert_eq!(report(|| drop(x.sin() * 2.0)), "");
}

#[test]
fn off_the_nan_flows_through() {
    let _one = SWITCH.lock().unwrap_or_else(|e| e.into_inner());
    assert!(!nabla::debug_nans_enabled());
    assert!(arr(&[-1.0]).ln().to_vec::<f64>()[0].is_nan());
}

#[test]
fn the_tape_names_the_rule_that_made_it() {
    // sqrt is finite at 0, its derivative 1 / (2 sqrt(x)) is not.
    let msg = report(|| {
        let x = arr(&[0.0, 4.0]).requires_grad();
        x.sqrt().sum().backward();
    });
    assert!(
        msg.contains("in the backward pass, inside the derivative rule of `sqrt`"),
        "{msg}"
    );
    // Inside a chain of unary ops (fused backward when checking is off).
    let msg = report(|| {
        let x = arr(&[0.0, 4.0]).requires_grad();
        x.sqrt().sin().exp().sum().backward();
    });
    assert!(
        msg.contains("inside the derivative rule of `sqrt`"),
        "{msg}"
    );
}

#[differentiable]
fn root_sum(x: &Array) -> Array {
    nabla::sum(&x.sqrt())
}

#[differentiable]
fn log_sum(x: &Array) -> Array {
    let y = x * 2.0;
    nabla::sum(&y.ln())
}

#[test]
fn generated_code_is_checked_forward_and_backward() {
    let msg = report(|| drop(nabla::grad(root_sum)(&arr(&[0.0, 1.0]))));
    assert!(
        msg.contains("in the backward pass, inside the derivative rule of `sqrt`"),
        "generated: {msg}"
    );
    let msg = report(|| drop(nabla::grad(log_sum)(&arr(&[1.0, -1.0]))));
    assert!(
        msg.starts_with("debug_nans: `log` turned finite inputs into NaN"),
        "{msg}"
    );
    assert!(msg.contains("in the forward pass"), "{msg}");
    // The line of the user's expression inside the #[differentiable] body.
    let src = include_str!("debug_nans.rs");
    let line = 1 + src
        .lines()
        .position(|l| l.contains("nabla::sum(&y.ln())"))
        .unwrap();
    assert!(
        msg.contains(&format!("called at tests/debug_nans.rs:{line}:")),
        "{msg}"
    );
    // A rule's body is the library's code: the report names the rule instead.
    let msg = report(|| drop(nabla::grad(root_sum)(&arr(&[0.0, 1.0]))));
    assert!(!msg.contains("called at"), "{msg}");
}

#[test]
fn linear_algebra_and_custom_ops_are_checked() {
    // A singular matrix: its inverse is not finite.
    let singular = Array::from_vec(vec![1.0f64, 2.0, 2.0, 4.0], &[2, 2]);
    let msg = report(|| drop(nabla::linalg::inv(&singular)));
    assert!(
        msg.starts_with("debug_nans: `inv` turned finite inputs into"),
        "{msg}"
    );
    assert!(msg.contains("in the forward pass"), "{msg}");
    // log |det| of it is -inf.
    let msg = report(|| drop(nabla::linalg::slogdet(&singular)));
    assert!(
        msg.starts_with("debug_nans: `logabsdet` turned finite inputs into infinity"),
        "{msg}"
    );
}
