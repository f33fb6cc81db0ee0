//! The shapes of composable functions' arguments and outputs: a fixed
//! number of arrays ([`A1`] … [`A6`]) or a list ([`AList`]) in, one array
//! ([`One`]) or a list ([`List`]) out. Re-exported from [`crate::compose`].

use crate::Array;

/// The arrays of a [`Structure`], in order: inline for up to two (one
/// output, or a pair), so composing transforms does not allocate for them.
///
/// ```
/// use nabla::compose::{Leaves, One, Structure};
/// let l: Leaves<i32> = One::leaves(5);
/// assert_eq!(&l[..], &[5]);
/// ```
pub type Leaves<W> = smallvec::SmallVec<[W; 2]>;

/// Argument indices (what [`Arity::arg_leaves`] returns), inline up to four.
pub type ArgIndices = smallvec::SmallVec<[usize; 4]>;

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
    fn arg_leaves<W: Clone>(x: &Self::Args<W>, k: usize) -> ArgIndices;
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
            fn arg_leaves<W: Clone>(_: &Self::Args<W>, k: usize) -> ArgIndices {
                smallvec::smallvec![k]
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
/// use nabla::compose::{AList, Arity};
/// let args = vec![1.0, 2.0, 3.0];
/// assert_eq!(AList::len(&args), 3);
/// assert_eq!(&AList::arg_leaves(&args, 0)[..], &[0, 1, 2]); // the whole list
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
    fn arg_leaves<W: Clone>(x: &Vec<W>, _: usize) -> ArgIndices {
        (0..x.len()).collect()
    }
}

/// The outputs of a composable function: one array ([`One`]) or a list of
/// arrays ([`List`], `Vec<W>`).
///
/// ```
/// use nabla::compose::{List, One, Structure};
/// assert_eq!(One::map(2.0, |_, x| x * 3.0), 6.0);
/// assert_eq!(List::map(vec![1.0, 2.0], |i, x| x + i as f64), vec![1.0, 3.0]);
/// assert_eq!(&One::leaves(5)[..], &[5]);
/// ```
pub trait Structure: 'static {
    /// `W` or `Vec<W>`.
    type Of<W: Clone>: Clone;
    /// The arrays, in order.
    fn leaves<W: Clone>(x: Self::Of<W>) -> Leaves<W>;
    /// Built from its arrays.
    fn from_leaves<W: Clone>(leaves: Leaves<W>) -> Self::Of<W>;
    /// Maps every array (with its index), keeping the structure.
    fn map<W: Clone, U: Clone>(x: Self::Of<W>, f: impl FnMut(usize, W) -> U) -> Self::Of<U>;
}

/// One output array.
#[derive(Clone, Copy, Debug)]
pub struct One;
impl Structure for One {
    type Of<W: Clone> = W;
    fn leaves<W: Clone>(x: W) -> Leaves<W> {
        smallvec::smallvec![x]
    }
    fn from_leaves<W: Clone>(leaves: Leaves<W>) -> W {
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
    fn leaves<W: Clone>(x: Vec<W>) -> Leaves<W> {
        Leaves::from_vec(x)
    }
    fn from_leaves<W: Clone>(leaves: Leaves<W>) -> Vec<W> {
        leaves.into_vec()
    }
    fn map<W: Clone, U: Clone>(x: Vec<W>, mut f: impl FnMut(usize, W) -> U) -> Vec<U> {
        x.into_iter().enumerate().map(|(i, w)| f(i, w)).collect()
    }
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
