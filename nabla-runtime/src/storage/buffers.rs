//! CPU buffers are kept for reuse instead of being handed back to the
//! operating system.
//!
//! Every operation writes a fresh buffer, and a program runs the same
//! operations again and again (a training step, a Hessian per call). With
//! glibc's default settings, freed buffers of 128 KiB and more are unmapped
//! (or trimmed off the top of the heap) at once, so the next call maps the
//! same amount again and page-faults every page of its outputs: measured
//! here, 65–75% of a Rosenbrock gradient on 1e6 elements and most of a
//! Hessian of Rosenbrock at n = 100 were kernel page-fault time, and the run
//! time swung 4× with the heap's history. XLA and PyTorch's GPU allocator
//! keep freed buffers for the same reason; on glibc we ask malloc to do it:
//! on the first array, every buffer comes from the heap (no separate
//! mappings, whatever its size: glibc's largest threshold, 32 MiB, left
//! `kmeans`' 80 MB distance matrices page-faulting on every call, half of
//! its run time), and up to 1 GiB of freed heap at its top stays with the
//! process (with 256 MiB, a reverse pass over 100 RK4 steps of 10⁵ values
//! gave its 1 GB back after every call and took 3× longer in page faults). The price is memory held after a peak (freed buffers below
//! the top of the heap stay until reused); set `NABLA_MALLOC_DEFAULTS=1`
//! before the first array is made to keep glibc's defaults. Threads other
//! than the main one allocate from glibc's per-thread heaps, which still
//! map buffers over 64 MiB separately.
//!
//! ```
//! // Happens on the first array; calling it again does nothing.
//! nabla::keep_freed_buffers();
//! ```

use std::sync::Once;

/// The largest allocation served from the heap while mappings are allowed
/// (glibc's maximum on 64-bit).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: i32 = 32 << 20;
/// Freed heap memory kept before the heap is trimmed.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_THRESHOLD: i32 = 1 << 30;

/// Applies the settings above once per process (called on the first array;
/// a no-op off glibc or with `NABLA_MALLOC_DEFAULTS=1`).
pub fn keep_freed_buffers() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("NABLA_MALLOC_DEFAULTS").is_some_and(|v| v == "1") {
            return;
        }
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: mallopt only changes allocator parameters; both values
        // are within glibc's documented ranges. A failure keeps the default.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
            libc::mallopt(libc::M_MMAP_MAX, 0);
            libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
        }
    });
}
