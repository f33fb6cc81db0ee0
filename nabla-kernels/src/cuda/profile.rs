//! Where a program's GPU time goes: with `NABLA_GPU_PROFILE=1` in the
//! environment, every kernel launch (and every cuBLAS product) is
//! bracketed by two CUDA timing events on the device's stream, and
//! [`Gpu::profile_report`] sums the measured times by kernel name. The
//! events cost a few microseconds of host time per launch, so leave the
//! variable unset when timing a whole program.
//!
//! ```
//! if let Ok(gpu) = nabla_kernels::cuda::Gpu::get(0) {
//!     // Empty unless NABLA_GPU_PROFILE=1 and kernels have run.
//!     println!("{}", gpu.profile_report());
//! }
//! ```

use super::device::Gpu;
use cudarc::driver::CudaEvent;
use cudarc::driver::sys::CUevent_flags;
use std::collections::HashMap;

/// Whether launches are timed (`NABLA_GPU_PROFILE=1`, read once).
///
/// ```
/// let _ = nabla_kernels::cuda::profiling();
/// ```
pub fn profiling() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("NABLA_GPU_PROFILE").is_ok_and(|v| v == "1"))
}

/// Launches recorded so far: name, start and end events.
pub(crate) type Spans = Vec<(String, CudaEvent, CudaEvent)>;

/// The start of a timed launch (nothing when profiling is off).
pub(crate) struct Span(Option<CudaEvent>);

impl Gpu {
    /// Marks the start of a launch on this device's stream.
    pub(crate) fn span(&self) -> Span {
        Span(profiling().then(|| self.timing_event()).flatten())
    }

    /// Marks the end of the launch started at `span`, as kernel `name`.
    pub(crate) fn close(&self, span: Span, name: &str) {
        self.close_with(span, || name.to_string());
    }

    /// [`Gpu::close`] with a label made only when profiling (a kernel name
    /// with the shapes or the calling line that tell its launches apart).
    pub(crate) fn close_with(&self, span: Span, label: impl FnOnce() -> String) {
        if let Some(start) = span.0
            && let Some(end) = self.timing_event()
        {
            self.spans.lock().unwrap().push((label(), start, end));
        }
    }

    fn timing_event(&self) -> Option<CudaEvent> {
        self.stream
            .record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .ok()
    }

    /// The kernels timed since the last report (see the module docs), one
    /// line per kernel name, most total time first: calls, total and mean
    /// milliseconds, share of the total. Waits for the device.
    ///
    /// ```
    /// if let Ok(gpu) = nabla_kernels::cuda::Gpu::get(0) {
    ///     let _ = gpu.profile_report();
    /// }
    /// ```
    pub fn profile_report(&self) -> String {
        let spans = std::mem::take(&mut *self.spans.lock().unwrap());
        let mut by: HashMap<String, (usize, f64)> = HashMap::new();
        for (name, start, end) in &spans {
            let ms = start.elapsed_ms(end).map_or(0.0, f64::from);
            let e = by.entry(name.clone()).or_default();
            e.0 += 1;
            e.1 += ms;
        }
        let total: f64 = by.values().map(|v| v.1).sum();
        let mut rows: Vec<_> = by.into_iter().collect();
        rows.sort_by(|a, b| b.1.1.total_cmp(&a.1.1));
        let mut out = format!(
            "{:<44} {:>7} {:>10} {:>9} {:>6}\n",
            "kernel", "calls", "total ms", "mean µs", "share"
        );
        for (name, (calls, ms)) in rows {
            out += &format!(
                "{name:<44} {calls:>7} {ms:>10.3} {:>9.1} {:>5.1}%\n",
                ms * 1e3 / calls as f64,
                100.0 * ms / total.max(1e-12)
            );
        }
        out + &format!("{:<44} {:>7} {total:>10.3}\n", "total", spans.len())
    }
}
