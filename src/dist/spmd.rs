//! [`spmd`]: an ordinary `#[differentiable]` function run on [`DArray`]s.
//! Every transform composes with it: `spmd(f)` is `f` at the value type
//! `DArray` (its programs unchanged), whose arguments are taken as
//! `&DArray` ([`OnMesh`] arities), so `grad(spmd(f))`, `vmap`,
//! `jacfwd`, `jacrev`, `hessian`, `jvp` and `vjp` of it run `f`'s
//! generated programs at `DArray`, `Dual<DArray>`, `Batched<DArray>`, …
//! with every op sharded by its rule.

use super::darray::DArray;
use super::dtree::DTree;
use super::mesh::Mesh;
use crate::compose::{
    ArgIndex, ArgsOf, Arity, ArrayTier, Caller, DiffFn, List, One, OutOf, SpecsOf, Structure,
    Tiered,
};
use crate::compose::{Slot, TreeS, TreeVal};
use crate::transforms::{
    Argnum, Grad, GradFn, GradJvpFn, GradVjpFn, JvpFn, NoAux, ValueAndGrad, ValueAndGradFn, VjpFn,
};
use crate::tree::Tree;
use crate::{ArrayValue, Dual};
use std::borrow::Borrow;
use std::marker::PhantomData;

/// `f` on [`DArray`]s over a mesh (see [`spmd`]).
///
/// ```standalone_crate
/// use nabla::{Array, dist::{self, Mesh, Spec}};
///
/// #[nabla::differentiable]
/// fn f(x: &Array) -> Array {
///     (x * x).sum()
/// }
///
/// fn main() {
///     let _mpi = dist::init();
///     let mesh = Mesh::new(&[("d", dist::world_size())]);
///     let x = dist::distribute(&Array::ones(&[2 * dist::world_size()], nabla::DType::F64), &mesh, &Spec::new(&[Some("d")]));
///     let s: dist::Spmd<_> = dist::spmd(f, &mesh);
///     assert_eq!(s(&x).to_global().item(), (2 * dist::world_size()) as f64);
/// }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Spmd<F> {
    f: F,
    mesh: Mesh,
}

impl<F> Spmd<F> {
    /// The function it runs.
    ///
    /// ```standalone_crate
    /// #[nabla::differentiable]
    /// fn f(x: &nabla::Array) -> nabla::Array { x.sum() }
    /// fn main() {
    ///     let _mpi = nabla::dist::init();
    ///     let mesh = nabla::dist::Mesh::new(&[("d", nabla::dist::world_size())]);
    ///     let g = nabla::dist::spmd(f, &mesh).function();
    ///     assert_eq!(g(&nabla::Array::ones(&[2], nabla::DType::F64)).item(), 2.0);
    /// }
    /// ```
    pub fn function(&self) -> F
    where
        F: Copy,
    {
        self.f
    }

    /// The mesh it was made for.
    ///
    /// ```standalone_crate
    /// #[nabla::differentiable]
    /// fn f(x: &nabla::Array) -> nabla::Array { x.sum() }
    /// fn main() {
    ///     let _mpi = nabla::dist::init();
    ///     let mesh = nabla::dist::Mesh::new(&[("d", nabla::dist::world_size())]);
    ///     assert_eq!(nabla::dist::spmd(f, &mesh).mesh(), mesh);
    /// }
    /// ```
    pub fn mesh(&self) -> Mesh {
        self.mesh
    }
}

