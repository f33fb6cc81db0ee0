//! [`Schedule`]: a learning rate that depends on the step, for
//! [`Sgd::schedule`](super::Sgd::schedule),
//! [`Adam::schedule`](super::Adam::schedule) and
//! [`AdamW::schedule`](super::AdamW::schedule).

use std::f64::consts::PI;

/// A learning rate as a function of the update count `t` (0 for the first
/// update), as optax's schedules are, and equal to what torch.optim's
/// `lr_scheduler`s set when `scheduler.step()` follows each
/// `optimizer.step()` (named below; `tests/it/optim_schedules.rs` replays
/// PyTorch's runs). The count is each parameter's own step count, kept in
/// the optimizer state, so a saved state resumes the schedule where it was.
///
/// ```
/// use nabla::optim::Schedule;
/// let s = Schedule::warmup_cosine(0.0, 1e-3, 100, 1000, 1e-5);
/// assert_eq!(s.at(0), 0.0);
/// assert!((s.at(50) - 5e-4).abs() < 1e-15);
/// assert_eq!(s.at(100), 1e-3);
/// assert!((s.at(550) - (1e-5 + 1e-3) / 2.0).abs() < 1e-12);
/// assert_eq!(s.at(5000), 1e-5); // stays at the end value
/// ```
#[derive(Clone, Copy, Debug)]
pub enum Schedule {
    /// The same rate at every step.
    Constant(f64),
    /// From `init` to `end` linearly over `steps` updates, then `end`
    /// (torch's `LinearLR`, optax's `linear_schedule`).
    Linear {
        /// The rate of the first update.
        init: f64,
        /// The rate from update `steps` on.
        end: f64,
        /// Updates the ramp takes.
        steps: u64,
    },
    /// Half a cosine from `peak` to `end` over `steps` updates, then
    /// `end` (torch's `CosineAnnealingLR` with `T_max = steps`, `eta_min =
    /// end`, for its first `steps` updates; optax's
    /// `cosine_decay_schedule`).
    Cosine {
        /// The rate of the first update.
        peak: f64,
        /// Updates the decay takes.
        steps: u64,
        /// The rate from update `steps` on.
        end: f64,
    },
    /// A linear warm-up from `init` to `peak` over `warmup` updates, then
    /// half a cosine down to `end` at update `total`, then `end` (optax's
    /// `warmup_cosine_decay_schedule`; in torch, `SequentialLR` of
    /// `LinearLR` and `CosineAnnealingLR(T_max = total - warmup)`).
    WarmupCosine {
        /// The rate of the first update.
        init: f64,
        /// The rate at the end of the warm-up.
        peak: f64,
        /// Updates the warm-up takes.
        warmup: u64,
        /// The update at which the decay reaches `end` (warm-up included).
        total: u64,
        /// The final rate.
        end: f64,
    },
    /// Any function of the update count.
    Custom(fn(u64) -> f64),
}

impl Schedule {
    /// `lr` at every step.
    ///
    /// ```
    /// use nabla::optim::Schedule;
    /// assert_eq!(Schedule::constant(0.1).at(7), 0.1);
    /// ```
    pub fn constant(lr: f64) -> Schedule {
        Schedule::Constant(lr)
    }

    /// `init` to `end` over `steps` updates (see [`Schedule::Linear`]).
    ///
    /// ```
    /// use nabla::optim::Schedule;
    /// let s = Schedule::linear(0.0, 1.0, 4);
    /// assert_eq!([s.at(0), s.at(1), s.at(4), s.at(9)], [0.0, 0.25, 1.0, 1.0]);
    /// ```
    pub fn linear(init: f64, end: f64, steps: u64) -> Schedule {
        Schedule::Linear { init, end, steps }
    }

    /// `peak` down to `end` over `steps` updates (see [`Schedule::Cosine`]).
    ///
    /// ```
    /// use nabla::optim::Schedule;
    /// let s = Schedule::cosine(1.0, 10, 0.0);
    /// assert_eq!(s.at(0), 1.0);
    /// assert!((s.at(5) - 0.5).abs() < 1e-15);
    /// assert_eq!(s.at(10), 0.0);
    /// ```
    pub fn cosine(peak: f64, steps: u64, end: f64) -> Schedule {
        Schedule::Cosine { peak, steps, end }
    }

    /// Warm-up then cosine decay (see [`Schedule::WarmupCosine`]).
    ///
    /// ```
    /// use nabla::optim::Schedule;
    /// let s = Schedule::warmup_cosine(0.0, 1.0, 2, 6, 0.0);
    /// assert_eq!([s.at(1), s.at(2), s.at(6)], [0.5, 1.0, 0.0]);
    /// ```
    pub fn warmup_cosine(init: f64, peak: f64, warmup: u64, total: u64, end: f64) -> Schedule {
        Schedule::WarmupCosine {
            init,
            peak,
            warmup,
            total,
            end,
        }
    }

    /// The rate of update `t` (0 for the first).
    ///
    /// ```
    /// use nabla::optim::Schedule;
    /// assert_eq!(Schedule::Custom(|t| 1.0 / (t + 1) as f64).at(3), 0.25);
    /// ```
    pub fn at(&self, t: u64) -> f64 {
        match *self {
            Schedule::Constant(lr) => lr,
            Schedule::Linear { init, end, steps } => ramp(init, end, t, steps),
            Schedule::Cosine { peak, steps, end } => half_cosine(peak, end, t, steps),
            Schedule::WarmupCosine {
                init,
                peak,
                warmup,
                total,
                end,
            } => {
                if t < warmup {
                    ramp(init, peak, t, warmup)
                } else {
                    half_cosine(peak, end, t - warmup, total.saturating_sub(warmup))
                }
            }
            Schedule::Custom(f) => f(t),
        }
    }
}

impl From<f64> for Schedule {
    /// A constant rate.
    ///
    /// ```
    /// use nabla::optim::Schedule;
    /// assert_eq!(Schedule::from(0.5).at(3), 0.5);
    /// ```
    fn from(lr: f64) -> Schedule {
        Schedule::Constant(lr)
    }
}

/// `a` to `b` linearly over `n` steps, `b` after (and for `n = 0`).
fn ramp(a: f64, b: f64, t: u64, n: u64) -> f64 {
    if t >= n {
        b
    } else {
        a + (b - a) * t as f64 / n as f64
    }
}

/// Half a cosine from `a` to `b` over `n` steps, `b` after.
fn half_cosine(a: f64, b: f64, t: u64, n: u64) -> f64 {
    if t >= n {
        b
    } else {
        b + (a - b) * (1.0 + (PI * t as f64 / n as f64).cos()) / 2.0
    }
}
