//! Launchers: one Rust function per kernel family of kernels.cu, mirroring
//! the CPU kernels' signatures (inputs by view, a fresh contiguous output).

use super::array::{Buf, GpuArray, check};
use super::device::Gpu;
use super::layout::Layout;
use crate::DType;
use crate::elementwise::{BinaryOp, CompareOp, UnaryOp, broadcast_shape};
use cudarc::driver::{LaunchArgs, LaunchConfig, PushKernelArg};
use ndarray::Slice;
use std::sync::Arc;

pub(super) const BLOCK: u32 = 256;

/// Grid for a grid-stride loop over `n` items.
pub(super) fn grid(n: usize) -> LaunchConfig {
    let blocks = n.div_ceil(BLOCK as usize).clamp(1, 1 << 20) as u32;
    LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Launch shape of the ILP elementwise kernels (each thread handles
/// `ILP` elements; must match `ILP` in kernels.cu).
fn grid_ilp(n: usize) -> LaunchConfig {
    grid(n.div_ceil(ILP))
}

const ILP: usize = 4;

/// A kernel argument: a device buffer (its pointer) or a plain value.
pub(super) trait KernelArg {
    fn push<'a>(&'a self, args: &mut LaunchArgs<'a>);
}

impl KernelArg for Buf {
    fn push<'a>(&'a self, args: &mut LaunchArgs<'a>) {
        match self {
            Buf::F32(s) => args.arg(s),
            Buf::F64(s) => args.arg(s),
            Buf::I64(s) => args.arg(s),
            Buf::U8(s) => args.arg(s),
        };
    }
}

macro_rules! plain_arg {
    ($($t:ty),*) => {$(
        impl KernelArg for $t {
            fn push<'a>(&'a self, args: &mut LaunchArgs<'a>) {
                args.arg(self);
            }
        }
    )*};
}
plain_arg!(Layout, i64, i32, f64);

/// Launches kernel `$name` with the listed arguments, in the order of the
/// kernel's parameter list in kernels.cu. When profiling, the launch is
/// recorded under the name and the line that called the launcher (the
/// first caller outside `#[track_caller]` functions), or under `label`.
macro_rules! launch {
    ($gpu:expr, $name:expr, $cfg:expr, [$($arg:expr),* $(,)?]) => {{
        let at = std::panic::Location::caller();
        launch!($gpu, $name, $cfg, [$($arg),*], label = || format!("{} @ {at}", $name))
    }};
    ($gpu:expr, $name:expr, $cfg:expr, [$($arg:expr),* $(,)?], label = $label:expr) => {{
        let gpu: &std::sync::Arc<$crate::cuda::Gpu> = $gpu;
        let name: &str = &$name;
        let f = gpu.function(name);
        let mut args = gpu.stream.launch_builder(&f);
        $( KernelArg::push(&$arg, &mut args); )*
        let span = gpu.span();
        // SAFETY: every call site passes pointers and sizes matching the
        // kernel's parameters, with outputs sized for the launch.
        $crate::cuda::array::check(unsafe { args.launch($cfg) });
        gpu.close_with(span, $label);
    }};
}
pub(super) use launch;

#[track_caller]
fn same_device(op: &str, a: &GpuArray, b: &GpuArray) {
    assert_eq!(
        a.ordinal(),
        b.ordinal(),
        "{op}: operands on cuda:{} and cuda:{}; move one with .to_device(..)",
        a.ordinal(),
        b.ordinal()
    );
}

#[track_caller]
pub(super) fn float(op: &str, x: &GpuArray) -> &'static str {
    match x.elem() {
        DType::F32 | DType::F64 => x.elem().cuda_name(),
        e => panic!(
            "cuda {op}: expected an f32 or f64 array, got {} with shape {:?}",
            e.cuda_name(),
            x.shape()
        ),
    }
}

pub(super) fn layout_of(x: &GpuArray, out: &[usize]) -> Layout {
    Layout::over(out, x.shape(), x.strides(), x.offset())
}

/// Elementwise `op(x)` (float arrays), like [`crate::elementwise::unary`].
#[track_caller]
pub fn unary(x: &GpuArray, op: UnaryOp) -> GpuArray {
    let t = float("unary", x);
    let out = GpuArray::alloc(x.gpu(), x.elem(), x.shape());
    let (code, p, q) = op.code();
    let (lx, n) = (layout_of(x, x.shape()), out.numel() as i64);
    if n > 0 {
        let at = std::panic::Location::caller();
        launch!(
            x.gpu(),
            format!("unary_{t}"),
            grid_ilp(n as usize),
            [*x.buf, lx, *out.buf, n, code, p, q],
            label = || format!("unary_{t}({code}) {:?} @ {at}", x.shape(),)
        );
    }
    out
}

