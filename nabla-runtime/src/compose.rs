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

/// The arguments of a composable function, as a type: a fixed number of
/// arrays ([`A1`] … [`A6`], `Args<W>` a tuple) or a list of run-time length
/// ([`AList`], `Args<W> = Vec<W>`, for `fn f(args: &[Array])`).
pub trait Arity: 'static {
    /// `(W,)`, `(W, W)`, …, or `Vec<W>`.
    type Args<W: Clone>: Clone;
    /// The structure of a Jacobian w.r.t. one argument, for outputs `O`:
    /// `O` when the argument is one array, a [`List`] of blocks when it is
    /// a list of arrays.
    type Jac<O: Structure>: Structure;
    /// The number of arrays.
    fn len<W: Clone>(x: &Self::Args<W>) -> usize;
    /// Maps every argument (with its index).
    fn map<W: Clone, U: Clone>(x: &Self::Args<W>, f: impl FnMut(usize, &W) -> U) -> Self::Args<U>;
    /// Array `i`.
    fn get<W: Clone>(x: &Self::Args<W>, i: usize) -> &W;
    /// The arrays that `argnums = k` stands for (`[k]`, or the whole list).
    fn arg_leaves<W: Clone>(x: &Self::Args<W>, k: usize) -> Vec<usize>;
}

