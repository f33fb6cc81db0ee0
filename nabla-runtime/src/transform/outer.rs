//! `grad`, `value_and_grad`, `jvp` and `vjp` of the composable transforms
//! (`vmap`, `jacfwd`, `jacrev`, `hessian`) and of `grad` of them, so every
//! transform takes every function value.
//!
//! Each is a monomorphic entry point over arrays, built from the inner
//! function's generic programs ([`DiffFn`]): `jvp(g)` runs `g` at
//! `Dual<Array>`, `vjp(g)` runs `g`'s pullback at `Array`, `grad(g)` is the
//! pullback seeded with one. The entry points have the same signatures as
//! those `#[differentiable]` generates for a function of arrays: `jvp`
//! takes `(primals, tangents)` tuples, `vjp`'s pullback returns one
//! cotangent for one argument and a tuple for more.
//!
//! ```
//! use nabla::{compose, Array};
//!
//! #[nabla::differentiable]
//! fn f(x: &Array) -> Array {
//!     (x * x * x).sum()
//! }
//!
//! fn main() {
//!     // The Hessian of Σ x³ is diag(6x); its tangent along v is diag(6v).
//!     let x = Array::from_vec(vec![1.0f64, 2.0], &[2]);
//!     let v = Array::from_vec(vec![1.0f64, 0.0], &[2]);
//!     let (h, dh) = nabla::jvp(compose::hessian(f))((&x,), (&v,));
//!     assert_eq!(h.to_vec::<f64>(), vec![6.0, 0.0, 0.0, 12.0]);
//!     assert_eq!(dh.to_vec::<f64>(), vec![6.0, 0.0, 0.0, 0.0]);
//! }
//! ```

use crate::compose::{
    ArgIndex, ArgsOf, Arity, Caller, DiffFn, Jacfwd, Jacrev, One, OutOf, ScalarFn1, Slot,
    Structure, UserOf, Vmap,
};
use crate::transform::grad::{
    Argnum, Grad, GradFn, GradJvpFn, GradVjpFn, HasAux, JvpFn, NoAux, ValueAndGrad, ValueAndGradFn,
    VjpFn,
};
use crate::{Array, Dual, Value};

/// The pullback `vjp(g)` returns: the output's cotangent to the
/// arguments' (one, or a tuple).
pub type Pullback<O, C> = Box<dyn FnOnce(&O) -> C>;

/// `jvp(G)` and `vjp(G)` over arrays, for a composable function `G` of
/// this arity.
#[doc(hidden)]
pub trait Entries<G: DiffFn>: Arity {
    /// `fn((&Array, ..), (&Array, ..)) -> (out, tangent)`.
    type Jvp: Copy + 'static;
    /// `jvp(G)`.
    const JVP: &'static Self::Jvp;
    /// `fn(&Array, ..) -> (out, pullback)`.
    type Vjp: Copy + 'static;
    /// `vjp(G)`.
    const VJP: &'static Self::Vjp;
}

/// `value_and_grad(G)` w.r.t. argument `I`, for this arity.
#[doc(hidden)]
pub trait ValueAndGradEntry<G: DiffFn, const I: usize>: Arity {
    /// `fn(&Array, ..) -> (Array, gradient)`.
    type Ptr: Copy + 'static;
    /// The entry point.
    const PTR: &'static Self::Ptr;
}

/// The gradient w.r.t. argument `I` of `G` as users hold it.
type SlotUser<G, const I: usize> =
    <<Argnum<I> as ArgIndex<<G as DiffFn>::Arity>>::Slot as Structure>::User;

/// Splits the dual outputs of `jvp` into outputs and tangents.
fn split<G: DiffFn>(y: OutOf<G, Dual<Array>>) -> (UserOf<G>, UserOf<G>) {
    let tangent = G::Out::map_ref(&y, |_, d| d.tangent_or_zero());
    let primal = G::Out::map(y, |_, d| d.primal);
    (G::Out::to_user(primal), G::Out::to_user(tangent))
}

/// The arguments as duals: primals `p`, tangents `t` of the same structure.
#[track_caller]
fn dual_args<A: Arity>(p: &A::Args<Array>, t: &A::Args<Array>) -> A::Args<Dual<Array>> {
    let (np, nt) = (A::len(p), A::len(t));
    if np != nt {
        panic!(
            "jvp: the tangents hold {nt} arrays but the primals {np}; give each primal a tangent of its structure"
        );
    }
    A::map(p, |i, v| Dual::new(v.clone(), Some(A::get(t, i).clone())))
}

