//! Where an array's storage lives: [`Array::device`].

use super::Array;
use crate::storage::Device;

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
            crate::storage::Data::Cuda(g) => Device::Cuda(g.ordinal()),
            _ => Device::Cpu,
        }
    }
}