/// A fixed number of array arguments ([`A1`] … [`A6`]).
///
/// ```
/// use nabla_runtime::compose::{A3, FixedArity};
/// assert_eq!(A3::N, 3);
/// assert_eq!(A3::from_fn(|i| i * 10), (0, 10, 20));
/// ```
pub trait FixedArity: Arity {
    /// The number of arguments.
    const N: usize;
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
            type Jac<O: Structure> = O;
            fn len<W: Clone>(_: &Self::Args<W>) -> usize {
                $n
            }
            fn map<W: Clone, U: Clone>(x: &Self::Args<W>, mut f: impl FnMut(usize, &W) -> U) -> Self::Args<U> {
                ($(f($i, &x.$i),)*)
            }
            fn get<W: Clone>(x: &Self::Args<W>, i: usize) -> &W {
                match i {
                    $($i => &x.$i,)*
                    _ => panic!("argument {i} is out of range for a function of {} arguments", $n),
                }
            }
            fn arg_leaves<W: Clone>(_: &Self::Args<W>, k: usize) -> Vec<usize> {
                vec![k]
            }
        }
        impl FixedArity for $name {
            const N: usize = $n;
            fn from_fn<W: Clone>(mut f: impl FnMut(usize) -> W) -> Self::Args<W> {
                ($(f($i),)*)
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

/// Functions of one list of arrays (`fn f(args: &[Array]) -> ..`), the
/// seed's form. `argnums = 0` is the whole list: a Jacobian is a [`List`]
/// of blocks, one per (output, input array), output-major.
///
/// ```
/// use nabla_runtime::compose::{AList, Arity};
/// let args = vec![1.0, 2.0, 3.0];
/// assert_eq!(AList::len(&args), 3);
/// assert_eq!(AList::arg_leaves(&args, 0), vec![0, 1, 2]); // the whole list
/// ```
#[derive(Clone, Copy, Debug)]
pub struct AList;
impl Arity for AList {
    type Args<W: Clone> = Vec<W>;
    type Jac<O: Structure> = List;
    fn len<W: Clone>(x: &Vec<W>) -> usize {
        x.len()
    }
    fn map<W: Clone, U: Clone>(x: &Vec<W>, mut f: impl FnMut(usize, &W) -> U) -> Vec<U> {
        x.iter().enumerate().map(|(i, w)| f(i, w)).collect()
    }
    #[track_caller]
    fn get<W: Clone>(x: &Vec<W>, i: usize) -> &W {
        x.get(i)
            .unwrap_or_else(|| panic!("array {i} is out of range for a list of {} arrays", x.len()))
    }
    fn arg_leaves<W: Clone>(x: &Vec<W>, _: usize) -> Vec<usize> {
        (0..x.len()).collect()
    }
}

/// The outputs of a composable function: one array ([`One`]) or a list of
/// arrays ([`List`], `Vec<W>`).
///
/// ```
/// use nabla_runtime::compose::{List, One, Structure};
/// assert_eq!(One::map(2.0, |_, x| x * 3.0), 6.0);
/// assert_eq!(List::map(vec![1.0, 2.0], |i, x| x + i as f64), vec![1.0, 3.0]);
/// assert_eq!(One::leaves(5), vec![5]);
/// ```
pub trait Structure: 'static {
    /// `W` or `Vec<W>`.
    type Of<W: Clone>: Clone;
    /// The arrays, in order.
    fn leaves<W: Clone>(x: Self::Of<W>) -> Vec<W>;
    /// Built from its arrays.
    fn from_leaves<W: Clone>(leaves: Vec<W>) -> Self::Of<W>;
    /// Maps every array (with its index), keeping the structure.
    fn map<W: Clone, U: Clone>(x: Self::Of<W>, f: impl FnMut(usize, W) -> U) -> Self::Of<U>;
}

/// One output array.
#[derive(Clone, Copy, Debug)]
pub struct One;
impl Structure for One {
    type Of<W: Clone> = W;
    fn leaves<W: Clone>(x: W) -> Vec<W> {
        vec![x]
    }
    fn from_leaves<W: Clone>(leaves: Vec<W>) -> W {
        let n = leaves.len();
        let mut it = leaves.into_iter();
        match (it.next(), n) {
            (Some(w), 1) => w,
            _ => panic!("expected one array, got {n}"),
        }
    }
    fn map<W: Clone, U: Clone>(x: W, mut f: impl FnMut(usize, W) -> U) -> U {
        f(0, x)
    }
}

/// A list of output arrays (`Vec<Array>`).
#[derive(Clone, Copy, Debug)]
pub struct List;
impl Structure for List {
    type Of<W: Clone> = Vec<W>;
    fn leaves<W: Clone>(x: Vec<W>) -> Vec<W> {
        x
    }
    fn from_leaves<W: Clone>(leaves: Vec<W>) -> Vec<W> {
        leaves
    }
    fn map<W: Clone, U: Clone>(x: Vec<W>, mut f: impl FnMut(usize, W) -> U) -> Vec<U> {
        x.into_iter().enumerate().map(|(i, w)| f(i, w)).collect()
    }
}

/// The argument tuple of `F` at value type `V`.
pub type ArgsOf<F, V> = <<F as DiffFn>::Arity as Arity>::Args<V>;
/// The output of `F` at value type `V` (`V`, or `Vec<V>`).
pub type OutOf<F, V> = <<F as DiffFn>::Out as Structure>::Of<V>;

/// A differentiable function of arrays, as generic programs. Implemented by
/// `#[differentiable]` for functions of one to six `Array` parameters
/// returning one `Array`, and of one `&[Array]` returning a `vec![..]` of
/// arrays, and by every transform of one.
pub trait DiffFn: Copy + 'static {
    /// Its arguments.
    type Arity: Arity;
    /// Its outputs.
    type Out: Structure;
    /// The function at value type `V`.
    fn eval<V: ArrayValue>(x: &ArgsOf<Self, V>) -> OutOf<Self, V>;
    /// The output and the pullback (one cotangent per argument) at `V`.
    #[allow(clippy::type_complexity)]
    fn vjp<V: ArrayValue>(
        x: &ArgsOf<Self, V>,
    ) -> (
        OutOf<Self, V>,
        impl FnOnce(OutOf<Self, V>) -> ArgsOf<Self, V> + use<V, Self>,
    );
}

/// Makes a transform of `G` callable as a plain function of arrays.
pub trait Caller<G>: Arity {
    /// `fn(&Array, ..) -> Array` with this arity (`fn(&[Array]) -> ..` for
    /// lists; `Vec<Array>` results for list outputs).
    type Ptr: 'static;
    /// `G` evaluated on arrays.
    const PTR: &'static Self::Ptr;
}

