//! Composable transforms: `vmap`, `jacfwd`, `jacrev`, `hessian`, and
//! nested `grad` of scalar functions — to any depth, resolved at compile
//! time.
//!
//! A function value that implements [`DiffFn1`] (every `#[differentiable]`
//! function of one array returning one array, and every transform of such a
//! function) exposes two generic programs: `eval::<V>` and `vjp::<V>`. A
//! transform is a small type whose programs call the inner function's
//! programs at another value type:
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
//! use nabla_runtime::{compose, Array, ArrayValue, DType, Value};
//!
//! #[nabla_macros::differentiable(crate = nabla_runtime)]
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

pub use crate::compose_many::{JacMany, ManyCaller, jacfwd_many, jacrev_many};
use crate::transforms::Argnum;
use crate::{Array, ArrayValue, Batched, DType, Dual, Value};
use std::marker::PhantomData;
use std::ops::Deref;

/// The number of array arguments of a composable function, as a type:
/// [`A1`] … [`A6`]. `Args<W>` is the tuple of arguments at value type `W`.
pub trait Arity: 'static {
    /// `(W,)`, `(W, W)`, …
    type Args<W: Clone>: Clone;
    /// The number of arguments.
    const N: usize;
    /// Maps every argument (with its index).
    fn map<W: Clone, U: Clone>(x: &Self::Args<W>, f: impl FnMut(usize, &W) -> U) -> Self::Args<U>;
    /// Argument `i`.
    fn get<W: Clone>(x: &Self::Args<W>, i: usize) -> &W;
    /// The tuple whose argument `i` is `f(i)`.
    fn from_fn<W: Clone>(f: impl FnMut(usize) -> W) -> Self::Args<W>;
}

macro_rules! arity {
    ($name:ident, $n:literal, $($i:tt),*) => {
        #[doc = concat!("Functions of ", stringify!($n), " array argument(s).")]
        #[derive(Clone, Copy, Debug)]
        pub struct $name;
        impl Arity for $name {
            type Args<W: Clone> = ($(arity!(@w $i W),)*);
            const N: usize = $n;
            fn map<W: Clone, U: Clone>(x: &Self::Args<W>, mut f: impl FnMut(usize, &W) -> U) -> Self::Args<U> {
                ($(f($i, &x.$i),)*)
            }
            fn from_fn<W: Clone>(mut f: impl FnMut(usize) -> W) -> Self::Args<W> {
                ($(f($i),)*)
            }
            fn get<W: Clone>(x: &Self::Args<W>, i: usize) -> &W {
                match i {
                    $($i => &x.$i,)*
                    _ => panic!("argument {i} is out of range for a function of {} arguments", $n),
                }
            }
        }
    };
    (@w $i:tt $w:ident) => { $w };
}
arity!(A1, 1, 0);
arity!(A2, 2, 0, 1);
arity!(A3, 3, 0, 1, 2);
arity!(A4, 4, 0, 1, 2, 3);
arity!(A5, 5, 0, 1, 2, 3, 4);
arity!(A6, 6, 0, 1, 2, 3, 4, 5);

/// The argument tuple of `F` at value type `V`.
pub type ArgsOf<F, V> = <<F as DiffFn>::Arity as Arity>::Args<V>;

/// A differentiable function of arrays returning one array, as generic
/// programs. Implemented by `#[differentiable]` for such functions (one to
/// six `Array` parameters) and by every transform of one.
pub trait DiffFn: Copy + 'static {
    /// How many arguments it takes.
    type Arity: Arity;
    /// The function at value type `V`.
    fn eval<V: ArrayValue>(x: &ArgsOf<Self, V>) -> V;
    /// The output and the pullback (one cotangent per argument) at `V`.
    fn vjp<V: ArrayValue>(
        x: &ArgsOf<Self, V>,
    ) -> (V, impl FnOnce(V) -> ArgsOf<Self, V> + use<V, Self>);
}

