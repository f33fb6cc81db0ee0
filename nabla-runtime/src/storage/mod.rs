//! L0 storage: element types, devices, and the storage of an array's
//! elements — host buffers ([`Host`]), the kept-buffer pool ([`buffers`])
//! and, with feature `cuda`, data movement between host and device
//! ([`gpu`]). Nothing here names `Array`: the layers above wrap [`Data`]
//! into arrays.

pub(crate) mod buffers;
mod cast;
mod data;
mod dtype;
#[cfg(feature = "cuda")]
pub(crate) mod gpu;
mod host;

pub(crate) use cast::data_cast;
#[cfg(feature = "cuda")]
pub(crate) use data::no_gpu_path;
pub(crate) use data::{Data, any_map, float_map, float_map2, float_slice_map, float_slice_map2};
pub use dtype::{DType, Device, Element};
pub(crate) use host::{Host, may_alias, row_major_view};
