//! Composable transforms: `vmap`, `jacfwd`, `jacrev`, `hessian`, and
//! nested `grad` of scalar functions — to any depth, resolved at compile
//! time.
//!
//! A function value that implements [`DiffFn`] (every `#[differentiable]`
//! function of one to six arrays returning one array, or of one `&[Array]`
//! returning `vec![..]`, and every transform of such a function) exposes two
//! generic programs: `eval::<V>` and `vjp::<V>`. A transform is a small type
//! whose programs call the inner function's programs at another value type
//! (argument and output shapes: `transform/structure.rs`; the Jacobians and
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

pub use crate::transform::arity::{A1, A2, A3, A4, A5, A6, AList, ArgIndex, Arity, FixedArity};
pub use crate::transform::fixed::{FixedHessian, FixedJac, JacArgnum, JacCall, ScalarJacTier};
use crate::transform::grad::Argnum;
pub use crate::transform::inside::{apply, apply_jvp, apply_jvp_vjp, apply_vjp};
pub(crate) use crate::transform::jacobian::{jacfwd_blocks, jacrev_blocks};
pub use crate::transform::many::{JacMany, ManyCaller, jacfwd_many, jacrev_many};
pub use crate::transform::nested::ScalarFn1;
pub use crate::transform::outer::{ArrayTier, Entries, ScalarTier, Tiered};
pub use crate::transform::structure::{
    ArgIndices, JacOf, Leaves, List, One, Slot, Structure, TreeS, TreeVal, check_cotangents,
    list_skeleton,
};
use crate::{Array, ArrayValue};
use std::marker::PhantomData;
use std::ops::Deref;

/// The argument tuple of `F` at value type `V`.
pub type ArgsOf<F, V> = <<F as DiffFn>::Arity as Arity>::Args<V>;
/// The output of `F` at value type `V` (`V`, `Vec<V>`, or a tree of `V`).
pub type OutOf<F, V> = <<F as DiffFn>::Out as Structure>::Of<V>;
/// The output of `F` as users hold it (`Array`, `Vec<Array>`, or a tree).
pub type UserOf<F> = <<F as DiffFn>::Out as Structure>::User;

