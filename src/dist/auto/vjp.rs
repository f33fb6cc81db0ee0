//! `vjp(auto(f))` and `vjp(grad(auto(f)))`: the output from the planned
//! program, and a pullback that runs a second planned program, the
//! forward pass again and the backward pass from the cotangent, recorded
//! with the arguments and then the output's cotangent as inputs.

use super::*;

/// Marks the plans of `vjp(G)`'s pullback, whose inputs are the
/// arguments and then the output's cotangent.
struct VjpOf<G>(PhantomData<G>);

/// The cotangents of `G`'s arguments for the output cotangent `ct`, as a
/// planned program (the forward pass recomputed), gathered.
#[track_caller]
pub(super) fn run_pullback<G: DiffFn, F: 'static>(
    x: &ArgsOf<G, Array>,
    ct: &OutOf<G, Array>,
) -> ArgsOf<G, Array> {
    let n = G::Arity::len(x);
    let mut inputs = leaves::<G::Arity>(x);
    inputs.extend((0..G::Out::count(ct)).map(|k| {
        let c = G::Out::leaf(ct, k);
        (c.shape().to_vec(), c.dtype())
    }));
    let key = (TypeId::of::<VjpOf<G>>(), inputs.clone(), Vec::new());
    let (mesh, ready) = planned_for::<F>(&key, || {
        record(&inputs, |ins| {
            let xt = G::Arity::map(x, |i, _| ins[i].clone());
            let (_, pullback) = G::vjp::<Traced>(&xt);
            let cts = pullback(G::Out::map_ref(ct, |k, _| ins[n + k].clone()));
            (0..n).map(|i| G::Arity::get(&cts, i).clone()).collect()
        })
    });
    let lay = |i: usize, a: &Array| DArray {
        local: mesh.block(a, &ready.inputs[i]),
        shape: Shape::from_slice(a.shape()),
        layout: ready.inputs[i].clone(),
        mesh,
    };
    let xd = G::Arity::map(x, |i, a| lay(i, a));
    let ctd = G::Out::map_ref(ct, |k, a| lay(n + k, a));
    let cts = with_plan(ready.ops.clone(), || {
        let (_, pullback) = G::vjp::<DArray>(&xd);
        pullback(ctd)
    });
    G::Arity::map(&cts, |_, d| d.to_global())
}

/// `vjp` of a function of arrays planned as `Auto<F>`, by arity:
/// `vjp(auto(f))` and `vjp(grad(auto(f)))`.
///
/// ```standalone_crate
/// use nabla::{Array, DType, dist::{self, Mesh}};
///
/// #[nabla::differentiable]
/// fn f(w: &Array, x: &Array) -> Array {
///     x.matmul(w).tanh()
/// }
///
/// fn main() {
///     let _mpi = dist::init();
///     let mesh = Mesh::new(&[("x", dist::world_size())]);
///     let w = Array::linspace(-1.0, 1.0, 12, DType::F64).reshape(&[3, 4]);
///     let x = Array::linspace(0.0, 1.0, 24, DType::F64).reshape(&[8, 3]);
///     let u = Array::linspace(0.5, 1.5, 32, DType::F64).reshape(&[8, 4]);
///     let (y, pullback) = nabla::vjp(dist::auto(f, &mesh))(&w, &x);
///     let (gw, gx) = pullback(&u);
///     let (y1, pullback1) = nabla::vjp(f)(&w, &x);
///     let (gw1, gx1) = pullback1(&u);
///     for (a, b) in [(&y, &y1), (&gw, &gw1), (&gx, &gx1)] {
///         assert!((a - b).abs().max().item() < 1e-12);
///     }
/// }
/// ```
#[doc(hidden)]
pub trait PlannedVjp<G> {
    /// `fn(&Array, ..) -> (output, pullback)`.
    type Ptr: Copy + 'static;
    /// `vjp(G)`.
    const PTR: &'static Self::Ptr;
}

/// A pullback of `vjp(auto(f))`: the output's cotangent to the
/// arguments' cotangents.
pub type PlannedPullback<C> = Box<dyn FnOnce(&Array) -> C>;

macro_rules! planned_vjp {
    ($vjp:ident; $($a:ident $i:tt),*; $cts:ty) => {
        #[track_caller]
        fn $vjp<G: DiffFn<Arity = Planned<($(planned_vjp!(@one $a),)*), F>, Out = One>, F: 'static>(
            $($a: &Array),*
        ) -> (Array, PlannedPullback<$cts>) {
            let x = ($($a.clone(),)*);
            let y = run::<G, F>(&x);
            (y, Box::new(move |ct: &Array| run_pullback::<G, F>(&x, ct)))
        }
        impl<G: DiffFn<Arity = Planned<($(planned_vjp!(@one $a),)*), F>, Out = One>, F: 'static> PlannedVjp<G>
            for Planned<($(planned_vjp!(@one $a),)*), F>
        {
            type Ptr = for<'a> fn($(planned_vjp!(@ref $a)),*) -> (Array, PlannedPullback<$cts>);
            const PTR: &'static Self::Ptr = &($vjp::<G, F> as Self::Ptr);
        }
    };
    (@one $a:ident) => { One };
    (@ref $a:ident) => { &'a Array };
}
planned_vjp!(vjp1; a 0; (Array,));
planned_vjp!(vjp2; a 0, b 1; (Array, Array));
planned_vjp!(vjp3; a 0, b 1, c 2; (Array, Array, Array));
planned_vjp!(vjp4; a 0, b 1, c 2, d 3; (Array, Array, Array, Array));

/// `vjp(auto(f))`.
impl<F: DiffFn> VjpFn for Auto<F>
where
    Self: Copy,
    Planned<F::Arity, F>: PlannedVjp<Self>,
{
    type Ptr = <Planned<F::Arity, F> as PlannedVjp<Self>>::Ptr;
    const PTR: &'static Self::Ptr = <Planned<F::Arity, F> as PlannedVjp<Self>>::PTR;
}

/// `grad(auto(F))` w.r.t. argument `K`.
type GradOf<F, const K: usize> = Grad<Auto<F>, Argnum<K>, NoAux>;

/// `vjp(grad(auto(f)))`: the gradient and a pullback of it (a
/// Hessian-vector product against the cotangent), planned.
impl<F: DiffFn + Copy, const K: usize> GradVjpFn<Argnum<K>> for Auto<F>
where
    GradOf<F, K>: DiffFn<Arity = Planned<F::Arity, F>>,
    Planned<F::Arity, F>: PlannedVjp<GradOf<F, K>>,
{
    type Ptr = <Planned<F::Arity, F> as PlannedVjp<GradOf<F, K>>>::Ptr;
    const PTR: &'static Self::Ptr = <Planned<F::Arity, F> as PlannedVjp<GradOf<F, K>>>::PTR;
}
