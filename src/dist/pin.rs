//! Cotangents pinned to their arguments' layouts: when a training step's
//! parameters stay laid out between calls (`auto(f, &mesh).sharded()`),
//! each gradient is returned in its parameter's layout. The pin is an op,
//! `like_input`, so the planner sees and prices the move: recorded
//! ([`Traced::like_input`]) it is a node tied to argument leaf `i`, whose
//! split the planner fixes to the leaf's; run on `DArray`s it takes that
//! split from the plan.

use super::trace::Traced;
use crate::ArrayValue;
use crate::compose::{ArgsOf, Arity, ArrayTier, DiffFn, OutOf, SpecsOf, Tiered};
use std::any::Any;

/// `F` with the wanted cotangents of its pullbacks pinned to their
/// arguments' layouts (see the module docs).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pinned<F>(pub F);

/// The wanted cotangents `ct` pinned to the layouts of the arguments `x`
/// (`want` as [`DiffFn::vjp_masked`] takes it); values of other types
/// pass through.
pub(crate) fn pin<A: Arity, V: ArrayValue>(
    x: &A::Args<V>,
    ct: A::Args<V>,
    want: &[bool],
) -> A::Args<V> {
    A::map(&ct, |i, c| {
        if !crate::compose::is_wanted(want, A::arg_of(x, i)) {
            return c.clone();
        }
        let ca = c as &dyn Any;
        let pinned: Box<dyn Any> = if let Some(t) = ca.downcast_ref::<Traced>() {
            Box::new(t.like_input(i))
        } else {
            #[cfg(feature = "mpi")]
            if let (Some(cd), Some(xd)) = (
                ca.downcast_ref::<super::DArray>(),
                (A::get(x, i) as &dyn Any).downcast_ref::<super::DArray>(),
            ) {
                let p: Box<dyn Any> = Box::new(cd.like_input(&xd.layout));
                return *p.downcast::<V>().expect("V is DArray");
            }
            return c.clone();
        };
        *pinned.downcast::<V>().expect("V is Traced")
    })
}

impl<F: DiffFn> DiffFn for Pinned<F> {
    type Arity = F::Arity;
    type Out = F::Out;
    fn eval<V: ArrayValue>(x: &ArgsOf<Self, V>) -> OutOf<Self, V> {
        F::eval::<V>(x)
    }
    #[allow(clippy::type_complexity)]
    fn vjp<V: ArrayValue>(
        x: &ArgsOf<Self, V>,
    ) -> (
        OutOf<Self, V>,
        impl FnOnce(OutOf<Self, V>) -> ArgsOf<Self, V> + use<V, F>,
    ) {
        let (y, pullback) = F::vjp::<V>(x);
        let x = x.clone();
        (y, move |ct| pin::<F::Arity, V>(&x, pullback(ct), &[]))
    }
    #[allow(clippy::type_complexity)]
    fn vjp_masked<V: ArrayValue>(
        x: &ArgsOf<Self, V>,
        want: &[bool],
    ) -> (
        OutOf<Self, V>,
        impl FnOnce(OutOf<Self, V>) -> ArgsOf<Self, V> + use<V, F>,
    ) {
        let (y, pullback) = F::vjp_masked::<V>(x, want);
        let (x, want) = (x.clone(), want.to_vec());
        (y, move |ct| pin::<F::Arity, V>(&x, pullback(ct), &want))
    }
    #[allow(clippy::type_complexity)]
    fn vjp_masked_shapes<V: ArrayValue>(
        x: &ArgsOf<Self, V>,
        want: &[bool],
    ) -> (
        SpecsOf<Self>,
        impl FnOnce(OutOf<Self, V>) -> ArgsOf<Self, V> + use<V, F>,
    ) {
        let (y, pullback) = F::vjp_masked_shapes::<V>(x, want);
        let (x, want) = (x.clone(), want.to_vec());
        (y, move |ct| pin::<F::Arity, V>(&x, pullback(ct), &want))
    }
}

impl<F> Tiered for Pinned<F> {
    type Tier = ArrayTier;
}