/// Makes a transform of `G` callable as a plain function of arrays.
pub trait Caller<G>: Arity {
    /// `fn(&Array, ..) -> Array` with this arity.
    type Ptr: 'static;
    /// `G` evaluated on arrays.
    const PTR: &'static Self::Ptr;
}

macro_rules! caller {
    ($name:ident, $call:ident, $($a:ident),*) => {
        fn $call<G: DiffFn<Arity = $name>>($($a: &Array),*) -> Array {
            G::eval::<Array>(&($($a.clone(),)*))
        }
        impl<G: DiffFn<Arity = $name>> Caller<G> for $name {
            type Ptr = fn($(caller!(@r $a)),*) -> Array;
            const PTR: &'static Self::Ptr = &($call::<G> as fn($(caller!(@r $a)),*) -> Array);
        }
    };
    (@r $a:ident) => { &Array };
}
caller!(A1, call1, a);
caller!(A2, call2, a, b);
caller!(A3, call3, a, b, c);
caller!(A4, call4, a, b, c, d);
caller!(A5, call5, a, b, c, d, e);
caller!(A6, call6, a, b, c, d, e, f);

/// An axis for `vmap`'s `in_axes`/`out_axes` (negative counts from the end).
pub struct Axis<const A: isize>;
/// `None` in `in_axes`: the argument is shared by the whole batch.
pub struct NoAxis;
/// `in_axes = 0` for every argument (the default).
pub struct AllZero;

/// The `in_axes` of a `vmap` for a function of arity `A`, as a type.
#[diagnostic::on_unimplemented(
    message = "`in_axes` {Self} does not match the function's number of arguments",
    note = "give one entry per argument (an axis or None), or a single axis for all"
)]
pub trait InAxes<A>: 'static {
    /// The (unnormalised) axis of argument `i`, or `None`.
    fn axis(i: usize) -> Option<isize>;
}
impl<A: Arity> InAxes<A> for AllZero {
    fn axis(_: usize) -> Option<isize> {
        Some(0)
    }
}
/// One entry of `in_axes`.
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
    ($a:ident: $($t:ident $i:tt),*) => {
        impl<$($t: AxisSpec),*> InAxes<$a> for ($($t,)*) {
            fn axis(i: usize) -> Option<isize> {
                match i {
                    $($i => $t::AXIS,)*
                    _ => panic!("vmap: in_axes has fewer entries than the function has arguments"),
                }
            }
        }
    };
}
in_axes_tuple!(A1: T0 0);
in_axes_tuple!(A2: T0 0, T1 1);
in_axes_tuple!(A3: T0 0, T1 1, T2 2);
in_axes_tuple!(A4: T0 0, T1 1, T2 2, T3 3);
in_axes_tuple!(A5: T0 0, T1 1, T2 2, T3 3, T4 4);
in_axes_tuple!(A6: T0 0, T1 1, T2 2, T3 3, T4 4, T5 5);

/// A single axis for every argument (`in_axes = 1`).
pub struct All<T>(PhantomData<T>);
impl<A: Arity, T: AxisSpec> InAxes<A> for All<T> {
    fn axis(_: usize) -> Option<isize> {
        T::AXIS
    }
}

/// `vmap(f)`: `f` mapped over `in_axes` of its arguments; the batch axis of
/// the result is `out_axes` (`Axis<0>` by default).
pub struct Vmap<F, I = AllZero, O = Axis<0>>(pub F, PhantomData<(I, O)>);
/// `jacfwd(f)`: the Jacobian w.r.t. argument `I` by forward mode, shape
/// `out ++ in`.
pub struct Jacfwd<F, I = Argnum<0>>(pub F, PhantomData<I>);
/// `jacrev(f)`: the Jacobian w.r.t. argument `I` by reverse mode, shape
/// `out ++ in`.
pub struct Jacrev<F, I = Argnum<0>>(pub F, PhantomData<I>);

