//! Devices: probing, one context/stream/module/cuBLAS handle per device.

use cudarc::cublas::CudaBlas;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream};
use cudarc::nvrtc::Ptx;
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::sync::{Arc, Mutex, OnceLock};

/// The CUDA C source of every kernel (compiled once per device):
/// `prelude.cu`, `kernels.cu` and `rows.cu` with the op registry's elementwise cases
/// spliced in.
pub static KERNEL_SOURCE: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    crate::ops::cuda_source(concat!(
        include_str!("prelude.cu"),
        include_str!("kernels.cu"),
        include_str!("rows.cu")
    ))
});

/// The prelude alone (layouts and the registry's ops), which the kernels
/// of fused regions (fused.rs) are compiled after.
pub(crate) static PRELUDE_SOURCE: std::sync::LazyLock<String> =
    std::sync::LazyLock::new(|| crate::ops::cuda_source(include_str!("prelude.cu")));

/// Why the GPU could not be used.
///
/// ```
/// let e = nabla_kernels::cuda::GpuError("no CUDA driver".into());
/// assert_eq!(e.to_string(), "no CUDA driver");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuError(pub String);

impl std::fmt::Display for GpuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GpuError {}

fn err(what: &str, e: impl std::fmt::Debug) -> GpuError {
    GpuError(format!("{what}: {e:?}"))
}

/// True when the CUDA driver library loads and reports at least one device.
/// Never panics and never aborts.
///
/// ```
/// let _ = nabla_kernels::cuda::is_available();
/// ```
pub fn is_available() -> bool {
    device_count() > 0
}

/// Number of CUDA devices (0 when the driver library is missing or fails).
///
/// ```
/// let _ = nabla_kernels::cuda::device_count();
/// ```
pub fn device_count() -> usize {
    static COUNT: OnceLock<usize> = OnceLock::new();
    *COUNT.get_or_init(|| {
        // SAFETY: only tries to dlopen the driver library by name.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return 0;
        }
        // A broken install may still panic inside the bindings (a missing
        // symbol); treat that as "no device" rather than aborting.
        std::panic::catch_unwind(|| {
            cudarc::driver::result::init().ok()?;
            CudaContext::device_count().ok()
        })
        .ok()
        .flatten()
        .map_or(0, |n| n.max(0) as usize)
    })
}

/// One CUDA device: its context, the stream every op runs on (so ops are
/// ordered without extra synchronisation), the compiled kernel module and a
/// cuBLAS handle, created on first use and cached for the process.
pub struct Gpu {
    ordinal: usize,
    pub(crate) stream: Arc<CudaStream>,
    module: OnceLock<Result<Arc<CudaModule>, GpuError>>,
    functions: Mutex<HashMap<String, CudaFunction>>,
    /// User kernels (custom ops), compiled once per source text.
    user_modules: Mutex<HashMap<String, Arc<CudaModule>>>,
    /// Kernels of fused regions, by body, element type (f64?) and kind
    /// (sum?).
    pub(crate) fused: Mutex<HashMap<(u64, bool, bool), CudaFunction>>,
    blas: OnceLock<Result<Mutex<CudaBlas>, GpuError>>,
    sms: OnceLock<usize>,
    /// Timed launches (`NABLA_GPU_PROFILE=1`, profile.rs).
    pub(crate) spans: Mutex<super::profile::Spans>,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Gpu(cuda:{})", self.ordinal)
    }
}

// SAFETY: cudarc's handles are thread-safe (the context is bound to the
// calling thread by every cudarc call); the cuBLAS handle is only used on
// this device's single stream.
unsafe impl Send for Gpu {}
// SAFETY: as for `Send`: shared use goes through cudarc's thread-safe
// handles or the one stream, which serialises the work.
unsafe impl Sync for Gpu {}

/// The devices initialised so far, by ordinal.
static GPUS: OnceLock<Mutex<HashMap<usize, Arc<Gpu>>>> = OnceLock::new();

