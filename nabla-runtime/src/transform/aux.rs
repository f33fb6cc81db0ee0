//! `value_and_grad(f)` and the `has_aux` forms of `grad` and
//! `value_and_grad` as composable functions, so `vmap(value_and_grad(f))`
//! gives per-example values and gradients and `vmap(grad!(f, has_aux))`
//! per-example gradients and aux outputs, as in JAX. A function returning
//! `(value, aux)` is composable with a pair output ([`DiffFn`] with `Out =
//! (One, X)`); only `value` is differentiated.
//!
//! The VJP of a gradient is [`jacobian_vjp`] (forward-over-reverse, by the
//! symmetry of second derivatives) on the value output alone
//! ([`ValueOf`]); the cotangents of the value and of the aux output add
//! the function's own pullback.
//!
//! ```
//! use nabla::Array;
//!
//! #[nabla::differentiable]
//! fn energy(x: &Array) -> Array {
//!     (x * x * x).sum()
//! }
//!
//! fn main() {
//!     // Per-row values Σ x³ and gradients 3x².
//!     let x = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]);
//!     let (v, g) = nabla::vmap(nabla::value_and_grad(energy))(&x);
//!     assert_eq!(v.to_vec::<f64>(), vec![9.0, 91.0]);
//!     assert_eq!(g.to_vec::<f64>(), vec![3.0, 12.0, 27.0, 48.0]);
//! }
//! ```

use crate::compose::{ArgIndex, ArgsOf, Arity, DiffFn, One, OutOf, Structure, Tiered};
use crate::transform::grad::{Argnum, Grad, HasAux, NoAux, ValueAndGrad};
use crate::transform::jacobian::jacobian_vjp;
use crate::vocab::arity::want_only;
use crate::{ArrayValue, Value};

/// The slot of argument `I` of `F`.
type SlotOf<F, const I: usize> = <Argnum<I> as ArgIndex<<F as DiffFn>::Arity>>::Slot;
/// The arguments' structure of `F` at `V`.
type Args<F, V> = ArgsOf<F, V>;

/// The value output of a function returning `(value, aux)`, as a
/// composable function of one output.
pub struct ValueOf<F>(F);
impl<F: Copy> Clone for ValueOf<F> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<F: Copy> Copy for ValueOf<F> {}

impl<F: DiffFn<Out = (One, X)>, X: Structure> DiffFn for ValueOf<F> {
    type Arity = F::Arity;
    type Out = One;
    fn eval<V: ArrayValue>(x: &Args<Self, V>) -> V {
        F::eval::<V>(x).0
    }
    fn vjp<V: ArrayValue>(
        x: &Args<Self, V>,
    ) -> (V, impl FnOnce(V) -> Args<Self, V> + use<V, F, X>) {
        Self::vjp_masked::<V>(x, &[])
    }
    fn vjp_masked<V: ArrayValue>(
        x: &Args<Self, V>,
        want: &[bool],
    ) -> (V, impl FnOnce(V) -> Args<Self, V> + use<V, F, X>) {
        let ((y, aux), pullback) = F::vjp_masked::<V>(x, want);
        let zeros = X::map_ref(&aux, |_, a| a.zeros_like());
        (y, move |ct: V| pullback((ct, zeros)))
    }
}

/// The leafwise sum of two argument structures.
fn add_args<A: Arity, V: Value>(a: &A::Args<V>, b: &A::Args<V>) -> A::Args<V> {
    A::map(a, |i, v| v.add(A::get(b, i)))
}

/// The value and the pullback's cotangent of the gradient of `G` (one
/// scalar output) w.r.t. argument `I`: the gradient and the full
/// cotangents (what `value_and_grad` and `grad` with aux share).
#[track_caller]
fn value_and_grad_at<G: DiffFn<Out = One>, const I: usize, V: ArrayValue>(
    x: &Args<G, V>,
    op: &str,
) -> (V, <SlotOf<G, I> as Structure>::Of<V>)
where
    Argnum<I>: ArgIndex<G::Arity>,
{
    let want = want_only(<G::Arity as Arity>::ARGS, I);
    let (y, pullback) = G::vjp_masked::<V>(x, &want);
    if crate::transform::jacobian::numel(&y.shape_vec()) != 1 {
        panic!(
            "{op}: the function returns shape {:?}, but {op} needs a scalar output; reduce it or use jacrev",
            y.shape_vec()
        );
    }
    let cts = pullback(y.ones_like());
    let g = <Argnum<I> as ArgIndex<G::Arity>>::pick(&cts).clone();
    (y, g)
}

