//! Fused elementwise kernels written at run time: a [`FusedBody`] (CUDA C
//! statements over operand values `v0..` and scalar parameters `s0..`
//! (`double`), assigning outputs `y0..`, in an element type `T`) becomes
//! one kernel that reads every operand through its layout (broadcasts and
//! strided views without copies), `ILP` elements per thread, and writes
//! each output contiguously — or, for
//! [`fused_sum`], one partial sum per block. The source is the shared
//! prelude (layouts, the registry's op `switch`es) plus the kernel, compiled
//! by NVRTC once per device, body and element type (and cached on disk).

use super::array::{GpuArray, check};
use super::device::Gpu;
use super::launch::KernelArg;
use super::layout::Layout;
use crate::DType;
use cudarc::driver::{CudaFunction, LaunchArgs, LaunchConfig, PushKernelArg};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

const BLOCK: u32 = 256;
const ILP: usize = 4;

/// A fused region's kernel body: CUDA C statements that read the operand
/// values `v0 .. v<inputs-1>` (of type `T`) and assign the outputs
/// `y0 .. y<outputs-1>`.
///
/// ```
/// use nabla_kernels::cuda::FusedBody;
/// let b = FusedBody::new(2, 1, "y0 = v0 * v1 + (T)1;".into());
/// assert!(nabla_kernels::cuda::fused_source(&b, "float", false).contains("y0 = v0 * v1"));
/// ```
#[derive(Debug)]
pub struct FusedBody {
    id: u64,
    inputs: usize,
    scalars: usize,
    outputs: usize,
    code: String,
}

impl FusedBody {
    /// A body of `inputs` operands and `outputs` results.
    pub fn new(inputs: usize, outputs: usize, code: String) -> FusedBody {
        FusedBody::with_scalars(inputs, 0, outputs, code)
    }

    /// A body that also reads `scalars` parameters `s0 ..` (`double`s
    /// given at each launch, so a value that changes between launches, a
    /// learning rate, needs no new kernel).
    ///
    /// ```
    /// use nabla_kernels::cuda::FusedBody;
    /// let b = FusedBody::with_scalars(1, 1, 1, "y0 = v0 * (T)s0;".into());
    /// assert!(nabla_kernels::cuda::fused_source(&b, "float", false).contains("double s0"));
    /// ```
    pub fn with_scalars(inputs: usize, scalars: usize, outputs: usize, code: String) -> FusedBody {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        FusedBody {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            inputs,
            scalars,
            outputs,
            code,
        }
    }
}

/// The complete CUDA source of `body`'s kernel `nabla_fused` for element
/// type `elem` (`"float"` or `"double"`): the map kernel, or with `sum` the
/// kernel writing one partial sum (of output 0, times a scale) per block.
pub fn fused_source(body: &FusedBody, elem: &str, sum: bool) -> String {
    let mut params: Vec<String> = (0..body.inputs)
        .map(|k| format!("const T* __restrict__ x{k}, Layout l{k}"))
        .chain((0..body.scalars).map(|k| format!("double s{k}")))
        .collect();
    if sum {
        params.push("T* __restrict__ partial".into());
        params.push("double scale".into());
    } else {
        params.extend((0..body.outputs).map(|k| format!("T* __restrict__ out{k}")));
    }
    params.push("i64 n".into());
    let load: String = (0..body.inputs)
        .map(|k| format!("            if (j < n) in{k}[u] = x{k}[at(l{k}, j)];\n"))
        .collect();
    let arrays: String = (0..body.inputs)
        .map(|k| format!("        T in{k}[ILP];\n"))
        .collect();
    let values: String = (0..body.inputs)
        .map(|k| format!("            const T v{k} = in{k}[u];\n"))
        .collect();
    let decls: String = (0..body.outputs).map(|k| format!("T y{k}; ")).collect();
    let code: String = body
        .code
        .lines()
        .map(|l| format!("            {l}\n"))
        .collect();
    let store = if sum {
        "            acc += y0;\n".to_string()
    } else {
        (0..body.outputs)
            .map(|k| format!("            out{k}[j] = y{k};\n"))
            .collect()
    };
    let tail = if sum {
        "    block_sum_to(acc, partial, scale);\n"
    } else {
        ""
    };
    format!(
        "{prelude}
typedef {elem} T;
#define ILP {ILP}

// One partial sum per block: warp shuffles, then the warps' sums.
__device__ __forceinline__ void block_sum_to(T acc, T* partial, double scale) {{
    __shared__ T warps[32];
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    if ((threadIdx.x & 31) == 0) warps[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x < 32) {{
        acc = threadIdx.x < (blockDim.x >> 5) ? warps[threadIdx.x] : (T)0;
        for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
        if (threadIdx.x == 0) partial[blockIdx.x] = acc * (T)scale;
    }}
}}

extern \"C\" __global__ void nabla_fused({params}) {{
    T acc = (T)0;
    for (i64 b = (i64)blockIdx.x * blockDim.x * ILP + threadIdx.x; b < n;
         b += (i64)gridDim.x * blockDim.x * ILP) {{
{arrays}#pragma unroll
        for (int u = 0; u < ILP; ++u) {{
            const i64 j = b + (i64)u * blockDim.x;
{load}        }}
#pragma unroll
        for (int u = 0; u < ILP; ++u) {{
            const i64 j = b + (i64)u * blockDim.x;
            if (j >= n) break;
{values}            {decls}
{code}{store}        }}
    }}
{tail}    (void)acc;
}}
",
        prelude = super::device::PRELUDE_SOURCE.as_str(),
        params = params.join(", "),
    )
}

