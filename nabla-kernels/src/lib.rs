//! CPU kernels for Nabla (and, with feature `cuda`, CUDA kernels: the `cuda` module).
//!
//! This crate knows nothing about automatic differentiation: it takes
//! `ndarray` views of `f32`/`f64` (and `i64`/`bool` where an op needs indices
//! or masks) and returns freshly allocated arrays. The runtime crate builds
//! the array type, dtype dispatch and derivative rules on top of it.
//!
//! Every kernel has a contiguous fast path (a plain loop over a slice that
//! LLVM vectorises, split across rayon threads above [`PARALLEL_THRESHOLD`]
//! elements) and a general strided path (which also serves NumPy
//! broadcasting, where broadcast axes have stride 0).
//!
//! ```
//! use nabla_kernels::{elementwise::{unary, UnaryOp}};
//! let x = ndarray::arr1(&[0.0f64, 1.0]).into_dyn();
//! let y = unary(x.view(), UnaryOp::Exp());
//! assert!((y[[1]] - std::f64::consts::E).abs() < 1e-15);
//! ```

pub mod chooser;
#[cfg(feature = "cuda")]
pub mod cuda;
pub mod determinism;
mod dots;
mod dtype;
pub mod elementwise;
pub mod fastmath;
pub mod float;
pub mod index;
#[cfg(test)]
mod isa_tests;
pub mod linalg;
pub mod matmul;
pub mod ops;
pub mod optim;
pub mod parallel;
pub mod reduce;
pub mod rows;
pub mod special;
#[cfg(test)]
mod strided_tests;
pub mod switch;

pub use dtype::DType;
pub use float::Float;

/// A shape: axis lengths, kept inline for up to six axes, so the shape
/// arithmetic done on every op does not allocate. Dereferences to
/// `[usize]`.
///
/// ```
/// let s = nabla_kernels::elementwise::broadcast_shape(&[2, 1], &[3]);
/// assert_eq!(&s[..], &[2, 3]);
/// ```
pub type Shape = smallvec::SmallVec<[usize; 6]>;

/// Number of elements above which kernels split work across rayon threads.
pub const PARALLEL_THRESHOLD: usize = 1 << 15;

/// An owned row-major array of `shape` holding `v`, without ndarray's
/// layout checks (a kernel builds `v` for `shape` in row-major order, so
/// only the length is checked): the results of small ops are made many
/// times per call inside nested transforms.
#[inline]
pub(crate) fn owned<T>(
    shape: impl ndarray::IntoDimension<Dim = ndarray::IxDyn>,
    v: Vec<T>,
) -> ndarray::ArrayD<T> {
    let d = shape.into_dimension();
    assert_eq!(
        ndarray::Dimension::size(&d),
        v.len(),
        "kernel output: {} elements for shape {:?}",
        v.len(),
        ndarray::Dimension::slice(&d)
    );
    // SAFETY: `v` holds exactly the row-major elements of `d` (checked
    // length; default strides).
    unsafe { ndarray::ArrayD::from_shape_vec_unchecked(d, v) }
}