/// `x̄` for the cotangents `cv` of the value and `cg` of the gradient of
/// `G` w.r.t. argument `I`: `cv · ∇G + H[:, I] · cg`.
fn value_and_grad_vjp<G: DiffFn<Out = One>, const I: usize, V: ArrayValue>(
    x: &Args<G, V>,
    cv: Option<V>,
    cg: <SlotOf<G, I> as Structure>::Of<V>,
) -> Args<G, V>
where
    Argnum<I>: ArgIndex<G::Arity>,
{
    let wanted = <G::Arity as Arity>::arg_leaves(x, I);
    let h = jacobian_vjp::<G, V>(x, &wanted, SlotOf::<G, I>::leaves(cg));
    match cv {
        Some(cv) => {
            let (_, pullback) = G::vjp::<V>(x);
            add_args::<G::Arity, V>(&h, &pullback(cv))
        }
        None => h,
    }
}

impl<F: DiffFn<Out = One>, const I: usize> DiffFn for ValueAndGrad<F, Argnum<I>, NoAux>
where
    Argnum<I>: ArgIndex<F::Arity>,
{
    type Arity = F::Arity;
    type Out = (One, SlotOf<F, I>);
    fn eval<V: ArrayValue>(x: &Args<Self, V>) -> OutOf<Self, V> {
        value_and_grad_at::<F, I, V>(x, "value_and_grad")
    }
    fn vjp<V: ArrayValue>(
        x: &Args<Self, V>,
    ) -> (
        OutOf<Self, V>,
        impl FnOnce(OutOf<Self, V>) -> Args<Self, V> + use<V, F, I>,
    ) {
        let out = Self::eval::<V>(x);
        let x = x.clone();
        (out, move |(cv, cg)| {
            value_and_grad_vjp::<F, I, V>(&x, Some(cv), cg)
        })
    }
}

impl<F: DiffFn<Out = (One, X)>, X: Structure, const I: usize> DiffFn for Grad<F, Argnum<I>, HasAux>
where
    Argnum<I>: ArgIndex<F::Arity>,
{
    type Arity = F::Arity;
    type Out = (SlotOf<F, I>, X);
    fn eval<V: ArrayValue>(x: &Args<Self, V>) -> OutOf<Self, V> {
        let (_, g) = value_and_grad_at::<ValueOf<F>, I, V>(x, "grad");
        (g, F::eval::<V>(x).1)
    }
    fn vjp<V: ArrayValue>(
        x: &Args<Self, V>,
    ) -> (
        OutOf<Self, V>,
        impl FnOnce(OutOf<Self, V>) -> Args<Self, V> + use<V, F, X, I>,
    ) {
        let (_, g) = value_and_grad_at::<ValueOf<F>, I, V>(x, "grad");
        let ((y, aux), pullback) = F::vjp::<V>(x);
        let x = x.clone();
        ((g, aux), move |(cg, caux)| {
            let h = value_and_grad_vjp::<ValueOf<F>, I, V>(&x, None, cg);
            add_args::<F::Arity, V>(&h, &pullback((y.zeros_like(), caux)))
        })
    }
}

impl<F: DiffFn<Out = (One, X)>, X: Structure, const I: usize> DiffFn
    for ValueAndGrad<F, Argnum<I>, HasAux>
where
    Argnum<I>: ArgIndex<F::Arity>,
{
    type Arity = F::Arity;
    type Out = ((One, X), SlotOf<F, I>);
    fn eval<V: ArrayValue>(x: &Args<Self, V>) -> OutOf<Self, V> {
        let (_, g) = value_and_grad_at::<ValueOf<F>, I, V>(x, "value_and_grad");
        (F::eval::<V>(x), g)
    }
    fn vjp<V: ArrayValue>(
        x: &Args<Self, V>,
    ) -> (
        OutOf<Self, V>,
        impl FnOnce(OutOf<Self, V>) -> Args<Self, V> + use<V, F, X, I>,
    ) {
        let (_, g) = value_and_grad_at::<ValueOf<F>, I, V>(x, "value_and_grad");
        let (out, pullback) = F::vjp::<V>(x);
        let x = x.clone();
        ((out, g), move |(c_out, cg)| {
            let h = value_and_grad_vjp::<ValueOf<F>, I, V>(&x, None, cg);
            add_args::<F::Arity, V>(&h, &pullback(c_out))
        })
    }
}

impl<F: Tiered, A, X> Tiered for ValueAndGrad<F, A, X> {
    type Tier = F::Tier;
}
