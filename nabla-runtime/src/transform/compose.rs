//! Composable transforms: `vmap`, `jacfwd`, `jacrev`, `hessian`, and
//! nested `grad` of scalar functions — to any depth, resolved at compile
//! time.
//!
//! A function value that implements [`DiffFn`] (every `#[differentiable]`
//! function of one to six arrays returning one array, or of one `&[Array]`
//! returning `vec![..]`, and every transform of such a function) exposes two
//! generic programs: `eval::<V>` and `vjp::<V>`. A transform is a small type
//! whose programs call the inner function's programs at another value type
//! (argument and output shapes: `vocab/structure.rs`; the Jacobians and
//! their pullbacks: `transform/jacobian.rs`):
//!
//! | transform | `eval::<V>` runs | its `vjp::<V>` runs |
//! |---|---|---|
//! | `vmap(f)` | `f::eval::<Batched<V>>` | `f::vjp::<Batched<V>>` |
//! | `jacfwd(f)` | `f::eval::<Dual<Batched<V>>>` (tangent basis on a batch axis) | `f::vjp::<Dual<Batched<V>>>` |
//! | `jacrev(f)` | `f::vjp::<Batched<V>>` (cotangent basis on a batch axis) | `f::vjp::<Dual<Batched<V>>>` |
//!
//! The VJP of a Jacobian uses the symmetry of second derivatives: for
//! `g = J_f`, `vjp_g(ct) = Σ_o H_{f_o} · ct[o, :]`, which is
//! forward-over-reverse on `f` with one-hot cotangents and the rows of `ct`
//! as tangents, batched over `o` — exact, no tape, O(1) extra cost per
//! cotangent. So `jacfwd(jacrev(vmap(foo)))` is `foo`'s generated code
//! monomorphised at a nested type such as `Dual<Batched<Batched<Dual<..>>>>`.
//!
//! ```
//! use nabla::{compose, Array, ArrayValue, DType, Value};
//!
//! #[nabla::differentiable]
//! fn foo(x: &Array) -> Array {
//!     x.sin().sum()
//! }
//!
//! fn main() {
//!     let x = Array::from_vec(vec![0.1f64, 0.2, 0.3, 0.4, 0.5, 0.6], &[2, 3]);
//!     let h = compose::jacfwd(compose::jacrev(compose::vmap(foo)));
//!     assert_eq!(h(&x).shape(), &[2, 2, 3, 2, 3]);
//! }
//! ```

pub use crate::transform::axes::{All, AllZero, Axis, AxisSpec, InAxes, NoAxis};
pub use crate::transform::diff_fn::{ArgsOf, Caller, DiffFn, OutOf, SpecsOf, UserOf, is_wanted};
pub use crate::transform::fixed::{FixedHessian, FixedJac, JacArgnum, JacCall, ScalarJacTier};
pub use crate::transform::inside::{apply, apply_jvp, apply_jvp_vjp, apply_vjp};
pub use crate::transform::many::{JacMany, ManyCaller, jacfwd_many, jacrev_many};
pub use crate::transform::nested::ScalarFn1;
pub use crate::transform::outer::{ArrayTier, Entries, ScalarTier, Tiered};
pub use crate::transform::values::{Jacfwd, Jacrev, Vmap};
pub use crate::vocab::accumulate::OutSpec;
pub use crate::vocab::arity::{A1, A2, A3, A4, A5, A6, AList, ArgIndex, Arity, FixedArity};
pub use crate::vocab::structure::{
    ArgIndices, JacOf, Leaves, List, One, Slot, Structure, TreeS, TreeVal, check_cotangents,
    list_skeleton,
};
use std::marker::PhantomData;

/// Maps `f` over axis 0 of every argument.
///
/// ```
/// use nabla::{compose::vmap, Array};
///
/// #[nabla::differentiable]
/// fn norm2(x: &Array) -> Array {
///     (x * x).sum()
/// }
///
/// fn main() {
///     let rows = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]);
///     assert_eq!(vmap(norm2)(&rows).to_vec::<f64>(), vec![5.0, 25.0]);
/// }
/// ```
pub fn vmap<F: DiffFn>(f: F) -> Vmap<F> {
    Vmap(f, PhantomData)
}

/// `vmap` with explicit `in_axes` and `out_axes` (what `vmap!` expands to).
///
/// ```
/// use nabla::{compose::{vmap_with, AllZero, Axis}, Array};
///
/// #[nabla::differentiable]
/// fn double(x: &Array) -> Array {
///     x * 2.0
/// }
///
/// fn main() {
///     let x = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2]);
///     // `vmap!(double, out_axes = 1)`: the batch axis of the result is axis 1.
///     let y = vmap_with::<AllZero, Axis<1>, _>(double)(&x);
///     assert_eq!(y.shape(), &[2, 3]);
///     assert_eq!(y.to_vec::<f64>(), vec![2.0, 6.0, 10.0, 4.0, 8.0, 12.0]);
/// }
/// ```
pub fn vmap_with<I: InAxes<F::Arity>, O: AxisSpec, F: DiffFn>(f: F) -> Vmap<F, I, O> {
    Vmap(f, PhantomData)
}