/// `value_and_grad` of `G` w.r.t. argument `I`, at `Array`.
#[track_caller]
fn value_and_grad_at<G: DiffFn<Out = One>, const I: usize>(
    x: &ArgsOf<G, Array>,
) -> (Array, SlotUser<G, I>)
where
    Argnum<I>: ArgIndex<G::Arity>,
{
    let want = crate::vocab::arity::want_only(<G::Arity as Arity>::ARGS, I);
    let (y, pullback) = G::vjp_masked::<Array>(x, &want);
    if y.numel() != 1 {
        panic!(
            "value_and_grad: the function returns shape {:?}, but value_and_grad needs a scalar output; reduce it (e.g. with nabla::sum) or use jacrev",
            y.shape()
        );
    }
    let cts = pullback(y.ones_like());
    let g = <Argnum<I> as ArgIndex<G::Arity>>::pick(&cts).clone();
    (
        y,
        <<Argnum<I> as ArgIndex<G::Arity>>::Slot as Structure>::to_user(g),
    )
}

macro_rules! entries {
    ($jvp:ident, $vjp:ident, $vg:ident, $($s:ident $x:ident $i:tt),*; $cts:ty, $pick:expr) => {
        #[track_caller]
        fn $jvp<G: DiffFn<Arity = ($($s,)*)>, $($s: Slot),*>(
            p: ($(&$s::Ty,)*),
            t: ($(&$s::Ty,)*),
        ) -> (UserOf<G>, UserOf<G>) {
            let x = dual_args::<G::Arity>(&($($s::arg(p.$i),)*), &($($s::arg(t.$i),)*));
            split::<G>(G::eval::<Dual<Array>>(&x))
        }
        #[allow(clippy::type_complexity)]
        fn $vjp<G: DiffFn<Arity = ($($s,)*)>, $($s: Slot),*>(
            $($x: &$s::Ty),*
        ) -> (UserOf<G>, Pullback<UserOf<G>, $cts>) {
            let (y, pullback) = G::vjp::<Array>(&($($s::arg($x),)*));
            let skel = G::Out::skel(&y);
            (G::Out::to_user(y), Box::new(move |ct: &UserOf<G>| {
                let all = pullback(G::Out::from_user(ct, &skel));
                $pick(($($s::to_user(all.$i),)*))
            }))
        }
        #[track_caller]
        fn $vg<G: DiffFn<Arity = ($($s,)*), Out = One>, $($s: Slot,)* const I: usize>(
            $($x: &$s::Ty),*
        ) -> (Array, SlotUser<G, I>)
        where
            Argnum<I>: ArgIndex<G::Arity>,
        {
            value_and_grad_at::<G, I>(&($($s::arg($x),)*))
        }
        impl<G: DiffFn<Arity = ($($s,)*)>, $($s: Slot),*> Entries<G> for ($($s,)*) {
            type Jvp = for<'a> fn(($(&'a $s::Ty,)*), ($(&'a $s::Ty,)*)) -> (UserOf<G>, UserOf<G>);
            const JVP: &'static Self::Jvp = &($jvp::<G, $($s),*> as Self::Jvp);
            type Vjp = for<'a> fn($(&'a $s::Ty),*) -> (UserOf<G>, Pullback<UserOf<G>, $cts>);
            const VJP: &'static Self::Vjp = &($vjp::<G, $($s),*> as Self::Vjp);
        }
        impl<G: DiffFn<Arity = ($($s,)*), Out = One>, $($s: Slot,)* const I: usize> ValueAndGradEntry<G, I> for ($($s,)*)
        where
            Argnum<I>: ArgIndex<($($s,)*)>,
        {
            type Ptr = for<'a> fn($(&'a $s::Ty),*) -> (Array, SlotUser<G, I>);
            const PTR: &'static Self::Ptr = &($vg::<G, $($s,)* I> as Self::Ptr);
        }
    };
}