/// Runs the `#[differentiable]` function `f` on [`DArray`]s laid out over
/// `mesh`: every rank runs the same generated program on its blocks, each
/// op moving its operands to a layout its sharding rule accepts (the
/// cheapest) and leaving partial sums pending until an op needs the
/// whole value. Called with `&DArray` arguments, it returns `DArray`s; the
/// values equal the one-process computation on the global arrays.
///
/// ```standalone_crate
/// use nabla::{Array, DType, dist::{self, Mesh, Spec}};
///
/// #[nabla::differentiable]
/// fn loss(w: &Array, x: &Array) -> Array {
///     x.matmul(w).tanh().sum()
/// }
///
/// fn main() {
///     let _mpi = dist::init();
///     let n = dist::world_size();
///     let mesh = Mesh::new(&[("model", n)]);
///     let w = Array::linspace(-1.0, 1.0, 6 * n, DType::F64).reshape(&[3, 2 * n]);
///     let x = Array::linspace(0.0, 1.0, 12, DType::F64).reshape(&[4, 3]);
///     let wd = dist::distribute(&w, &mesh, &Spec::new(&[None, Some("model")]));
///     let xd = dist::distribute(&x, &mesh, &Spec::new(&[None, None]));
///     let (l, g) = nabla::value_and_grad(dist::spmd(loss, &mesh))(&wd, &xd);
///     assert_eq!(g.spec(), wd.spec()); // laid out like the parameter
///     let (l1, g1) = nabla::value_and_grad(loss)(&w, &x);
///     assert!((l.to_global().item() - l1.item()).abs() < 1e-12);
///     let diff = (&g.to_global() - &g1).abs().max().item();
///     assert!(diff < 1e-12);
/// }
/// ```
pub fn spmd<F: DiffFn>(f: F, mesh: &Mesh) -> Spmd<F> {
    Spmd { f, mesh: *mesh }
}

/// The arguments of a function on a mesh: those of `A`, passed as
/// `&DArray` ([`Spmd`], `K` = [`Blocks`]) or as global arrays for the
/// planner to lay out ([`Auto`](super::Auto), `K` =
/// [`Global<F>`](super::Global)). One wrapper, so every transform that
/// needs argument indices works on both.
#[derive(Clone, Copy, Debug)]
pub struct OnMesh<A, K = Blocks>(PhantomData<(A, K)>);

/// Arguments passed as `DArray`s (see [`OnMesh`]).
#[derive(Clone, Copy, Debug)]
pub struct Blocks;

impl<A: Arity, K: 'static> Arity for OnMesh<A, K> {
    type Args<W: Clone> = A::Args<W>;
    const ARGS: usize = A::ARGS;
    fn len<W: Clone>(x: &Self::Args<W>) -> usize {
        A::len(x)
    }
    fn map<W: Clone, U: Clone>(x: &Self::Args<W>, f: impl FnMut(usize, &W) -> U) -> Self::Args<U> {
        A::map(x, f)
    }
    #[track_caller]
    fn get<W: Clone>(x: &Self::Args<W>, i: usize) -> &W {
        A::get(x, i)
    }
    fn arg_leaves<W: Clone>(x: &Self::Args<W>, k: usize) -> crate::compose::ArgIndices {
        A::arg_leaves(x, k)
    }
    fn arg_of<W: Clone>(x: &Self::Args<W>, i: usize) -> usize {
        A::arg_of(x, i)
    }
}

impl<A: Arity, K: 'static, const I: usize> ArgIndex<OnMesh<A, K>> for Argnum<I>
where
    Argnum<I>: ArgIndex<A>,
{
    const I: usize = I;
    type Slot = <Argnum<I> as ArgIndex<A>>::Slot;
    fn pick<W: Clone>(x: &A::Args<W>) -> &<Self::Slot as Structure>::Of<W> {
        <Argnum<I> as ArgIndex<A>>::pick(x)
    }
}

impl<F: DiffFn> DiffFn for Spmd<F> {
    type Arity = OnMesh<F::Arity>;
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
        (y, move |ct| {
            like_inputs::<F::Arity, V>(&x, pullback(ct), &[])
        })
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
        (y, move |ct| {
            like_inputs::<F::Arity, V>(&x, pullback(ct), &want)
        })
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
        (y, move |ct| {
            like_inputs::<F::Arity, V>(&x, pullback(ct), &want)
        })
    }
}