/// The Jacobian of `f` w.r.t. its first argument, by forward mode.
///
/// ```
/// use nabla::{compose::jacfwd, Array};
///
/// #[nabla::differentiable]
/// fn sq(x: &Array) -> Array {
///     x * x
/// }
///
/// fn main() {
///     let x = Array::from_vec(vec![1.0f64, 2.0], &[2]);
///     let j = jacfwd(sq)(&x); // shape out ++ in
///     assert_eq!((j.shape(), j.to_vec::<f64>()), (&[2, 2][..], vec![2.0, 0.0, 0.0, 4.0]));
/// }
/// ```
pub fn jacfwd<F: Tiered>(f: F) -> Jacfwd<F>
where
    (F::Tier, Jacfwd<F>): JacCall,
{
    Jacfwd(f, PhantomData)
}

/// `jacfwd` w.r.t. argument `I` (what `jacfwd!(f, argnums = i)` expands to).
///
/// ```
/// use nabla::{compose::jacfwd_with, transforms::Argnum, Array};
///
/// #[nabla::differentiable]
/// fn mul(a: &Array, b: &Array) -> Array {
///     a * b
/// }
///
/// fn main() {
///     let a = Array::from_vec(vec![1.0f64, 2.0], &[2]);
///     let b = Array::from_vec(vec![3.0f64, 4.0], &[2]);
///     // `jacfwd!(mul, argnums = 1)`: with respect to `b`, so `diag(a)`.
///     let j = jacfwd_with::<Argnum<1>, _>(mul)(&a, &b);
///     assert_eq!(j.to_vec::<f64>(), vec![1.0, 0.0, 0.0, 2.0]);
/// }
/// ```
pub fn jacfwd_with<I, F: Tiered + JacArgnum<I>>(f: F) -> Jacfwd<F, I>
where
    (F::Tier, Jacfwd<F, I>): JacCall,
{
    Jacfwd(f, PhantomData)
}

/// The Jacobian of `f` w.r.t. its first argument, by reverse mode.
///
/// ```
/// use nabla::{compose::jacrev, Array};
///
/// #[nabla::differentiable]
/// fn cube(x: &Array) -> Array {
///     x * x * x
/// }
///
/// fn main() {
///     let x = Array::from_vec(vec![1.0f64, 2.0], &[2]);
///     let j = jacrev(cube)(&x);
///     assert_eq!((j.shape(), j.to_vec::<f64>()), (&[2, 2][..], vec![3.0, 0.0, 0.0, 12.0]));
/// }
/// ```
pub fn jacrev<F: Tiered>(f: F) -> Jacrev<F>
where
    (F::Tier, Jacrev<F>): JacCall,
{
    Jacrev(f, PhantomData)
}

/// `jacrev` w.r.t. argument `I`.
///
/// ```
/// use nabla::{compose::jacrev_with, transforms::Argnum, Array};
///
/// #[nabla::differentiable]
/// fn mul(a: &Array, b: &Array) -> Array {
///     a * b
/// }
///
/// fn main() {
///     let a = Array::from_vec(vec![1.0f64, 2.0], &[2]);
///     let b = Array::from_vec(vec![3.0f64, 4.0], &[2]);
///     // `jacrev!(mul, argnums = 1)`: with respect to `b`, so `diag(a)`.
///     let j = jacrev_with::<Argnum<1>, _>(mul)(&a, &b);
///     assert_eq!(j.to_vec::<f64>(), vec![1.0, 0.0, 0.0, 2.0]);
/// }
/// ```
pub fn jacrev_with<I, F: Tiered + JacArgnum<I>>(f: F) -> Jacrev<F, I>
where
    (F::Tier, Jacrev<F, I>): JacCall,
{
    Jacrev(f, PhantomData)
}

/// The Hessian w.r.t. the first argument: `jacfwd(jacrev(f))`.
///
/// ```
/// use nabla::{compose::hessian, Array};
///
/// #[nabla::differentiable]
/// fn f(x: &Array) -> Array {
///     (x * x * x).sum()
/// }
///
/// fn main() {
///     let x = Array::from_vec(vec![1.0f64, 2.0], &[2]);
///     assert_eq!(hessian(f)(&x).to_vec::<f64>(), vec![6.0, 0.0, 0.0, 12.0]); // diag(6x)
/// }
/// ```
pub fn hessian<F: Tiered>(f: F) -> Jacfwd<Jacrev<F>>
where
    Jacrev<F>: Tiered,
    (<Jacrev<F> as Tiered>::Tier, Jacfwd<Jacrev<F>>): JacCall,
{
    Jacfwd(Jacrev(f, PhantomData), PhantomData)
}

/// The Hessian w.r.t. argument `I`.
///
/// ```
/// use nabla::{compose::hessian_with, transforms::Argnum, Array};
///
/// #[nabla::differentiable]
/// fn f(a: &Array, b: &Array) -> Array {
///     (a * b * b).sum()
/// }
///
/// fn main() {
///     let a = Array::from_vec(vec![1.0f64, 2.0], &[2]);
///     let b = Array::from_vec(vec![3.0f64, 4.0], &[2]);
///     // `hessian!(f, argnums = 1)`: ∂²f/∂b² = diag(2a).
///     let h = hessian_with::<Argnum<1>, _>(f)(&a, &b);
///     assert_eq!(h.to_vec::<f64>(), vec![2.0, 0.0, 0.0, 4.0]);
/// }
/// ```
pub fn hessian_with<I, F: Tiered + JacArgnum<I>>(f: F) -> Jacfwd<Jacrev<F, I>, I>
where
    Jacrev<F, I>: Tiered,
    (<Jacrev<F, I> as Tiered>::Tier, Jacfwd<Jacrev<F, I>, I>): JacCall,
{
    Jacfwd(Jacrev(f, PhantomData), PhantomData)
}