/// The freed memory each device's pool keeps (its release threshold).
static POOL_CAP: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(u64::MAX);

impl Gpu {
    /// The device `ordinal`, initialised once per process.
    ///
    /// ```
    /// if !nabla_kernels::cuda::is_available() {
    ///     assert!(nabla_kernels::cuda::Gpu::get(0).is_err());
    /// }
    /// ```
    pub fn get(ordinal: usize) -> Result<Arc<Gpu>, GpuError> {
        let n = device_count();
        if ordinal >= n {
            return Err(GpuError(if n == 0 {
                "no CUDA device: the driver library (libcuda.so) did not load or reports no GPU"
                    .into()
            } else {
                format!("no CUDA device {ordinal}: this machine has {n}")
            }));
        }
        let mut gpus = GPUS.get_or_init(Default::default).lock().unwrap();
        if let Some(g) = gpus.get(&ordinal) {
            return Ok(g.clone());
        }
        let ctx = CudaContext::new(ordinal).map_err(|e| err("creating a CUDA context", e))?;
        // SAFETY: every op of this device runs on its one stream (kernels,
        // copies, cuBLAS, frees), which orders all uses of every buffer, so
        // cudarc's per-buffer events (two event records per kernel argument)
        // are not needed.
        unsafe { ctx.disable_event_tracking() };
        keep_freed_memory(&ctx);
        let gpu = Arc::new(Gpu {
            ordinal,
            stream: ctx.default_stream(),
            module: OnceLock::new(),
            functions: Mutex::new(HashMap::new()),
            user_modules: Mutex::new(HashMap::new()),
            fused: Mutex::new(HashMap::new()),
            blas: OnceLock::new(),
            sms: OnceLock::new(),
            spans: Mutex::new(Vec::new()),
        });
        gpus.insert(ordinal, gpu.clone());
        Ok(gpu)
    }

    /// The number of streaming multiprocessors (sizes reduction grids).
    pub(crate) fn sm_count(&self) -> usize {
        *self.sms.get_or_init(|| {
            use cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT;
            self.stream
                .context()
                .attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
                .map_or(1, |n| n.max(1) as usize)
        })
    }

    /// The device number.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// Waits until every queued kernel has finished (for timing).
    pub fn synchronize(&self) -> Result<(), GpuError> {
        self.stream.synchronize().map_err(|e| err("synchronize", e))
    }

    /// The kernel `name`, compiling the module on first use.
    #[track_caller]
    pub(crate) fn function(&self, name: &str) -> CudaFunction {
        if let Some(f) = self.functions.lock().unwrap().get(name) {
            return f.clone();
        }
        let module = self
            .module
            .get_or_init(|| {
                let ctx = self.stream.context();
                let (major, minor) = ctx
                    .compute_capability()
                    .map_err(|e| err("compute capability", e))?;
                let image = super::kernel_cache::cached_cubin(
                    &KERNEL_SOURCE,
                    "nabla_kernels.cu",
                    major as u32 * 10 + minor as u32,
                )?;
                ctx.load_module(Ptx::from_binary(image))
                    .map_err(|e| err("loading the compiled kernels", e))
            })
            .as_ref()
            .unwrap_or_else(|e| panic!("CUDA kernels unavailable on cuda:{}: {e}", self.ordinal));
        let f = module
            .load_function(name)
            .unwrap_or_else(|e| panic!("CUDA kernel {name} missing from kernels.cu: {e:?}"));
        self.functions
            .lock()
            .unwrap()
            .insert(name.into(), f.clone());
        f
    }

