//! Shape primitives: `reshape`, `permute`, `broadcast_to`, `slice`,
//! `concat`, and the composites built on them (`transpose`, `expand_dims`,
//! `squeeze`, `flatten`, `stack`, `split`, `sum_to_shape`).
//!
//! Reshape, permute and slice share storage with their input (no copy)
//! whenever the layout allows. Batching rule (all of them): the batch axis
//! stays in front; axis arguments shift by one.
//!
//! One file per primitive (`reshape`, `permute`, `broadcast_to`, `slice`,
//! `slice_place`, `concat`: forward, JVP and VJP side by side), the `Array`
//! methods in `methods`, the free functions `concat` and `stack` in `join`.

pub mod broadcast_to;
pub mod concat;
pub mod permute;
pub mod reshape;
pub mod slice;
pub mod slice_place;

mod add_into_slice;
mod join;
mod methods;
#[cfg(test)]
mod tests;

pub(crate) use add_into_slice::add_into_slice;
pub(crate) use join::concat_norm;
pub use join::{concat, stack};