/// The cotangents `ct` laid out like the arguments `x` when the values
/// are `DArray`s (gradients are laid out like their parameters); other
/// value types pass through.
fn like_inputs<A: Arity, V: ArrayValue>(
    x: &A::Args<V>,
    ct: A::Args<V>,
    want: &[bool],
) -> A::Args<V> {
    use std::any::Any;
    A::map(&ct, |i, c| {
        if !crate::compose::is_wanted(want, A::arg_of(x, i)) {
            return c.clone();
        }
        let (ca, xa) = (c as &dyn Any, A::get(x, i) as &dyn Any);
        let moved: Box<dyn Any> = if let (Some(cd), Some(xd)) =
            (ca.downcast_ref::<DArray>(), xa.downcast_ref::<DArray>())
        {
            Box::new(cd.moved(&xd.layout))
        } else if let (Some(cd), Some(xd)) = (
            ca.downcast_ref::<Dual<DArray>>(),
            xa.downcast_ref::<Dual<DArray>>(),
        ) {
            // Under `jvp(grad(..))`: the gradient and its tangent.
            let l = &xd.primal.layout;
            Box::new(Dual::new(
                cd.primal.moved(l),
                cd.tangent.as_ref().map(|t| t.moved(l)),
            ))
        } else {
            return c.clone();
        };
        *moved.downcast::<V>().expect("V is DArray or Dual<DArray>")
    })
}

impl<F> Tiered for Spmd<F> {
    type Tier = ArrayTier;
}

/// An output structure of `DArray`s as users hold it.
pub trait DUser: Structure {
    /// `DArray`, `Vec<DArray>`, or a pair of them.
    type DUser: 'static;
    /// From the program's output.
    fn user(x: Self::Of<DArray>) -> Self::DUser;
}

impl DUser for One {
    type DUser = DArray;
    fn user(x: DArray) -> DArray {
        x
    }
}

impl DUser for List {
    type DUser = Vec<DArray>;
    fn user(x: Vec<DArray>) -> Vec<DArray> {
        x
    }
}

impl<T: Tree + ?Sized + 'static> DUser for TreeS<T>
where
    T::Grad: Borrow<T> + 'static,
{
    type DUser = DTree<T>;
    fn user(x: TreeVal<T, DArray>) -> DTree<T> {
        DTree(x)
    }
}

/// An argument slot of `DArray`s as users pass it: a [`DArray`] for an
/// array, a [`DTree`] for a tree.
pub trait DSlot: Slot {
    /// What users pass a reference to.
    type DTy: 'static;
    /// The argument as the program's structure of `DArray`s.
    fn darg(x: &Self::DTy) -> Self::Of<DArray>;
}

impl DSlot for One {
    type DTy = DArray;
    fn darg(x: &DArray) -> DArray {
        x.clone()
    }
}

impl<T: Tree + ?Sized + 'static> DSlot for TreeS<T>
where
    T::Grad: Borrow<T> + 'static,
{
    type DTy = DTree<T>;
    fn darg(x: &DTree<T>) -> TreeVal<T, DArray> {
        x.0.clone()
    }
}

impl<A: DUser, B: DUser> DUser for (A, B) {
    type DUser = (A::DUser, B::DUser);
    fn user(x: (A::Of<DArray>, B::Of<DArray>)) -> Self::DUser {
        (A::user(x.0), B::user(x.1))
    }
}

/// The user form of `G`'s output on `DArray`s.
type DOut<G> = <<G as DiffFn>::Out as DUser>::DUser;
/// A pullback from an output cotangent to the arguments' cotangents.
pub type DPullback<O, C> = Box<dyn FnOnce(&O) -> C>;

/// `jvp` and `vjp` of a composable function `G` on a mesh (`spmd(F)`,
/// `grad(spmd(F))`), by its arity.
///
/// ```standalone_crate
/// use nabla::{Array, DType, dist::{self, Mesh, Spec}};
///
/// #[nabla::differentiable]
/// fn f(w: &Array) -> Array {
///     (w * w * w).sum()
/// }
///
/// fn main() {
///     let _mpi = dist::init();
///     let n = dist::world_size();
///     let mesh = Mesh::new(&[("d", n)]);
///     let w = Array::linspace(-1.0, 1.0, 2 * n, DType::F64);
///     let v = Array::ones(&[2 * n], DType::F64);
///     let s = Spec::new(&[Some("d")]);
///     let (wd, vd) = (dist::distribute(&w, &mesh, &s), dist::distribute(&v, &mesh, &s));
///     // The gradient 3w² and its tangent 6w·v, laid out like w.
///     let (g, hv) = nabla::jvp(nabla::grad(dist::spmd(f, &mesh)))((&wd,), (&vd,));
///     assert_eq!(g.spec(), s);
///     let want = &w * 6.0;
///     assert!((&hv.to_global() - &want).abs().max().item() < 1e-12);
/// }
/// ```
#[doc(hidden)]
pub trait DEntries<G> {
    /// `fn((&DArray, ..), (&DArray, ..)) -> (output, tangent)`.
    type Jvp: Copy + 'static;
    /// `jvp(G)`.
    const JVP: &'static Self::Jvp;
    /// `fn(&DArray, ..) -> (output, pullback)`.
    type Vjp: Copy + 'static;
    /// `vjp(G)`.
    const VJP: &'static Self::Vjp;
}