    /// Kernel `name` of a user's CUDA C `source` (a custom op's kernel),
    /// compiled with NVRTC for this device on first use and cached.
    #[track_caller]
    pub(crate) fn user_function(&self, source: &str, name: &str) -> CudaFunction {
        let mut modules = self.user_modules.lock().unwrap();
        let module = match modules.get(source) {
            Some(m) => m.clone(),
            None => {
                let ctx = self.stream.context();
                let (major, minor) = ctx
                    .compute_capability()
                    .unwrap_or_else(|e| panic!("cuda:{}: compute capability: {e:?}", self.ordinal));
                let image = super::kernel_cache::cached_cubin(
                    source,
                    "custom_kernel.cu",
                    major as u32 * 10 + minor as u32,
                )
                .unwrap_or_else(|e| panic!("custom CUDA kernel `{name}`: {e}"));
                let m = ctx
                    .load_module(Ptx::from_binary(image))
                    .unwrap_or_else(|e| panic!("custom CUDA kernel `{name}`: loading: {e:?}"));
                modules.insert(source.to_string(), m.clone());
                m
            }
        };
        module.load_function(name).unwrap_or_else(|e| {
            panic!("custom CUDA kernel `{name}` is not in its source (declare it `extern \"C\" __global__`): {e:?}")
        })
    }

    /// The cuBLAS handle (one caller at a time).
    #[track_caller]
    pub(crate) fn blas(&self) -> std::sync::MutexGuard<'_, CudaBlas> {
        self.blas
            .get_or_init(|| {
                CudaBlas::new(self.stream.clone())
                    .map(Mutex::new)
                    .map_err(|e| err("cuBLAS", e))
            })
            .as_ref()
            .unwrap_or_else(|e| panic!("cuBLAS unavailable on cuda:{}: {e}", self.ordinal))
            .lock()
            .unwrap()
    }
}

/// Compiles [`KERNEL_SOURCE`] with NVRTC for the real architecture
/// `sm_<arch>` (e.g. 90 for H100/H200) and returns the CUBIN image (loaded
/// without PTX JIT, so a newer NVRTC than the driver is fine). Errors carry
/// NVRTC's log. Needs only libnvrtc, not a GPU.
///
/// ```no_run
/// let cubin = nabla_kernels::cuda::compile_kernels(90).unwrap();
/// assert!(!cubin.is_empty());
/// ```
pub fn compile_kernels(arch: u32) -> Result<Vec<u8>, GpuError> {
    compile_source(&KERNEL_SOURCE, "nabla_kernels.cu", arch)
}

/// Compiles CUDA C `source` (named `file` in messages) with NVRTC to a
/// CUBIN for `sm_<arch>`; errors carry NVRTC's log. Needs only libnvrtc.
///
/// ```no_run
/// let src = r#"extern "C" __global__ void twice(const float* x, float* y, long long n) {
///     long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
///     if (i < n) y[i] = 2.0f * x[i];
/// }"#;
/// assert!(nabla_kernels::cuda::compile_source(src, "twice.cu", 90).is_ok());
/// ```
pub fn compile_source(source: &str, file: &str, arch: u32) -> Result<Vec<u8>, GpuError> {
    use cudarc::nvrtc::{result, sys};
    // SAFETY: only tries to dlopen libnvrtc by name.
    if !unsafe { sys::is_culib_present() } {
        return Err(GpuError(
            "NVRTC (libnvrtc.so) not found: install the CUDA runtime compiler or add it to LD_LIBRARY_PATH".into(),
        ));
    }
    let src = CString::new(source)
        .map_err(|_| GpuError(format!("{file}: source contains a NUL byte")))?;
    let name = CString::new(file).map_err(|_| GpuError(format!("{file}: bad file name")))?;
    let prog =
        result::create_program(&src, Some(&name)).map_err(|e| err("nvrtcCreateProgram", e))?;
    let opts = [
        format!("--gpu-architecture=sm_{arch}"),
        "--std=c++17".to_string(),
        "-default-device".to_string(),
    ];
    // SAFETY: `prog` is a live program; options are plain strings.
    let compiled = unsafe { result::compile_program(prog, &opts) };
    let out = match compiled {
        Err(e) => {
            // SAFETY: reading the log of a live program.
            let log = unsafe { result::get_program_log(prog) }
                .map(|l| {
                    // SAFETY: NVRTC's log is a NUL-terminated string, owned
                    // by `l` for this call.
                    unsafe { CStr::from_ptr(l.as_ptr()) }
                        .to_string_lossy()
                        .into_owned()
                })
                .unwrap_or_default();
            Err(GpuError(format!(
                "NVRTC failed to compile {file} ({e:?}):\n{log}"
            )))
        }
        Ok(()) => {
            let mut size = 0usize;
            // SAFETY: size query then copy into a buffer of that size.
            unsafe { sys::nvrtcGetCUBINSize(prog, &mut size) }
                .result()
                .map_err(|e| err("nvrtcGetCUBINSize", e))?;
            let mut image = vec![0u8; size];
            // SAFETY: `image` holds the `size` bytes NVRTC just reported
            // for this live, compiled program.
            unsafe { sys::nvrtcGetCUBIN(prog, image.as_mut_ptr().cast()) }
                .result()
                .map_err(|e| err("nvrtcGetCUBIN", e))?;
            Ok(image)
        }
    };
    // SAFETY: the program is not used after this.
    let _ = unsafe { result::destroy_program(prog) };
    out
}