macro_rules! value_type {
    ($t:ident<$($p:ident),*>) => {
        impl<F: Copy, $($p),*> Clone for $t<F, $($p),*> {
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<F: Copy, $($p),*> Copy for $t<F, $($p),*> {}
        impl<F: Copy, $($p),*> Deref for $t<F, $($p),*>
        where
            Self: DiffFn,
            <Self as DiffFn>::Arity: Caller<Self>,
        {
            type Target = <<Self as DiffFn>::Arity as Caller<Self>>::Ptr;
            fn deref(&self) -> &Self::Target {
                <<Self as DiffFn>::Arity as Caller<Self>>::PTR
            }
        }
    };
}
value_type!(Vmap<I, O>);
value_type!(Jacfwd<I>);
value_type!(Jacrev<I>);

/// Maps `f` over axis 0 of every argument.
pub fn vmap<F: DiffFn>(f: F) -> Vmap<F> {
    Vmap(f, PhantomData)
}

/// `vmap` with explicit `in_axes` and `out_axes` (what `vmap!` expands to).
pub fn vmap_with<I: InAxes<F::Arity>, O: AxisSpec, F: DiffFn>(f: F) -> Vmap<F, I, O> {
    Vmap(f, PhantomData)
}

/// The Jacobian of `f` w.r.t. its first argument, by forward mode.
pub fn jacfwd<F: DiffFn>(f: F) -> Jacfwd<F> {
    Jacfwd(f, PhantomData)
}

/// `jacfwd` w.r.t. argument `I` (what `jacfwd!(f, argnums = i)` expands to).
pub fn jacfwd_with<I: ArgIndex<F::Arity>, F: DiffFn>(f: F) -> Jacfwd<F, I> {
    Jacfwd(f, PhantomData)
}

/// The Jacobian of `f` w.r.t. its first argument, by reverse mode.
pub fn jacrev<F: DiffFn>(f: F) -> Jacrev<F> {
    Jacrev(f, PhantomData)
}

/// `jacrev` w.r.t. argument `I`.
pub fn jacrev_with<I: ArgIndex<F::Arity>, F: DiffFn>(f: F) -> Jacrev<F, I> {
    Jacrev(f, PhantomData)
}

/// The Hessian w.r.t. the first argument: `jacfwd(jacrev(f))`.
pub fn hessian<F: DiffFn>(f: F) -> Jacfwd<Jacrev<F>> {
    Jacfwd(Jacrev(f, PhantomData), PhantomData)
}

/// The Hessian w.r.t. argument `I`.
pub fn hessian_with<I: ArgIndex<F::Arity>, F: DiffFn>(f: F) -> Jacfwd<Jacrev<F, I>, I> {
    Jacfwd(Jacrev(f, PhantomData), PhantomData)
}

#[track_caller]
fn norm_in_axis(op: &str, axis: isize, ndim: usize) -> usize {
    crate::array::norm_axis(op, axis, ndim)
}

/// Batches the arguments of `F` per `I`; returns them and the batch size.
#[track_caller]
fn batch_args<F: DiffFn, I: InAxes<F::Arity>, V: ArrayValue>(
    x: &ArgsOf<F, V>,
) -> (ArgsOf<F, Batched<V>>, usize) {
    let mut size: Option<(usize, usize)> = None;
    for i in 0..<F::Arity as Arity>::N {
        if let Some(a) = I::axis(i) {
            let s = <F::Arity as Arity>::get(x, i).shape_vec();
            let ax = norm_in_axis("vmap", a, s.len());
            match size {
                None => size = Some((i, s[ax])),
                Some((j, n)) if n != s[ax] => panic!(
                    "vmap: mapped axes have different sizes: argument {j} has {n}, argument {i} has {}; every mapped argument needs the same batch size",
                    s[ax]
                ),
                _ => {}
            }
        }
    }
    let Some((_, n)) = size else {
        panic!("vmap: in_axes maps no argument; give at least one argument an axis");
    };
    let b = <F::Arity as Arity>::map(x, |i, v: &V| {
        let ax = I::axis(i).map(|a| norm_in_axis("vmap", a, v.shape_vec().len()));
        Batched::new(v.clone(), ax)
    });
    (b, n)
}

fn out_axis<O: AxisSpec, V: ArrayValue>(y: &Batched<V>) -> usize {
    let a = O::AXIS.unwrap_or(0);
    norm_in_axis("vmap (out_axes)", a, y.shape_vec().len() + 1)
}

impl<F: DiffFn, I: InAxes<F::Arity>, O: AxisSpec> DiffFn for Vmap<F, I, O> {
    type Arity = F::Arity;
    fn eval<V: ArrayValue>(x: &ArgsOf<Self, V>) -> V {
        let (b, n) = batch_args::<F, I, V>(x);
        let y = F::eval::<Batched<V>>(&b);
        y.materialize(n, out_axis::<O, V>(&y))
    }
    fn vjp<V: ArrayValue>(
        x: &ArgsOf<Self, V>,
    ) -> (V, impl FnOnce(V) -> ArgsOf<Self, V> + use<V, F, I, O>) {
        let (b, n) = batch_args::<F, I, V>(x);
        let (y, pullback) = F::vjp::<Batched<V>>(&b);
        let oa = out_axis::<O, V>(&y);
        let axes = <F::Arity as Arity>::map(&b, |_, v: &Batched<V>| v.bdim);
        (y.materialize(n, oa), move |ct: V| {
            let cts = pullback(Batched::new(ct, Some(oa)));
            <F::Arity as Arity>::map(&cts, |i, c: &Batched<V>| {
                match (<F::Arity as Arity>::get(&axes, i), c.bdim) {
                    // A mapped argument: its cotangent carries the batch axis.
                    (Some(a), _) => c.materialize(n, *a),
                    // A shared argument: the batch's contributions add up.
                    (None, Some(_)) => c.materialize(n, 0).sum_axes(&[0], false),
                    (None, None) => c.value.clone(),
                }
            })
        })
    }
}

fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// `n` one-hot rows shaped `[n, *shape]`, as a constant of `like`'s kind.
fn basis<V: ArrayValue>(like: &V, shape: &[usize]) -> V {
    let n = numel(shape);
    let mut s = vec![n];
    s.extend_from_slice(shape);
    like.lift(&Array::eye(n, DType::F64).reshape(&s))
}

/// `[*a, *b]`.
fn cat(a: &[usize], b: &[usize]) -> Vec<usize> {
    a.iter().chain(b).copied().collect()
}

/// `vjp` of `x ↦ ∂f/∂x_k` at cotangent `ct` (shape `out ++ in_k`): for every
/// argument `j`, `Σ_o ∂²f_o/∂x_j∂x_k · ct[o, :]`, by forward-over-reverse
/// with one-hot cotangents and the rows of `ct` as tangents of `x_k`,
/// batched over `o`.
fn jacobian_vjp<F: DiffFn, V: ArrayValue>(
    x: &ArgsOf<F, V>,
    k: usize,
    out_shape: &[usize],
    ct: V,
) -> ArgsOf<F, V> {
    let xk = <F::Arity as Arity>::get(x, k).clone();
    let xs = xk.shape_vec();
    let m = numel(out_shape);
    let rows = ct.reshape(&cat(&[m], &xs));
    let xd = <F::Arity as Arity>::map(x, |i, v: &V| {
        let t = (i == k).then(|| Batched::new(rows.clone(), Some(0)));
        Dual::new(Batched::unbatched(v.clone()), t)
    });
    let (_, pullback) = F::vjp::<Dual<Batched<V>>>(&xd);
    let onehot = Dual::constant(Batched::new(basis(&xk, out_shape), Some(0)));
    let g = pullback(onehot);
    <F::Arity as Arity>::map(&g, |i, d: &Dual<Batched<V>>| {
        let shape = <F::Arity as Arity>::get(x, i).shape_vec();
        let t = d.tangent_or_zero();
        if t.bdim.is_some() {
            t.materialize(m, 0).sum_axes(&[0], false).reshape(&shape)
        } else {
            t.value.clone()
        }
    })
}

/// The argument index of an `Argnum`, for a function of arity `A`.
#[diagnostic::on_unimplemented(
    message = "`argnums` {Self} is out of range for this function",
    note = "argnums indexes the function's array arguments from 0"
)]
pub trait ArgIndex<A>: 'static {
    /// The index.
    const I: usize;
}
macro_rules! arg_index {
    ($a:ident: $($i:literal),*) => {
        $(impl ArgIndex<$a> for Argnum<$i> {
            const I: usize = $i;
        })*
    };
}
arg_index!(A1: 0);
arg_index!(A2: 0, 1);
arg_index!(A3: 0, 1, 2);
arg_index!(A4: 0, 1, 2, 3);
arg_index!(A5: 0, 1, 2, 3, 4);
arg_index!(A6: 0, 1, 2, 3, 4, 5);

