//! `Auto<F>` as a composable function: `F`'s programs, except at plain
//! arrays (`dist::auto(f, mesh)(..)` called inside `#[differentiable]`
//! code), where they run planned over the mesh.

use super::*;

/// `Auto<F>` runs `F`'s programs. At plain arrays (`auto(f, mesh)(..)`
/// called inside `#[differentiable]` code, whose transforms run it at the
/// enclosing function's value type) it runs them planned over the mesh:
/// the output from the planned program, gathered, and a pullback that is
/// the planned program of `vjp(auto(f))`'s.
impl<F: DiffFn> DiffFn for Auto<F> {
    type Arity = Planned<F::Arity, F>;
    type Out = F::Out;
    #[track_caller]
    fn eval<V: ArrayValue>(x: &ArgsOf<Self, V>) -> OutOf<Self, V> {
        match downcast::<_, ArgsOf<Self, Array>>(x) {
            Some(xa) => cast(run_out::<Self, F>(xa)),
            None => F::eval::<V>(x),
        }
    }
    #[allow(clippy::type_complexity)]
    #[track_caller]
    fn vjp<V: ArrayValue>(
        x: &ArgsOf<Self, V>,
    ) -> (
        OutOf<Self, V>,
        impl FnOnce(OutOf<Self, V>) -> ArgsOf<Self, V> + use<V, F>,
    ) {
        if let Some(xa) = downcast::<_, ArgsOf<Self, Array>>(x) {
            return (cast(run_out::<Self, F>(xa)), planned_pullback::<F, V>(xa));
        }
        let (y, pullback) = F::vjp::<V>(x);
        (y, Box::new(pullback) as BoxedPullback<Self, V>)
    }
    #[allow(clippy::type_complexity)]
    #[track_caller]
    fn vjp_masked<V: ArrayValue>(
        x: &ArgsOf<Self, V>,
        want: &[bool],
    ) -> (
        OutOf<Self, V>,
        impl FnOnce(OutOf<Self, V>) -> ArgsOf<Self, V> + use<V, F>,
    ) {
        if let Some(xa) = downcast::<_, ArgsOf<Self, Array>>(x) {
            return (cast(run_out::<Self, F>(xa)), planned_pullback::<F, V>(xa));
        }
        let (y, pullback) = F::vjp_masked::<V>(x, want);
        (y, Box::new(pullback) as BoxedPullback<Self, V>)
    }
    #[allow(clippy::type_complexity)]
    #[track_caller]
    fn vjp_masked_shapes<V: ArrayValue>(
        x: &ArgsOf<Self, V>,
        want: &[bool],
    ) -> (
        SpecsOf<Self>,
        impl FnOnce(OutOf<Self, V>) -> ArgsOf<Self, V> + use<V, F>,
    ) {
        let (specs, pullback) = F::vjp_masked_shapes::<V>(x, want);
        match downcast::<_, ArgsOf<Self, Array>>(x) {
            Some(xa) => (specs, planned_pullback::<F, V>(xa)),
            None => (specs, Box::new(pullback) as BoxedPullback<Self, V>),
        }
    }
}

/// A pullback of `G` at `V`, boxed (one type for the planned and the
/// plain ones).
type BoxedPullback<G, V> = Box<dyn FnOnce(OutOf<G, V>) -> ArgsOf<G, V>>;

/// `x` as a `U` when `T` is `U`.
fn downcast<T: 'static, U: 'static>(x: &T) -> Option<&U> {
    (x as &dyn std::any::Any).downcast_ref::<U>()
}

/// `x` (a `T` that is a `U`) as a `U`.
fn cast<T: 'static, U: 'static>(x: T) -> U {
    *(Box::new(x) as Box<dyn std::any::Any>)
        .downcast::<U>()
        .unwrap_or_else(|_| unreachable!("the value type is Array"))
}

/// The pullback of `auto(F)` at plain arrays `x` (`V` is `Array`): the
/// planned program of the forward again and the backward.
fn planned_pullback<F: DiffFn, V: ArrayValue>(
    x: &ArgsOf<Auto<F>, Array>,
) -> BoxedPullback<Auto<F>, V> {
    let x = x.clone();
    Box::new(move |ct: OutOf<Auto<F>, V>| {
        let ct: OutOf<Auto<F>, Array> = cast(ct);
        cast(vjp::run_pullback::<Auto<F>, F>(&x, &ct))
    })
}
