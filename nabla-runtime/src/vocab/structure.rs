//! The shapes of composable functions' values: one array ([`One`]), a
//! list of arrays ([`List`]) or a tree of arrays ([`TreeS`]), each both an
//! argument slot ([`Slot`]) and an output structure ([`Structure`]). The
//! arities built from slots live in `vocab/arity.rs`. Re-exported from
//! [`crate::compose`].

use crate::Array;
use crate::tree::{Tree, TreeArg};
use std::borrow::Borrow;
use std::sync::Arc;

/// The arrays of a [`Structure`], in order: inline for up to two (one
/// output, or a pair), so composing transforms does not allocate for them.
///
/// ```
/// use nabla::compose::{Leaves, One, Structure};
/// let l: Leaves<i32> = One::leaves(5);
/// assert_eq!(&l[..], &[5]);
/// ```
pub type Leaves<W> = smallvec::SmallVec<[W; 2]>;

/// Argument indices (what [`Arity::arg_leaves`](crate::compose::Arity::arg_leaves)
/// returns), inline up to four.
pub type ArgIndices = smallvec::SmallVec<[usize; 4]>;

/// A structure of arrays: one array ([`One`]), a list ([`List`],
/// `Vec<W>`) or a tree ([`TreeS`]), with `W` in place of each array
/// (`Batched<V>`, a shape, a cotangent, …).
///
/// ```
/// use nabla::compose::{List, One, Structure};
/// assert_eq!(One::map(2.0, |_, x| x * 3.0), 6.0);
/// assert_eq!(List::map(vec![1.0, 2.0], |i, x| x + i as f64), vec![1.0, 3.0]);
/// assert_eq!(&One::leaves(5)[..], &[5]);
/// assert_eq!(List::rebuild(&2, [7, 8]), vec![7, 8]);
/// ```
pub trait Structure: 'static {
    /// `W`, `Vec<W>` or a [`TreeVal`] of `W`.
    type Of<W: Clone>: Clone;
    /// What is left without the arrays: nothing, a length, or the tree.
    type Skel: Clone + 'static;
    /// The structure of arrays as users hold it: `Array`, `Vec<Array>`, or
    /// the tree's gradient type.
    type User: 'static;
    /// Its skeleton.
    fn skel<W: Clone>(x: &Self::Of<W>) -> Self::Skel;
    /// The number of arrays a skeleton holds.
    fn skel_len(sk: &Self::Skel) -> usize;
    /// The number of arrays.
    fn count<W: Clone>(x: &Self::Of<W>) -> usize;
    /// Array `j`.
    fn leaf<W: Clone>(x: &Self::Of<W>, j: usize) -> &W;
    /// The arrays, in order.
    fn leaves<W: Clone>(x: Self::Of<W>) -> Leaves<W>;
    /// Built from a skeleton and its arrays.
    fn rebuild<W: Clone>(sk: &Self::Skel, leaves: impl IntoIterator<Item = W>) -> Self::Of<W>;
    /// Maps every array (with its index), keeping the structure.
    fn map<W: Clone, U: Clone>(x: Self::Of<W>, f: impl FnMut(usize, W) -> U) -> Self::Of<U>;
    /// Maps every array by reference.
    fn map_ref<W: Clone, U: Clone>(x: &Self::Of<W>, f: impl FnMut(usize, &W) -> U) -> Self::Of<U>;
    /// As users hold it.
    fn to_user(x: Self::Of<Array>) -> Self::User;
    /// From what users hold, on a skeleton (a cotangent given to a
    /// pullback).
    fn from_user(u: &Self::User, sk: &Self::Skel) -> Self::Of<Array>;
}

/// An argument of a composable function: a [`Structure`] that users pass
/// by reference as a `Ty` (`&Array`, `&[Array]`, `&T` for a tree).
pub trait Slot: Structure {
    /// What users pass a reference to.
    type Ty: ?Sized + 'static;
    /// The argument as a structure of arrays.
    fn arg(x: &Self::Ty) -> Self::Of<Array>;
}