/// The Jacobians of `f` w.r.t. the arguments in `wanted` (shape
/// `out ++ in_i`), all from one reverse pass over the cotangent basis;
/// `None` for the others.
pub(crate) fn jacrev_blocks<F: DiffFn, V: ArrayValue>(
    x: &ArgsOf<F, V>,
    wanted: &[usize],
) -> Vec<Option<V>> {
    let b = <F::Arity as Arity>::map(x, |_, v: &V| Batched::unbatched(v.clone()));
    let (y, pullback) = F::vjp::<Batched<V>>(&b);
    let ys = y.shape_vec();
    let m = numel(&ys);
    let like = <F::Arity as Arity>::get(x, wanted[0]);
    let cts = pullback(Batched::new(basis(like, &ys), Some(0)));
    (0..<F::Arity as Arity>::N)
        .map(|i| {
            wanted.contains(&i).then(|| {
                let xs = <F::Arity as Arity>::get(x, i).shape_vec();
                <F::Arity as Arity>::get(&cts, i)
                    .materialize(m, 0)
                    .reshape(&cat(&ys, &xs))
            })
        })
        .collect()
}

/// The Jacobian of `f` w.r.t. argument `k` by one forward pass over a
/// tangent basis on a batch axis.
pub(crate) fn jacfwd_block<F: DiffFn, V: ArrayValue>(x: &ArgsOf<F, V>, k: usize) -> V {
    let xk = <F::Arity as Arity>::get(x, k);
    let xs = xk.shape_vec();
    let n = numel(&xs);
    let tangent = Batched::new(basis(xk, &xs), Some(0));
    let xd = <F::Arity as Arity>::map(x, |i, v: &V| {
        Dual::new(
            Batched::unbatched(v.clone()),
            (i == k).then(|| tangent.clone()),
        )
    });
    let t = F::eval::<Dual<Batched<V>>>(&xd).tangent_or_zero();
    let ys = t.shape_vec();
    t.materialize(n, ys.len()).reshape(&cat(&ys, &xs))
}

