//! The arguments of composable functions, as types: a tuple of up to six
//! [`Slot`]s (arrays [`One`] and trees [`TreeS`]; [`A1`] … [`A6`] are the
//! tuples of arrays), or one list of run-time length ([`AList`]). Argument
//! `k` holds the leaves `arg_leaves(x, k)`; the transforms work on leaves
//! (`vmap` batches each, a Jacobian has a block per leaf). Re-exported
//! from [`crate::compose`].

use super::argnums::Argnum;
use super::structure::{ArgIndices, List, One, Slot, Structure};

/// The arguments of a composable function: `Args<W>` holds each argument
/// with `W` in place of every array.
///
/// ```
/// use nabla::compose::{A2, Arity};
/// let x = (1.0, 2.0);
/// assert_eq!(A2::len(&x), 2);
/// assert_eq!(*A2::get(&x, 1), 2.0);
/// assert_eq!(A2::map(&x, |i, v| v + i as f64), (1.0, 3.0));
/// ```
pub trait Arity: 'static {
    /// `(W,)`, `(W, TreeVal<T, W>)`, …, or `Vec<W>`.
    type Args<W: Clone>: Clone;
    /// The number of arguments.
    const ARGS: usize;
    /// The number of arrays (leaves) over all arguments.
    fn len<W: Clone>(x: &Self::Args<W>) -> usize;
    /// Maps every array (with its leaf index).
    fn map<W: Clone, U: Clone>(x: &Self::Args<W>, f: impl FnMut(usize, &W) -> U) -> Self::Args<U>;
    /// Array (leaf) `i`.
    fn get<W: Clone>(x: &Self::Args<W>, i: usize) -> &W;
    /// The leaves of argument `k`.
    fn arg_leaves<W: Clone>(x: &Self::Args<W>, k: usize) -> ArgIndices;
    /// The argument leaf `i` belongs to.
    fn arg_of<W: Clone>(x: &Self::Args<W>, i: usize) -> usize;
}

/// A fixed number of array arguments ([`A1`] … [`A6`]).
///
/// ```
/// use nabla::compose::{A3, FixedArity};
/// assert_eq!(A3::N, 3);
/// assert_eq!(A3::from_fn(|i| i * 10), (0, 10, 20));
/// ```
pub trait FixedArity: Arity {
    /// The number of arguments.
    const N: usize;
    /// The tuple whose argument `i` is `f(i)`.
    fn from_fn<W: Clone>(f: impl FnMut(usize) -> W) -> Self::Args<W>;
}

macro_rules! tuple_arity {
    ($n:literal; $($s:ident $i:tt),*) => {
        impl<$($s: Slot),*> Arity for ($($s,)*) {
            type Args<W: Clone> = ($($s::Of<W>,)*);
            const ARGS: usize = $n;
            fn len<W: Clone>(x: &Self::Args<W>) -> usize {
                0 $(+ $s::count(&x.$i))*
            }
            fn map<W: Clone, U: Clone>(x: &Self::Args<W>, mut f: impl FnMut(usize, &W) -> U) -> Self::Args<U> {
                let mut offset = 0;
                let out = ($({
                    let o = offset;
                    offset += $s::count(&x.$i);
                    $s::map_ref(&x.$i, |j, w| f(o + j, w))
                },)*);
                let _ = offset;
                out
            }
            #[track_caller]
            fn get<W: Clone>(x: &Self::Args<W>, i: usize) -> &W {
                let mut j = i;
                $(
                    let c = $s::count(&x.$i);
                    if j < c {
                        return $s::leaf(&x.$i, j);
                    }
                    j -= c;
                )*
                let _ = j;
                panic!("array {i} is out of range for these arguments ({} arrays)", Self::len(x))
            }
            fn arg_leaves<W: Clone>(x: &Self::Args<W>, k: usize) -> ArgIndices {
                let mut offset = 0;
                $(
                    let c = $s::count(&x.$i);
                    if $i == k {
                        return (offset..offset + c).collect();
                    }
                    offset += c;
                )*
                let _ = offset;
                panic!("argument {k} is out of range for a function of {} arguments", $n)
            }
            #[track_caller]
            fn arg_of<W: Clone>(x: &Self::Args<W>, i: usize) -> usize {
                let mut j = i;
                $(
                    let c = $s::count(&x.$i);
                    if j < c {
                        return $i;
                    }
                    j -= c;
                )*
                let _ = j;
                panic!("array {i} is out of range for these arguments ({} arrays)", Self::len(x))
            }
        }
        impl FixedArity for ($(tuple_arity!(@one $s),)*) {
            const N: usize = $n;
            fn from_fn<W: Clone>(mut f: impl FnMut(usize) -> W) -> Self::Args<W> {
                ($(f($i),)*)
            }
        }
    };
    (@one $s:ident) => { One };
}
tuple_arity!(1; S0 0);
tuple_arity!(2; S0 0, S1 1);
tuple_arity!(3; S0 0, S1 1, S2 2);
tuple_arity!(4; S0 0, S1 1, S2 2, S3 3);
tuple_arity!(5; S0 0, S1 1, S2 2, S3 3, S4 4);
tuple_arity!(6; S0 0, S1 1, S2 2, S3 3, S4 4, S5 5);