/// A differentiable function of arrays, as generic programs. Implemented by
/// `#[differentiable]` for functions of one to six parameters, each an
/// `Array` or a tree of arrays, returning one `Array`, and of one
/// `&[Array]` returning a `vec![..]` of arrays, and by every transform of
/// one.
///
/// ```
/// use nabla::{compose::DiffFn, Array};
///
/// #[nabla::differentiable]
/// fn f(x: &Array) -> Array {
///     (x * x).sum()
/// }
///
/// fn main() {
///     // `f`'s type implements `DiffFn`: its programs run at any value type,
///     // and transforms such as `vmap` compose them.
///     let x = Array::from_vec(vec![1.0f64, 2.0], &[2]);
///     assert_eq!(<f::Function as DiffFn>::eval::<Array>(&(x,)).item(), 5.0);
///     let rows = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]);
///     assert_eq!(nabla::compose::vmap(f)(&rows).to_vec::<f64>(), vec![5.0, 25.0]);
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a composable function of arrays",
    label = "vmap, jacfwd, jacrev, hessian and their nesting need a composable function here",
    note = "composable: #[differentiable] functions of one to six arrays or trees of arrays (#[derive(Tree)], Vec, tuples, &[Array]) returning an array or a pair (value, aux), custom ops, and transforms of them",
    note = "a function with a static parameter (#[nondiff], integers) is not composable: wrap it in a #[differentiable] function of its arrays that passes the static value"
)]
pub trait DiffFn: Copy + 'static {
    /// Its arguments.
    type Arity: Arity;
    /// Its outputs.
    type Out: Structure;
    /// The function at value type `V`.
    ///
    /// ```
    /// use nabla::{compose::DiffFn, Array, Dual};
    ///
    /// #[nabla::differentiable]
    /// fn f(x: &Array) -> Array {
    ///     (x * x).sum()
    /// }
    ///
    /// fn main() {
    ///     let x = Array::from_vec(vec![1.0f64, 2.0], &[2]);
    ///     let t = Array::from_vec(vec![1.0f64, 0.0], &[2]);
    ///     // At `Dual<Array>`, the program carries a tangent: forward mode.
    ///     let y = <f::Function as DiffFn>::eval::<Dual<Array>>(&(Dual::new(x, Some(t)),));
    ///     assert_eq!((y.primal.item(), y.tangent_or_zero().item()), (5.0, 2.0));
    /// }
    /// ```
    fn eval<V: ArrayValue>(x: &ArgsOf<Self, V>) -> OutOf<Self, V>;
    /// The output and the pullback (one cotangent per argument) at `V`.
    ///
    /// ```
    /// use nabla::{compose::DiffFn, Array};
    ///
    /// #[nabla::differentiable]
    /// fn f(x: &Array) -> Array {
    ///     (x * x).sum()
    /// }
    ///
    /// fn main() {
    ///     let x = Array::from_vec(vec![1.0f64, 2.0], &[2]);
    ///     let (y, pullback) = <f::Function as DiffFn>::vjp::<Array>(&(x,));
    ///     assert_eq!(y.item(), 5.0);
    ///     let (g,) = pullback(Array::scalar(1.0f64));
    ///     assert_eq!(g.to_vec::<f64>(), vec![2.0, 4.0]);
    /// }
    /// ```
    #[allow(clippy::type_complexity)]
    fn vjp<V: ArrayValue>(
        x: &ArgsOf<Self, V>,
    ) -> (
        OutOf<Self, V>,
        impl FnOnce(OutOf<Self, V>) -> ArgsOf<Self, V> + use<V, Self>,
    );
    /// [`DiffFn::vjp`] where only the arguments `i` with `want[i]` (or
    /// `i >= want.len()`) need a true cotangent; the others may come back as
    /// zeros, and the work that only they need is skipped (`grad` with
    /// `argnums`, `jacrev` of some arguments). The default computes all.
    ///
    /// ```
    /// use nabla::{compose::DiffFn, Array};
    ///
    /// #[nabla::differentiable]
    /// fn g(a: &Array, b: &Array) -> Array {
    ///     (a * b).sum()
    /// }
    ///
    /// fn main() {
    ///     let a = Array::from_vec(vec![1.0f64, 2.0], &[2]);
    ///     let b = Array::from_vec(vec![3.0f64, 4.0], &[2]);
    ///     // Only `b`'s cotangent is wanted; `a`'s may come back as zeros.
    ///     let (_, pullback) = <g::Function as DiffFn>::vjp_masked::<Array>(&(a, b), &[false, true]);
    ///     let (_, db) = pullback(Array::scalar(1.0f64));
    ///     assert_eq!(db.to_vec::<f64>(), vec![1.0, 2.0]);
    /// }
    /// ```
    #[allow(clippy::type_complexity)]
    fn vjp_masked<V: ArrayValue>(
        x: &ArgsOf<Self, V>,
        want: &[bool],
    ) -> (
        OutOf<Self, V>,
        impl FnOnce(OutOf<Self, V>) -> ArgsOf<Self, V> + use<V, Self>,
    ) {
        let _ = want;
        Self::vjp::<V>(x)
    }
    /// [`DiffFn::vjp_masked`] for callers that need only the outputs'
    /// shapes and dtypes (`jacrev`, `grad`, `hessian`, which discard the
    /// output values). `#[differentiable]` functions skip the statements
    /// whose results reach nothing but the outputs (`sum(sin(x))`: all of
    /// it but `x`), found at compile time; the default runs
    /// [`DiffFn::vjp_masked`].
    ///
    /// ```
    /// use nabla::{compose::DiffFn, Array, DType};
    ///
    /// #[nabla::differentiable]
    /// fn f(x: &Array) -> Array {
    ///     (x * x).sum()
    /// }
    ///
    /// fn main() {
    ///     let x = Array::from_vec(vec![1.0f64, 2.0], &[2]);
    ///     let (spec, pullback) = <f::Function as DiffFn>::vjp_masked_shapes::<Array>(&(x,), &[]);
    ///     assert_eq!((spec.shape.len(), spec.dtype), (0, DType::F64)); // a scalar output
    ///     let (g,) = pullback(Array::scalar(1.0f64));
    ///     assert_eq!(g.to_vec::<f64>(), vec![2.0, 4.0]);
    /// }
    /// ```
    #[allow(clippy::type_complexity)]
    fn vjp_masked_shapes<V: ArrayValue>(
        x: &ArgsOf<Self, V>,
        want: &[bool],
    ) -> (
        SpecsOf<Self>,
        impl FnOnce(OutOf<Self, V>) -> ArgsOf<Self, V> + use<V, Self>,
    ) {
        let (y, pullback) = Self::vjp_masked::<V>(x, want);
        (Self::Out::map(y, |_, y| OutSpec::of(&y)), pullback)
    }
}