impl<F: DiffFn, I: ArgIndex<F::Arity>> DiffFn for Jacrev<F, I> {
    type Arity = F::Arity;
    fn eval<V: ArrayValue>(x: &ArgsOf<Self, V>) -> V {
        let mut blocks = jacrev_blocks::<F, V>(x, &[I::I]);
        blocks.swap_remove(I::I).expect("the wanted block")
    }
    fn vjp<V: ArrayValue>(
        x: &ArgsOf<Self, V>,
    ) -> (V, impl FnOnce(V) -> ArgsOf<Self, V> + use<V, F, I>) {
        let j = Self::eval::<V>(x);
        let n = <F::Arity as Arity>::get(x, I::I).shape_vec().len();
        let out_shape = j.shape_vec()[..j.shape_vec().len() - n].to_vec();
        let x = x.clone();
        (j, move |ct: V| {
            jacobian_vjp::<F, V>(&x, I::I, &out_shape, ct)
        })
    }
}

impl<F: DiffFn, I: ArgIndex<F::Arity>> DiffFn for Jacfwd<F, I> {
    type Arity = F::Arity;
    fn eval<V: ArrayValue>(x: &ArgsOf<Self, V>) -> V {
        jacfwd_block::<F, V>(x, I::I)
    }
    fn vjp<V: ArrayValue>(
        x: &ArgsOf<Self, V>,
    ) -> (V, impl FnOnce(V) -> ArgsOf<Self, V> + use<V, F, I>) {
        let j = Self::eval::<V>(x);
        let n = <F::Arity as Arity>::get(x, I::I).shape_vec().len();
        let out_shape = j.shape_vec()[..j.shape_vec().len() - n].to_vec();
        let x = x.clone();
        (j, move |ct: V| {
            jacobian_vjp::<F, V>(&x, I::I, &out_shape, ct)
        })
    }
}

