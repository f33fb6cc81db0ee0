//! Batched matrix products with cuBLAS (column-major: operands swapped).

use super::array::{Buf, GpuArray, check};
use crate::DType;
use cudarc::cublas::sys::cublasOperation_t;
use cudarc::cublas::{Gemm, GemmConfig, StridedBatchedConfig};
use cudarc::driver::CudaSlice;

/// How cuBLAS reads one row-major matrix operand of `rows × cols`.
struct Operand {
    x: GpuArray,
    /// Transpose flag for cuBLAS, which sees memory as column-major.
    op: cublasOperation_t,
    ld: i32,
    batch_stride: i64,
}

/// cuBLAS needs `Xᵀ` (column-major) of a row-major `X` [batch, rows, cols]:
/// unit column stride reads as `Xᵀ` directly (`N`), unit row stride as `X`
/// (`T`); anything else is copied contiguous first.
fn operand(x: &GpuArray) -> Operand {
    let (r, c) = (x.shape()[1], x.shape()[2]);
    let (mut rs, mut cs) = (x.strides()[1], x.strides()[2]);
    if c == 1 {
        cs = 1;
    }
    if r == 1 {
        rs = c.max(1) as isize;
    }
    if cs == 1 && rs >= c.max(1) as isize {
        return Operand {
            x: x.clone(),
            op: cublasOperation_t::CUBLAS_OP_N,
            ld: rs as i32,
            batch_stride: batch_stride(x),
        };
    }
    if rs == 1 && cs >= r.max(1) as isize && c > 1 {
        return Operand {
            x: x.clone(),
            op: cublasOperation_t::CUBLAS_OP_T,
            ld: cs as i32,
            batch_stride: batch_stride(x),
        };
    }
    operand(&super::launch::contiguous(x))
}

fn batch_stride(x: &GpuArray) -> i64 {
    if x.shape()[0] == 1 {
        0
    } else {
        x.strides()[0] as i64
    }
}

/// `a @ b` for `a`: [batch, m, k] and `b`: [batch, k, n] (a batch axis of
/// stride 0 broadcasts), f32 or f64, with cuBLAS strided-batched GEMM.
///
/// ```no_run
/// use nabla_kernels::cuda::{Gpu, GpuArray, matmul};
/// let gpu = Gpu::get(0).unwrap();
/// let a = GpuArray::from_host(&gpu, &[1.0f64, 2.0, 3.0, 4.0], &[1, 2, 2]);
/// assert_eq!(matmul(&a, &a).to_host::<f64>(), vec![7.0, 10.0, 15.0, 22.0]);
/// ```
#[track_caller]
pub fn matmul(a: &GpuArray, b: &GpuArray) -> GpuArray {
    assert_eq!(
        a.ordinal(),
        b.ordinal(),
        "matmul: operands on cuda:{} and cuda:{}",
        a.ordinal(),
        b.ordinal()
    );
    assert_eq!(
        a.elem(),
        b.elem(),
        "cuda matmul: dtypes {} and {} differ",
        a.elem().cuda_name(),
        b.elem().cuda_name()
    );
    let (batch, m, k, n) = (
        a.shape()[0].max(b.shape()[0]),
        a.shape()[1],
        a.shape()[2],
        b.shape()[2],
    );
    assert_eq!(
        k,
        b.shape()[1],
        "cuda matmul: inner sizes {k} and {} differ",
        b.shape()[1]
    );
    let gpu = a.gpu().clone();
    if batch * m * n == 0 || k == 0 {
        return super::launch::fill(&gpu, a.elem(), &[batch, m, n], 0.0);
    }
    let (ob, oa) = (operand(b), operand(a));
    macro_rules! run {
        ($t:ty, $variant:ident) => {{
            // SAFETY: every element is written by the GEMM (beta = 0).
            let mut c: CudaSlice<$t> = check(unsafe { gpu.stream.alloc(batch * m * n) });
            let cfg = StridedBatchedConfig {
                gemm: GemmConfig {
                    transa: ob.op,
                    transb: oa.op,
                    m: n as i32,
                    n: m as i32,
                    k: k as i32,
                    alpha: 1.0 as $t,
                    lda: ob.ld,
                    ldb: oa.ld,
                    beta: 0.0 as $t,
                    ldc: n as i32,
                },
                batch_size: batch as i32,
                stride_a: ob.batch_stride,
                stride_b: oa.batch_stride,
                stride_c: (m * n) as i64,
            };
            let (Buf::$variant(sb), Buf::$variant(sa)) = (&*ob.x.buf, &*oa.x.buf) else {
                unreachable!("dtypes checked above")
            };
            let vb = sb.slice(ob.x.offset()..);
            let va = sa.slice(oa.x.offset()..);
            // cuBLAS runs in the calling thread's current context.
            check(gpu.stream.context().bind_to_thread());
            let span = gpu.span();
            // SAFETY: shapes, leading dimensions and batch strides describe
            // memory inside the operands' buffers (checked by `operand`).
            unsafe { gpu.blas().gemm_strided_batched(cfg, &vb, &va, &mut c) }
                .unwrap_or_else(|e| panic!("cuBLAS gemm failed: {e:?}"));
            gpu.close(span, &format!("gemm {batch}x{m}x{n}x{k}"));
            GpuArray::from_buf(&gpu, Buf::$variant(c), &[batch, m, n])
        }};
    }
    match a.elem() {
        DType::F32 => run!(f32, F32),
        DType::F64 => run!(f64, F64),
        e => panic!(
            "cuda matmul: expected f32 or f64 arrays, got {}",
            e.cuda_name()
        ),
    }
}
