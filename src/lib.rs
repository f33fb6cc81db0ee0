//! # Nabla — differentiable programming for Rust
//!
//! Arrays with NumPy semantics, a small set of primitives whose derivative
//! rules are written once and shared by every front end, and PyTorch-style
//! imperative autograd on the same [`Array`] type. Compile-time transforms
//! (`#[differentiable]`, `grad`, `vmap`, …) are being built on the same
//! rules; see `docs/design.md`.
//!
//! ```
//! use nabla::prelude::*;
//!
//! nabla::manual_seed(0);
//! let mut w = nabla::randn(&[3, 4], DType::F32).requires_grad();
//! let x = nabla::randn(&[2, 3], DType::F32);
//! let loss = nabla::sum(&x.matmul(&w).tanh());
//! loss.backward();
//! w -= 0.01 * w.grad();
//! assert!(w.is_leaf());
//! ```

pub use nabla_macros::{
    Tree, custom_op, differentiable, grad, hessian, jacfwd, jacrev, jvp, value_and_grad, vjp, vmap,
};
pub use nabla_runtime::*;

/// The names most programs need: `use nabla::prelude::*;`.
///
/// ```
/// use nabla::prelude::*;
/// let x = Array::ones(&[2], DType::F64);
/// assert_eq!(x.device(), Device::Cpu);
/// ```
pub mod prelude {
    pub use nabla_macros::{Tree, differentiable};
    pub use nabla_runtime::{Array, ArrayValue, DType, Device, Element, Tree, Value};
}