/// Elementwise `op(a, b)` with NumPy broadcasting (same float dtype).
#[track_caller]
pub fn binary(a: &GpuArray, b: &GpuArray, op: BinaryOp) -> GpuArray {
    same_device("binary", a, b);
    let t = float("binary", a);
    assert_eq!(
        a.elem(),
        b.elem(),
        "cuda binary: dtypes {} and {} differ",
        a.elem().cuda_name(),
        b.elem().cuda_name()
    );
    let shape = broadcast_shape(a.shape(), b.shape());
    let out = GpuArray::alloc(a.gpu(), a.elem(), &shape);
    let code = op.code();
    let (la, lb, n) = (
        layout_of(a, &shape),
        layout_of(b, &shape),
        out.numel() as i64,
    );
    if n > 0 {
        let at = std::panic::Location::caller();
        launch!(
            a.gpu(),
            format!("binary_{t}"),
            grid_ilp(n as usize),
            [*a.buf, la, *b.buf, lb, *out.buf, n, code],
            label = || format!("binary_{t}({code}) {:?} {:?} @ {at}", a.shape(), b.shape(),)
        );
    }
    out
}

/// Elementwise comparison with broadcasting; a `Bool` array.
#[track_caller]
pub fn compare(a: &GpuArray, b: &GpuArray, op: CompareOp) -> GpuArray {
    same_device("compare", a, b);
    assert_eq!(
        a.elem(),
        b.elem(),
        "cuda compare: dtypes {} and {} differ",
        a.elem().cuda_name(),
        b.elem().cuda_name()
    );
    assert!(
        a.elem() != DType::Bool,
        "cuda compare: bool operands; cast them first"
    );
    let shape = broadcast_shape(a.shape(), b.shape());
    let out = GpuArray::alloc(a.gpu(), DType::Bool, &shape);
    let code = op as i32;
    let (la, lb, n) = (
        layout_of(a, &shape),
        layout_of(b, &shape),
        out.numel() as i64,
    );
    if n > 0 {
        launch!(
            a.gpu(),
            format!("compare_{}", a.elem().cuda_name()),
            grid(n as usize),
            [*a.buf, la, *b.buf, lb, *out.buf, n, code]
        );
    }
    out
}

/// `mask ? a : b` elementwise, all three broadcast together.
#[track_caller]
pub fn where_select(mask: &GpuArray, a: &GpuArray, b: &GpuArray) -> GpuArray {
    same_device("where", mask, a);
    same_device("where", a, b);
    assert_eq!(
        mask.elem(),
        DType::Bool,
        "cuda where: the mask must be bool"
    );
    assert_eq!(
        a.elem(),
        b.elem(),
        "cuda where: dtypes {} and {} differ",
        a.elem().cuda_name(),
        b.elem().cuda_name()
    );
    let shape = broadcast_shape(&broadcast_shape(mask.shape(), a.shape()), b.shape());
    let out = GpuArray::alloc(a.gpu(), a.elem(), &shape);
    let (lm, la, lb) = (
        layout_of(mask, &shape),
        layout_of(a, &shape),
        layout_of(b, &shape),
    );
    let n = out.numel() as i64;
    if n > 0 {
        launch!(
            a.gpu(),
            format!("where_{}", a.elem().cuda_name()),
            grid(n as usize),
            [*mask.buf, lm, *a.buf, la, *b.buf, lb, *out.buf, n]
        );
    }
    out
}

/// Copies `src` (read through its strides, broadcast to `dst`'s shape) into
/// the view `dst`, converting the element type. `dst` must be a view of a
/// buffer the caller has just allocated and nobody else holds.
#[track_caller]
fn copy_into(src: &GpuArray, dst: &GpuArray) {
    let shape = dst.shape().to_vec();
    let (ls, ld, n) = (
        layout_of(src, &shape),
        layout_of(dst, &shape),
        dst.numel() as i64,
    );
    if n > 0 {
        let name = format!("copy_{}_{}", src.elem().cuda_name(), dst.elem().cuda_name());
        let at = std::panic::Location::caller();
        launch!(
            src.gpu(),
            name,
            grid(n as usize),
            [*src.buf, ls, *dst.buf, ld, n],
            label = || format!(
                "{name} {:?} strides {:?} @ {at}",
                src.shape(),
                src.strides(),
            )
        );
    }
}

