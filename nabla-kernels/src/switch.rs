//! A process-wide on/off setting that starts as an environment variable
//! says (`1` or `true` turns it on), read on first use; setting it in code
//! wins over the environment. Reading it is one relaxed atomic load.

use std::sync::atomic::{AtomicU8, Ordering};

/// A process-wide switch (see the module docs).
///
/// ```
/// use nabla_kernels::switch::Switch;
/// static VERBOSE: Switch = Switch::new("MY_CRATE_VERBOSE");
/// assert!(!VERBOSE.get()); // unset in the environment
/// VERBOSE.set(true);
/// assert!(VERBOSE.get());
/// ```
pub struct Switch {
    /// 0: not read from the environment yet; 1: off; 2: on.
    state: AtomicU8,
    env: &'static str,
}

impl Switch {
    /// A switch read from the environment variable `env` on first use.
    ///
    /// ```
    /// static S: nabla_kernels::switch::Switch = nabla_kernels::switch::Switch::new("UNSET_VAR");
    /// assert!(!S.get());
    /// ```
    pub const fn new(env: &'static str) -> Switch {
        Switch {
            state: AtomicU8::new(0),
            env,
        }
    }

    /// Turns the switch on or off for the whole process.
    ///
    /// ```
    /// static S: nabla_kernels::switch::Switch = nabla_kernels::switch::Switch::new("UNSET_VAR");
    /// S.set(true);
    /// assert!(S.get());
    /// ```
    pub fn set(&self, on: bool) {
        self.state.store(if on { 2 } else { 1 }, Ordering::Relaxed);
    }

    /// Whether the switch is on.
    ///
    /// ```
    /// static S: nabla_kernels::switch::Switch = nabla_kernels::switch::Switch::new("UNSET_VAR");
    /// S.set(false);
    /// assert!(!S.get());
    /// ```
    #[inline(always)]
    pub fn get(&self) -> bool {
        match self.state.load(Ordering::Relaxed) {
            1 => false,
            2 => true,
            _ => self.read_env(),
        }
    }

    #[cold]
    fn read_env(&self) -> bool {
        let on = std::env::var(self.env).is_ok_and(|v| v == "1" || v == "true");
        // A concurrent `set` wins over the environment.
        let _ = self.state.compare_exchange(
            0,
            if on { 2 } else { 1 },
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
        self.state.load(Ordering::Relaxed) == 2
    }
}
