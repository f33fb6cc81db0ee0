//! `set_deterministic`: kernels whose arithmetic would otherwise depend on
//! the number of threads (or, on a GPU, on the order atomic adds land) use
//! a fixed schedule instead.
//!
//! Most kernels need nothing: elementwise loops compute each element alone,
//! and sums add fixed-size pieces in a fixed order, so their results are the
//! same bits whatever the thread count. What the switch changes:
//! - the `faer` factorisations (QR, eigendecomposition, LU, Cholesky), whose
//!   blocking follows the thread count they are given, are given
//!   [`FIXED_THREADS`] whatever the pool's size;
//! - on a GPU, scatter-adds (the backward pass of gathers and embeddings)
//!   run on the host, in index order, instead of with atomic adds.

use crate::switch::Switch;

/// The thread count the factorisations plan for while deterministic: their
/// results are those of a pool of this size, whatever the pool's size.
pub const FIXED_THREADS: usize = 4;

static DETERMINISTIC: Switch = Switch::new("NABLA_DETERMINISTIC");

/// Turns deterministic kernels on or off for the whole process (it starts
/// as `NABLA_DETERMINISTIC=1` in the environment says, else off).
///
/// ```
/// nabla_kernels::determinism::set_deterministic(true);
/// assert!(nabla_kernels::determinism::deterministic());
/// nabla_kernels::determinism::set_deterministic(false);
/// ```
pub fn set_deterministic(on: bool) {
    DETERMINISTIC.set(on);
}

/// Whether [`set_deterministic`] is on.
///
/// ```
/// nabla_kernels::determinism::set_deterministic(false);
/// assert!(!nabla_kernels::determinism::deterministic());
/// ```
#[inline]
pub fn deterministic() -> bool {
    DETERMINISTIC.get()
}

/// Sets the thread count `faer`'s factorisations plan for, before one
/// runs: [`FIXED_THREADS`] while deterministic, else the calling pool's
/// size. (`faer` reads it from a process-wide setting, so two threads
/// factorising at once from pools of different sizes may plan with either
/// size unless the switch is on.)
pub(crate) fn plan_factorisations() {
    let threads = if deterministic() {
        FIXED_THREADS
    } else {
        rayon::current_num_threads()
    };
    faer::set_global_parallelism(faer::Par::rayon(threads));
}