/// The shape and dtype of an output (what [`DiffFn::vjp_masked_shapes`]
/// returns instead of its value).
///
/// ```
/// use nabla::{compose::OutSpec, Array, DType};
/// let s = OutSpec::of(&Array::zeros(&[2, 3], DType::F32));
/// assert_eq!((&s.shape[..], s.dtype), (&[2, 3][..], DType::F32));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct OutSpec {
    /// The (per-example) shape.
    pub shape: crate::Shape,
    /// The element type.
    pub dtype: crate::DType,
}

impl OutSpec {
    /// The spec of a value.
    ///
    /// ```
    /// use nabla::{compose::OutSpec, Array, Batched, DType};
    /// let y = Batched::new(Array::zeros(&[4, 3], DType::F32), Some(0)); // a batch of 4
    /// let s = OutSpec::of(&y);
    /// assert_eq!((&s.shape[..], s.dtype), (&[3][..], DType::F32)); // per example
    /// ```
    pub fn of<V: ArrayValue>(y: &V) -> OutSpec {
        OutSpec {
            shape: y.shape_vec(),
            dtype: y.dtype(),
        }
    }
}

/// The output specs of `F`: an [`OutSpec`] per output, in `F`'s structure.
pub type SpecsOf<F> = <<F as DiffFn>::Out as Structure>::Of<OutSpec>;

/// Whether argument `i` is wanted under a [`DiffFn::vjp_masked`] mask.
///
/// ```
/// use nabla::compose::is_wanted;
/// assert!(is_wanted(&[true, false], 0) && !is_wanted(&[true, false], 1));
/// assert!(is_wanted(&[true, false], 2)); // past the end: wanted
/// ```
pub fn is_wanted(want: &[bool], i: usize) -> bool {
    want.get(i).copied().unwrap_or(true)
}

/// Makes a transform of `G` callable as a plain function of arrays.
///
/// ```
/// use nabla::{compose::{vmap, Caller, Vmap, A1}, Array};
///
/// #[nabla::differentiable]
/// fn f(x: &Array) -> Array {
///     (x * x).sum()
/// }
///
/// fn main() {
///     // `vmap(f)` is called through this pointer: `fn(&Array) -> Array`.
///     let call: &fn(&Array) -> Array = <A1 as Caller<Vmap<f::Function>>>::PTR;
///     let rows = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]);
///     assert_eq!(call(&rows).to_vec::<f64>(), vec![5.0, 25.0]);
///     assert_eq!(vmap(f)(&rows).to_vec::<f64>(), vec![5.0, 25.0]);
/// }
/// ```
pub trait Caller<G>: Arity {
    /// `fn(&Array, ..) -> Array` with this arity (a tree argument by
    /// reference, `fn(&[Array]) -> ..` for lists; `Vec<Array>` or a tree
    /// for those outputs).
    type Ptr: Copy + 'static;
    /// `G` evaluated on arrays.
    const PTR: &'static Self::Ptr;
}

