//! `jvp(auto(f))` and `jvp(grad(auto(f)))`: the program at `Dual`,
//! recorded with the primals and then the tangents as inputs, planned and
//! run like any other.

use super::*;

/// Marks the plans of `jvp(G)`, whose inputs are the arguments and then
/// their tangents.
struct JvpOf<G>(PhantomData<G>);

/// `jvp(G)` on global arrays: the program at `Dual`, recorded, planned
/// and run with the primals and tangents as inputs (the tangents laid out
/// as planned, not necessarily like their primals); the output and its
/// tangent, gathered.
#[track_caller]
fn run_jvp<G: DiffFn<Out = One>, F: 'static>(
    p: &ArgsOf<G, Array>,
    t: &ArgsOf<G, Array>,
) -> (Array, Array) {
    let n = G::Arity::len(p);
    let mut inputs = leaves::<G::Arity>(p);
    inputs.extend(leaves::<G::Arity>(t));
    let key = (TypeId::of::<JvpOf<G>>(), inputs.clone(), Vec::new());
    let (mesh, ready) = planned_for::<F>(&key, || {
        record(&inputs, |ins| {
            let x = G::Arity::map(p, |i, _| {
                Dual::new(ins[i].clone(), Some(ins[n + i].clone()))
            });
            let y = G::eval::<Dual<Traced>>(&x);
            let tangent = y.tangent_or_zero();
            vec![y.primal, tangent]
        })
    });
    let lay = |i: usize, a: &Array| DArray {
        local: mesh.block(a, &ready.inputs[i]),
        shape: Shape::from_slice(a.shape()),
        layout: ready.inputs[i].clone(),
        mesh,
    };
    let x = G::Arity::map(p, |i, a| {
        Dual::new(lay(i, a), Some(lay(n + i, G::Arity::get(t, i))))
    });
    let y = with_plan(ready.ops.clone(), || G::eval::<Dual<DArray>>(&x));
    let tangent = y.tangent_or_zero();
    (y.primal.to_global(), tangent.to_global())
}

/// `jvp` of a function of arrays planned as `Auto<F>`, by arity:
/// `jvp(auto(f))` and `jvp(grad(auto(f)))`.
///
/// ```standalone_crate
/// use nabla::{Array, DType, dist::{self, Mesh}};
///
/// #[nabla::differentiable]
/// fn f(w: &Array, x: &Array) -> Array {
///     x.matmul(w).tanh().sum()
/// }
///
/// fn main() {
///     let _mpi = dist::init();
///     let mesh = Mesh::new(&[("x", dist::world_size())]);
///     let a = dist::auto(f, &mesh);
///     let w = Array::linspace(-1.0, 1.0, 12, DType::F64).reshape(&[3, 4]);
///     let x = Array::linspace(0.0, 1.0, 24, DType::F64).reshape(&[8, 3]);
///     let (v, z) = (Array::ones(&[3, 4], DType::F64), Array::zeros(&[8, 3], DType::F64));
///     // The gradient and a Hessian-vector product, planned as one program.
///     let (g, hv) = nabla::jvp(nabla::grad(a))((&w, &x), (&v, &z));
///     let (g1, hv1) = nabla::jvp(nabla::grad(f))((&w, &x), (&v, &z));
///     assert!((&g - &g1).abs().max().item() < 1e-12);
///     assert!((&hv - &hv1).abs().max().item() < 1e-12);
/// }
/// ```
#[doc(hidden)]
pub trait PlannedJvp<G> {
    /// `fn((&Array, ..), (&Array, ..)) -> (output, tangent)`.
    type Ptr: Copy + 'static;
    /// `jvp(G)`.
    const PTR: &'static Self::Ptr;
}

