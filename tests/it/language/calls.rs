//! A call between differentiable functions computes only the cotangents
//! its caller wants: the callee's masked VJP gets the caller's mask for
//! the arguments that are the caller's parameters. Checked by the work
//! the recorded program does (the planner's FLOP count on one rank) and
//! by the gradients, every mask of arguments alike.

use nabla::dist::Plan;
use nabla::prelude::*;

#[derive(Clone, Tree)]
struct Layer {
    w: Array,
    b: Array,
}

#[differentiable]
fn loss(p: &Layer, x: &Array, y: &Array) -> Array {
    let h = (x.matmul(&p.w) + &p.b).tanh();
    let d = h - y;
    (&d * &d).mean()
}

/// `loss` through a call.
#[differentiable]
fn wrapper(p: &Layer, x: &Array, y: &Array) -> Array {
    loss(p, x, y)
}

/// `loss` through a call on a value computed from the input (an active
/// argument that is not a parameter: its cotangent is always wanted).
#[differentiable]
fn scaled(p: &Layer, x: &Array, y: &Array) -> Array {
    let x2 = x * 2.0;
    loss(p, &x2, y)
}

fn data() -> (Layer, Array, Array) {
    let p = Layer {
        w: Array::linspace(-1.0, 1.0, 48 * 32, DType::F64).reshape(&[48, 32]),
        b: Array::linspace(0.0, 0.5, 32, DType::F64),
    };
    let x = Array::linspace(-2.0, 2.0, 64 * 48, DType::F64).reshape(&[64, 48]);
    let y = Array::linspace(0.0, 1.0, 64 * 32, DType::F64).reshape(&[64, 32]);
    (p, x, y)
}

#[test]
fn a_call_skips_the_cotangents_its_caller_does_not_want() {
    let (p, x, y) = data();
    let one = Plan::for_mesh(&[("x", 1)]);
    let direct = one
        .function(nabla::value_and_grad(loss), (&p, &x, &y))
        .compute_s();
    let through = one
        .function(nabla::value_and_grad(wrapper), (&p, &x, &y))
        .compute_s();
    // The same work: no `dz·Wᵀ` for the input nobody asked about.
    assert!(
        (through - direct).abs() <= 1e-12 * direct,
        "through a call {through} s of arithmetic, directly {direct} s"
    );
}

#[test]
fn the_gradients_through_a_call_are_the_direct_ones_for_every_mask() {
    let (p, x, y) = data();
    let close = |a: &Array, b: &Array, what: &str| {
        let d = (a - b).abs().max().item();
        assert!(d <= 1e-13, "{what}: {d}");
    };
    let g = nabla::grad(wrapper)(&p, &x, &y);
    let g1 = nabla::grad(loss)(&p, &x, &y);
    close(&g.w, &g1.w, "p.w");
    let (gp, gx) = nabla::grad!(wrapper, argnums = (0, 1))(&p, &x, &y);
    let (gp1, gx1) = nabla::grad!(loss, argnums = (0, 1))(&p, &x, &y);
    close(&gp.b, &gp1.b, "p.b with x");
    close(&gx, &gx1, "x");
    let gy = nabla::grad!(wrapper, argnums = 2)(&p, &x, &y);
    let gy1 = nabla::grad!(loss, argnums = 2)(&p, &x, &y);
    close(&gy, &gy1, "y alone");
    // An intermediate argument: x's cotangent goes through `x * 2`.
    let gs = nabla::grad!(scaled, argnums = 1)(&p, &x, &y);
    let x2 = &x * 2.0;
    let want = nabla::grad!(loss, argnums = 1)(&p, &x2, &y) * 2.0;
    close(&gs, &want, "x through x * 2");
}