impl<F: DiffFn> JvpFn for Spmd<F>
where
    OnMesh<F::Arity>: DEntries<Self>,
{
    type Ptr = <OnMesh<F::Arity> as DEntries<Self>>::Jvp;
    const PTR: &'static Self::Ptr = <OnMesh<F::Arity> as DEntries<Self>>::JVP;
}

impl<F: DiffFn> VjpFn for Spmd<F>
where
    OnMesh<F::Arity>: DEntries<Self>,
{
    type Ptr = <OnMesh<F::Arity> as DEntries<Self>>::Vjp;
    const PTR: &'static Self::Ptr = <OnMesh<F::Arity> as DEntries<Self>>::VJP;
}

/// `grad(spmd(F))` w.r.t. argument `K`.
type GradOf<F, const K: usize> = Grad<Spmd<F>, Argnum<K>, NoAux>;

/// `jvp(grad(spmd(F)))`: the gradient and its tangent (a Hessian-vector
/// product), forward over reverse on `DArray`s.
impl<F: DiffFn + Copy, const K: usize> GradJvpFn<Argnum<K>> for Spmd<F>
where
    GradOf<F, K>: DiffFn<Arity = OnMesh<F::Arity>>,
    OnMesh<F::Arity>: DEntries<GradOf<F, K>>,
{
    type Ptr = <OnMesh<F::Arity> as DEntries<GradOf<F, K>>>::Jvp;
    const PTR: &'static Self::Ptr = <OnMesh<F::Arity> as DEntries<GradOf<F, K>>>::JVP;
}

/// `vjp(grad(spmd(F)))`.
impl<F: DiffFn + Copy, const K: usize> GradVjpFn<Argnum<K>> for Spmd<F>
where
    GradOf<F, K>: DiffFn<Arity = OnMesh<F::Arity>>,
    OnMesh<F::Arity>: DEntries<GradOf<F, K>>,
{
    type Ptr = <OnMesh<F::Arity> as DEntries<GradOf<F, K>>>::Vjp;
    const PTR: &'static Self::Ptr = <OnMesh<F::Arity> as DEntries<GradOf<F, K>>>::VJP;
}

