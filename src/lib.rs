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

/// The names most programs need: `use nabla::prelude::*;` brings the
/// array and value types (`Array`, `DType`, `Device`, `Dual`, `Batched`,
/// `Key`, the `Value`/`ArrayValue` traits), `#[differentiable]`,
/// `#[custom_op]`, `#[derive(Tree)]`, and every transform both as a
/// function and as a macro (`grad(f)` and `grad!(f, argnums = (0, 1))`,
/// `vmap`, `jacfwd`, `jacrev`, `hessian`, `vjp`, `jvp`, `value_and_grad`,
/// `checkpoint`).
///
/// ```
/// use nabla::prelude::*;
///
/// #[differentiable]
/// fn foo(x: &Array) -> Array {
///     nabla::sum(&x.sin())
/// }
///
/// fn main() {
///     let x = Array::from_vec(vec![0.1f64, 0.2, 0.3, 0.4, 0.5, 0.6], &[2, 3]);
///     assert_eq!(x.device(), Device::Cpu);
///     let h = jacfwd!(jacrev!(vmap!(foo)))(&x);
///     assert_eq!(h.shape(), &[2, 2, 3, 2, 3]);
///     let (_, pullback) = vjp!(foo)(&x);
///     let g = pullback(&Array::scalar(1.0f64));
///     assert_eq!(g.to_vec::<f64>(), grad(foo)(&x).to_vec::<f64>());
///     let _key: Key = Key::new(0);
///     let _dual: Dual<Array> = Dual::new(x, None);
/// }
/// ```
pub mod prelude {
    pub use crate::{checkpoint, grad, hessian, jacfwd, jacrev, jvp, value_and_grad, vjp, vmap};
    pub use nabla_macros::{Tree, custom_op, differentiable};
    pub use nabla_runtime::random::Key;
    pub use nabla_runtime::{
        Array, ArrayValue, Batched, DType, Device, Dual, Element, Tree, Value,
    };
}
