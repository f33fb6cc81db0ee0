//! [`Adam`] and [`AdamW`], as torch.optim's (no AMSGrad).

use super::{Optimizer, Pass, Schedule, assign, in_place};
use crate::Array;
use nabla_kernels::Float;
use nabla_kernels::optim::{AdamStep, adam};

/// Adam with torch.optim.Adam's semantics: per step `t`, with L2 weight
/// decay `λ`: `g = g + λp`; `m = m + (1 − β₁)(g − m)`;
/// `v = β₂v + (1 − β₂)g²`; `p = p − lr/(1 − β₁ᵗ) · m / (√v / √(1 − β₂ᵗ) + ε)`.
/// Defaults: `β = (0.9, 0.999)`, `ε = 1e-8`, `λ = 0`.
///
/// ```
/// use nabla::optim::{Adam, Optimizer};
/// use nabla::Array;
/// let opt = Adam::new(1e-3).betas(0.9, 0.99).eps(1e-6);
/// let mut w = Array::from_vec(vec![1.0f32, 2.0], &[2]);
/// let mut s = opt.init(&w);
/// opt.update(&mut w, &Array::from_vec(vec![0.5f32, -0.5], &[2]), &mut s);
/// let v = w.to_vec::<f32>();
/// assert!((v[0] - 0.999).abs() < 1e-6 && (v[1] - 2.001).abs() < 1e-6);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Adam {
    lr: Schedule,
    beta1: f64,
    beta2: f64,
    eps: f64,
    weight_decay: f64,
    /// AdamW: the decay scales the parameter instead of joining the gradient.
    decoupled: bool,
}

/// AdamW (torch.optim.AdamW): Adam whose weight decay scales the
/// parameter, `p = p(1 − lr·λ)`, before the Adam step, instead of adding
/// `λp` to the gradient. Default `λ = 0.01`, as PyTorch's.
///
/// ```
/// use nabla::optim::{AdamW, Optimizer};
/// use nabla::Array;
/// let opt = AdamW::new(0.1).weight_decay(0.5);
/// let mut w = Array::from_vec(vec![1.0f64], &[1]);
/// let mut s = opt.init(&w);
/// opt.update(&mut w, &Array::from_vec(vec![2.0f64], &[1]), &mut s);
/// // decay to 0.95, then Adam's first step of lr
/// assert!((w.item() - 0.85).abs() < 1e-7);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct AdamW(Adam);

impl Adam {
    /// Adam with learning rate `lr` and PyTorch's defaults.
    ///
    /// ```
    /// let opt = nabla::optim::Adam::new(3e-4);
    /// # let _ = opt;
    /// ```
    pub fn new(lr: f64) -> Adam {
        Adam {
            lr: Schedule::Constant(lr),
            beta1: 0.9,
            beta2: 0.999,
            eps: 1e-8,
            weight_decay: 0.0,
            decoupled: false,
        }
    }

    /// The moment decay rates `β₁`, `β₂`.
    ///
    /// ```
    /// let opt = nabla::optim::Adam::new(3e-4).betas(0.9, 0.95);
    /// # let _ = opt;
    /// ```
    pub fn betas(self, beta1: f64, beta2: f64) -> Adam {
        Adam {
            beta1,
            beta2,
            ..self
        }
    }

    /// The denominator's `ε`.
    ///
    /// ```
    /// let opt = nabla::optim::Adam::new(3e-4).eps(1e-6);
    /// # let _ = opt;
    /// ```
    pub fn eps(self, eps: f64) -> Adam {
        Adam { eps, ..self }
    }

    /// The learning rate as a function of the step, replacing the constant
    /// given to [`Adam::new`] (as a torch `lr_scheduler` stepped after
    /// every `optimizer.step()`).
    ///
    /// ```
    /// use nabla::optim::{Adam, Schedule};
    /// let opt = Adam::new(0.0).schedule(Schedule::warmup_cosine(0.0, 3e-4, 100, 10_000, 3e-5));
    /// # let _ = opt;
    /// ```
    pub fn schedule(self, lr: impl Into<Schedule>) -> Adam {
        Adam {
            lr: lr.into(),
            ..self
        }
    }

    /// The L2 weight decay `λ` added to the gradient.
    ///
    /// ```
    /// let opt = nabla::optim::Adam::new(3e-4).weight_decay(1e-4);
    /// # let _ = opt;
    /// ```
    pub fn weight_decay(self, w: f64) -> Adam {
        Adam {
            weight_decay: w,
            ..self
        }
    }