macro_rules! on_mesh {
    ($call:ident, $jvp:ident, $vjp:ident, $n:literal; $($a:ident $t:ident $s:ident $i:tt),*; $cts:ty) => {
        fn $call<G: DiffFn<Arity = OnMesh<($($s,)*)>>, $($s: DSlot),*>($($a: &$s::DTy),*) -> DOut<G>
        where
            G::Out: DUser,
        {
            <G::Out as DUser>::user(G::eval::<DArray>(&($($s::darg($a),)*)))
        }
        impl<G: DiffFn<Arity = OnMesh<($($s,)*)>>, $($s: DSlot),*> Caller<G> for OnMesh<($($s,)*)>
        where
            G::Out: DUser,
        {
            type Ptr = fn($(&$s::DTy),*) -> DOut<G>;
            const PTR: &'static Self::Ptr = &($call::<G, $($s),*> as fn($(&$s::DTy),*) -> DOut<G>);
        }
        #[allow(clippy::type_complexity)]
        fn $jvp<'a, G: DiffFn<Arity = OnMesh<($(on_mesh!(@one $a),)*)>, Out = One>>(
            p: ($(on_mesh!(@ref $a),)*),
            t: ($(on_mesh!(@ref $t),)*),
        ) -> (DArray, DArray) {
            let x = ($(Dual::new(p.$i.clone(), Some(t.$i.clone())),)*);
            let y = G::eval::<Dual<DArray>>(&x);
            let tangent = y.tangent_or_zero();
            (y.primal, tangent)
        }
        #[allow(clippy::type_complexity)]
        fn $vjp<G: DiffFn<Arity = OnMesh<($(on_mesh!(@one $a),)*)>, Out = One>>(
            $($a: &DArray),*
        ) -> (DArray, DPullback<DArray, $cts>) {
            let x = ($($a.clone(),)*);
            let (y, pullback) = G::vjp::<DArray>(&x);
            // Cotangents laid out like their arguments, as `grad`'s are.
            (y, Box::new(move |ct: &DArray| {
                like_inputs::<($(on_mesh!(@one $a),)*), DArray>(&x, pullback(ct.clone()), &[])
            }))
        }
        impl<G: DiffFn<Arity = OnMesh<($(on_mesh!(@one $a),)*)>, Out = One>> DEntries<G> for OnMesh<($(on_mesh!(@one $a),)*)> {
            type Jvp = for<'a> fn(($(on_mesh!(@ref $a),)*), ($(on_mesh!(@ref $t),)*)) -> (DArray, DArray);
            const JVP: &'static Self::Jvp = &($jvp::<G> as Self::Jvp);
            type Vjp = for<'a> fn($(on_mesh!(@ref $a)),*) -> (DArray, DPullback<DArray, $cts>);
            const VJP: &'static Self::Vjp = &($vjp::<G> as Self::Vjp);
        }
    };
    (@one $a:ident) => { One };
    (@ref $a:ident) => { &'a DArray };
    (@d $a:ident) => { &DArray };
}

on_mesh!(call1, jvp1, vjp1, 1; a ta S0 0; (DArray,));
on_mesh!(call2, jvp2, vjp2, 2; a ta S0 0, b tb S1 1; (DArray, DArray));
on_mesh!(call3, jvp3, vjp3, 3; a ta S0 0, b tb S1 1, c tc S2 2; (DArray, DArray, DArray));
on_mesh!(call4, jvp4, vjp4, 4; a ta S0 0, b tb S1 1, c tc S2 2, d td S3 3; (DArray, DArray, DArray, DArray));

impl<F, const I: usize> GradFn<Argnum<I>, NoAux> for Spmd<F>
where
    F: DiffFn,
    Self: Copy,
    Grad<Spmd<F>, Argnum<I>, NoAux>: DiffFn<Arity = OnMesh<F::Arity>>,
    OnMesh<F::Arity>: Caller<Grad<Spmd<F>, Argnum<I>, NoAux>>,
{
    type Ptr = <OnMesh<F::Arity> as Caller<Grad<Spmd<F>, Argnum<I>, NoAux>>>::Ptr;
    const PTR: &'static Self::Ptr =
        <OnMesh<F::Arity> as Caller<Grad<Spmd<F>, Argnum<I>, NoAux>>>::PTR;
}

impl<F, const I: usize> ValueAndGradFn<Argnum<I>, NoAux> for Spmd<F>
where
    F: DiffFn,
    Self: Copy,
    ValueAndGrad<Spmd<F>, Argnum<I>, NoAux>: DiffFn<Arity = OnMesh<F::Arity>>,
    OnMesh<F::Arity>: Caller<ValueAndGrad<Spmd<F>, Argnum<I>, NoAux>>,
{
    type Ptr = <OnMesh<F::Arity> as Caller<ValueAndGrad<Spmd<F>, Argnum<I>, NoAux>>>::Ptr;
    const PTR: &'static Self::Ptr =
        <OnMesh<F::Arity> as Caller<ValueAndGrad<Spmd<F>, Argnum<I>, NoAux>>>::PTR;
}

impl<F: DiffFn> std::ops::Deref for Spmd<F>
where
    OnMesh<F::Arity>: Caller<Spmd<F>>,
{
    type Target = <OnMesh<F::Arity> as Caller<Spmd<F>>>::Ptr;
    fn deref(&self) -> &Self::Target {
        <OnMesh<F::Arity> as Caller<Spmd<F>>>::PTR
    }
}