/// The structure of a Jacobian w.r.t. an argument of this slot, for a
/// function with outputs `O`: `O` for one array, a [`List`] of blocks
/// (output-major) for a list, the tree of blocks for a tree and one
/// output.
#[diagnostic::on_unimplemented(
    message = "the Jacobian of a function returning `{O}` with respect to a `{Self}` argument is not supported",
    note = "a Jacobian w.r.t. a tree argument needs a function returning one array; a tree-valued function (such as a gradient w.r.t. a tree) has Jacobians w.r.t. its array arguments (`argnums`)"
)]
pub trait JacOf<O: Structure>: Slot {
    /// The Jacobian's structure.
    type Jac: Structure;
    /// The Jacobian's skeleton from the outputs' and the argument's.
    fn jac_skel(out: &O::Skel, arg: &Self::Skel) -> <Self::Jac as Structure>::Skel;
}

/// One array.
#[derive(Clone, Copy, Debug)]
pub struct One;
impl Structure for One {
    type Of<W: Clone> = W;
    type Skel = ();
    type User = Array;
    fn skel<W: Clone>(_: &W) {}
    fn skel_len(_: &()) -> usize {
        1
    }
    fn count<W: Clone>(_: &W) -> usize {
        1
    }
    fn leaf<W: Clone>(x: &W, _: usize) -> &W {
        x
    }
    fn leaves<W: Clone>(x: W) -> Leaves<W> {
        smallvec::smallvec![x]
    }
    fn rebuild<W: Clone>(_: &(), leaves: impl IntoIterator<Item = W>) -> W {
        let mut it = leaves.into_iter();
        match (it.next(), it.next()) {
            (Some(w), None) => w,
            _ => panic!("expected one array"),
        }
    }
    fn map<W: Clone, U: Clone>(x: W, mut f: impl FnMut(usize, W) -> U) -> U {
        f(0, x)
    }
    fn map_ref<W: Clone, U: Clone>(x: &W, mut f: impl FnMut(usize, &W) -> U) -> U {
        f(0, x)
    }
    fn to_user(x: Array) -> Array {
        x
    }
    fn from_user(u: &Array, _: &()) -> Array {
        u.clone()
    }
}
impl Slot for One {
    type Ty = Array;
    fn arg(x: &Array) -> Array {
        x.clone()
    }
}
impl<O: Structure> JacOf<O> for One {
    type Jac = O;
    fn jac_skel(out: &O::Skel, _: &()) -> O::Skel {
        out.clone()
    }
}

/// A list of arrays (`Vec<Array>`; as an argument, `&[Array]`).
#[derive(Clone, Copy, Debug)]
pub struct List;
impl Structure for List {
    type Of<W: Clone> = Vec<W>;
    type Skel = usize;
    type User = Vec<Array>;
    fn skel<W: Clone>(x: &Vec<W>) -> usize {
        x.len()
    }
    fn skel_len(sk: &usize) -> usize {
        *sk
    }
    fn count<W: Clone>(x: &Vec<W>) -> usize {
        x.len()
    }
    #[track_caller]
    fn leaf<W: Clone>(x: &Vec<W>, j: usize) -> &W {
        x.get(j)
            .unwrap_or_else(|| panic!("array {j} is out of range for a list of {} arrays", x.len()))
    }
    fn leaves<W: Clone>(x: Vec<W>) -> Leaves<W> {
        Leaves::from_vec(x)
    }
    fn rebuild<W: Clone>(_: &usize, leaves: impl IntoIterator<Item = W>) -> Vec<W> {
        leaves.into_iter().collect()
    }
    fn map<W: Clone, U: Clone>(x: Vec<W>, mut f: impl FnMut(usize, W) -> U) -> Vec<U> {
        x.into_iter().enumerate().map(|(i, w)| f(i, w)).collect()
    }
    fn map_ref<W: Clone, U: Clone>(x: &Vec<W>, mut f: impl FnMut(usize, &W) -> U) -> Vec<U> {
        x.iter().enumerate().map(|(i, w)| f(i, w)).collect()
    }
    fn to_user(x: Vec<Array>) -> Vec<Array> {
        x
    }
    #[track_caller]
    fn from_user(u: &Vec<Array>, sk: &usize) -> Vec<Array> {
        check_cotangents(u.len(), *sk);
        u.clone()
    }
}
impl Slot for List {
    type Ty = [Array];
    fn arg(x: &[Array]) -> Vec<Array> {
        x.to_vec()
    }
}
impl<O: Structure> JacOf<O> for List {
    type Jac = List;
    fn jac_skel(out: &O::Skel, arg: &usize) -> usize {
        O::skel_len(out) * arg
    }
}

/// A tree of arrays of type `T` (a `#[derive(Tree)]` struct, a `Vec`, a
/// tuple, a slice of arrays): as an argument `&T`, as an output (a
/// gradient) `T::Grad`.
pub struct TreeS<T: ?Sized>(std::marker::PhantomData<fn() -> Box<T>>);