/// Functions of one array.
pub type A1 = (One,);
/// Functions of two arrays.
pub type A2 = (One, One);
/// Functions of three arrays.
pub type A3 = (One, One, One);
/// Functions of four arrays.
pub type A4 = (One, One, One, One);
/// Functions of five arrays.
pub type A5 = (One, One, One, One, One);
/// Functions of six arrays.
pub type A6 = (One, One, One, One, One, One);

/// Functions of one list of arrays (`fn f(args: &[Array]) -> ..`), the
/// seed's form. `argnums = 0` is the whole list: a Jacobian is a [`List`]
/// of blocks, one per (output, input array), output-major.
///
/// ```
/// use nabla::compose::{AList, Arity};
/// let args = vec![1.0, 2.0, 3.0];
/// assert_eq!(AList::len(&args), 3);
/// assert_eq!(&AList::arg_leaves(&args, 0)[..], &[0, 1, 2]); // the whole list
/// ```
#[derive(Clone, Copy, Debug)]
pub struct AList;
impl Arity for AList {
    type Args<W: Clone> = Vec<W>;
    const ARGS: usize = 1;
    fn len<W: Clone>(x: &Vec<W>) -> usize {
        x.len()
    }
    fn map<W: Clone, U: Clone>(x: &Vec<W>, f: impl FnMut(usize, &W) -> U) -> Vec<U> {
        List::map_ref(x, f)
    }
    #[track_caller]
    fn get<W: Clone>(x: &Vec<W>, i: usize) -> &W {
        List::leaf(x, i)
    }
    fn arg_leaves<W: Clone>(x: &Vec<W>, _: usize) -> ArgIndices {
        (0..x.len()).collect()
    }
    fn arg_of<W: Clone>(_: &Vec<W>, _: usize) -> usize {
        0
    }
}

/// An argument of a function of arity `A`, as a type: its index and slot.
#[diagnostic::on_unimplemented(
    message = "`argnums` {Self} is out of range for this function",
    note = "argnums indexes the function's arguments from 0"
)]
pub trait ArgIndex<A: Arity>: 'static {
    /// The index.
    const I: usize;
    /// Its slot ([`One`], [`List`] or a tree).
    type Slot: Slot;
    /// The argument.
    fn pick<W: Clone>(x: &A::Args<W>) -> &<Self::Slot as Structure>::Of<W>;
}

macro_rules! arg_index {
    ($gs:tt: $($i:tt $s:ident),*) => {
        $(arg_index!(@one $gs $i $s);)*
    };
    (@one [$($g:ident),*] $i:tt $s:ident) => {
        impl<$($g: Slot),*> ArgIndex<($($g,)*)> for Argnum<$i> {
            const I: usize = $i;
            type Slot = $s;
            fn pick<W: Clone>(x: &<($($g,)*) as Arity>::Args<W>) -> &$s::Of<W> {
                &x.$i
            }
        }
    };
}
arg_index!([S0]: 0 S0);
arg_index!([S0, S1]: 0 S0, 1 S1);
arg_index!([S0, S1, S2]: 0 S0, 1 S1, 2 S2);
arg_index!([S0, S1, S2, S3]: 0 S0, 1 S1, 2 S2, 3 S3);
arg_index!([S0, S1, S2, S3, S4]: 0 S0, 1 S1, 2 S2, 3 S3, 4 S4);
arg_index!([S0, S1, S2, S3, S4, S5]: 0 S0, 1 S1, 2 S2, 3 S3, 4 S4, 5 S5);

impl ArgIndex<AList> for Argnum<0> {
    const I: usize = 0;
    type Slot = List;
    fn pick<W: Clone>(x: &Vec<W>) -> &Vec<W> {
        x
    }
}

/// The per-argument mask with only argument `k` wanted (the `want` of
/// [`DiffFn::vjp_masked`](crate::compose::DiffFn::vjp_masked)).
pub(crate) fn want_only(args: usize, k: usize) -> smallvec::SmallVec<[bool; 6]> {
    (0..args).map(|i| i == k).collect()
}