    fn settings<T: Float>(&self, step: u64) -> AdamStep<T> {
        let t = step as f64;
        let lr = self.lr.at(step - 1);
        let (decay, l2) = if self.decoupled {
            (1.0 - lr * self.weight_decay, 0.0)
        } else {
            (1.0, self.weight_decay)
        };
        AdamStep {
            decay: T::from_f64(decay),
            l2: T::from_f64(l2),
            one_minus_beta1: T::from_f64(1.0 - self.beta1),
            beta2: T::from_f64(self.beta2),
            one_minus_beta2: T::from_f64(1.0 - self.beta2),
            step_size: T::from_f64(lr / (1.0 - self.beta1.powf(t))),
            bias_correction2_sqrt: T::from_f64((1.0 - self.beta2.powf(t)).sqrt()),
            eps: T::from_f64(self.eps),
        }
    }
}

impl AdamW {
    /// AdamW with learning rate `lr` and PyTorch's defaults (`λ = 0.01`).
    ///
    /// ```
    /// let opt = nabla::optim::AdamW::new(3e-4);
    /// # let _ = opt;
    /// ```
    pub fn new(lr: f64) -> AdamW {
        AdamW(Adam {
            weight_decay: 0.01,
            decoupled: true,
            ..Adam::new(lr)
        })
    }

    /// The moment decay rates `β₁`, `β₂`.
    ///
    /// ```
    /// let opt = nabla::optim::AdamW::new(3e-4).betas(0.9, 0.95);
    /// # let _ = opt;
    /// ```
    pub fn betas(self, beta1: f64, beta2: f64) -> AdamW {
        AdamW(self.0.betas(beta1, beta2))
    }

    /// The denominator's `ε`.
    ///
    /// ```
    /// let opt = nabla::optim::AdamW::new(3e-4).eps(1e-6);
    /// # let _ = opt;
    /// ```
    pub fn eps(self, eps: f64) -> AdamW {
        AdamW(self.0.eps(eps))
    }

    /// The decoupled weight decay `λ`.
    ///
    /// ```
    /// let opt = nabla::optim::AdamW::new(3e-4).weight_decay(0.1);
    /// # let _ = opt;
    /// ```
    pub fn weight_decay(self, w: f64) -> AdamW {
        AdamW(self.0.weight_decay(w))
    }

    /// The learning rate as a function of the step (see [`Adam::schedule`]).
    ///
    /// ```
    /// use nabla::optim::{AdamW, Schedule};
    /// let opt = AdamW::new(0.0).schedule(Schedule::cosine(1e-3, 5_000, 0.0));
    /// # let _ = opt;
    /// ```
    pub fn schedule(self, lr: impl Into<Schedule>) -> AdamW {
        AdamW(self.0.schedule(lr))
    }
}

/// One step's pass.
struct Step<'a>(&'a Adam, u64);

impl Pass for Step<'_> {
    fn run<T: Float>(&self, p: &mut [T], g: &[T], bufs: &mut [&mut [T]]) {
        let [m, v] = bufs else {
            unreachable!("Adam keeps two buffers")
        };
        adam(p, g, m, v, &self.0.settings(self.1))
    }
}

impl Optimizer for Adam {
    fn num_buffers(&self) -> usize {
        2
    }

    fn apply(&self, step: u64, p: &mut Array, g: &Array, buffers: &mut [Array]) {
        if in_place(&Step(self, step), p, g, buffers) {
            return;
        }
        let s = self.settings::<f64>(step);
        #[cfg(feature = "cuda")]
        if !super::op_by_op_now() && super::gpu::adam(p, g, buffers, &s) {
            return;
        }
        // Op by op, the same formula.
        let mut x = p.detach();
        if s.decay != 1.0 {
            x = &x * s.decay;
        }
        let g = if s.l2 != 0.0 {
            g.detach() + &x * s.l2
        } else {
            g.detach()
        };
        let [m, v] = buffers else {
            unreachable!("Adam keeps two buffers")
        };
        *m = &*m + &((&g - &*m) * s.one_minus_beta1);
        *v = &*v * s.beta2 + &(&g * s.one_minus_beta2) * &g;
        let denom = v.sqrt() / s.bias_correction2_sqrt + s.eps;
        let update = &*m / &denom * -s.step_size;
        assign(p, |_| &x + &update);
    }
}

impl Optimizer for AdamW {
    fn num_buffers(&self) -> usize {
        2
    }

    fn apply(&self, step: u64, p: &mut Array, g: &Array, buffers: &mut [Array]) {
        self.0.apply(step, p, g, buffers)
    }
}