macro_rules! caller {
    ($name:ident, $call:ident, $($a:ident),*) => {
        fn $call<G: DiffFn<Arity = $name>>($($a: &Array),*) -> OutOf<G, Array> {
            G::eval::<Array>(&($($a.clone(),)*))
        }
        impl<G: DiffFn<Arity = $name>> Caller<G> for $name {
            type Ptr = fn($(caller!(@r $a)),*) -> OutOf<G, Array>;
            const PTR: &'static Self::Ptr = &($call::<G> as fn($(caller!(@r $a)),*) -> OutOf<G, Array>);
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

fn call_list<G: DiffFn<Arity = AList>>(args: &[Array]) -> OutOf<G, Array> {
    G::eval::<Array>(&args.to_vec())
}
impl<G: DiffFn<Arity = AList>> Caller<G> for AList {
    type Ptr = fn(&[Array]) -> OutOf<G, Array>;
    const PTR: &'static Self::Ptr = &(call_list::<G> as fn(&[Array]) -> OutOf<G, Array>);
}

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
    for i in 0..<F::Arity as Arity>::len(x) {
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
    type Out = F::Out;
    fn eval<V: ArrayValue>(x: &ArgsOf<Self, V>) -> OutOf<Self, V> {
        let (b, n) = batch_args::<F, I, V>(x);
        F::Out::map(F::eval::<Batched<V>>(&b), |_, y| {
            y.materialize(n, out_axis::<O, V>(&y))
        })
    }
    fn vjp<V: ArrayValue>(
        x: &ArgsOf<Self, V>,
    ) -> (
        OutOf<Self, V>,
        impl FnOnce(OutOf<Self, V>) -> ArgsOf<Self, V> + use<V, F, I, O>,
    ) {
        let (b, n) = batch_args::<F, I, V>(x);
        let (y, pullback) = F::vjp::<Batched<V>>(&b);
        // The output axis of every output (one entry for `One`).
        let mut oas = Vec::new();
        let out = F::Out::map(y, |_, y| {
            let oa = out_axis::<O, V>(&y);
            oas.push(oa);
            y.materialize(n, oa)
        });
        let axes = <F::Arity as Arity>::map(&b, |_, v: &Batched<V>| v.bdim);
        (out, move |ct: OutOf<Self, V>| {
            let cts = pullback(F::Out::map(ct, |o, c| Batched::new(c, Some(oas[o]))));
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

/// The one-hot cotangent basis over several outputs at once: `total` rows
/// on a batch axis, output `o` (of `shape`) one-hot on rows
/// `offset .. offset + numel(shape)` and zero elsewhere. With one output
/// this is [`basis`].
fn block_basis<V: ArrayValue>(like: &V, total: usize, offset: usize, shape: &[usize]) -> V {
    let m = numel(shape);
    if offset == 0 && m == total {
        return basis(like, shape);
    }
    let mut data = vec![0.0f64; total * m];
    for r in 0..m {
        data[(offset + r) * m + r] = 1.0;
    }
    like.lift(&Array::from_vec(data, &cat(&[total], shape)))
}

/// `[*a, *b]`.
fn cat(a: &[usize], b: &[usize]) -> Vec<usize> {
    a.iter().chain(b).copied().collect()
}

/// Shapes, sizes and row offsets of a function's outputs in a block basis.
struct OutRows {
    shapes: Vec<Vec<usize>>,
    offsets: Vec<usize>,
    total: usize,
}

impl OutRows {
    fn new(shapes: Vec<Vec<usize>>) -> OutRows {
        let mut offsets = Vec::with_capacity(shapes.len());
        let mut total = 0;
        for s in &shapes {
            offsets.push(total);
            total += numel(s);
        }
        OutRows {
            shapes,
            offsets,
            total,
        }
    }
    /// Rows of output `o` taken from `[total, ..]`.
    fn rows_of<V: ArrayValue>(&self, x: &V, o: usize) -> V {
        if self.shapes.len() == 1 {
            return x.clone();
        }
        let (a, m) = (self.offsets[o], numel(&self.shapes[o]));
        let mut slices = vec![ndarray::Slice::from(..); x.shape_vec().len()];
        slices[0] = ndarray::Slice::from(a..a + m);
        x.slice(&slices)
    }
    /// The block-one-hot cotangents of every output, batched.
    fn basis<V: ArrayValue>(&self, like: &V) -> Vec<Batched<V>> {
        (0..self.shapes.len())
            .map(|o| {
                let b = block_basis(like, self.total, self.offsets[o], &self.shapes[o]);
                Batched::new(b, Some(0))
            })
            .collect()
    }
}

/// `vjp` of `x ↦ J` (the Jacobian blocks `(output o, input i)` for the
/// arrays `wanted`, output-major) at the cotangent blocks `cts`: for every
/// argument `j`, `Σ_{o,i} Σ_r ∂²f_o[r]/∂x_j∂x_i · ct_{o,i}[r, :]`, by one
/// forward-over-reverse pass: block-one-hot cotangents over all outputs on a
/// batch axis, and as tangent of each `x_i` the rows of its `ct_{o,i}`
/// stacked over `o`.
fn jacobian_vjp<F: DiffFn, V: ArrayValue>(
    x: &ArgsOf<F, V>,
    wanted: &[usize],
    cts: Vec<V>,
) -> ArgsOf<F, V> {
    let nw = wanted.len();
    let in_shapes: Vec<Vec<usize>> = wanted
        .iter()
        .map(|&i| <F::Arity as Arity>::get(x, i).shape_vec())
        .collect();
    let outs = OutRows::new(
        (0..cts.len() / nw)
            .map(|o| {
                let s = cts[o * nw].shape_vec();
                s[..s.len() - in_shapes[0].len()].to_vec()
            })
            .collect(),
    );
    let rows: Vec<V> = (0..nw)
        .map(|w| {
            let parts: Vec<V> = (0..outs.shapes.len())
                .map(|o| cts[o * nw + w].reshape(&cat(&[numel(&outs.shapes[o])], &in_shapes[w])))
                .collect();
            if parts.len() == 1 {
                parts.into_iter().next().expect("one part")
            } else {
                V::concat(&parts, 0)
            }
        })
        .collect();
    let xd = <F::Arity as Arity>::map(x, |i, v: &V| {
        let t = wanted
            .iter()
            .position(|&w| w == i)
            .map(|w| Batched::new(rows[w].clone(), Some(0)));
        Dual::new(Batched::unbatched(v.clone()), t)
    });
    let (_, pullback) = F::vjp::<Dual<Batched<V>>>(&xd);
    let like = <F::Arity as Arity>::get(x, wanted[0]);
    let onehot = outs.basis(like).into_iter().map(Dual::constant).collect();
    let g = pullback(F::Out::from_leaves(onehot));
    let m = outs.total;
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
arg_index!(AList: 0);

/// The Jacobian blocks of `f` w.r.t. the arrays `wanted`, each shaped
/// `out_o ++ in_i`, output-major (`blocks[o * wanted.len() + w]`), all
/// from one reverse pass over a block-one-hot cotangent basis.
pub(crate) fn jacrev_blocks<F: DiffFn, V: ArrayValue>(
    x: &ArgsOf<F, V>,
    wanted: &[usize],
) -> Vec<V> {
    let Some(&first) = wanted.first() else {
        panic!("jacrev: no input arrays to differentiate with respect to (an empty list?)");
    };
    let b = <F::Arity as Arity>::map(x, |_, v: &V| Batched::unbatched(v.clone()));
    let (y, pullback) = F::vjp::<Batched<V>>(&b);
    let outs = OutRows::new(F::Out::leaves(y).iter().map(|y| y.shape_vec()).collect());
    let like = <F::Arity as Arity>::get(x, first);
    let cts = pullback(F::Out::from_leaves(outs.basis(like)));
    let per_input: Vec<V> = wanted
        .iter()
        .map(|&i| <F::Arity as Arity>::get(&cts, i).materialize(outs.total, 0))
        .collect();
    if outs.shapes.len() == 1 {
        // One output: every input's cotangent rows are its block.
        return per_input
            .into_iter()
            .zip(wanted)
            .map(|(p, &i)| {
                let xs = <F::Arity as Arity>::get(x, i).shape_vec();
                p.reshape(&cat(&outs.shapes[0], &xs))
            })
            .collect();
    }
    let mut blocks = Vec::with_capacity(outs.shapes.len() * wanted.len());
    for o in 0..outs.shapes.len() {
        for (w, &i) in wanted.iter().enumerate() {
            let xs = <F::Arity as Arity>::get(x, i).shape_vec();
            blocks.push(
                outs.rows_of(&per_input[w], o)
                    .reshape(&cat(&outs.shapes[o], &xs)),
            );
        }
    }
    blocks
}

/// The Jacobian blocks of `f` w.r.t. the arrays `wanted` (as
/// [`jacrev_blocks`]), by one forward pass per wanted array over a tangent
/// basis on a batch axis.
pub(crate) fn jacfwd_blocks<F: DiffFn, V: ArrayValue>(
    x: &ArgsOf<F, V>,
    wanted: &[usize],
) -> Vec<V> {
    let per_input: Vec<Vec<V>> = wanted
        .iter()
        .map(|&k| {
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
            F::Out::leaves(F::eval::<Dual<Batched<V>>>(&xd))
                .iter()
                .map(|y| {
                    let t = y.tangent_or_zero();
                    let ys = t.shape_vec();
                    t.materialize(n, ys.len()).reshape(&cat(&ys, &xs))
                })
                .collect()
        })
        .collect();
    let n_out = per_input.first().map_or(0, |p| p.len());
    if n_out == 1 {
        return per_input.into_iter().flatten().collect();
    }
    let mut blocks = Vec::with_capacity(n_out * wanted.len());
    for o in 0..n_out {
        for p in &per_input {
            blocks.push(p[o].clone());
        }
    }
    blocks
}

/// The structure of `jacfwd(f)` / `jacrev(f)`'s output.
type JacOut<F> = <<F as DiffFn>::Arity as Arity>::Jac<<F as DiffFn>::Out>;

/// The VJP of a Jacobian transform: `J` and its pullback.
#[allow(clippy::type_complexity)]
fn jacobian_with_vjp<F: DiffFn, V: ArrayValue>(
    x: &ArgsOf<F, V>,
    k: usize,
    blocks: Vec<V>,
) -> (
    <JacOut<F> as Structure>::Of<V>,
    impl FnOnce(<JacOut<F> as Structure>::Of<V>) -> ArgsOf<F, V> + use<F, V>,
) {
    let wanted = <F::Arity as Arity>::arg_leaves(x, k);
    let x = x.clone();
    (JacOut::<F>::from_leaves(blocks), move |ct| {
        jacobian_vjp::<F, V>(&x, &wanted, JacOut::<F>::leaves(ct))
    })
}

impl<F: DiffFn, I: ArgIndex<F::Arity>> DiffFn for Jacrev<F, I> {
    type Arity = F::Arity;
    type Out = JacOut<F>;
    fn eval<V: ArrayValue>(x: &ArgsOf<Self, V>) -> OutOf<Self, V> {
        let wanted = <F::Arity as Arity>::arg_leaves(x, I::I);
        JacOut::<F>::from_leaves(jacrev_blocks::<F, V>(x, &wanted))
    }
    fn vjp<V: ArrayValue>(
        x: &ArgsOf<Self, V>,
    ) -> (
        OutOf<Self, V>,
        impl FnOnce(OutOf<Self, V>) -> ArgsOf<Self, V> + use<V, F, I>,
    ) {
        let wanted = <F::Arity as Arity>::arg_leaves(x, I::I);
        jacobian_with_vjp::<F, V>(x, I::I, jacrev_blocks::<F, V>(x, &wanted))
    }
}

impl<F: DiffFn, I: ArgIndex<F::Arity>> DiffFn for Jacfwd<F, I> {
    type Arity = F::Arity;
    type Out = JacOut<F>;
    fn eval<V: ArrayValue>(x: &ArgsOf<Self, V>) -> OutOf<Self, V> {
        let wanted = <F::Arity as Arity>::arg_leaves(x, I::I);
        JacOut::<F>::from_leaves(jacfwd_blocks::<F, V>(x, &wanted))
    }
    fn vjp<V: ArrayValue>(
        x: &ArgsOf<Self, V>,
    ) -> (
        OutOf<Self, V>,
        impl FnOnce(OutOf<Self, V>) -> ArgsOf<Self, V> + use<V, F, I>,
    ) {
        let wanted = <F::Arity as Arity>::arg_leaves(x, I::I);
        jacobian_with_vjp::<F, V>(x, I::I, jacfwd_blocks::<F, V>(x, &wanted))
    }
}

/// `grad(f)` of a scalar-valued array function is composable too: it is
/// the Jacobian of a function with a scalar output.
impl<F: DiffFn<Out = One>, const I: usize> DiffFn
    for crate::transforms::Grad<F, Argnum<I>, crate::transforms::NoAux>
where
    Argnum<I>: ArgIndex<F::Arity>,
    F::Arity: FixedArity,
{
    type Arity = F::Arity;
    type Out = One;
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
        (g, move |ct: V| jacobian_vjp::<F, V>(&x, &[I], vec![ct]))
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

/// Placeholders standing in for a list argument's skeleton in generated
/// code (only its length is read).
#[doc(hidden)]
pub fn list_skeleton(n: usize) -> Vec<Array> {
    vec![Array::scalar(0.0f64); n]
}

/// A list function's pullback got `got` cotangents for `want` outputs.
#[doc(hidden)]
#[track_caller]
pub fn check_cotangents(got: usize, want: usize) {
    if got != want {
        panic!(
            "the pullback of a function returning {want} arrays got {got} cotangents; pass one per output"
        );
    }
}