/// A slot's cotangent as users hold it.
type U<S> = <S as Structure>::User;
entries!(jvp1, vjp1, vg1, S0 a 0; U<S0>, |c: (U<S0>,)| c.0);
entries!(jvp2, vjp2, vg2, S0 a 0, S1 b 1; (U<S0>, U<S1>), |c| c);
entries!(jvp3, vjp3, vg3, S0 a 0, S1 b 1, S2 c 2; (U<S0>, U<S1>, U<S2>), |c| c);
entries!(jvp4, vjp4, vg4, S0 a 0, S1 b 1, S2 c 2, S3 d 3; (U<S0>, U<S1>, U<S2>, U<S3>), |c| c);
entries!(jvp5, vjp5, vg5, S0 a 0, S1 b 1, S2 c 2, S3 d 3, S4 e 4; (U<S0>, U<S1>, U<S2>, U<S3>, U<S4>), |c| c);
entries!(jvp6, vjp6, vg6, S0 a 0, S1 b 1, S2 c 2, S3 d 3, S4 e 4, S5 f 5; (U<S0>, U<S1>, U<S2>, U<S3>, U<S4>, U<S5>), |c| c);

/// The gradient of a composable function, as a composable function.
type GradOf<G, const I: usize> = Grad<G, Argnum<I>, NoAux>;
/// The arity of a composable function.
type ArityOf<G> = <G as DiffFn>::Arity;

/// `jvp(grad(g))` and `vjp(grad(g))` (the `GradJvpFn`/`GradVjpFn` the
/// `Grad` impls of `transform/grad.rs` forward to) for a composable
/// function type `g`, from the entry points of `grad(g)`.
macro_rules! grad_entries {
    ([$($g:tt)*] $ty:ty) => {
        impl<$($g)*, const K: usize> GradJvpFn<Argnum<K>> for $ty
        where
            Self: DiffFn,
            GradOf<Self, K>: DiffFn<Arity = ArityOf<Self>>,
            ArityOf<Self>: Entries<GradOf<Self, K>>,
        {
            type Ptr = <ArityOf<Self> as Entries<GradOf<Self, K>>>::Jvp;
            const PTR: &'static Self::Ptr = <ArityOf<Self> as Entries<GradOf<Self, K>>>::JVP;
        }
        impl<$($g)*, const K: usize> GradVjpFn<Argnum<K>> for $ty
        where
            Self: DiffFn,
            GradOf<Self, K>: DiffFn<Arity = ArityOf<Self>>,
            ArityOf<Self>: Entries<GradOf<Self, K>>,
        {
            type Ptr = <ArityOf<Self> as Entries<GradOf<Self, K>>>::Vjp;
            const PTR: &'static Self::Ptr = <ArityOf<Self> as Entries<GradOf<Self, K>>>::VJP;
        }
    };
}

/// `jvp`, `vjp`, `grad`, `value_and_grad`, and `jvp`/`vjp` of `grad`, for
/// a composable transform type.
macro_rules! every_transform {
    ($($t:ident<$($p:ident),*>),*) => {$(
        impl<F: Copy, $($p),*> JvpFn for $t<F, $($p),*>
        where
            Self: DiffFn,
            ArityOf<Self>: Entries<Self>,
        {
            type Ptr = <ArityOf<Self> as Entries<Self>>::Jvp;
            const PTR: &'static Self::Ptr = <ArityOf<Self> as Entries<Self>>::JVP;
        }
        impl<F: Copy, $($p),*> VjpFn for $t<F, $($p),*>
        where
            Self: DiffFn,
            ArityOf<Self>: Entries<Self>,
        {
            type Ptr = <ArityOf<Self> as Entries<Self>>::Vjp;
            const PTR: &'static Self::Ptr = <ArityOf<Self> as Entries<Self>>::VJP;
        }
        impl<F: Copy, $($p,)* const K: usize> GradFn<Argnum<K>, NoAux> for $t<F, $($p),*>
        where
            Self: DiffFn<Out = One>,
            Argnum<K>: ArgIndex<ArityOf<Self>>,
            ArityOf<Self>: Caller<GradOf<Self, K>>,
        {
            type Ptr = <ArityOf<Self> as Caller<GradOf<Self, K>>>::Ptr;
            const PTR: &'static Self::Ptr = <ArityOf<Self> as Caller<GradOf<Self, K>>>::PTR;
        }
        impl<F: Copy, $($p,)* const K: usize> ValueAndGradFn<Argnum<K>, NoAux> for $t<F, $($p),*>
        where
            Self: DiffFn<Out = One>,
            Argnum<K>: ArgIndex<ArityOf<Self>>,
            ArityOf<Self>: ValueAndGradEntry<Self, K>,
        {
            type Ptr = <ArityOf<Self> as ValueAndGradEntry<Self, K>>::Ptr;
            const PTR: &'static Self::Ptr = <ArityOf<Self> as ValueAndGradEntry<Self, K>>::PTR;
        }
        grad_entries!([F: Copy, $($p),*] $t<F, $($p),*>);
    )*};
}
every_transform!(Vmap<In, Out>, Jacfwd<In>, Jacrev<In>);