/// A contiguous copy of `x`.
#[track_caller]
pub fn contiguous(x: &GpuArray) -> GpuArray {
    let out = GpuArray::alloc(x.gpu(), x.elem(), x.shape());
    copy_into(x, &out);
    out
}

/// `x` converted to element type `to` (bool: nonzero is true).
#[track_caller]
pub fn cast(x: &GpuArray, to: DType) -> GpuArray {
    let out = GpuArray::alloc(x.gpu(), to, x.shape());
    copy_into(x, &out);
    out
}

/// Concatenation of same-typed `parts` along `axis` (shapes agree elsewhere).
#[track_caller]
pub fn concat(parts: &[GpuArray], axis: usize) -> GpuArray {
    let first = &parts[0];
    let mut shape = first.shape().to_vec();
    shape[axis] = parts.iter().map(|p| p.shape()[axis]).sum();
    let out = GpuArray::alloc(first.gpu(), first.elem(), &shape);
    let mut start = 0usize;
    for p in parts {
        same_device("concat", first, p);
        let len = p.shape()[axis];
        let slices: Vec<Slice> = (0..shape.len())
            .map(|d| {
                if d == axis {
                    Slice::from(start..start + len)
                } else {
                    Slice::from(..)
                }
            })
            .collect();
        copy_into(p, &out.slice(&slices));
        start += len;
    }
    out
}

/// A zero array of `shape` with `src` written into the region `slices`.
#[track_caller]
pub fn slice_place(shape: &[usize], slices: &[Slice], src: &GpuArray) -> GpuArray {
    let out = GpuArray::zeros(src.gpu(), src.elem(), shape);
    copy_into(src, &out.slice(slices));
    out
}

/// Adds `src` into the region of `dst` that `slices` select, in place: a
/// slice's cotangent accumulated into the cotangent of the whole (one pass
/// over the region). `dst` is first made a contiguous buffer of its own
/// when it is shared or strided (its value never changes under another
/// holder). False, with nothing done, for float types or shapes that do
/// not match.
#[track_caller]
pub fn add_into_region(dst: &mut GpuArray, slices: &[Slice], src: &GpuArray) -> bool {
    let float = matches!(dst.elem(), DType::F32 | DType::F64);
    if !float || dst.elem() != src.elem() || dst.ordinal() != src.ordinal() {
        return false;
    }
    if slices.len() != dst.shape().len() || dst.slice(slices).shape() != src.shape() {
        return false;
    }
    if !(dst.is_contiguous() && dst.offset() == 0 && Arc::strong_count(&dst.buf) == 1) {
        *dst = contiguous(dst);
    }
    let region = dst.slice(slices);
    let shape = src.shape().to_vec();
    let (ls, ld, n) = (
        layout_of(src, &shape),
        layout_of(&region, &shape),
        src.numel() as i64,
    );
    if n > 0 {
        launch!(
            dst.gpu(),
            format!("add_into_{}", dst.elem().cuda_name()),
            grid(n as usize),
            [*src.buf, ls, *dst.buf, ld, n]
        );
    }
    true
}

/// A contiguous array of `shape` filled with `v` (converted to `elem`).
#[track_caller]
pub fn fill(gpu: &Arc<Gpu>, elem: DType, shape: &[usize], v: f64) -> GpuArray {
    let out = GpuArray::alloc(gpu, elem, shape);
    let n = out.numel() as i64;
    if n > 0 {
        launch!(
            gpu,
            format!("fill_{}", elem.cuda_name()),
            grid(n as usize),
            [*out.buf, n, v]
        );
    }
    out
}

/// `[start, start + step, ..]` of length `n`.
#[track_caller]
pub fn arange(gpu: &Arc<Gpu>, elem: DType, n: usize, start: f64, step: f64) -> GpuArray {
    let out = GpuArray::alloc(gpu, elem, &[n]);
    let len = n as i64;
    if len > 0 {
        launch!(
            gpu,
            format!("arange_{}", elem.cuda_name()),
            grid(n),
            [*out.buf, len, start, step]
        );
    }
    out
}

fn upload_indices(gpu: &Arc<Gpu>, idx: &[usize]) -> GpuArray {
    let v: Vec<i64> = idx.iter().map(|&i| i as i64).collect();
    GpuArray::from_host(gpu, &v, &[v.len()])
}

