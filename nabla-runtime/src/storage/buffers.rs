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
//! its run time), and freed memory up to a cap (2 GiB by default) stays
//! with the process (with 256 MiB, a reverse pass over 100 RK4 steps of
//! 10⁵ values gave its 1 GB back after every call and took 3× longer in
//! page faults). The price is memory held after a peak, up to the cap; set `NABLA_MALLOC_DEFAULTS=1`
//! before the first array is made to keep glibc's defaults. Threads other
//! than the main one allocate from glibc's per-thread heaps, which still
//! map buffers over 64 MiB separately.
//!
//! The kept memory has a cap ([`set_buffer_cap`], 2 GiB by default) and
//! can be handed
//! back at any time ([`release_buffers`], as `torch.cuda.empty_cache`),
//! e.g. after a peak such as an evaluation pass with a large batch.
//!
//! ```
//! // Happens on the first array; calling it again does nothing.
//! nabla::keep_freed_buffers();
//! ```

use std::sync::Once;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The largest allocation served from the heap while mappings are allowed
/// (glibc's maximum on 64-bit).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: i32 = 32 << 20;
/// The cap on freed memory kept, in bytes (see [`set_buffer_cap`]).
static CAP: AtomicUsize = AtomicUsize::new(DEFAULT_CAP);

/// The default cap: 2 GiB (glibc's largest trim threshold).
const DEFAULT_CAP: usize = i32::MAX as usize;

/// Buffers at least this large are counted for the cap.
const COUNT_FROM: usize = 1 << 20;

/// Bytes of counted buffers alive now, and the most alive since the last
/// release: the difference is what the heap grew to hold for them and
/// holds free now.
static LIVE: AtomicUsize = AtomicUsize::new(0);
static HIGH: AtomicUsize = AtomicUsize::new(0);

/// Called when an array gets its own buffer of `bytes`.
#[inline]
pub(crate) fn made(bytes: usize) {
    if bytes >= COUNT_FROM {
        let live = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
        HIGH.fetch_max(live, Ordering::Relaxed);
    }
}

/// Called when an array's own buffer of `bytes` has been freed: if the
/// large buffers' high-water mark since the last release exceeds what is
/// alive by more than the cap, the freed memory goes back to the operating
/// system ([`release_buffers`]). Two atomic operations per large buffer.
#[inline]
pub(crate) fn freed(bytes: usize) {
    if bytes >= COUNT_FROM {
        let live = LIVE
            .fetch_sub(bytes, Ordering::Relaxed)
            .saturating_sub(bytes);
        if HIGH.load(Ordering::Relaxed).saturating_sub(live) > CAP.load(Ordering::Relaxed) {
            over_cap(live);
        }
    }
}

#[cold]
fn over_cap(live: usize) {
    HIGH.store(live, Ordering::Relaxed);
    release_buffers();
}

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
        }
        set_trim_threshold(CAP.load(Ordering::Relaxed));
    });
}

/// Tells glibc how much freed memory at the top of the heap to keep.
fn set_trim_threshold(_bytes: usize) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes an allocator parameter; the value is
    // clamped to its `int` range. A failure keeps the previous setting.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, _bytes.min(i32::MAX as usize) as i32);
    }
}

/// Caps the freed memory kept for reuse (2 GiB by default): on the CPU,
/// freed heap at the heap's top beyond `bytes` goes back to the operating
/// system at once (glibc's trim threshold, at most 2 GiB), and when the
/// arrays of 1 MiB or more that are alive fall more than `bytes` below
/// their most since the last release (the heap then holds about that much
/// free), all freed memory goes back ([`release_buffers`]); on
/// each GPU, the memory pool keeps at most `bytes` freed (no cap unless
/// set).
///
/// ```
/// let default = nabla::buffer_cap();
/// nabla::set_buffer_cap(256 << 20);
/// assert_eq!(nabla::buffer_cap(), 256 << 20);
/// nabla::set_buffer_cap(default);
/// ```
pub fn set_buffer_cap(bytes: usize) {
    CAP.store(bytes, Ordering::Relaxed);
    keep_freed_buffers();
    set_trim_threshold(bytes);
    #[cfg(feature = "cuda")]
    nabla_kernels::cuda::set_pool_cap(bytes as u64);
}

/// The cap set by [`set_buffer_cap`].
///
/// ```
/// assert!(nabla::buffer_cap() > 0);
/// ```
pub fn buffer_cap() -> usize {
    CAP.load(Ordering::Relaxed)
}

/// Hands every freed buffer kept for reuse back to the operating system
/// (glibc's `malloc_trim`, which also returns free pages between live
/// buffers) and, with GPUs, each device's pool back to the driver after
/// its queued work (`torch.cuda.empty_cache`). The next allocations map
/// fresh memory, so call it after a peak, not in a hot loop.
///
/// ```
/// let big = nabla::Array::zeros(&[1 << 22], nabla::DType::F64);
/// drop(big);
/// nabla::release_buffers();
/// ```
pub fn release_buffers() {
    HIGH.store(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free memory; no live allocation moves.
    unsafe {
        libc::malloc_trim(0);
    }
    #[cfg(feature = "cuda")]
    nabla_kernels::cuda::release_freed_memory();
}