/// The kernel of `body` for `elem` on `gpu`, compiled on first use.
#[track_caller]
fn function(gpu: &Arc<Gpu>, body: &FusedBody, elem: DType, sum: bool) -> CudaFunction {
    let key = (body.id, elem == DType::F64, sum);
    if let Some(f) = gpu.fused.lock().unwrap().get(&key) {
        return f.clone();
    }
    let t = match elem {
        DType::F32 => "float",
        DType::F64 => "double",
        e => panic!(
            "cuda fused region: expected f32 or f64 operands, got {}",
            e.cuda_name()
        ),
    };
    let f = gpu.user_function(&fused_source(body, t, sum), "nabla_fused");
    gpu.fused.lock().unwrap().insert(key, f.clone());
    f
}

/// Checks the operands against `body` and returns their layouts over
/// `shape` (what [`push_operands`] passes with their buffers).
#[track_caller]
fn layouts(body: &FusedBody, inputs: &[&GpuArray], shape: &[usize]) -> Vec<Layout> {
    assert_eq!(
        inputs.len(),
        body.inputs,
        "cuda fused region: {} operands for a body of {}",
        inputs.len(),
        body.inputs
    );
    let first = inputs[0];
    for x in inputs {
        assert!(
            x.ordinal() == first.ordinal() && x.elem() == first.elem(),
            "cuda fused region: operands on different devices or of different dtypes"
        );
    }
    inputs
        .iter()
        .map(|x| Layout::over(shape, x.shape(), x.strides(), x.offset()))
        .collect()
}

/// Runs `body` over the operands broadcast to `shape` (non-empty), with
/// its scalar parameters `scalars`, and returns its outputs, contiguous
/// arrays of `shape`.
///
/// ```no_run
/// use nabla_kernels::cuda::{FusedBody, GpuArray, Gpu, fused_map};
/// let gpu = Gpu::get(0).unwrap();
/// let x = GpuArray::from_host(&gpu, &[1.0f32, 2.0], &[2]);
/// let b = FusedBody::new(1, 1, "y0 = v0 * v0;".into());
/// assert_eq!(fused_map(&b, &[&x], &[], &[2])[0].to_host::<f32>(), vec![1.0, 4.0]);
/// ```
#[track_caller]
pub fn fused_map(
    body: &FusedBody,
    inputs: &[&GpuArray],
    scalars: &[f64],
    shape: &[usize],
) -> Vec<GpuArray> {
    let ls = layouts(body, inputs, shape);
    assert_eq!(
        scalars.len(),
        body.scalars,
        "cuda fused region: scalar parameters"
    );
    let (gpu, elem) = (inputs[0].gpu(), inputs[0].elem());
    let outs: Vec<GpuArray> = (0..body.outputs)
        .map(|_| GpuArray::alloc(gpu, elem, shape))
        .collect();
    let n: usize = shape.iter().product();
    let f = function(gpu, body, elem, false);
    let mut args = gpu.stream.launch_builder(&f);
    push_operands(&mut args, inputs, &ls);
    for v in scalars {
        args.arg(v);
    }
    for y in &outs {
        y.buf.push(&mut args);
    }
    let n64 = n as i64;
    args.arg(&n64);
    let blocks = n.div_ceil(BLOCK as usize * ILP).clamp(1, 1 << 20) as u32;
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    let span = gpu.span();
    // SAFETY: the kernel's parameters are the operands' buffers and
    // layouts, the outputs (each `n` elements) and `n`, in this order.
    check(unsafe { args.launch(cfg) });
    gpu.close(
        span,
        &format!("fused_map[{} in, {} out]", inputs.len(), body.outputs),
    );
    outs
}