macro_rules! caller {
    ($call:ident, $($s:ident $a:ident),*) => {
        fn $call<G: DiffFn<Arity = ($($s,)*)>, $($s: Slot),*>($($a: &$s::Ty),*) -> UserOf<G> {
            G::Out::to_user(G::eval::<Array>(&($($s::arg($a),)*)))
        }
        impl<G: DiffFn<Arity = ($($s,)*)>, $($s: Slot),*> Caller<G> for ($($s,)*) {
            type Ptr = fn($(&$s::Ty),*) -> UserOf<G>;
            const PTR: &'static Self::Ptr = &($call::<G, $($s),*> as fn($(&$s::Ty),*) -> UserOf<G>);
        }
    };
}
caller!(call1, S0 a);
caller!(call2, S0 a, S1 b);
caller!(call3, S0 a, S1 b, S2 c);
caller!(call4, S0 a, S1 b, S2 c, S3 d);
caller!(call5, S0 a, S1 b, S2 c, S3 d, S4 e);
caller!(call6, S0 a, S1 b, S2 c, S3 d, S4 e, S5 f);

fn call_list<G: DiffFn<Arity = AList>>(args: &[Array]) -> UserOf<G> {
    G::Out::to_user(G::eval::<Array>(&args.to_vec()))
}
impl<G: DiffFn<Arity = AList>> Caller<G> for AList {
    type Ptr = fn(&[Array]) -> UserOf<G>;
    const PTR: &'static Self::Ptr = &(call_list::<G> as fn(&[Array]) -> UserOf<G>);
}

/// An axis for `vmap`'s `in_axes`/`out_axes` (negative counts from the end).
///
/// ```
/// use nabla::{compose::{vmap_with, Axis}, Array};
///
/// #[nabla::differentiable]
/// fn total(x: &Array) -> Array {
///     x.sum()
/// }
///
/// fn main() {
///     let x = Array::from_vec(vec![0.0f64, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3]);
///     // What `vmap!(total, in_axes = 1)` expands to: one sum per column.
///     let sums = vmap_with::<(Axis<1>,), Axis<0>, _>(total)(&x);
///     assert_eq!(sums.to_vec::<f64>(), vec![3.0, 5.0, 7.0]);
/// }
/// ```
pub struct Axis<const A: isize>;
/// `None` in `in_axes`: the argument is shared by the whole batch.
///
/// ```
/// use nabla::{compose::{vmap_with, Axis, NoAxis}, Array};
///
/// #[nabla::differentiable]
/// fn score(w: &Array, x: &Array) -> Array {
///     (w * x).sum()
/// }
///
/// fn main() {
///     let w = Array::from_vec(vec![1.0f64, 2.0], &[2]); // shared by the batch
///     let xs = Array::from_vec(vec![1.0f64, 1.0, 2.0, 2.0, 3.0, 3.0], &[3, 2]);
///     // What `vmap!(score, in_axes = (None, 0))` expands to.
///     let s = vmap_with::<(NoAxis, Axis<0>), Axis<0>, _>(score)(&w, &xs);
///     assert_eq!(s.to_vec::<f64>(), vec![3.0, 6.0, 9.0]);
/// }
/// ```
pub struct NoAxis;
/// `in_axes = 0` for every argument (the default).
///
/// ```
/// use nabla::{compose::{vmap_with, AllZero, Axis}, Array};
///
/// #[nabla::differentiable]
/// fn total(x: &Array) -> Array {
///     x.sum()
/// }
///
/// fn main() {
///     let x = Array::from_vec(vec![0.0f64, 1.0, 2.0, 3.0, 4.0, 5.0], &[2, 3]);
///     // `vmap(total)`: every argument mapped over axis 0.
///     let sums = vmap_with::<AllZero, Axis<0>, _>(total)(&x);
///     assert_eq!(sums.to_vec::<f64>(), vec![3.0, 12.0]);
/// }
/// ```
pub struct AllZero;

