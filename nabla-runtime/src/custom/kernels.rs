//! Custom kernels for custom ops: a CPU kernel over slices and, with
//! feature `cuda`, a CUDA C kernel compiled with NVRTC and launched by the
//! runtime. A custom op's forward picks one by the inputs' device.

use crate::Array;
#[cfg(feature = "cuda")]
use crate::DType;
use crate::storage::Host;
use crate::storage::{Data, Element};
use std::any::Any;
use std::borrow::Cow;

/// One input of a [`cpu_kernel`]: its elements row-major (contiguous; a
/// strided or broadcast input is copied first) with its shape and
/// row-major strides.
#[derive(Debug)]
pub struct Strided<'a, T: Clone> {
    data: Cow<'a, [T]>,
    shape: &'a [usize],
    strides: Vec<usize>,
}

impl<T: Clone> Strided<'_, T> {
    /// The elements, row-major.
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }
    /// The shape.
    pub fn shape(&self) -> &[usize] {
        self.shape
    }
    /// Row-major strides, in elements.
    pub fn strides(&self) -> &[usize] {
        &self.strides
    }
    /// The element at a multi-index.
    #[track_caller]
    pub fn get(&self, index: &[usize]) -> T {
        assert_eq!(
            index.len(),
            self.shape.len(),
            "Strided::get: index {index:?} for shape {:?}",
            self.shape
        );
        self.data[index
            .iter()
            .zip(&self.strides)
            .map(|(i, s)| i * s)
            .sum::<usize>()]
        .clone()
    }
}

/// The typed host storage of `x`, if it holds `T` on the CPU.
fn host<T: Element>(x: &Array) -> Option<&Host<T>> {
    let any: &dyn Any = match &*x.data {
        Data::F32(a) => a,
        Data::F64(a) => a,
        Data::I64(a) => a,
        Data::Bool(a) => a,
        #[cfg(feature = "cuda")]
        Data::Cuda(_) => return None,
    };
    any.downcast_ref()
}

/// Runs a CPU kernel written over slices: `kernel(inputs, out)` gets every
/// input row-major with its shape, and fills `out` (row-major, `out_shape`,
/// zero-initialised). All inputs must be host arrays of element type `T`.
/// Use it in a custom op's forward for the CPU path.
///
/// ```
/// use nabla::{custom::cpu_kernel, Array};
/// let x = Array::from_vec(vec![1.0f64, 2.0, 3.0], &[3]);
/// let y = cpu_kernel::<f64>(&[&x], &[3], |ins, out| {
///     for (o, v) in out.iter_mut().zip(ins[0].as_slice()) {
///         *o = v * v + 1.0;
///     }
/// });
/// assert_eq!(y.to_vec::<f64>(), vec![2.0, 5.0, 10.0]);
/// ```
#[track_caller]
pub fn cpu_kernel<T: Element>(
    inputs: &[&Array],
    out_shape: &[usize],
    kernel: impl FnOnce(&[Strided<'_, T>], &mut [T]),
) -> Array {
    let views: Vec<Strided<'_, T>> = inputs
        .iter()
        .enumerate()
        .map(|(k, x)| {
            let a = host::<T>(x).unwrap_or_else(|| {
                panic!(
                    "cpu_kernel: input {k} is a {} array on {} but the kernel takes {} on the cpu; cast it, or give the op a CUDA kernel for device arrays",
                    x.dtype(),
                    x.device(),
                    T::DTYPE
                )
            });
            let data = match a.as_slice() {
                Some(s) => Cow::Borrowed(s),
                // A strided view (a collective's operand moved to the
                // front, a slice) is copied row by row, not element by
                // element through ndarray's iterator.
                None => Cow::Owned(nabla_kernels::elementwise::row_major(&a.view())),
            };
            let mut strides = vec![1usize; a.ndim()];
            for d in (0..a.ndim().saturating_sub(1)).rev() {
                strides[d] = strides[d + 1] * a.shape()[d + 1];
            }
            Strided { data, shape: a.shape(), strides }
        })
        .collect();
    let n: usize = out_shape.iter().product();
    let mut out = vec![T::from_f64(0.0); n];
    kernel(&views, &mut out);
    Array::from_vec(out, out_shape)
}

/// How a [`CudaKernel`] is launched (re-exported from `nabla-kernels`).
#[cfg(feature = "cuda")]
pub use nabla_kernels::cuda::UserLaunch as CudaLaunch;

/// A custom op's CUDA kernel: CUDA C source, compiled with NVRTC once per
/// device (to a CUBIN for the device's architecture) and cached; compile
/// errors panic with NVRTC's log. The kernel's parameters are, in order,
/// one `const T*` per input (contiguous row-major; strided inputs are copied
/// first), the output `T*` (contiguous, `out_shape`) and `long long n`, the
/// output's element count.
///
/// ```no_run
/// use nabla::custom::{CudaKernel, CudaLaunch};
/// use nabla::{Array, DType, Device};
/// const TWICE: CudaKernel = CudaKernel {
///     name: "twice",
///     source: r#"extern "C" __global__ void twice(const double* x, double* y, long long n) {
///         long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
///         if (i < n) y[i] = 2.0 * x[i];
///     }"#,
/// };
/// let x = Array::ones(&[4], DType::F64).to_device(Device::Cuda(0));
/// let y = TWICE.launch(&[&x], &[4], DType::F64, CudaLaunch::PerElement { block: 256 });
/// assert_eq!(y.to_vec::<f64>(), vec![2.0; 4]);
/// ```
#[cfg(feature = "cuda")]
#[derive(Clone, Copy, Debug)]
pub struct CudaKernel {
    /// The `extern "C" __global__` function to launch.
    pub name: &'static str,
    /// CUDA C source defining it.
    pub source: &'static str,
}

#[cfg(feature = "cuda")]
impl CudaKernel {
    /// Launches the kernel on the device of `inputs` (all on one GPU) and
    /// returns its output array of `out_shape` and `out_dtype`.
    #[track_caller]
    pub fn launch(
        &self,
        inputs: &[&Array],
        out_shape: &[usize],
        out_dtype: DType,
        how: CudaLaunch,
    ) -> Array {
        let gpus: Vec<nabla_kernels::cuda::GpuArray> = inputs
            .iter()
            .enumerate()
            .map(|(k, x)| match &*x.data {
                Data::Cuda(g) => g.clone(),
                _ => panic!(
                    "CUDA kernel `{}`: input {k} is on the cpu; move it with .to_device(..) or use the op's CPU kernel",
                    self.name
                ),
            })
            .collect();
        Array::from_data(Data::Cuda(nabla_kernels::cuda::launch_user(
            self.source,
            self.name,
            &gpus,
            out_dtype,
            out_shape,
            how,
        )))
    }

    /// Compiles the source with NVRTC for `sm_<arch>` without a GPU (for
    /// tests: catches CUDA C errors early). Needs libnvrtc.
    pub fn compile_for(&self, arch: u32) -> Result<(), String> {
        nabla_kernels::cuda::compile_source(self.source, self.name, arch)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}