/// `scale` times the sum of `body`'s (only) output over `shape`: one kernel
/// writing a partial sum per block, then the partials added. A 0-d array.
#[track_caller]
pub fn fused_sum(body: &FusedBody, inputs: &[&GpuArray], shape: &[usize], scale: f64) -> GpuArray {
    assert_eq!(body.outputs, 1, "cuda fused sum: a body of one output");
    assert_eq!(
        body.scalars, 0,
        "cuda fused sum: a body without scalar parameters"
    );
    let ls = layouts(body, inputs, shape);
    let (gpu, elem) = (inputs[0].gpu(), inputs[0].elem());
    let n: usize = shape.iter().product();
    let blocks = n
        .div_ceil(BLOCK as usize * ILP)
        .clamp(1, 8 * gpu.sm_count());
    let partial = GpuArray::alloc(gpu, elem, &[blocks]);
    let f = function(gpu, body, elem, true);
    let mut args = gpu.stream.launch_builder(&f);
    push_operands(&mut args, inputs, &ls);
    partial.buf.push(&mut args);
    args.arg(&scale);
    let n64 = n as i64;
    args.arg(&n64);
    let cfg = LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    let span = gpu.span();
    // SAFETY: the kernel's parameters are the operands' buffers and
    // layouts, the partial sums (one per block), the scale and `n`.
    check(unsafe { args.launch(cfg) });
    gpu.close(span, &format!("fused_sum[{} in]", inputs.len()));
    super::reduce::reduce(&partial, &[0], crate::reduce::ReduceOp::Sum)
}

/// Each operand's buffer and layout, in the kernel's parameter order.
fn push_operands<'a>(args: &mut LaunchArgs<'a>, inputs: &[&'a GpuArray], ls: &'a [Layout]) {
    for (x, l) in inputs.iter().zip(ls) {
        x.buf.push(args);
        l.push(args);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A two-output body with a broadcast, a sum kernel and both dtypes
    /// compile with NVRTC for sm_90 (skips without libnvrtc).
    #[test]
    fn fused_kernels_compile_with_nvrtc() {
        let b = FusedBody::new(
            3,
            2,
            "T t0 = unary_op<T>(3, v0, 0e0, 0e0);\nT t1 = binary_op<T>(2, t0, v1);\ny0 = t1 + v2;\ny1 = compare_op<T>(0, v0, v2) ? (T)1 : (T)0;".into(),
        );
        for (elem, sum) in [("float", false), ("double", false), ("float", true)] {
            let b1;
            let body = if sum {
                b1 = FusedBody::new(3, 1, "y0 = v0 * v1 + v2;".into());
                &b1
            } else {
                &b
            };
            match super::super::compile_source(&fused_source(body, elem, sum), "fused.cu", 90) {
                Ok(image) => assert!(!image.is_empty()),
                Err(e) if e.0.starts_with("NVRTC (libnvrtc.so) not found") => {
                    eprintln!("skipped: {e}");
                    return;
                }
                Err(e) => panic!("{elem} sum={sum}: {e}"),
            }
        }
    }
}
