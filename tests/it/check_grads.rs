//! `nabla::testing::check_grads`: right rules pass at first and second
//! order (arrays, lists, f32 and f64, several outputs); wrong rules are
//! reported with the mode, argument, array, element and both values.

use nabla::prelude::*;
use nabla::testing::{Options, check_grads, check_grads_with};

#[differentiable]
fn mixed(x: &Array, y: &Array) -> Array {
    let z = x.matmul(y).tanh();
    nabla::sum(&(&z * &z)) + nabla::sum(&y.exp())
}

#[differentiable]
fn pair(args: &[Array]) -> Vec<Array> {
    let s = &args[0] * &args[1].sin();
    vec![s.clone(), nabla::sum(&(&s * &args[0]))]
}

fn x() -> Array {
    Array::from_vec(vec![0.3f64, -1.2, 0.8, 0.1, -0.4, 1.5], &[2, 3])
}

fn y() -> Array {
    Array::from_vec(vec![0.2f64, -0.5, 0.7, 1.1, -0.3, 0.4], &[3, 2])
}

#[test]
fn right_rules_pass_at_second_order() {
    check_grads(mixed, &(x(), y()), 2);
    check_grads(mixed, &(x().cast(DType::F32), y().cast(DType::F32)), 2);
    let v = vec![x().reshape(&[6]), y().reshape(&[6])];
    check_grads(pair, &v, 2);
    let opts = Options {
        order: 2,
        max_elements: 3,
        ..Options::default()
    };
    let c = check_grads_with(mixed, &(x(), y()), &opts).expect("right rules");
    assert!(c.comparisons > 20, "{c:?}");
    assert_eq!(c.differences_in, DType::F64);
    // f32 arguments: derivatives in f32, finite differences in f64.
    let f32s = (x().cast(DType::F32), y().cast(DType::F32));
    let c = check_grads_with(mixed, &f32s, &opts).expect("right rules");
    assert_eq!(c.differences_in, DType::F64);
}

/// `x³` whose VJP rule is `6x²` (twice the derivative); the JVP is right.
#[nabla::custom_op(jvp = cube_jvp, vjp = cube_bad_vjp)]
fn cube_bad_vjp_op(x: &Array) -> Array {
    x * x * x
}
fn cube_jvp<V: ArrayValue>(x: &V, _y: &V, dx: Option<&V>) -> V {
    dx.map(|d| x.mul(x).mul(d).mul_scalar(3.0))
        .unwrap_or_else(|| x.zeros_like())
}
fn cube_bad_vjp<V: ArrayValue>(x: &V, _y: &V, ct: &V) -> V {
    x.mul(x).mul(ct).mul_scalar(6.0)
}

/// `x³` whose rules are right at first order but not differentiable
/// themselves: the VJP reads `x` through `stop_gradient`.
#[nabla::custom_op(jvp = cube_jvp, vjp = cube_flat_vjp)]
fn cube_flat_vjp_op(x: &Array) -> Array {
    x * x * x
}
fn cube_flat_vjp<V: ArrayValue>(x: &V, _y: &V, ct: &V) -> V {
    let x = x.stop_gradient();
    x.mul(&x).mul(ct).mul_scalar(3.0)
}

#[differentiable]
fn uses_bad(args: &[Array]) -> Vec<Array> {
    vec![nabla::sum(&(&args[0] + &cube_bad_vjp_op(&args[1])))]
}

#[test]
fn a_wrong_vjp_is_named_with_its_argument_and_element() {
    let x = Array::from_vec(vec![0.5f64, -2.0, 1.0], &[3]);
    let opts = Options {
        order: 1,
        ..Options::default()
    };
    let m = check_grads_with(cube_bad_vjp_op, &(x.clone(),), &opts).expect_err("a wrong rule");
    assert_eq!(m.mode, "reverse mode (VJP) against finite differences");
    assert_eq!(
        (m.order, m.input.argument, m.input.element.clone()),
        (1, 0, vec![1])
    );
    assert_eq!(m.output, (0, vec![1]));
    assert!(
        (m.got - 24.0).abs() < 1e-9 && (m.expected - 12.0).abs() < 1e-4,
        "{m}"
    );
    assert_eq!(m.others, 2, "the other two diagonal entries");
    let text = m.to_string();
    assert!(
        text.contains("reverse mode (VJP)") && text.contains("d(argument 0[1])"),
        "{text}"
    );
    // Inside a list argument: the report names the array within it.
    let v = vec![x.clone(), x.clone()];
    let m = check_grads_with(uses_bad, &v, &opts).expect_err("a wrong rule");
    assert_eq!(
        (m.input.argument, m.input.array, m.input.in_tree),
        (0, 1, true)
    );
    assert!(m.to_string().contains("argument 0 (array 1)[1]"), "{m}");
    // The panicking form carries the same report.
    let r = std::panic::catch_unwind(|| check_grads(cube_bad_vjp_op, &(x,), 1));
    let msg = *r.expect_err("panics").downcast::<String>().unwrap();
    assert!(
        msg.starts_with("check_grads: order 1, reverse mode (VJP)"),
        "{msg}"
    );
}

#[test]
fn a_rule_right_only_at_first_order_fails_at_second() {
    let x = Array::from_vec(vec![0.5f64, -2.0, 1.0], &[3]);
    check_grads(cube_flat_vjp_op, &(x.clone(),), 1);
    let m =
        check_grads_with(cube_flat_vjp_op, &(x,), &Options::default()).expect_err("second order");
    assert_eq!(m.order, 2);
    assert_eq!(
        m.mode,
        "forward over reverse against finite differences of the VJP"
    );
    // d²(x³)/dx² = 6x, and the flat rule gives 0.
    assert_eq!(m.got, 0.0);
    assert!((m.expected - 6.0 * -2.0).abs() < 1e-4, "{m}");
}

#[test]
fn unsupported_orders_are_refused_with_the_fix() {
    let r = std::panic::catch_unwind(|| check_grads(mixed, &(x(), y()), 3));
    let msg = *r.expect_err("panics").downcast::<String>().unwrap();
    assert!(msg.contains("order 3 is not supported; use 1"), "{msg}");
}