/// `grad(f)` of a scalar-valued array function is composable too: it is
/// the Jacobian of a function with a scalar output.
impl<F: DiffFn, const I: usize> DiffFn
    for crate::transforms::Grad<F, Argnum<I>, crate::transforms::NoAux>
where
    Argnum<I>: ArgIndex<F::Arity>,
{
    type Arity = F::Arity;
    fn eval<V: ArrayValue>(x: &ArgsOf<Self, V>) -> V {
        let (y, pullback) = F::vjp::<V>(x);
        if !y.shape_vec().is_empty() && numel(&y.shape_vec()) != 1 {
            panic!(
                "grad: the function returns shape {:?}, but grad needs a scalar output; reduce it or use jacrev",
                y.shape_vec()
            );
        }
        let cts = pullback(y.ones_like());
        <F::Arity as Arity>::get(&cts, I).clone()
    }
    fn vjp<V: ArrayValue>(
        x: &ArgsOf<Self, V>,
    ) -> (V, impl FnOnce(V) -> ArgsOf<Self, V> + use<V, F, I>) {
        let g = Self::eval::<V>(x);
        let x = x.clone();
        (g, move |ct: V| jacobian_vjp::<F, V>(&x, I, &[], ct))
    }
}

/// A differentiable function of one float returning one float, as generic
/// programs (scalar-only `#[differentiable]` functions of one argument, and
/// their gradients). `grad` of such a function is again one, so
/// `grad(grad(grad(f)))` works.
pub trait ScalarFn1: Copy + 'static {
    /// `f32` or `f64`.
    type S: Value + Copy + 'static;
    /// The function at value type `V`.
    fn eval<V: Value>(x: &V) -> V;
    /// The output and the pullback at value type `V`.
    fn vjp<V: Value>(x: &V) -> (V, impl FnOnce(V) -> V + use<V, Self>);
}

use crate::transforms::{Grad, GradFn, NoAux};

impl<F: ScalarFn1> ScalarFn1 for Grad<F, Argnum<0>, NoAux> {
    type S = F::S;
    fn eval<V: Value>(x: &V) -> V {
        let (y, pullback) = F::vjp::<V>(x);
        pullback(y.ones_like())
    }
    fn vjp<V: Value>(x: &V) -> (V, impl FnOnce(V) -> V + use<V, F>) {
        let g = Self::eval::<V>(x);
        let x = x.clone();
        // f'' is symmetric (1×1): vjp of f' is forward-over-reverse.
        (g, move |ct: V| {
            let (y, pullback) = F::vjp::<Dual<V>>(&Dual::new(x, Some(ct)));
            pullback(Dual::constant(y.primal.ones_like())).tangent_or_zero()
        })
    }
}

fn scalar_grad_entry<G: ScalarFn1>(x: G::S) -> G::S {
    let (y, pullback) = G::vjp::<G::S>(&x);
    pullback(y.ones_like())
}

impl<F: ScalarFn1> GradFn<Argnum<0>, NoAux> for Grad<F, Argnum<0>, NoAux> {
    type Ptr = fn(F::S) -> F::S;
    const PTR: &'static Self::Ptr = &(scalar_grad_entry::<Self> as fn(F::S) -> F::S);
}
