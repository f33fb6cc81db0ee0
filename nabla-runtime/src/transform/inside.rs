//! Transformed functions called inside `#[differentiable]` code: the
//! generated code runs a function value's composable programs at its own
//! value type, so `nabla::grad(f)(x)`, `nabla::vmap(f)(z)` or
//! `nabla::jvp(g)((x,), (t,))` in a loss is differentiable again.
//!
//! The pullback of `jvp(g)` at `(x, t)` uses the symmetry of second
//! derivatives: for cotangents `a` of the output and `b` of its tangent,
//! `g`'s pullback at `Dual<V>` with the cotangent `Dual(b, a)` gives
//! `Dual(Jᵀb, Jᵀa + (∂ₓ(J t))ᵀ b)`, which is `(t̄, x̄)`.
//!
//! ```
//! use nabla::{Array, ArrayValue};
//!
//! #[nabla::differentiable]
//! fn energy(x: &Array) -> Array {
//!     (x * x * x).sum()
//! }
//!
//! /// Σ x³ plus the squared norm of its gradient, 3x².
//! #[nabla::differentiable]
//! fn penalised(x: &Array) -> Array {
//!     let g = nabla::grad(energy)(x);
//!     energy(x) + (&g * &g).sum()
//! }
//!
//! fn main() {
//!     let x = Array::from_vec(vec![1.0f64, 2.0], &[2]);
//!     // d/dx (x³ + 9x⁴) = 3x² + 36x³.
//!     let g = nabla::grad(penalised)(&x);
//!     assert_eq!(g.to_vec::<f64>(), vec![39.0, 300.0]);
//! }
//! ```

use crate::compose::{ArgsOf, Arity, DiffFn, One, OutOf};
use crate::{ArrayValue, Dual};

/// `g(x)` at value type `V`.
#[doc(hidden)]
pub fn apply<V: ArrayValue, G: DiffFn>(_: G, x: ArgsOf<G, V>) -> OutOf<G, V> {
    G::eval::<V>(&x)
}

/// `g(x)` and its pullback at value type `V`.
#[doc(hidden)]
#[allow(clippy::type_complexity)]
pub fn apply_vjp<V: ArrayValue, G: DiffFn>(
    _: G,
    x: ArgsOf<G, V>,
) -> (OutOf<G, V>, impl FnOnce(OutOf<G, V>) -> ArgsOf<G, V>) {
    G::vjp::<V>(&x)
}

/// The arguments as duals: primals `x`, tangents `t`.
fn duals<V: ArrayValue, G: DiffFn>(x: &ArgsOf<G, V>, t: &ArgsOf<G, V>) -> ArgsOf<G, Dual<V>> {
    <G::Arity as Arity>::map(x, |i, xi| {
        Dual::new(xi.clone(), Some(<G::Arity as Arity>::get(t, i).clone()))
    })
}

/// `jvp(g)((x..), (t..))` at value type `V`: the output and its tangent.
#[doc(hidden)]
pub fn apply_jvp<V: ArrayValue, G: DiffFn<Out = One>>(
    _: G,
    x: ArgsOf<G, V>,
    t: ArgsOf<G, V>,
) -> (V, V) {
    let y = G::eval::<Dual<V>>(&duals::<V, G>(&x, &t));
    let dy = y.tangent_or_zero();
    (y.primal, dy)
}

/// [`apply_jvp`] and its pullback: cotangents of the output and of its
/// tangent to those of the primals and of the tangents.
#[doc(hidden)]
#[allow(clippy::type_complexity)]
pub fn apply_jvp_vjp<V: ArrayValue, G: DiffFn<Out = One>>(
    _: G,
    x: ArgsOf<G, V>,
    t: ArgsOf<G, V>,
) -> (
    (V, V),
    impl FnOnce((Option<V>, Option<V>)) -> (ArgsOf<G, V>, ArgsOf<G, V>),
) {
    let (y, pullback) = G::vjp::<Dual<V>>(&duals::<V, G>(&x, &t));
    let dy = y.tangent_or_zero();
    let like = y.primal.clone();
    ((y.primal, dy), move |(a, b): (Option<V>, Option<V>)| {
        let b = b.unwrap_or_else(|| like.zeros_like());
        let cts = pullback(Dual::new(b, a));
        let x_bar = <G::Arity as Arity>::map(&cts, |_, c| c.tangent_or_zero());
        let t_bar = <G::Arity as Arity>::map(&cts, |_, c| c.primal.clone());
        (x_bar, t_bar)
    })
}