/// `jvp` and `vjp` of the composable forms of `value_and_grad` and of
/// `grad` with aux (`transform/aux.rs`); the `jvp`/`vjp` of a plain
/// `grad` are `GradJvpFn`/`GradVjpFn`.
macro_rules! jvp_vjp {
    ($($t:ty => [$($g:tt)*]),*) => {$(
        impl<$($g)*> JvpFn for $t
        where
            Self: DiffFn,
            ArityOf<Self>: Entries<Self>,
        {
            type Ptr = <ArityOf<Self> as Entries<Self>>::Jvp;
            const PTR: &'static Self::Ptr = <ArityOf<Self> as Entries<Self>>::JVP;
        }
        impl<$($g)*> VjpFn for $t
        where
            Self: DiffFn,
            ArityOf<Self>: Entries<Self>,
        {
            type Ptr = <ArityOf<Self> as Entries<Self>>::Vjp;
            const PTR: &'static Self::Ptr = <ArityOf<Self> as Entries<Self>>::VJP;
        }
    )*};
}
jvp_vjp!(ValueAndGrad<F, A, X> => [F: Copy, A, X], Grad<F, A, HasAux> => [F: Copy, A]);

/// Which generic programs a function value has: [`ScalarTier`] for
/// functions of one float ([`ScalarFn1`]), [`ArrayTier`] for functions of
/// arrays ([`DiffFn`]). `#[differentiable]` implements it; a transform has
/// its function's tier. It tells `grad(grad(f))` which programs to use.
#[doc(hidden)]
pub trait Tiered {
    /// [`ScalarTier`] or [`ArrayTier`].
    type Tier;
}
/// See [`Tiered`].
#[doc(hidden)]
pub struct ScalarTier;
/// See [`Tiered`].
#[doc(hidden)]
pub struct ArrayTier;

impl<F: Tiered, A, X> Tiered for Grad<F, A, X> {
    type Tier = F::Tier;
}
impl<F, In, Out> Tiered for Vmap<F, In, Out> {
    type Tier = ArrayTier;
}
impl<F: Tiered, In> Tiered for Jacfwd<F, In>
where
    F::Tier: crate::transform::fixed::JacTier,
{
    type Tier = <F::Tier as crate::transform::fixed::JacTier>::Of;
}
impl<F: Tiered, In> Tiered for Jacrev<F, In>
where
    F::Tier: crate::transform::fixed::JacTier,
{
    type Tier = <F::Tier as crate::transform::fixed::JacTier>::Of;
}

/// `grad` of the gradient `G` (argument `A`), by `G`'s tier `T`: the entry
/// point of `grad(grad(f))`.
#[doc(hidden)]
pub trait NestedGrad<A> {
    /// The entry point's type.
    type Ptr: Copy + 'static;
    /// The entry point.
    const PTR: &'static Self::Ptr;
}

fn scalar_grad_entry<G: ScalarFn1>(x: G::S) -> G::S {
    let (y, pullback) = G::vjp::<G::S>(&x);
    pullback(y.ones_like())
}

impl<G: ScalarFn1> NestedGrad<Argnum<0>> for (ScalarTier, G) {
    type Ptr = fn(G::S) -> G::S;
    const PTR: &'static Self::Ptr = &(scalar_grad_entry::<G> as fn(G::S) -> G::S);
}

impl<G: DiffFn<Out = One>, const K: usize> NestedGrad<Argnum<K>> for (ArrayTier, G)
where
    Argnum<K>: ArgIndex<G::Arity>,
    G::Arity: Caller<GradOf<G, K>>,
{
    type Ptr = <G::Arity as Caller<GradOf<G, K>>>::Ptr;
    const PTR: &'static Self::Ptr = <G::Arity as Caller<GradOf<G, K>>>::PTR;
}

impl<F: Tiered + Copy, A, B> GradFn<B, NoAux> for Grad<F, A, NoAux>
where
    (F::Tier, Self): NestedGrad<B>,
{
    type Ptr = <(F::Tier, Self) as NestedGrad<B>>::Ptr;
    const PTR: &'static Self::Ptr = <(F::Tier, Self) as NestedGrad<B>>::PTR;
}

// `jvp` and `vjp` of `grad(grad(f))` for functions of arrays.
grad_entries!([F: Copy, A] Grad<F, A, NoAux>);