/// The `in_axes` of a `vmap` for a function of arity `A`, as a type.
///
/// ```
/// use nabla::compose::{AllZero, Axis, InAxes, NoAxis, A2};
/// type Spec = (NoAxis, Axis<-1>); // `in_axes = (None, -1)`
/// assert_eq!((<Spec as InAxes<A2>>::axis(0), <Spec as InAxes<A2>>::axis(1)), (None, Some(-1)));
/// assert_eq!(<AllZero as InAxes<A2>>::axis(1), Some(0));
/// ```
#[diagnostic::on_unimplemented(
    message = "`in_axes` {Self} does not match the function's number of arguments",
    note = "give one entry per argument (an axis or None), or a single axis for all"
)]
pub trait InAxes<A>: 'static {
    /// The (unnormalised) axis of argument `i`, or `None`.
    ///
    /// ```
    /// use nabla::compose::{All, Axis, InAxes, A3};
    /// assert_eq!(<All<Axis<1>> as InAxes<A3>>::axis(2), Some(1)); // `in_axes = 1`
    /// ```
    fn axis(i: usize) -> Option<isize>;
}
impl<A: Arity> InAxes<A> for AllZero {
    fn axis(_: usize) -> Option<isize> {
        Some(0)
    }
}
/// One entry of `in_axes`.
///
/// ```
/// use nabla::compose::{Axis, AxisSpec, NoAxis};
/// assert_eq!(<Axis<-1> as AxisSpec>::AXIS, Some(-1));
/// assert_eq!(<NoAxis as AxisSpec>::AXIS, None);
/// ```
pub trait AxisSpec: 'static {
    /// The axis, or `None`.
    const AXIS: Option<isize>;
}
impl<const A: isize> AxisSpec for Axis<A> {
    const AXIS: Option<isize> = Some(A);
}
impl AxisSpec for NoAxis {
    const AXIS: Option<isize> = None;
}
macro_rules! in_axes_tuple {
    ($($t:ident $s:ident $i:tt),*) => {
        impl<$($t: AxisSpec, $s: Slot),*> InAxes<($($s,)*)> for ($($t,)*) {
            fn axis(i: usize) -> Option<isize> {
                match i {
                    $($i => $t::AXIS,)*
                    _ => panic!("vmap: in_axes has fewer entries than the function has arguments"),
                }
            }
        }
    };
}
in_axes_tuple!(T0 S0 0);
in_axes_tuple!(T0 S0 0, T1 S1 1);
in_axes_tuple!(T0 S0 0, T1 S1 1, T2 S2 2);
in_axes_tuple!(T0 S0 0, T1 S1 1, T2 S2 2, T3 S3 3);
in_axes_tuple!(T0 S0 0, T1 S1 1, T2 S2 2, T3 S3 3, T4 S4 4);
in_axes_tuple!(T0 S0 0, T1 S1 1, T2 S2 2, T3 S3 3, T4 S4 4, T5 S5 5);

/// A single axis for every argument (`in_axes = 1`).
///
/// ```
/// use nabla::{compose::{vmap_with, All, Axis}, Array};
///
/// #[nabla::differentiable]
/// fn dot(a: &Array, b: &Array) -> Array {
///     (a * b).sum()
/// }
///
/// fn main() {
///     let a = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]);
///     // What `vmap!(dot, in_axes = 1)` expands to: both mapped over their columns.
///     let d = vmap_with::<All<Axis<1>>, Axis<0>, _>(dot)(&a, &a);
///     assert_eq!(d.to_vec::<f64>(), vec![10.0, 20.0]);
/// }
/// ```
pub struct All<T>(PhantomData<T>);
impl<A: Arity, T: AxisSpec> InAxes<A> for All<T> {
    fn axis(_: usize) -> Option<isize> {
        T::AXIS
    }
}

