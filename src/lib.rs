//! # Nabla — differentiable programming for Rust
//!
//! Arrays with NumPy semantics (f32/f64 and integer dtypes, broadcasting,
//! CPU and, with feature `cuda`, NVIDIA GPUs), and two ways to
//! differentiate code written with them. Every primitive's derivative rules
//! are written once (the op registry, `nabla-ops`) and shared by both.
//!
//! ## Two styles
//!
//! **Imperative, as in PyTorch**: mark leaves with `requires_grad()`, run
//! ordinary code, call `backward()` on a scalar, read `grad()`.
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
//! **Functional, as in JAX, generated at compile time**:
//! `#[differentiable]` reads the function's body and emits its forward,
//! JVP, VJP and batched programs as Rust code. A transform of the function
//! is a value that calls that code; nothing is traced or interpreted when
//! it runs.
//!
//! ```
//! use nabla::prelude::*;
//!
//! #[differentiable]
//! fn loss(w: &Array, x: &Array) -> Array {
//!     nabla::sum(&x.matmul(w).tanh())
//! }
//!
//! fn main() {
//!     let w = Array::from_vec(vec![0.1f64, -0.2, 0.3, 0.4], &[2, 2]);
//!     let x = Array::from_vec(vec![1.0f64, 2.0], &[1, 2]);
//!     let g = grad(loss)(&w, &x); // ∂loss/∂w, the shape of w
//!     let (value, gx) = value_and_grad!(loss, argnums = 1)(&w, &x);
//!     assert_eq!(g.shape(), &[2, 2]);
//!     assert_eq!((value.shape(), gx.shape()), (&[][..], &[1, 2][..]));
//! }
//! ```
//!
//! ## The transforms
//!
//! Each is a function (`grad(f)`) and a macro with options
//! (`grad!(f, argnums = (0, 1))`, `vmap!(f, in_axes = (0, None))`).
//!
//! | transform | gives | notes |
//! |---|---|---|
//! | [`grad()`] | `∂f/∂x` for a scalar `f` | `argnums`, `has_aux` |
//! | [`value_and_grad()`] | `(f(x), ∂f/∂x)` | `argnums`, `has_aux` |
//! | [`vjp()`] | `(f(x), pullback)`; `pullback(&ct)` gives the cotangents | reverse mode |
//! | [`jvp()`] | `jvp(f)((x,), (t,)) = (f(x), J·t)` | forward mode |
//! | [`vmap()`] | `f` mapped over an axis | `in_axes`, `out_axes` |
//! | [`jacfwd()`], [`jacrev()`] | the Jacobian, shape `out ++ in` | `argnums` |
//! | [`hessian()`] | `jacfwd(jacrev(f))` | `argnums` |
//! | [`checkpoint()`] | `f`, recomputed in the reverse sweep | also `#[nabla::checkpoint(snapshots = s)]` on loops |
//!
//! Every transform takes every function value: a `#[differentiable]`
//! function (of arrays, of trees of arrays, of floats), a custom op, or
//! another transform, to any depth (`jacfwd(jacrev(vmap(f)))`,
//! `vmap(hessian(f))`, `grad(grad(grad(f)))`, `vmap(value_and_grad(f))`,
//! `vmap(grad!(f, has_aux))`). A Hessian-vector product is `jvp(grad(f))`:
//!
//! ```
//! use nabla::prelude::*;
//!
//! #[differentiable]
//! fn f(x: &Array) -> Array {
//!     nabla::sum(&(x * x * x))
//! }
//!
//! fn main() {
//!     let x = Array::from_vec(vec![1.0f64, 2.0], &[2]);
//!     let v = Array::from_vec(vec![1.0f64, 1.0], &[2]);
//!     let (g, hv) = jvp(grad(f))((&x,), (&v,)); // 3x² and diag(6x)·v
//!     assert_eq!(g.to_vec::<f64>(), vec![3.0, 12.0]);
//!     assert_eq!(hv.to_vec::<f64>(), vec![6.0, 12.0]);
//!     let hs = vmap(hessian(f))(&Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]));
//!     assert_eq!(hs.shape(), &[2, 2, 2]);
//! }
//! ```
//!
//! Over a tree of parameters, `vmap` of `grad` gives per-example
//! gradients (each leaf gains the batch axis), and the Jacobian w.r.t. a
//! tree is a tree of blocks (`out ++ leaf`). A Jacobian of a tree-valued
//! function w.r.t. a tree (a tree of trees, e.g. the Hessian w.r.t. a
//! tree) is not offered: take it w.r.t. array arguments (`argnums`).
//!
//! ```
//! use nabla::prelude::*;
//!
//! #[derive(Tree, Clone)]
//! struct Linear {
//!     w: Array,
//!     b: Array,
//! }
//!
//! #[differentiable]
//! fn loss(p: &Linear, x: &Array, y: &Array) -> Array {
//!     nabla::mean(&(x.matmul(&p.w) + &p.b - y).powi(2))
//! }
//!
//! fn main() {
//!     let p = Linear { w: Array::ones(&[2, 1], DType::F64), b: Array::zeros(&[1], DType::F64) };
//!     let (xs, ys) = (Array::ones(&[5, 2], DType::F64), Array::zeros(&[5, 1], DType::F64));
//!     // One gradient per example: the batch axis on every leaf.
//!     let per: Linear = vmap!(grad(loss), in_axes = (None, 0, 0))(&p, &xs, &ys);
//!     assert_eq!((per.w.shape(), per.b.shape()), (&[5, 2, 1][..], &[5, 1][..]));
//!     // Values and gradients per example.
//!     let (v, g) = vmap!(value_and_grad(loss), in_axes = (None, 0, 0))(&p, &xs, &ys);
//!     assert_eq!((v.shape(), g.w.shape()), (&[5][..], &[5, 2, 1][..]));
//! }
//! ```
//!
//! Transforms may be called **inside** differentiable code, and the result
//! is differentiable again: a loss with a gradient penalty, `sum(vmap(f)(z))`,
//! `let (y, y_dot) = nabla::jvp(g)((x,), (t,))`.
//!
//! ```
//! use nabla::prelude::*;
//!
//! #[differentiable]
//! fn critic(x: &Array) -> Array {
//!     nabla::sum(&x.tanh())
//! }
//!
//! #[differentiable]
//! fn penalised(x: &Array) -> Array {
//!     let g = nabla::grad(critic)(x);
//!     critic(x) + nabla::sum(&(&g * &g))
//! }
//!
//! fn main() {
//!     let x = Array::from_vec(vec![0.5f64, -1.0], &[2]);
//!     assert_eq!(grad(penalised)(&x).shape(), &[2]);
//! }
//! ```
//!
//! A function of floats compiles to float code, and may take and return
//! fixed-size arrays of floats; its derivatives have the user's shapes:
//!
//! ```
//! use nabla::prelude::*;
//!
//! /// A projectile from `p = [speed, angle, drag]`: its height after 1 s.
//! #[differentiable]
//! fn height(p: &[f64; 3]) -> f64 {
//!     let (dt, mut y) = (0.01, 0.0);
//!     let mut vy = p[0] * p[1].sin();
//!     for _ in 0..100 {
//!         y += dt * vy;
//!         vy += dt * (-9.81 - p[2] * vy);
//!     }
//!     y
//! }
//!
//! #[differentiable]
//! fn polar(q: &[f64; 2]) -> [f64; 2] {
//!     [q[0] * q[1].cos(), q[0] * q[1].sin()]
//! }
//!
//! fn main() {
//!     let p = [10.0, 0.5, 0.1];
//!     let g: [f64; 3] = grad(height)(&p);
//!     let h: [[f64; 3]; 3] = hessian(height)(&p);
//!     assert!(g[0] > 0.0 && (h[0][1] - h[1][0]).abs() < 1e-12);
//!     let j: [[f64; 2]; 2] = jacfwd(polar)(&[2.0, 0.0]);
//!     assert_eq!(j, [[1.0, 0.0], [0.0, 2.0]]);
//!     // A Hessian-vector product, on the stack.
//!     let (_, hv): ([f64; 3], [f64; 3]) = jvp(grad(height))((&p,), (&[1.0, 0.0, 0.0],));
//!     assert!((hv[1] - h[1][0]).abs() < 1e-12);
//! }
//! ```
//!
//! ## What `#[differentiable]` accepts
//!
//! - **Parameters**: `Array`/`&Array`, or `f32`/`f64` and fixed-size
//!   arrays of them (a function of floats compiles to scalar code, no
//!   arrays); trees of arrays
//!   (`#[derive(Tree)]` structs, `Vec<Array>`, tuples; the gradient has the
//!   same type); `&[Array]` returning `vec![..]`; anything else (integers,
//!   shapes, flags, `#[nondiff]` parameters) is static and passes through.
//! - **Bodies**: `let` and `let mut` with reassignment and `+=`;
//!   arithmetic; the array methods and `nabla::` functions of the op table;
//!   calls of other differentiable functions, custom ops and transforms;
//!   `if`/`match` on static conditions (data-dependent ones too, such as
//!   `if x.item() > 0.0`); `for` and `while` loops with `break` and
//!   `continue`; an early `return`. A variable that starts from a constant
//!   and becomes differentiable in a loop or a branch is differentiable.
//! - **Returns**: one value, a tuple of values (or with static parts),
//!   `(value, aux)` for `has_aux`, `[a, b, ..]` as `[f64; M]`.
//!
//! What it cannot differentiate (closures, recursion, indexing a value
//! with `[]`, `unsafe`, generic parameters, methods) is a compile error at
//! the construct that says what to write instead. `docs/generated-code.md`
//! shows what the macro emits.
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
//!
//! A custom op may run its own kernels: `nabla::custom::cpu_kernel` on the
//! host and, with feature `cuda`, `nabla::custom::CudaKernel` (CUDA C,
//! compiled with NVRTC).
//!
//! ## GPUs
//!
//! Feature `cuda` (off by default) adds `Device::Cuda(n)`: `x.to_device(
//! Device::Cuda(0))` moves an array, every primitive has a CUDA kernel, and
//! both styles run there unchanged. The build needs no CUDA toolkit; the
//! libraries load at run time, and `nabla::cuda::is_available()` says
//! whether a GPU is present.
//!
//! ```
//! use nabla::prelude::*;
//!
//! let x = Array::ones(&[2], DType::F32);
//! let on = if nabla::cuda::is_available() { Device::Cuda(0) } else { Device::Cpu };
//! assert_eq!(x.to_device(on).device(), on);
//! ```
//!
//! `docs/design.md` explains the design; `docs/performance.md` has the
//! measurements.

// `#[derive(Tree)]` and `#[differentiable]` name this crate `::nabla`,
// also inside it (`nn`).
extern crate self as nabla;

pub mod dist;
pub mod nn;

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
