//! Device placement: moving arrays between host and CUDA devices and the
//! glue the ops use to dispatch to `nabla_kernels::cuda` (feature `cuda`).
//!
//! Everything above the kernels is device-agnostic: an op whose operands
//! live on a GPU runs the GPU kernel and returns a GPU array, so generated
//! code, the imperative tape and the transforms run unchanged. Data crosses
//! between host and device only where the user asks (`to_device`,
//! `to_vec`, `item`, `Display`); a 0-d host array next to a device array
//! (a constant) is moved to that device, anything else on different devices
//! is a panic naming the devices.

#[cfg(feature = "cuda")]
pub(crate) use gpu::*;

#[cfg(feature = "cuda")]
mod gpu {
    use crate::Array;
    use crate::dtype::{DType, Data, Device};
    use nabla_kernels::cuda::{Gpu, GpuArray, GpuElem};
    use std::sync::Arc;

    pub(crate) fn dtype_of(e: GpuElem) -> DType {
        match e {
            GpuElem::F32 => DType::F32,
            GpuElem::F64 => DType::F64,
            GpuElem::I64 => DType::I64,
            GpuElem::Bool => DType::Bool,
        }
    }

    pub(crate) fn elem_of(d: DType) -> GpuElem {
        match d {
            DType::F32 => GpuElem::F32,
            DType::F64 => GpuElem::F64,
            DType::I64 => GpuElem::I64,
            DType::Bool => GpuElem::Bool,
        }
    }

    /// An op reached a CPU-only code path with a device array (a bug: every
    /// op dispatches to the GPU before its CPU kernels).
    #[track_caller]
    pub(crate) fn no_gpu_path() -> ! {
        panic!(
            "internal error: this op has no CUDA path yet; move the array to the CPU with .to_device(Device::Cpu)"
        )
    }

    /// The device `ordinal`, or a panic saying why it cannot be used.
    #[track_caller]
    pub(crate) fn gpu(ordinal: usize) -> Arc<Gpu> {
        Gpu::get(ordinal).unwrap_or_else(|e| {
            panic!(
                "to_device(Device::Cuda({ordinal})): {e}; check nabla::cuda::is_available() first"
            )
        })
    }

    /// Copies host storage to the device.
    pub(crate) fn upload(data: &Data, g: &Arc<Gpu>) -> GpuArray {
        let shape = data.shape().to_vec();
        match data {
            Data::F32(a) => {
                GpuArray::from_host(g, &a.view().iter().copied().collect::<Vec<_>>(), &shape)
            }
            Data::F64(a) => {
                GpuArray::from_host(g, &a.view().iter().copied().collect::<Vec<_>>(), &shape)
            }
            Data::I64(a) => {
                GpuArray::from_host(g, &a.view().iter().copied().collect::<Vec<_>>(), &shape)
            }
            Data::Bool(a) => GpuArray::from_host(
                g,
                &a.view().iter().map(|&b| b as u8).collect::<Vec<_>>(),
                &shape,
            ),
            Data::Cuda(x) if x.ordinal() == g.ordinal() => x.clone(),
            // Device to device goes through the host (rare; multi-GPU copies
            // are not a goal yet).
            Data::Cuda(x) => upload(&download(x), g),
        }
    }

    /// Copies device storage to the host.
    pub(crate) fn download(x: &GpuArray) -> Data {
        use crate::array::Host;
        let shape = x.shape();
        match x.elem() {
            GpuElem::F32 => Data::F32(Host::from_vec(shape, x.to_host::<f32>())),
            GpuElem::F64 => Data::F64(Host::from_vec(shape, x.to_host::<f64>())),
            GpuElem::I64 => Data::I64(Host::from_vec(shape, x.to_host::<i64>())),
            GpuElem::Bool => Data::Bool(Host::from_vec(
                shape,
                x.to_host::<u8>().into_iter().map(|b| b != 0).collect(),
            )),
        }
    }

    /// Storage of `data` moved to `device`.
    #[track_caller]
    pub(crate) fn moved(data: &Data, device: Device) -> Data {
        match (data, device) {
            (Data::Cuda(x), Device::Cpu) => download(x),
            (_, Device::Cpu) => data.clone(),
            (_, Device::Cuda(n)) => Data::Cuda(upload(data, &gpu(n))),
        }
    }

    /// The device operands of a binary-like op: `None` when all are on the
    /// host; 0-d host operands move to the device of the others; any other
    /// mix is a panic naming the devices.
    #[track_caller]
    pub(crate) fn gpu_operands(op: &str, xs: &[&Array]) -> Option<Vec<GpuArray>> {
        let on = xs.iter().find_map(|x| match &*x.data {
            Data::Cuda(g) => Some(g.gpu().clone()),
            _ => None,
        })?;
        Some(
            xs.iter()
                .map(|x| match &*x.data {
                    Data::Cuda(g) if g.ordinal() == on.ordinal() => g.clone(),
                    Data::Cuda(g) => panic!(
                        "{op}: operands on cuda:{} and cuda:{}; move one with .to_device(..)",
                        on.ordinal(),
                        g.ordinal()
                    ),
                    d if d.shape().is_empty() => upload(d, &on),
                    d => panic!(
                        "{op}: operands on different devices (cpu array of shape {:?} and an array on cuda:{}); move one with .to_device(..)",
                        d.shape(),
                        on.ordinal()
                    ),
                })
                .collect(),
        )
    }
}

use crate::Array;
use crate::dtype::Device;

impl Array {
    /// The device holding the storage.
    ///
    /// ```
    /// # use nabla::{Array, Device};
    /// assert_eq!(Array::scalar(1.0f32).device(), Device::Cpu);
    /// ```
    pub fn device(&self) -> Device {
        match &*self.data {
            #[cfg(feature = "cuda")]
            crate::dtype::Data::Cuda(g) => Device::Cuda(g.ordinal()),
            _ => Device::Cpu,
        }
    }

    /// This array on `device` (a copy when it moves; the same storage when
    /// it is already there). Differentiable: on the tape the gradient moves
    /// back to this array's device. `Device::Cuda(n)` needs the `cuda`
    /// feature and a GPU (check [`crate::cuda::is_available`]); otherwise it
    /// panics saying so.
    ///
    /// ```
    /// use nabla::{Array, Device};
    /// let x = Array::from_vec(vec![1.0f32, 2.0], &[2]);
    /// if nabla::cuda::is_available() {
    ///     let g = x.to_device(Device::Cuda(0));
    ///     assert_eq!(g.device(), Device::Cuda(0));
    ///     assert_eq!((&g * 2.0).to_vec::<f32>(), vec![2.0, 4.0]);
    /// }
    /// assert_eq!(x.to_device(Device::Cpu).device(), Device::Cpu);
    /// ```
    #[track_caller]
    pub fn to_device(&self, device: Device) -> Array {
        let from = self.device();
        if from == device {
            return self.clone();
        }
        #[cfg(not(feature = "cuda"))]
        panic!(
            "to_device({device}): this build of nabla has no GPU support; enable the `cuda` feature"
        );
        #[cfg(feature = "cuda")]
        {
            let out = Array::from_data(gpu::moved(&self.data, device));
            crate::autograd::unary_node(out, "to_device", self, |_| move |ct| ct.to_device(from))
        }
    }
}
