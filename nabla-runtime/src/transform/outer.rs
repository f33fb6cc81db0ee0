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
    A1, A2, A3, A4, A5, A6, ArgIndex, ArgsOf, Arity, Caller, DiffFn, FixedArity, Jacfwd, Jacrev,
    One, OutOf, ScalarFn1, Structure, Vmap,
};
use crate::transform::grad::{
    Argnum, Grad, GradFn, GradJvpFn, GradVjpFn, JvpFn, NoAux, ValueAndGradFn, VjpFn,
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
    /// `fn(&Array, ..) -> (Array, Array)`.
    type Ptr: Copy + 'static;
    /// The entry point.
    const PTR: &'static Self::Ptr;
}

/// Splits the dual outputs of `jvp` into outputs and tangents.
fn split<G: DiffFn>(y: OutOf<G, Dual<Array>>) -> (OutOf<G, Array>, OutOf<G, Array>) {
    let leaves = G::Out::leaves(y);
    let primal = leaves.iter().map(|d| d.primal.clone()).collect();
    let tangent = leaves.iter().map(Dual::tangent_or_zero).collect();
    (G::Out::from_leaves(primal), G::Out::from_leaves(tangent))
}

/// `value_and_grad` of `G` w.r.t. argument `I`, at `Array`.
#[track_caller]
fn value_and_grad_at<G: DiffFn<Out = One>, const I: usize>(x: &ArgsOf<G, Array>) -> (Array, Array)
where
    G::Arity: FixedArity,
{
    let mut want = [false; 6];
    want[I] = true;
    let (y, pullback) = G::vjp_masked::<Array>(x, &want[..<G::Arity as FixedArity>::N]);
    if y.numel() != 1 {
        panic!(
            "value_and_grad: the function returns shape {:?}, but value_and_grad needs a scalar output; reduce it (e.g. with nabla::sum) or use jacrev",
            y.shape()
        );
    }
    let cts = pullback(y.ones_like());
    let g = <G::Arity as Arity>::get(&cts, I).clone();
    (y, g)
}

macro_rules! entries {
    ($a:ident, $jvp:ident, $vjp:ident, $vg:ident, $($x:ident $i:tt),*; $cts:ty, $pick:expr) => {
        fn $jvp<G: DiffFn<Arity = $a>>(
            p: ($(entries!(@r $x),)*),
            t: ($(entries!(@r $x),)*),
        ) -> (OutOf<G, Array>, OutOf<G, Array>) {
            let x = ($(Dual::new(p.$i.clone(), Some(t.$i.clone())),)*);
            split::<G>(G::eval::<Dual<Array>>(&x))
        }
        #[allow(clippy::type_complexity)]
        fn $vjp<G: DiffFn<Arity = $a>>(
            $($x: &Array),*
        ) -> (OutOf<G, Array>, Pullback<OutOf<G, Array>, $cts>) {
            let (y, pullback) = G::vjp::<Array>(&($($x.clone(),)*));
            (y, Box::new(move |ct: &OutOf<G, Array>| {
                let all = pullback(ct.clone());
                $pick(all)
            }))
        }
        #[track_caller]
        fn $vg<G: DiffFn<Arity = $a, Out = One>, const I: usize>($($x: &Array),*) -> (Array, Array) {
            value_and_grad_at::<G, I>(&($($x.clone(),)*))
        }
        impl<G: DiffFn<Arity = $a>> Entries<G> for $a {
            type Jvp = for<'a> fn(($(entries!(@ra $x),)*), ($(entries!(@ra $x),)*)) -> (OutOf<G, Array>, OutOf<G, Array>);
            const JVP: &'static Self::Jvp = &($jvp::<G> as Self::Jvp);
            type Vjp = for<'a> fn($(entries!(@ra $x)),*) -> (OutOf<G, Array>, Pullback<OutOf<G, Array>, $cts>);
            const VJP: &'static Self::Vjp = &($vjp::<G> as Self::Vjp);
        }
        impl<G: DiffFn<Arity = $a, Out = One>, const I: usize> ValueAndGradEntry<G, I> for $a {
            type Ptr = for<'a> fn($(entries!(@ra $x)),*) -> (Array, Array);
            const PTR: &'static Self::Ptr = &($vg::<G, I> as Self::Ptr);
        }
    };
    (@r $x:ident) => { &Array };
    (@ra $x:ident) => { &'a Array };
}

entries!(A1, jvp1, vjp1, vg1, a 0; Array, |c: (Array,)| c.0);
entries!(A2, jvp2, vjp2, vg2, a 0, b 1; (Array, Array), |c| c);
entries!(A3, jvp3, vjp3, vg3, a 0, b 1, c 2; (Array, Array, Array), |c| c);
entries!(A4, jvp4, vjp4, vg4, a 0, b 1, c 2, d 3; (Array, Array, Array, Array), |c| c);
entries!(A5, jvp5, vjp5, vg5, a 0, b 1, c 2, d 3, e 4; (Array, Array, Array, Array, Array), |c| c);
entries!(A6, jvp6, vjp6, vg6, a 0, b 1, c 2, d 3, e 4, f 5; (Array, Array, Array, Array, Array, Array), |c| c);

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
            ArityOf<Self>: FixedArity + Caller<GradOf<Self, K>>,
        {
            type Ptr = <ArityOf<Self> as Caller<GradOf<Self, K>>>::Ptr;
            const PTR: &'static Self::Ptr = <ArityOf<Self> as Caller<GradOf<Self, K>>>::PTR;
        }
        impl<F: Copy, $($p,)* const K: usize> ValueAndGradFn<Argnum<K>, NoAux> for $t<F, $($p),*>
        where
            Self: DiffFn<Out = One>,
            Argnum<K>: ArgIndex<ArityOf<Self>>,
            ArityOf<Self>: FixedArity + ValueAndGradEntry<Self, K>,
        {
            type Ptr = <ArityOf<Self> as ValueAndGradEntry<Self, K>>::Ptr;
            const PTR: &'static Self::Ptr = <ArityOf<Self> as ValueAndGradEntry<Self, K>>::PTR;
        }
        grad_entries!([F: Copy, $($p),*] $t<F, $($p),*>);
    )*};
}
every_transform!(Vmap<In, Out>, Jacfwd<In>, Jacrev<In>);

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
    G::Arity: FixedArity + Caller<GradOf<G, K>>,
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
