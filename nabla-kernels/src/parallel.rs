//! Parallel loops in which the calling thread does the work and idle pool
//! threads join in.
//!
//! A rayon parallel iterator started from a thread outside rayon's pool
//! hands the whole loop to the pool and puts the caller to sleep until it is
//! done: two thread wake-ups per kernel. On a small or busy machine a
//! wake-up costs tens of microseconds, as much as the kernel itself, and a
//! transform runs dozens of kernels in a row. Here the caller claims
//! pieces of the loop itself, from a shared counter, while helper jobs
//! posted to the pool claim pieces from the same counter once a pool thread
//! picks them up. When the counter runs out the caller only waits for
//! pieces already in progress on helpers, never for a helper to wake up:
//! a helper that starts late finds nothing left and returns without
//! touching the loop.
//!
//! Inside the pool (a kernel called from a rayon worker) the loops are plain
//! rayon parallel iterators, which steal work without any hand-off.
//!
//! ```
//! use nabla_kernels::parallel::chunks_mut;
//! let mut v = vec![0usize; 10_000];
//! chunks_mut(&mut v, 1000, |c, piece| {
//!     for (j, x) in piece.iter_mut().enumerate() {
//!         *x = c * 1000 + j;
//!     }
//! });
//! assert!(v.iter().enumerate().all(|(i, &x)| i == x));
//! ```

use rayon::prelude::*;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Calls `f(i)` once for every `i` in `0..n`, in parallel; returns when all
/// calls have returned.
///
/// ```
/// use nabla_kernels::parallel::for_each;
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// let total = AtomicUsize::new(0);
/// for_each(100, |i| {
///     total.fetch_add(i, Ordering::Relaxed);
/// });
/// assert_eq!(total.into_inner(), 4950);
/// ```
pub fn for_each<F: Fn(usize) + Sync>(n: usize, f: F) {
    for_each_dyn(n, &f)
}

/// [`for_each`] behind one indirect call per index, so that rayon's job
/// machinery is compiled once for the whole program rather than once per
/// loop body (see docs/performance.md, "Build times"). An index is a piece
/// of a kernel, so the indirect call costs nothing measurable.
fn for_each_dyn(n: usize, f: &(dyn Fn(usize) + Sync)) {
    let helpers = rayon::current_num_threads().min(n.saturating_sub(1));
    if helpers == 0 {
        (0..n).for_each(f);
    } else if rayon::current_thread_index().is_some() {
        (0..n).into_par_iter().for_each(f);
    } else {
        shared_loop(n, helpers, f);
    }
}

/// `f(i)` for every `i` in `0..n`, in parallel, collected in order.
///
/// ```
/// use nabla_kernels::parallel::map_collect;
/// assert_eq!(map_collect(4, |i| i * i), vec![0, 1, 4, 9]);
/// ```
pub fn map_collect<R: Send, F: Fn(usize) -> R + Sync>(n: usize, f: F) -> Vec<R> {
    let mut out: Vec<Option<R>> = (0..n).map(|_| None).collect();
    chunks_mut(&mut out, 1, |i, slot| slot[0] = Some(f(i)));
    out.into_iter()
        .map(|r| r.expect("every index was computed"))
        .collect()
}

/// Splits `data` into pieces of `chunk` elements (the last may be shorter)
/// and calls `f(piece_index, piece)` for each, in parallel.
///
/// ```
/// use nabla_kernels::parallel::chunks_mut;
/// let mut v = vec![1.0f32; 5];
/// chunks_mut(&mut v, 2, |_, piece| piece.iter_mut().for_each(|x| *x *= 2.0));
/// assert_eq!(v, vec![2.0; 5]);
/// ```
pub fn chunks_mut<T: Send, F: Fn(usize, &mut [T]) + Sync>(data: &mut [T], chunk: usize, f: F) {
    chunks_mut_dyn(data, chunk, &f)
}

/// [`chunks_mut`] with its body behind one indirect call per piece: the
/// splitting is compiled once per element type, not once per body.
fn chunks_mut_dyn<T: Send>(data: &mut [T], chunk: usize, f: &(dyn Fn(usize, &mut [T]) + Sync)) {
    let chunk = chunk.max(1);
    let len = data.len();
    let base = SendPtr(data.as_mut_ptr());
    for_each(len.div_ceil(chunk), |i| {
        let lo = i * chunk;
        let hi = (lo + chunk).min(len);
        let base = &base;
        // SAFETY: `for_each` calls each index exactly once, so the pieces
        // `lo..hi` are disjoint and inside `data`, which stays mutably
        // borrowed until every call has returned.
        let piece = unsafe { std::slice::from_raw_parts_mut(base.0.add(lo), hi - lo) };
        f(i, piece)
    });
}

/// `n` elements written piece by piece, in parallel, by `fill(piece_index,
/// piece)` over pieces of `piece` elements (the last may be shorter):
/// [`chunks_mut`] over the spare capacity of a new vector. `fill` must
/// write every slot of its piece (crate-internal for that reason).
pub(crate) fn filled<T: Send>(
    n: usize,
    piece: usize,
    fill: impl Fn(usize, &mut [std::mem::MaybeUninit<T>]) + Sync,
) -> Vec<T> {
    let mut out: Vec<T> = Vec::with_capacity(n);
    chunks_mut(&mut out.spare_capacity_mut()[..n], piece, fill);
    // SAFETY: the pieces cover all `n` slots and `fill` wrote each one.
    unsafe { out.set_len(n) };
    out
}

