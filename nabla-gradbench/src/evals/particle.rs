//! `particle`: a charged particle falls through the field of two charges,
//! one of them at a height set by `w`; find the `w` that lands it at
//! `x = 0`. The fall's acceleration is the gradient of the potential (the
//! inner derivative), and descent on `w` differentiates the whole fall,
//! inner gradients included (the outer derivative): `rr`, `ff`, `fr`, `rf`
//! name the outer and inner modes.

use super::nested::{Mode, Primal, argmin, constant, derivative, entry, gradient_in, modes};
use super::{Job, field, num, unknown};
use nabla::Dual;
use nabla::prelude::*;
use serde_json::Value as Json;

/// The potential at `x [2]` of unit charges at `(10, 10 − w)` and
/// `(10, 0)`.
#[differentiable]
fn potential(x: &Array, w: &Array) -> Array {
    let dx = x.slice_axis(0, 0..1) - 10.0;
    let y = x.slice_axis(0, 1..2);
    let r1 = (dx.square() + (&y - 10.0 + w).square()).sqrt();
    let r2 = (dx.square() + y.square()).sqrt();
    nabla::sum(&(r1.recip() + r2.recip()))
}

/// `∇ₓ potential(x, w)` by `inner`.
fn force<V: Primal>(x: &V, w: &V, inner: Mode) -> V {
    gradient_in(
        x,
        inner,
        &|x| {
            let (y, pullback) = potential::vjp::<V>(x, w);
            pullback(y.ones_like()).0
        },
        &|x, e| potential::jvp::<V>(x, w, Some(e), None).1,
    )
}

/// The landing point's `x²` for charge height `w`: Euler steps of 0.1
/// until the next would cross `y = 0`, then a straight line to it.
fn naive_euler<V: Primal>(w: &V, inner: Mode) -> V {
    let dt = 0.1;
    let mut x = constant(w, &[0.0, 8.0]);
    let mut xdot = constant(w, &[0.75, 0.0]);
    loop {
        let xddot = force(&x, w, inner).neg();
        let next = x.add(&xdot.mul_scalar(dt));
        if next.values()[1] > 0.0 {
            x = next;
            xdot = xdot.add(&xddot.mul_scalar(dt));
        } else {
            break;
        }
    }
    let dtf = entry(&x, 1).div(&entry(&xdot, 1)).neg();
    let x_tf = x.add(&xdot.mul(&dtf));
    entry(&x_tf, 0).square()
}

struct Particle {
    w: f64,
    modes: (Mode, Mode),
    out: f64,
}

impl Job for Particle {
    fn run(&mut self) {
        let (outer, inner) = self.modes;
        let f = |w: &Array| naive_euler(&w.reshape(&[]), inner).reshape(&[1]);
        let g = |w: &Array| {
            let d = derivative(
                &w.to_vec::<f64>(),
                outer,
                &|w| naive_euler(&w.reshape(&[]), inner),
                &|w: &Dual<Array>| naive_euler(&w.reshape(&[]), inner),
            );
            Array::from_vec(d, &[1])
        };
        self.out = argmin(&f, &g, Array::from_vec(vec![self.w], &[1])).to_vec::<f64>()[0];
    }
    fn output(&self) -> Json {
        Json::from(self.out)
    }
}

pub fn job(function: &str, input: &Json) -> Result<Box<dyn Job>, String> {
    let modes = modes(function).ok_or_else(|| unknown("particle", function))?;
    let w = num(field(input, "w")?, "w")?;
    Ok(Box::new(Particle { w, modes, out: 0.0 }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The landing `x²` and its derivative at `w = 0` (values of a plain
    /// simulation of GradBench's algorithm in Python, and a central
    /// difference here), for every pair of modes.
    #[test]
    fn fall_and_its_derivative_in_every_mode() {
        let at = |w: f64| naive_euler(&Array::scalar(w), Mode::Reverse).item();
        assert!((at(0.0) - 3.1990790025082054).abs() < 1e-12, "{}", at(0.0));
        let fd = (at(1e-6) - at(-1e-6)) / 2e-6;
        assert!((fd - -19.404636450028214).abs() < 1e-5, "{fd}");
        for (outer, inner) in [
            (Mode::Reverse, Mode::Reverse),
            (Mode::Forward, Mode::Forward),
            (Mode::Forward, Mode::Reverse),
            (Mode::Reverse, Mode::Forward),
        ] {
            let d = derivative(
                &[0.0],
                outer,
                &|w| naive_euler(&w.reshape(&[]), inner),
                &|w: &Dual<Array>| naive_euler(&w.reshape(&[]), inner),
            );
            assert!((d[0] - -19.404636450028214).abs() < 1e-9, "{d:?}");
        }
    }
}