/// Entries `idx` along `axis` (indices may repeat).
#[track_caller]
pub fn index_select(x: &GpuArray, axis: usize, idx: &[usize]) -> GpuArray {
    let mut shape = x.shape().to_vec();
    shape[axis] = idx.len();
    let out = GpuArray::alloc(x.gpu(), x.elem(), &shape);
    let n = out.numel() as i64;
    if n > 0 {
        let ids = upload_indices(x.gpu(), idx);
        let lx = Layout::over(&shape, &shape, x.strides(), x.offset());
        let ax = axis as i32;
        launch!(
            x.gpu(),
            format!("index_select_{}", x.elem().cuda_name()),
            grid(n as usize),
            [*x.buf, lx, *ids.buf, ax, *out.buf, n]
        );
    }
    out
}

/// Scatter-add: zeros of `shape` where slab `j` of `src` along `axis` is
/// added at `idx[j]` (atomic adds: repeated indices sum in no fixed order).
#[track_caller]
pub fn index_add(shape: &[usize], axis: usize, idx: &[usize], src: &GpuArray) -> GpuArray {
    let t = float("index_add", src);
    let out = GpuArray::zeros(src.gpu(), src.elem(), shape);
    let n = src.numel() as i64;
    if n > 0 {
        let ids = upload_indices(src.gpu(), idx);
        let ls = layout_of(src, src.shape());
        let ly = Layout::contiguous(shape);
        let ax = axis as i32;
        launch!(
            src.gpu(),
            format!("index_add_{t}"),
            grid(n as usize),
            [*src.buf, ls, *ids.buf, ax, *out.buf, ly, n]
        );
    }
    out
}

/// How to launch a user's kernel (a custom op's CUDA kernel).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UserLaunch {
    /// One thread per output element: `block` threads per block and
    /// `ceil(n / block)` blocks (the kernel must check `i < n`).
    PerElement {
        /// Threads per block (e.g. 256).
        block: u32,
    },
    /// An explicit grid.
    Grid {
        /// Blocks per grid (x, y, z).
        grid: (u32, u32, u32),
        /// Threads per block (x, y, z).
        block: (u32, u32, u32),
        /// Dynamic shared memory per block, bytes.
        shared_mem_bytes: u32,
    },
}

/// Launches kernel `name` of the user's CUDA C `source` (compiled once per
/// device and cached) as `name(const T* in0, .., const T* inK, T* out,
/// long long n)`: every input is made contiguous first, `out` is a fresh
/// contiguous array of `out_elem` and `out_shape`, `n` its element count.
#[track_caller]
pub fn launch_user(
    source: &str,
    name: &str,
    inputs: &[GpuArray],
    out_elem: DType,
    out_shape: &[usize],
    how: UserLaunch,
) -> GpuArray {
    let gpu = inputs
        .first()
        .map(|x| x.gpu().clone())
        .unwrap_or_else(|| panic!("custom CUDA kernel `{name}`: needs at least one device input"));
    let ins: Vec<GpuArray> = inputs
        .iter()
        .map(|x| {
            same_device(name, &inputs[0], x);
            if x.is_contiguous() && x.offset() == 0 {
                x.clone()
            } else {
                contiguous(x)
            }
        })
        .collect();
    let out = GpuArray::alloc(&gpu, out_elem, out_shape);
    let n = out.numel() as i64;
    let cfg = match how {
        UserLaunch::PerElement { block } => LaunchConfig {
            grid_dim: ((n as u64).div_ceil(block as u64).max(1) as u32, 1, 1),
            block_dim: (block, 1, 1),
            shared_mem_bytes: 0,
        },
        UserLaunch::Grid {
            grid,
            block,
            shared_mem_bytes,
        } => LaunchConfig {
            grid_dim: grid,
            block_dim: block,
            shared_mem_bytes,
        },
    };
    if n == 0 {
        return out;
    }
    let f = gpu.user_function(source, name);
    let mut args = gpu.stream.launch_builder(&f);
    for x in &ins {
        KernelArg::push(&*x.buf, &mut args);
    }
    KernelArg::push(&*out.buf, &mut args);
    KernelArg::push(&n, &mut args);
    let span = gpu.span();
    // SAFETY: the documented parameter convention; inputs are contiguous
    // from offset 0 and `out` holds `n` elements. What the kernel does with
    // them is the user's responsibility (a custom kernel is unsafe code).
    check(unsafe { args.launch(cfg) });
    gpu.close(span, name);
    out
}