/// A tree's arrays with `W` in place of each: the tree (shared, for its
/// structure) and its leaves in `flatten_into` order.
///
/// ```
/// use nabla::compose::{Structure, TreeS};
/// use nabla::Array;
///
/// let t = (Array::scalar(1.0f64), Array::scalar(2.0f64));
/// let v = <TreeS<(Array, Array)> as nabla::compose::Slot>::arg(&t);
/// let doubled = TreeS::<(Array, Array)>::map(v, |_, a| &a * 2.0);
/// let (a, b) = TreeS::<(Array, Array)>::to_user(doubled);
/// assert_eq!((a.item(), b.item()), (2.0, 4.0));
/// ```
pub struct TreeVal<T: Tree + ?Sized, W> {
    /// The tree as it was given (its gradient type); only its structure
    /// is read.
    pub skeleton: Arc<T::Grad>,
    /// The leaves.
    pub leaves: Vec<W>,
}

impl<T: Tree + ?Sized, W: Clone> Clone for TreeVal<T, W> {
    fn clone(&self) -> Self {
        TreeVal {
            skeleton: self.skeleton.clone(),
            leaves: self.leaves.clone(),
        }
    }
}

impl<T: Tree + ?Sized, W: Clone> TreeVal<T, W>
where
    T::Grad: Borrow<T>,
{
    /// The tree argument generated code reads.
    pub fn arg(&self) -> TreeArg<'_, T, Vec<W>> {
        TreeArg {
            skeleton: (*self.skeleton).borrow(),
            leaves: self.leaves.clone(),
        }
    }
}

/// A copy of a tree with the same structure (its gradient type).
fn skeleton_of<T: Tree + ?Sized>(t: &T) -> Arc<T::Grad> {
    Arc::new(t.rebuild(&mut crate::tree::leaves(t).into_iter()))
}

impl<T: Tree + ?Sized + 'static> Structure for TreeS<T>
where
    T::Grad: Borrow<T> + 'static,
{
    type Of<W: Clone> = TreeVal<T, W>;
    type Skel = Arc<T::Grad>;
    type User = T::Grad;
    fn skel<W: Clone>(x: &TreeVal<T, W>) -> Arc<T::Grad> {
        x.skeleton.clone()
    }
    fn skel_len(sk: &Arc<T::Grad>) -> usize {
        (**sk).borrow().num_leaves()
    }
    fn count<W: Clone>(x: &TreeVal<T, W>) -> usize {
        x.leaves.len()
    }
    #[track_caller]
    fn leaf<W: Clone>(x: &TreeVal<T, W>, j: usize) -> &W {
        &x.leaves[j]
    }
    fn leaves<W: Clone>(x: TreeVal<T, W>) -> Leaves<W> {
        Leaves::from_vec(x.leaves)
    }
    fn rebuild<W: Clone>(sk: &Arc<T::Grad>, leaves: impl IntoIterator<Item = W>) -> TreeVal<T, W> {
        let leaves: Vec<W> = leaves.into_iter().collect();
        let want = Self::skel_len(sk);
        if leaves.len() != want {
            panic!(
                "a tree of {want} arrays was rebuilt from {} arrays",
                leaves.len()
            );
        }
        TreeVal {
            skeleton: sk.clone(),
            leaves,
        }
    }
    fn map<W: Clone, U: Clone>(
        x: TreeVal<T, W>,
        mut f: impl FnMut(usize, W) -> U,
    ) -> TreeVal<T, U> {
        TreeVal {
            skeleton: x.skeleton,
            leaves: x
                .leaves
                .into_iter()
                .enumerate()
                .map(|(i, w)| f(i, w))
                .collect(),
        }
    }
    fn map_ref<W: Clone, U: Clone>(
        x: &TreeVal<T, W>,
        mut f: impl FnMut(usize, &W) -> U,
    ) -> TreeVal<T, U> {
        TreeVal {
            skeleton: x.skeleton.clone(),
            leaves: x.leaves.iter().enumerate().map(|(i, w)| f(i, w)).collect(),
        }
    }
    fn to_user(x: TreeVal<T, Array>) -> T::Grad {
        (*x.skeleton).borrow().rebuild(&mut x.leaves.into_iter())
    }
    #[track_caller]
    fn from_user(u: &T::Grad, sk: &Arc<T::Grad>) -> TreeVal<T, Array> {
        let leaves = crate::tree::leaves(u.borrow());
        check_cotangents(leaves.len(), Self::skel_len(sk));
        TreeVal {
            skeleton: sk.clone(),
            leaves,
        }
    }
}