struct SendPtr<T>(*mut T);
// SAFETY: only used (in `chunks_mut`) to hand disjoint pieces of one
// `&mut [T]` to other threads, which is sound for `T: Send`.
unsafe impl<T: Send> Sync for SendPtr<T> {}

/// The state one loop shares with its helpers.
struct Shared {
    /// The next index to claim.
    next: AtomicUsize,
    n: usize,
    /// Helpers currently inside the loop body.
    active: AtomicUsize,
    /// Set by the caller once it has stopped claiming; helpers that arrive
    /// later leave without touching `body`.
    closed: AtomicBool,
    /// Set when the body panicked on a helper (re-raised by the caller).
    panicked: AtomicBool,
    /// The loop body, valid while `closed` is false or `active` is non-zero.
    body: *const (dyn Fn(usize) + Sync + 'static),
}

// SAFETY: `body` points at a `Sync` closure, so calling it from several
// threads at once is sound; the protocol in `shared_loop` keeps it alive
// while any helper can call it. The other fields are atomics and `n`.
unsafe impl Send for Shared {}
// SAFETY: as for `Send`.
unsafe impl Sync for Shared {}

impl Shared {
    fn claim_all(&self, body: &(dyn Fn(usize) + Sync)) {
        loop {
            let i = self.next.fetch_add(1, Ordering::Relaxed);
            if i >= self.n {
                return;
            }
            body(i);
        }
    }
}

/// Closes the loop and waits for helpers still in it, also when the
/// caller's own part panics (the body must outlive every helper call).
struct CloseOnDrop<'a>(&'a Shared);

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.closed.store(true, Ordering::SeqCst);
        while self.0.active.load(Ordering::SeqCst) != 0 {
            std::hint::spin_loop();
        }
    }
}

fn shared_loop(n: usize, helpers: usize, body: &(dyn Fn(usize) + Sync)) {
    // SAFETY: the lifetime is erased only for the helpers' copy of the
    // pointer; `CloseOnDrop` below does not return before every helper
    // that entered the loop has left it, and helpers that enter after
    // `closed` is set never dereference it.
    let body_static: *const (dyn Fn(usize) + Sync + 'static) = unsafe {
        std::mem::transmute::<*const (dyn Fn(usize) + Sync + '_), *const (dyn Fn(usize) + Sync)>(
            body,
        )
    };
    let shared = Arc::new(Shared {
        next: AtomicUsize::new(0),
        n,
        active: AtomicUsize::new(0),
        closed: AtomicBool::new(false),
        panicked: AtomicBool::new(false),
        body: body_static,
    });
    for _ in 0..helpers {
        let s = Arc::clone(&shared);
        rayon::spawn(move || {
            // Announce before checking `closed` (SeqCst both ways): either
            // the caller sees this helper as active and waits for it, or
            // the helper sees the loop closed and leaves.
            s.active.fetch_add(1, Ordering::SeqCst);
            if !s.closed.load(Ordering::SeqCst) && s.next.load(Ordering::Relaxed) < s.n {
                // SAFETY: the loop is open and this helper is counted as
                // active, so the caller keeps `body` alive.
                let body = unsafe { &*s.body };
                let run = std::panic::AssertUnwindSafe(|| s.claim_all(body));
                if std::panic::catch_unwind(run).is_err() {
                    s.panicked.store(true, Ordering::SeqCst);
                }
            }
            s.active.fetch_sub(1, Ordering::SeqCst);
        });
    }
    let guard = CloseOnDrop(&shared);
    shared.claim_all(body);
    drop(guard);
    if shared.panicked.load(Ordering::SeqCst) {
        panic!("a parallel kernel loop panicked on a pool thread");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_index_runs_once() {
        for n in [0, 1, 2, 3, 17, 1000] {
            let hits: Vec<AtomicUsize> = (0..n).map(|_| AtomicUsize::new(0)).collect();
            for_each(n, |i| {
                hits[i].fetch_add(1, Ordering::Relaxed);
            });
            assert!(
                hits.iter().all(|h| h.load(Ordering::Relaxed) == 1),
                "n = {n}"
            );
        }
    }

    #[test]
    fn loops_from_inside_the_pool_also_cover_every_index() {
        let v = rayon::scope(|_| map_collect(500, |i| i + 1));
        assert_eq!(v, (1..=500).collect::<Vec<_>>());
    }

    #[test]
    fn many_short_loops_in_a_row_do_not_lose_work() {
        // Helpers of earlier loops arrive late; they must not touch later ones.
        for round in 0..2000 {
            let mut v = vec![0u32; 64];
            chunks_mut(&mut v, 4, |c, p| {
                p.iter_mut().for_each(|x| *x = c as u32 + 1)
            });
            let want: Vec<u32> = (0..64).map(|i| i / 4 + 1).collect();
            assert_eq!(v, want, "round {round}");
        }
    }

    #[test]
    fn a_panicking_body_reaches_the_caller() {
        let r = std::panic::catch_unwind(|| {
            for_each(64, |i| {
                if i % 2 == 1 {
                    panic!("boom")
                }
            });
        });
        assert!(r.is_err());
    }
}
