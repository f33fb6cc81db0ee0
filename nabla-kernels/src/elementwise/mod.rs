//! Elementwise kernels: unary maps, broadcasting binary maps, comparisons
//! and `where`.
//!
//! The kernels live in one file per concern and are re-exported here:
//! [`map()`] (unary maps), [`zip_map`] (broadcasting binary maps), the
//! comparisons and `where` ([`compare()`], [`where_select`]), the scaled
//! products ([`mul_scaled`], [`add_mul_scaled_into`]), in-place
//! accumulation ([`add_into`]), the row-major copies
//! ([`contiguous`], [`row_major()`], [`permuted_as`], [`transposed_copy`]) and shape broadcasting
//! ([`broadcast_shape`]). The strided walks and the AVX2-dispatched inner
//! loops they share are crate-internal.

mod accumulate;
mod broadcast;
mod compare;
mod map;
mod row_major;
mod scaled;
mod simd;
mod strided;
#[cfg(test)]
pub(crate) mod testing;
#[cfg(test)]
mod tests;
mod transpose;
mod zip;

/// Chunk length for parallel elementwise loops.
pub(crate) const CHUNK: usize = 1 << 13;

pub use crate::ops::{BinaryOp, UnaryOp, binary, unary};
pub use accumulate::add_into;
pub use broadcast::{broadcast_shape, broadcasts_to, try_broadcast_shape};
pub use compare::{CompareOp, compare, where_select};
pub(crate) use map::filler_on;
pub use map::{Fill, MapSource, filler, map};
pub use row_major::{contiguous, contiguous_as, permuted_as, row_major};
pub use scaled::{add_mul_scaled_into, mul_scaled};
pub(crate) use simd::Isa;
#[cfg(target_arch = "x86_64")]
pub(crate) use simd::has_avx2;
#[cfg(test)]
pub(crate) use simd::{fill2_best_on, update1_best_on, update2_best_on};
pub(crate) use strided::{Extent, MAX_ROW_AXES, each_row2};
pub use transpose::transposed_copy;
pub(crate) use zip::zip_into;
pub use zip::{ZipSource, zip_map};