macro_rules! planned_jvp {
    ($jvp:ident; $($a:ident $i:tt),*) => {
        #[track_caller]
        fn $jvp<'a, G: DiffFn<Arity = Planned<($(planned_jvp!(@one $a),)*), F>, Out = One>, F: 'static>(
            p: ($(planned_jvp!(@ref $a),)*),
            t: ($(planned_jvp!(@ref $a),)*),
        ) -> (Array, Array) {
            run_jvp::<G, F>(&($(p.$i.clone(),)*), &($(t.$i.clone(),)*))
        }
        impl<G: DiffFn<Arity = Planned<($(planned_jvp!(@one $a),)*), F>, Out = One>, F: 'static> PlannedJvp<G>
            for Planned<($(planned_jvp!(@one $a),)*), F>
        {
            type Ptr = for<'a> fn(($(planned_jvp!(@ref $a),)*), ($(planned_jvp!(@ref $a),)*)) -> (Array, Array);
            const PTR: &'static Self::Ptr = &($jvp::<G, F> as Self::Ptr);
        }
    };
    (@one $a:ident) => { One };
    (@ref $a:ident) => { &'a Array };
}
planned_jvp!(jvp1; a 0);
planned_jvp!(jvp2; a 0, b 1);
planned_jvp!(jvp3; a 0, b 1, c 2);
planned_jvp!(jvp4; a 0, b 1, c 2, d 3);

/// `jvp(auto(f))`.
impl<F: DiffFn> JvpFn for Auto<F>
where
    Self: Copy,
    Planned<F::Arity, F>: PlannedJvp<Self>,
{
    type Ptr = <Planned<F::Arity, F> as PlannedJvp<Self>>::Ptr;
    const PTR: &'static Self::Ptr = <Planned<F::Arity, F> as PlannedJvp<Self>>::PTR;
}

/// `grad(auto(F))` w.r.t. argument `K`.
type GradOf<F, const K: usize> = Grad<Auto<F>, Argnum<K>, NoAux>;

/// `jvp(grad(auto(f)))`: the gradient and its tangent (a Hessian-vector
/// product), forward over reverse, planned as one program.
impl<F: DiffFn + Copy, const K: usize> GradJvpFn<Argnum<K>> for Auto<F>
where
    GradOf<F, K>: DiffFn<Arity = Planned<F::Arity, F>>,
    Planned<F::Arity, F>: PlannedJvp<GradOf<F, K>>,
{
    type Ptr = <Planned<F::Arity, F> as PlannedJvp<GradOf<F, K>>>::Ptr;
    const PTR: &'static Self::Ptr = <Planned<F::Arity, F> as PlannedJvp<GradOf<F, K>>>::PTR;
}

macro_rules! planned {
    ($call:ident; $($a:ident $s:ident),*) => {
        fn $call<G: DiffFn<Arity = Planned<($($s,)*), F>>, F: 'static, $($s: Slot),*>($($a: &$s::Ty),*) -> UserOf<G> {
            run::<G, F>(&($($s::arg($a),)*))
        }
        impl<G: DiffFn<Arity = Planned<($($s,)*), F>>, F: 'static, $($s: Slot),*> Caller<G> for Planned<($($s,)*), F> {
            type Ptr = fn($(&$s::Ty),*) -> UserOf<G>;
            const PTR: &'static Self::Ptr = &($call::<G, F, $($s),*> as fn($(&$s::Ty),*) -> UserOf<G>);
        }
    };
}
planned!(call1; a S0);
planned!(call2; a S0, b S1);
planned!(call3; a S0, b S1, c S2);
planned!(call4; a S0, b S1, c S2, d S3);
planned!(call5; a S0, b S1, c S2, d S3, e S4);
planned!(call6; a S0, b S1, c S2, d S3, e S4, f S5);

impl<F, const I: usize> GradFn<Argnum<I>, NoAux> for Auto<F>
where
    F: DiffFn,
    Grad<Auto<F>, Argnum<I>, NoAux>: DiffFn<Arity = Planned<F::Arity, F>>,
    Planned<F::Arity, F>: Caller<Grad<Auto<F>, Argnum<I>, NoAux>>,
{
    type Ptr = <Planned<F::Arity, F> as Caller<Grad<Auto<F>, Argnum<I>, NoAux>>>::Ptr;
    const PTR: &'static Self::Ptr =
        <Planned<F::Arity, F> as Caller<Grad<Auto<F>, Argnum<I>, NoAux>>>::PTR;
}

impl<F, const I: usize> ValueAndGradFn<Argnum<I>, NoAux> for Auto<F>
where
    F: DiffFn,
    ValueAndGrad<Auto<F>, Argnum<I>, NoAux>: DiffFn<Arity = Planned<F::Arity, F>>,
    Planned<F::Arity, F>: Caller<ValueAndGrad<Auto<F>, Argnum<I>, NoAux>>,
{
    type Ptr = <Planned<F::Arity, F> as Caller<ValueAndGrad<Auto<F>, Argnum<I>, NoAux>>>::Ptr;
    const PTR: &'static Self::Ptr =
        <Planned<F::Arity, F> as Caller<ValueAndGrad<Auto<F>, Argnum<I>, NoAux>>>::PTR;
}

impl<F: DiffFn> std::ops::Deref for Auto<F>
where
    Planned<F::Arity, F>: Caller<Auto<F>>,
{
    type Target = <Planned<F::Arity, F> as Caller<Auto<F>>>::Ptr;
    fn deref(&self) -> &Self::Target {
        <Planned<F::Arity, F> as Caller<Auto<F>>>::PTR
    }
}
