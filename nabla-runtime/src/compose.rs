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
//!     nabla_runtime::sum(&x.sin())
//! }
//!
//! fn main() {
//!     let x = Array::from_vec(vec![0.1f64, 0.2, 0.3, 0.4, 0.5, 0.6], &[2, 3]);
//!     let h = compose::jacfwd(compose::jacrev(compose::vmap(foo)));
//!     assert_eq!(h(&x).shape(), &[2, 2, 3, 2, 3]);
//! }
//! ```

use crate::{Array, ArrayValue, Batched, DType, Dual, Value};
use std::ops::Deref;

/// A differentiable function of one array returning one array, as generic
/// programs. Implemented by `#[differentiable]` for such functions and by
/// every transform of one.
pub trait DiffFn1: Copy + 'static {
    /// The function at value type `V`.
    fn eval<V: ArrayValue>(x: &V) -> V;
    /// The output and the pullback at value type `V`.
    fn vjp<V: ArrayValue>(x: &V) -> (V, impl FnOnce(V) -> V + use<V, Self>);
}

/// Calls a [`DiffFn1`] on an array (what the transforms dereference to).
pub fn call<F: DiffFn1>(x: &Array) -> Array {
    F::eval::<Array>(x)
}

macro_rules! callable {
    ($t:ident) => {
        impl<F: DiffFn1> Deref for $t<F> {
            type Target = fn(&Array) -> Array;
            fn deref(&self) -> &Self::Target {
                &const { call::<$t<F>> as fn(&Array) -> Array }
            }
        }
    };
}

/// `vmap(f)`: `f` mapped over axis 0 of its argument (output axis 0).
#[derive(Clone, Copy, Debug, Default)]
pub struct Vmap<F>(pub F);
/// `jacfwd(f)`: the Jacobian by forward mode, shape `out ++ in`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Jacfwd<F>(pub F);
/// `jacrev(f)`: the Jacobian by reverse mode, shape `out ++ in`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Jacrev<F>(pub F);

callable!(Vmap);
callable!(Jacfwd);
callable!(Jacrev);

/// Maps `f` over the leading axis of its argument.
pub fn vmap<F: DiffFn1>(f: F) -> Vmap<F> {
    Vmap(f)
}

/// The Jacobian of `f` by forward mode (one tangent per input element,
/// batched).
pub fn jacfwd<F: DiffFn1>(f: F) -> Jacfwd<F> {
    Jacfwd(f)
}

/// The Jacobian of `f` by reverse mode (one cotangent per output element,
/// batched).
pub fn jacrev<F: DiffFn1>(f: F) -> Jacrev<F> {
    Jacrev(f)
}

/// The Hessian: `jacfwd(jacrev(f))`.
pub fn hessian<F: DiffFn1>(f: F) -> Jacfwd<Jacrev<F>> {
    Jacfwd(Jacrev(f))
}

#[track_caller]
fn batch_of<V: ArrayValue>(x: &V, op: &str) -> usize {
    match x.shape_vec().first() {
        Some(&n) => n,
        None => panic!(
            "{op}: vmap maps over axis 0, but the argument is a scalar (shape []); give it a batch axis"
        ),
    }
}

impl<F: DiffFn1> DiffFn1 for Vmap<F> {
    fn eval<V: ArrayValue>(x: &V) -> V {
        let n = batch_of(x, "vmap");
        F::eval::<Batched<V>>(&Batched::new(x.clone(), Some(0))).materialize(n, 0)
    }
    fn vjp<V: ArrayValue>(x: &V) -> (V, impl FnOnce(V) -> V + use<V, F>) {
        let n = batch_of(x, "vmap");
        let (y, pullback) = F::vjp::<Batched<V>>(&Batched::new(x.clone(), Some(0)));
        (y.materialize(n, 0), move |ct: V| {
            pullback(Batched::new(ct, Some(0))).materialize(n, 0)
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

/// `vjp` of `x ↦ J_f(x)` at cotangent `ct` (shape `out ++ in`):
/// `Σ_o H_{f_o} ct[o, :]` by forward-over-reverse, batched over `o`.
fn jacobian_vjp<F: DiffFn1, V: ArrayValue>(x: &V, out_shape: &[usize], ct: V) -> V {
    let xs = x.shape_vec();
    let m = numel(out_shape);
    let rows = ct.reshape(&cat(&[m], &xs));
    let xd = Dual::new(
        Batched::unbatched(x.clone()),
        Some(Batched::new(rows, Some(0))),
    );
    let (_, pullback) = F::vjp::<Dual<Batched<V>>>(&xd);
    let onehot = Dual::constant(Batched::new(basis(x, out_shape), Some(0)));
    let g = pullback(onehot).tangent_or_zero();
    g.materialize(m, 0).sum_axes(&[0], false).reshape(&xs)
}

impl<F: DiffFn1> DiffFn1 for Jacrev<F> {
    fn eval<V: ArrayValue>(x: &V) -> V {
        let xs = x.shape_vec();
        let (y, pullback) = F::vjp::<Batched<V>>(&Batched::unbatched(x.clone()));
        let ys = y.shape_vec();
        let m = numel(&ys);
        let g = pullback(Batched::new(basis(x, &ys), Some(0)));
        g.materialize(m, 0).reshape(&cat(&ys, &xs))
    }
    fn vjp<V: ArrayValue>(x: &V) -> (V, impl FnOnce(V) -> V + use<V, F>) {
        let j = Self::eval::<V>(x);
        let n = x.shape_vec().len();
        let out_shape = j.shape_vec()[..j.shape_vec().len() - n].to_vec();
        let x = x.clone();
        (j, move |ct: V| jacobian_vjp::<F, V>(&x, &out_shape, ct))
    }
}

impl<F: DiffFn1> DiffFn1 for Jacfwd<F> {
    fn eval<V: ArrayValue>(x: &V) -> V {
        let xs = x.shape_vec();
        let n = numel(&xs);
        let xd = Dual::new(
            Batched::unbatched(x.clone()),
            Some(Batched::new(basis(x, &xs), Some(0))),
        );
        let t = F::eval::<Dual<Batched<V>>>(&xd).tangent_or_zero();
        let ys = t.shape_vec();
        t.materialize(n, ys.len()).reshape(&cat(&ys, &xs))
    }
    fn vjp<V: ArrayValue>(x: &V) -> (V, impl FnOnce(V) -> V + use<V, F>) {
        let j = Self::eval::<V>(x);
        let n = x.shape_vec().len();
        let out_shape = j.shape_vec()[..j.shape_vec().len() - n].to_vec();
        let x = x.clone();
        (j, move |ct: V| jacobian_vjp::<F, V>(&x, &out_shape, ct))
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

use crate::transforms::{Argnum, Grad, GradFn, NoAux};

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
