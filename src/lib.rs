//! # Nabla — differentiable programming for Rust
//!
//! Arrays with NumPy semantics, a small set of primitives whose derivative
//! rules are written once (the op registry, `nabla-ops`) and shared by every
//! front end: PyTorch-style imperative autograd on the same [`Array`] type,
//! and JAX-style transforms generated at compile time (`#[differentiable]`,
//! [`grad()`], [`vjp()`], [`jvp()`], [`vmap()`], [`jacfwd()`], [`jacrev()`],
//! [`hessian()`], [`checkpoint()`]). See `docs/design.md`.
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
//!
//! ## Custom primitives
//!
//! `#[nabla::custom_op(jvp = .., vjp = ..)]` turns a forward function over
//! arrays into a primitive with your rules; it is then called like any
//! differentiable function, in every mode:
//!
//! ```
//! use nabla::prelude::*;
//!
//! /// `x³` with hand-written rules.
//! #[nabla::custom_op(jvp = cube_jvp, vjp = cube_vjp)]
//! fn cube(x: &Array) -> Array {
//!     x * &(x * x)
//! }
//! fn cube_jvp<V: ArrayValue>(x: &V, _y: &V, dx: Option<&V>) -> V {
//!     dx.map(|d| d.mul(&x.square().mul_scalar(3.0))).unwrap_or_else(|| x.zeros_like())
//! }
//! fn cube_vjp<V: ArrayValue>(x: &V, _y: &V, ct: &V) -> V {
//!     ct.mul(&x.square().mul_scalar(3.0))
//! }
//!
//! #[differentiable]
//! fn total(x: &Array) -> Array {
//!     nabla::sum(&cube(x))
//! }
//!
//! fn main() {
//!     let x = Array::from_vec(vec![1.0f64, 2.0], &[2]);
//!     assert_eq!(nabla::grad(total)(&x).to_vec::<f64>(), vec![3.0, 12.0]);
//!     assert_eq!(nabla::hessian(total)(&x).to_vec::<f64>(), vec![6.0, 0.0, 0.0, 12.0]);
//! }
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
