//! Device data movement (feature `cuda`): storage copied between the host
//! and CUDA devices, and the operands of an op gathered on one device.
//! Data crosses between host and device only where the user asks
//! (`to_device`, `to_vec`, `item`, `Display`); a 0-d host array next to a
//! device array (a constant) moves to that device, anything else on
//! different devices is a panic naming the devices.
use super::data::Data;
use super::dtype::DType;
use super::dtype::Device;
use super::host::Host;
use nabla_kernels::cuda::{Gpu, GpuArray};
use std::sync::Arc;

/// The device `ordinal`, or a panic saying why it cannot be used.
#[track_caller]
pub(crate) fn gpu(ordinal: usize) -> Arc<Gpu> {
    Gpu::get(ordinal).unwrap_or_else(|e| {
        panic!("to_device(Device::Cuda({ordinal})): {e}; check nabla::cuda::is_available() first")
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
    let shape = x.shape();
    match x.elem() {
        DType::F32 => Data::F32(Host::from_vec(shape, x.to_host::<f32>())),
        DType::F64 => Data::F64(Host::from_vec(shape, x.to_host::<f64>())),
        DType::I64 => Data::I64(Host::from_vec(shape, x.to_host::<i64>())),
        DType::Bool => Data::Bool(Host::from_vec(
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
pub(crate) fn gpu_operands(op: &str, xs: &[&Data]) -> Option<Vec<GpuArray>> {
    let on = xs.iter().find_map(|x| match x {
        Data::Cuda(g) => Some(g.gpu().clone()),
        _ => None,
    })?;
    Some(
        xs.iter()
            .map(|x| match x {
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
