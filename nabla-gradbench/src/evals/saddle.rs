//! `saddle`: a saddle point of `F(p₁, p₂) = ‖p₁‖² − ‖p₂‖²` by nested
//! descent: the inner player maximises over `p₂` by gradient ascent, the
//! outer minimises the inner optimum over `p₁`, differentiating through the
//! inner ascent; `rr`, `ff`, `fr`, `rf` name the outer and inner modes.

use super::nested::{Mode, Primal, argmax, argmin, constant, derivative, gradient_in, modes};
use super::{Job, field, nums, unknown};
use nabla::Dual;
use nabla::prelude::*;
use serde_json::Value as Json;

#[differentiable]
fn objective(p1: &Array, p2: &Array) -> Array {
    nabla::sum(&p1.square()) - nabla::sum(&p2.square())
}

/// `∇_{p₂} F(p₁, p₂)` by `mode`.
fn grad_p2<V: Primal>(p1: &V, p2: &V, mode: Mode) -> V {
    gradient_in(
        p2,
        mode,
        &|p2| {
            let (y, pullback) = objective::vjp::<V>(p1, p2);
            pullback(y.ones_like()).1
        },
        &|p2, e| objective::jvp::<V>(p1, p2, None, Some(e)).1,
    )
}

/// `max_{p₂} F(p₁, p₂)` by ascent from `start`, at value type `V`.
fn inner<V: Primal>(p1: &V, start: &[f64], mode: Mode) -> V {
    let best = argmax(
        &|p2: &V| objective::forward::<V>(p1, p2),
        &|p2: &V| grad_p2(p1, p2, mode),
        constant(p1, start),
    );
    objective::forward::<V>(p1, &best)
}

struct Saddle {
    start: Vec<f64>,
    modes: (Mode, Mode),
    out: Vec<f64>,
}

impl Job for Saddle {
    fn run(&mut self) {
        let (outer, in_mode) = self.modes;
        let start = &self.start;
        let f = |p1: &Array| inner(p1, start, in_mode).reshape(&[1]);
        let g = |p1: &Array| {
            let d = derivative(
                &p1.to_vec::<f64>(),
                outer,
                &|p| inner(p, start, in_mode),
                &|p: &Dual<Array>| inner(p, start, in_mode),
            );
            Array::from_vec(d, &[start.len()])
        };
        let r1 = argmin(&f, &g, Array::from_vec(start.clone(), &[start.len()]));
        let r2 = argmax(
            &|p2: &Array| objective(&r1, p2).reshape(&[1]),
            &|p2: &Array| {
                let d = derivative(
                    &p2.to_vec::<f64>(),
                    outer,
                    &|p| objective(&r1, p),
                    &|p: &Dual<Array>| {
                        objective::forward::<Dual<Array>>(&Dual::constant(r1.clone()), p)
                    },
                );
                Array::from_vec(d, &[start.len()])
            },
            Array::from_vec(start.clone(), &[start.len()]),
        );
        self.out = [r1.to_vec::<f64>(), r2.to_vec::<f64>()].concat();
    }
    fn output(&self) -> Json {
        Json::from(self.out.clone())
    }
}

pub fn job(function: &str, input: &Json) -> Result<Box<dyn Job>, String> {
    let modes = modes(function).ok_or_else(|| unknown("saddle", function))?;
    let start = nums(field(input, "start")?, "start")?;
    if start.len() != 2 {
        return Err(format!(
            "saddle: start has {} numbers, 2 are needed",
            start.len()
        ));
    }
    Ok(Box::new(Saddle {
        start,
        modes,
        out: Vec::new(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The inner optimum's gradient in `p₁` is `2 p₁` (the ascent's
    /// iterates do not depend on `p₁`), through the loop in every mode.
    #[test]
    fn gradient_through_the_inner_ascent() {
        for (outer, in_mode) in [
            (Mode::Reverse, Mode::Reverse),
            (Mode::Forward, Mode::Forward),
            (Mode::Forward, Mode::Reverse),
            (Mode::Reverse, Mode::Forward),
        ] {
            let start = [1.0, 1.0];
            let d = derivative(
                &[0.3, -0.7],
                outer,
                &|p| inner(p, &start, in_mode),
                &|p: &Dual<Array>| inner(p, &start, in_mode),
            );
            assert!(
                (d[0] - 0.6).abs() < 1e-12 && (d[1] + 1.4).abs() < 1e-12,
                "{d:?}"
            );
        }
    }
}