/// `vmap(f)`: `f` mapped over `in_axes` of its arguments; the batch axis of
/// the result is `out_axes` (`Axis<0>` by default).
///
/// ```
/// use nabla::{compose::{vmap, Vmap}, Array};
///
/// #[nabla::differentiable]
/// fn total(x: &Array) -> Array {
///     x.sum()
/// }
///
/// fn main() {
///     let v: Vmap<total::Function> = vmap(total);
///     let x = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]);
///     assert_eq!(v(&x).to_vec::<f64>(), vec![3.0, 7.0]);
/// }
/// ```
pub struct Vmap<F, I = AllZero, O = Axis<0>>(pub F, PhantomData<(I, O)>);
/// `jacfwd(f)`: the Jacobian w.r.t. argument `I` by forward mode, shape
/// `out ++ in`.
///
/// ```
/// use nabla::{compose::{jacfwd, Jacfwd}, Array};
///
/// #[nabla::differentiable]
/// fn sq(x: &Array) -> Array {
///     x * x
/// }
///
/// fn main() {
///     let j: Jacfwd<sq::Function> = jacfwd(sq);
///     let x = Array::from_vec(vec![1.0f64, 2.0], &[2]);
///     assert_eq!(j(&x).to_vec::<f64>(), vec![2.0, 0.0, 0.0, 4.0]);
/// }
/// ```
pub struct Jacfwd<F, I = Argnum<0>>(pub F, PhantomData<I>);
/// `jacrev(f)`: the Jacobian w.r.t. argument `I` by reverse mode, shape
/// `out ++ in`.
///
/// ```
/// use nabla::{compose::{jacrev, Jacrev}, Array};
///
/// #[nabla::differentiable]
/// fn sq(x: &Array) -> Array {
///     x * x
/// }
///
/// fn main() {
///     let j: Jacrev<sq::Function> = jacrev(sq);
///     let x = Array::from_vec(vec![1.0f64, 2.0], &[2]);
///     assert_eq!(j(&x).to_vec::<f64>(), vec![2.0, 0.0, 0.0, 4.0]);
/// }
/// ```
pub struct Jacrev<F, I = Argnum<0>>(pub F, PhantomData<I>);

macro_rules! value_type {
    ($t:ident<$($p:ident),*>) => {
        impl<F: Copy, $($p),*> Clone for $t<F, $($p),*> {
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<F: Copy, $($p),*> Copy for $t<F, $($p),*> {}
    };
}
value_type!(Vmap<I, O>);
value_type!(Jacfwd<I>);
value_type!(Jacrev<I>);

impl<F: Copy, I, O> Deref for Vmap<F, I, O>
where
    Self: DiffFn,
    <Self as DiffFn>::Arity: Caller<Self>,
{
    type Target = <<Self as DiffFn>::Arity as Caller<Self>>::Ptr;
    fn deref(&self) -> &Self::Target {
        <<Self as DiffFn>::Arity as Caller<Self>>::PTR
    }
}

/// `jacfwd(f)` and `jacrev(f)` are called through their function's tier
/// (`transform/fixed.rs`): functions of arrays through their composable
/// programs, functions of floats through the Jacobian entry points
/// `#[differentiable]` writes for them.
macro_rules! jacobian_deref {
    ($($t:ident),*) => {$(
        impl<F: Copy + Tiered, I> Deref for $t<F, I>
        where
            (F::Tier, Self): JacCall,
        {
            type Target = <(F::Tier, Self) as JacCall>::Ptr;
            fn deref(&self) -> &Self::Target {
                <(F::Tier, Self) as JacCall>::PTR
            }
        }
        impl<F: Copy, I> JacCall for (ArrayTier, $t<F, I>)
        where
            $t<F, I>: DiffFn,
            <$t<F, I> as DiffFn>::Arity: Caller<$t<F, I>>,
        {
            type Ptr = <<$t<F, I> as DiffFn>::Arity as Caller<$t<F, I>>>::Ptr;
            const PTR: &'static Self::Ptr = <<$t<F, I> as DiffFn>::Arity as Caller<$t<F, I>>>::PTR;
        }
    )*};
}
jacobian_deref!(Jacfwd, Jacrev);

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
