//! [`Sgd`]: stochastic gradient descent with momentum, dampening, Nesterov
//! momentum and weight decay, as torch.optim.SGD.

use super::{Optimizer, Pass, Schedule, assign, in_place};
use crate::Array;
use nabla_kernels::Float;
use nabla_kernels::optim::{SgdStep, sgd};

/// SGD with torch.optim.SGD's semantics: with weight decay `λ`, momentum
/// `μ` and dampening `τ`, per step `d = g + λp`; `b = d` on the first step,
/// else `b = μb + (1 − τ)d`; `d = d + μb` (Nesterov) or `d = b`; `p = p − lr·d`.
///
/// ```
/// use nabla::optim::{Optimizer, Sgd};
/// use nabla::Array;
/// let opt = Sgd::new(0.1).momentum(0.9).nesterov(true).weight_decay(1e-4);
/// let mut w = Array::from_vec(vec![1.0f64], &[1]);
/// let mut s = opt.init(&w);
/// opt.update(&mut w, &Array::from_vec(vec![1.0f64], &[1]), &mut s);
/// // d = 1 + 1e-4; b = d; p = 1 − 0.1 (d + 0.9 b)
/// assert!((w.item() - (1.0 - 0.1 * 1.9 * 1.0001)).abs() < 1e-15);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Sgd {
    lr: Schedule,
    momentum: f64,
    dampening: f64,
    nesterov: bool,
    weight_decay: f64,
}

impl Sgd {
    /// Plain SGD with learning rate `lr`.
    ///
    /// ```
    /// let opt = nabla::optim::Sgd::new(0.01);
    /// # let _ = opt;
    /// ```
    pub fn new(lr: f64) -> Sgd {
        Sgd {
            lr: Schedule::Constant(lr),
            momentum: 0.0,
            dampening: 0.0,
            nesterov: false,
            weight_decay: 0.0,
        }
    }

    /// Momentum factor `μ` (default 0).
    ///
    /// ```
    /// let opt = nabla::optim::Sgd::new(0.01).momentum(0.9);
    /// # let _ = opt;
    /// ```
    pub fn momentum(self, m: f64) -> Sgd {
        Sgd {
            momentum: m,
            ..self
        }
    }

    /// Dampening `τ` of the gradient's share of the momentum (default 0).
    ///
    /// ```
    /// let opt = nabla::optim::Sgd::new(0.01).momentum(0.9).dampening(0.1);
    /// # let _ = opt;
    /// ```
    pub fn dampening(self, d: f64) -> Sgd {
        Sgd {
            dampening: d,
            ..self
        }
    }

    /// Nesterov momentum (default off; needs momentum and no dampening, as
    /// in PyTorch).
    ///
    /// ```
    /// let opt = nabla::optim::Sgd::new(0.01).momentum(0.9).nesterov(true);
    /// # let _ = opt;
    /// ```
    #[track_caller]
    pub fn nesterov(self, on: bool) -> Sgd {
        if on && (self.momentum <= 0.0 || self.dampening != 0.0) {
            panic!(
                "Sgd::nesterov: Nesterov momentum needs a momentum > 0 and zero dampening (momentum {}, dampening \
                 {}); set .momentum(m) first",
                self.momentum, self.dampening
            );
        }
        Sgd {
            nesterov: on,
            ..self
        }
    }

    /// The learning rate as a function of the step, replacing the constant
    /// given to [`Sgd::new`] (as a torch `lr_scheduler` stepped after
    /// every `optimizer.step()`).
    ///
    /// ```
    /// use nabla::optim::{Optimizer, Schedule, Sgd};
    /// use nabla::Array;
    /// let opt = Sgd::new(0.0).schedule(Schedule::linear(1.0, 0.5, 1));
    /// let mut w = Array::from_vec(vec![0.0f64], &[1]);
    /// let mut s = opt.init(&w);
    /// let g = Array::from_vec(vec![1.0f64], &[1]);
    /// opt.update(&mut w, &g, &mut s); // lr 1
    /// opt.update(&mut w, &g, &mut s); // lr 0.5
    /// assert_eq!(w.to_vec::<f64>(), vec![-1.5]);
    /// ```
    pub fn schedule(self, lr: impl Into<Schedule>) -> Sgd {
        Sgd {
            lr: lr.into(),
            ..self
        }
    }

    /// L2 penalty `λ` added to the gradient (default 0).
    ///
    /// ```
    /// let opt = nabla::optim::Sgd::new(0.01).weight_decay(5e-4);
    /// # let _ = opt;
    /// ```
    pub fn weight_decay(self, w: f64) -> Sgd {
        Sgd {
            weight_decay: w,
            ..self
        }
    }

    fn settings<T: Float>(&self, step: u64) -> SgdStep<T> {
        SgdStep {
            lr: T::from_f64(self.lr.at(step - 1)),
            momentum: T::from_f64(self.momentum),
            dampening: T::from_f64(self.dampening),
            weight_decay: T::from_f64(self.weight_decay),
            nesterov: self.nesterov,
            first: step == 1,
        }
    }
}

/// One step's pass.
struct Step<'a>(&'a Sgd, u64);

impl Pass for Step<'_> {
    fn run<T: Float>(&self, p: &mut [T], g: &[T], bufs: &mut [&mut [T]]) {
        sgd(
            p,
            g,
            bufs.first_mut().map(|b| &mut **b),
            &self.0.settings(self.1),
        )
    }
}

impl Optimizer for Sgd {
    fn num_buffers(&self) -> usize {
        usize::from(self.momentum != 0.0)
    }

    fn apply(&self, step: u64, p: &mut Array, g: &Array, buffers: &mut [Array]) {
        let first = step == 1;
        if in_place(&Step(self, step), p, g, buffers) {
            return;
        }
        // Op by op (GPU arrays), the same formula.
        let mut d = g.detach();
        if self.weight_decay != 0.0 {
            d = &d + &(p.detach() * self.weight_decay);
        }
        if let Some(b) = buffers.first_mut().filter(|_| self.momentum != 0.0) {
            *b = if first {
                d.clone()
            } else {
                &*b * self.momentum + &d * (1.0 - self.dampening)
            };
            d = if self.nesterov {
                &d + &(&*b * self.momentum)
            } else {
                b.clone()
            };
        }
        let lr = self.lr.at(step - 1);
        assign(p, |p| p + &(&d * -lr));
    }
}