impl<T: Tree + ?Sized + 'static> Slot for TreeS<T>
where
    T::Grad: Borrow<T> + 'static,
{
    type Ty = T;
    fn arg(x: &T) -> TreeVal<T, Array> {
        TreeVal {
            skeleton: skeleton_of(x),
            leaves: crate::tree::leaves(x),
        }
    }
}

impl<T: Tree + ?Sized + 'static> JacOf<One> for TreeS<T>
where
    T::Grad: Borrow<T> + 'static,
{
    type Jac = TreeS<T>;
    fn jac_skel(_: &(), arg: &Arc<T::Grad>) -> Arc<T::Grad> {
        arg.clone()
    }
}

/// A pair of structures: the outputs `(value, aux)` of a function, or
/// `value_and_grad`'s `(value, gradient)`.
///
/// ```
/// use nabla::compose::{One, Structure};
/// let pair: (f64, f64) = <(One, One)>::rebuild(&((), ()), [1.0, 2.0]);
/// assert_eq!(pair, (1.0, 2.0));
/// assert_eq!(<(One, One)>::map(pair, |i, x| x * i as f64), (0.0, 2.0));
/// ```
impl<A: Structure, B: Structure> Structure for (A, B) {
    type Of<W: Clone> = (A::Of<W>, B::Of<W>);
    type Skel = (A::Skel, B::Skel);
    type User = (A::User, B::User);
    fn skel<W: Clone>(x: &Self::Of<W>) -> Self::Skel {
        (A::skel(&x.0), B::skel(&x.1))
    }
    fn skel_len(sk: &Self::Skel) -> usize {
        A::skel_len(&sk.0) + B::skel_len(&sk.1)
    }
    fn count<W: Clone>(x: &Self::Of<W>) -> usize {
        A::count(&x.0) + B::count(&x.1)
    }
    fn leaf<W: Clone>(x: &Self::Of<W>, j: usize) -> &W {
        let n = A::count(&x.0);
        if j < n {
            A::leaf(&x.0, j)
        } else {
            B::leaf(&x.1, j - n)
        }
    }
    fn leaves<W: Clone>(x: Self::Of<W>) -> Leaves<W> {
        let mut l = A::leaves(x.0);
        l.extend(B::leaves(x.1));
        l
    }
    fn rebuild<W: Clone>(sk: &Self::Skel, leaves: impl IntoIterator<Item = W>) -> Self::Of<W> {
        let mut it = leaves.into_iter();
        let a = A::rebuild(&sk.0, it.by_ref().take(A::skel_len(&sk.0)));
        (a, B::rebuild(&sk.1, it))
    }
    fn map<W: Clone, U: Clone>(x: Self::Of<W>, mut f: impl FnMut(usize, W) -> U) -> Self::Of<U> {
        let n = A::count(&x.0);
        let a = A::map(x.0, &mut f);
        (a, B::map(x.1, |j, w| f(n + j, w)))
    }
    fn map_ref<W: Clone, U: Clone>(
        x: &Self::Of<W>,
        mut f: impl FnMut(usize, &W) -> U,
    ) -> Self::Of<U> {
        let n = A::count(&x.0);
        let a = A::map_ref(&x.0, &mut f);
        (a, B::map_ref(&x.1, |j, w| f(n + j, w)))
    }
    fn to_user(x: Self::Of<Array>) -> Self::User {
        (A::to_user(x.0), B::to_user(x.1))
    }
    #[track_caller]
    fn from_user(u: &Self::User, sk: &Self::Skel) -> Self::Of<Array> {
        (A::from_user(&u.0, &sk.0), B::from_user(&u.1, &sk.1))
    }
}

/// Placeholders standing in for a list argument's skeleton in generated
/// code (only its length is read).
#[doc(hidden)]
pub fn list_skeleton(n: usize) -> Vec<Array> {
    vec![Array::scalar(0.0f64); n]
}

/// A pullback got `got` cotangent arrays for `want` output arrays.
#[doc(hidden)]
#[track_caller]
pub fn check_cotangents(got: usize, want: usize) {
    if got != want {
        panic!(
            "the pullback of a function returning {want} arrays got {got} cotangents; pass one per output array"
        );
    }
}
