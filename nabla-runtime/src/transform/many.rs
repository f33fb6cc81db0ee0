//! Jacobians with respect to several arguments at once:
//! `jacrev!(f, argnums = (0, 1))(&x, &y)` returns `(∂f/∂x, ∂f/∂y)`, each of
//! shape `out ++ in_i`, as JAX returns a tuple for tuple `argnums`.
//! `jacrev` gets all of them from one reverse pass (the cotangent basis on
//! a batch axis yields every argument's cotangent); `jacfwd` runs one
//! forward pass per selected argument. These are terminal (their result is
//! a tuple, not one array); to nest, take one argument at a time, e.g. the
//! cross Hessian block `jacfwd!(jacrev!(f, argnums = 0), argnums = 1)`.
//!
//! ```
//! use nabla::{compose, transforms::Argnum, Array};
//!
//! #[nabla::differentiable]
//! fn f(x: &Array, y: &Array) -> Array {
//!     x * y
//! }
//!
//! fn main() {
//!     let (x, y) = (Array::from_vec(vec![1.0f64, 2.0], &[2]), Array::from_vec(vec![3.0f64, 4.0], &[2]));
//!     let (jx, jy) = compose::jacrev_many::<(Argnum<0>, Argnum<1>), _>(f)(&x, &y);
//!     assert_eq!(jx.to_vec::<f64>(), vec![3.0, 0.0, 0.0, 4.0]);
//!     assert_eq!(jy.to_vec::<f64>(), vec![1.0, 0.0, 0.0, 2.0]);
//! }
//! ```

use crate::Array;
use crate::transform::diff_fn::{ArgsOf, DiffFn};
use crate::transform::grad::Select;
use crate::transform::jacobian::{jacfwd_blocks, jacrev_blocks};
use crate::vocab::arity::{A1, A2, A3, A4, A5, A6, FixedArity};
use crate::vocab::structure::One;
use std::marker::PhantomData;
use std::ops::Deref;

/// Jacobians of `F` w.r.t. the arguments `S` selects (a tuple of
/// `Argnum`s), by reverse (`REV`) or forward mode.
pub struct JacMany<F, S, const REV: bool>(pub F, PhantomData<S>);

impl<F: Copy, S, const REV: bool> Clone for JacMany<F, S, REV> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<F: Copy, S, const REV: bool> Copy for JacMany<F, S, REV> {}

/// `jacrev` w.r.t. several arguments (`jacrev!(f, argnums = (i, j, ..))`).
pub fn jacrev_many<S, F: DiffFn>(f: F) -> JacMany<F, S, true> {
    JacMany(f, PhantomData)
}

/// `jacfwd` w.r.t. several arguments (`jacfwd!(f, argnums = (i, j, ..))`).
pub fn jacfwd_many<S, F: DiffFn>(f: F) -> JacMany<F, S, false> {
    JacMany(f, PhantomData)
}

/// The selected arguments' Jacobians (placeholders elsewhere, never
/// returned by `Select`).
fn jac_many<F: DiffFn<Out = One>, const REV: bool>(
    x: &ArgsOf<F, Array>,
    wanted: &[usize],
) -> ArgsOf<F, Array>
where
    F::Arity: FixedArity,
{
    let (blocks, ()) = if REV {
        jacrev_blocks::<F, Array>(x, wanted)
    } else {
        jacfwd_blocks::<F, Array>(x, wanted)
    };
    <F::Arity as FixedArity>::from_fn(|i| match wanted.iter().position(|&w| w == i) {
        Some(w) => blocks[w].clone(),
        None => Array::scalar(0.0f64),
    })
}

/// Makes a [`JacMany`] callable as a plain function of arrays.
pub trait ManyCaller<F: DiffFn, S: Select<ArgsOf<F, Array>>, const REV: bool>: FixedArity {
    /// `fn(&Array, ..) -> (Array, ..)`.
    type Ptr: 'static;
    /// The entry point.
    const PTR: &'static Self::Ptr;
}

macro_rules! many_caller {
    ($name:ident, $call:ident, $($a:ident),*) => {
        fn $call<F: DiffFn<Arity = $name, Out = One>, S: Select<ArgsOf<F, Array>>, const REV: bool>($($a: &Array),*) -> S::Out {
            let x = ($($a.clone(),)*);
            S::select(&jac_many::<F, REV>(&x, S::INDICES))
        }
        impl<F: DiffFn<Arity = $name, Out = One>, S: Select<ArgsOf<F, Array>> + 'static, const REV: bool> ManyCaller<F, S, REV> for $name
        where
            S::Out: 'static,
        {
            type Ptr = fn($(many_caller!(@r $a)),*) -> S::Out;
            const PTR: &'static Self::Ptr = &($call::<F, S, REV> as fn($(many_caller!(@r $a)),*) -> S::Out);
        }
    };
    (@r $a:ident) => { &Array };
}
many_caller!(A1, many1, a);
many_caller!(A2, many2, a, b);
many_caller!(A3, many3, a, b, c);
many_caller!(A4, many4, a, b, c, d);
many_caller!(A5, many5, a, b, c, d, e);
many_caller!(A6, many6, a, b, c, d, e, f);

impl<F: DiffFn, S: Select<ArgsOf<F, Array>>, const REV: bool> Deref for JacMany<F, S, REV>
where
    F::Arity: ManyCaller<F, S, REV>,
{
    type Target = <F::Arity as ManyCaller<F, S, REV>>::Ptr;
    fn deref(&self) -> &Self::Target {
        <F::Arity as ManyCaller<F, S, REV>>::PTR
    }
}
