//! What `particle` and `saddle` share: GradBench's gradient-descent solver,
//! written once over any value type, so the same loop runs on plain arrays,
//! on the tape (reverse mode through the loop) and on dual numbers
//! (forward mode through it). Its branches read the primal values; the
//! derivative follows the path the primal took.

use nabla::Dual;
use nabla::prelude::*;

/// The AD mode of one level of a nested derivative.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Reverse (`r`).
    Reverse,
    /// Forward (`f`).
    Forward,
}

/// The outer and inner modes named by a function (`rr`, `ff`, `fr`, `rf`).
pub fn modes(function: &str) -> Option<(Mode, Mode)> {
    let m = |c| match c {
        'r' => Some(Mode::Reverse),
        'f' => Some(Mode::Forward),
        _ => None,
    };
    let mut c = function.chars();
    let (a, b) = (m(c.next()?)?, m(c.next()?)?);
    c.next().is_none().then_some((a, b))
}

/// Values whose primal numbers the solver's branches can read.
pub trait Primal: ArrayValue {
    /// The primal entries, row-major.
    fn values(&self) -> Vec<f64>;
}

impl Primal for Array {
    fn values(&self) -> Vec<f64> {
        self.to_vec::<f64>()
    }
}

impl Primal for Dual<Array> {
    fn values(&self) -> Vec<f64> {
        self.primal.to_vec::<f64>()
    }
}

/// A constant vector at value type `V` (shaped like `like`'s values).
pub fn constant<V: Primal>(like: &V, v: &[f64]) -> V {
    like.lift(&Array::from_vec(v.to_vec(), &[v.len()]))
}

/// Entry `i` of a vector, as a scalar.
pub fn entry<V: Primal>(v: &V, i: usize) -> V {
    v.slice(&[ndarray::Slice::from(i..i + 1)]).reshape(&[])
}

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// GradBench's descent: steps of `eta` (from 1e-5) along `−g`, doubling
/// `eta` after ten accepted steps and halving it on a rejected one, until
/// the gradient or the step is below 1e-5.
pub fn argmin<V: Primal>(f: &dyn Fn(&V) -> V, g: &dyn Fn(&V) -> V, x0: V) -> V {
    let mut x = x0;
    let mut fx = f(&x).values()[0];
    let mut gx = g(&x);
    let (mut i, mut eta) = (0, 1e-5);
    loop {
        if norm(&gx.values()) <= 1e-5 {
            return x;
        } else if i == 10 {
            eta *= 2.0;
            i = 0;
        } else {
            let next = x.sub(&gx.mul_scalar(eta));
            let step: Vec<f64> = x
                .values()
                .iter()
                .zip(next.values())
                .map(|(a, b)| a - b)
                .collect();
            if norm(&step) <= 1e-5 {
                return x;
            }
            let fnext = f(&next).values()[0];
            if fnext < fx {
                x = next;
                fx = fnext;
                gx = g(&x);
                i += 1;
            } else {
                eta /= 2.0;
                i = 0;
            }
        }
    }
}

/// [`argmin`] of `−f` (with `−g`).
pub fn argmax<V: Primal>(f: &dyn Fn(&V) -> V, g: &dyn Fn(&V) -> V, x0: V) -> V {
    argmin(&|x: &V| f(x).neg(), &|x: &V| g(x).neg(), x0)
}

/// The derivative of a scalar function of a plain vector `x`, by `mode`:
/// the tape (reverse) or one dual number per direction (forward).
pub fn derivative(
    x: &[f64],
    mode: Mode,
    f_tape: &dyn Fn(&Array) -> Array,
    f_dual: &dyn Fn(&Dual<Array>) -> Dual<Array>,
) -> Vec<f64> {
    let xa = Array::from_vec(x.to_vec(), &[x.len()]);
    match mode {
        Mode::Reverse => {
            let leaf = xa.requires_grad();
            f_tape(&leaf).backward();
            leaf.grad().to_vec::<f64>()
        }
        Mode::Forward => (0..x.len())
            .map(|i| {
                let mut e = vec![0.0; x.len()];
                e[i] = 1.0;
                let d = Dual::new(xa.clone(), Some(Array::from_vec(e, &[x.len()])));
                f_dual(&d).tangent_or_zero().item()
            })
            .collect(),
    }
}

/// `∇ₓ f(x, y)` at value type `V` for a `#[differentiable]` `f` of two
/// arrays (given through its generated VJP and JVP), by `mode`.
pub fn gradient_in<V: Primal>(
    x: &V,
    mode: Mode,
    vjp: &dyn Fn(&V) -> V,
    jvp: &dyn Fn(&V, &V) -> V,
) -> V {
    match mode {
        Mode::Reverse => vjp(x),
        Mode::Forward => {
            let n = x.values().len();
            let parts: Vec<V> = (0..n)
                .map(|i| {
                    let mut e = vec![0.0; n];
                    e[i] = 1.0;
                    jvp(x, &constant(x, &e)).reshape(&[1])
                })
                .collect();
            V::concat(&parts, 0)
        }
    }
}
