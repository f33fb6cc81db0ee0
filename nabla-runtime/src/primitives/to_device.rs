//! `to_device`: the array on another device, differentiable (the
//! cotangent moves back).

use crate::Array;
use crate::storage::Device;

impl Array {
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
            let out = Array::from_data(crate::storage::gpu::moved(&self.data, device));
            crate::autograd::unary_node(out, "to_device", self, |_| move |ct| ct.to_device(from))
        }
    }
}