/// Arrays are allocated from the device's default memory pool
/// (`cuMemAllocAsync`). Its release threshold is 0 by default, so every
/// synchronisation hands freed memory back to the driver and the next
/// allocation maps it again: a 256 MiB output then costs more than the
/// kernel that fills it. Like PyTorch's caching allocator, we keep freed
/// memory in the pool (it is still reused by this process's allocations),
/// up to [`set_pool_cap`] bytes (no limit unless set).
fn keep_freed_memory(ctx: &CudaContext) {
    set_threshold(ctx, POOL_CAP.load(std::sync::atomic::Ordering::Relaxed));
}

/// The device's default memory pool, if the driver gives it.
fn default_pool(ctx: &CudaContext) -> Option<cudarc::driver::sys::CUmemoryPool> {
    use cudarc::driver::sys;
    let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
    // SAFETY: a plain driver call on a valid device handle; `pool` outlives it.
    let ok = unsafe { sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device()) };
    (ok == sys::CUresult::CUDA_SUCCESS).then_some(pool)
}

/// Sets how much freed memory the device's pool keeps.
fn set_threshold(ctx: &CudaContext, bytes: u64) {
    use cudarc::driver::sys;
    if let Some(pool) = default_pool(ctx) {
        let mut threshold = bytes;
        // SAFETY: `pool` is the device's live default pool and `threshold`
        // outlives the call. A failure only leaves the previous setting.
        unsafe {
            sys::cuMemPoolSetAttribute(
                pool,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                (&mut threshold as *mut u64).cast(),
            );
        }
    }
}

/// Caps the freed memory each device's pool keeps for reuse, on the devices
/// initialised so far and those initialised later (`u64::MAX`, no cap, by
/// default).
///
/// ```
/// nabla_kernels::cuda::set_pool_cap(u64::MAX); // a no-op without a GPU
/// ```
pub fn set_pool_cap(bytes: u64) {
    POOL_CAP.store(bytes, std::sync::atomic::Ordering::Relaxed);
    if let Some(gpus) = GPUS.get() {
        for gpu in gpus.lock().unwrap().values() {
            set_threshold(gpu.stream.context(), bytes);
        }
    }
}

/// Waits for each initialised device's queued work, then hands the freed
/// memory its pool keeps back to the driver (as `torch.cuda.empty_cache`).
///
/// ```
/// nabla_kernels::cuda::release_freed_memory(); // a no-op without a GPU
/// ```
pub fn release_freed_memory() {
    let Some(gpus) = GPUS.get() else { return };
    for gpu in gpus.lock().unwrap().values() {
        if gpu.stream.synchronize().is_err() {
            continue;
        }
        if let Some(pool) = default_pool(gpu.stream.context()) {
            // SAFETY: `pool` is the device's live default pool; trimming
            // releases only memory no allocation holds.
            unsafe { cudarc::driver::sys::cuMemPoolTrimTo(pool, 0) };
        }
    }
}
