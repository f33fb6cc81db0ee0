//! Gradient checking for users: [`check_grads`] compares a function's
//! forward-mode (JVP) and reverse-mode (VJP) derivatives with each other
//! and with central finite differences, up to second order, as JAX's
//! `jax.test_util.check_grads` and PyTorch's `gradcheck` do.
//!
//! Run it on every custom op's rules and on any function whose
//! derivatives matter: a wrong rule shows up as the argument, element and
//! order that disagree, and by how much.
//!
//! ```
//! use nabla::Array;
//!
//! #[nabla::differentiable]
//! fn f(x: &Array, y: &Array) -> Array {
//!     (x.sin() * y).sum()
//! }
//!
//! fn main() {
//!     let x = Array::from_vec(vec![0.3f64, -1.2, 2.0], &[3]);
//!     let y = Array::from_vec(vec![1.5f64, 0.5, -0.7], &[3]);
//!     nabla::testing::check_grads(f, &(x, y), 2);
//! }
//! ```

mod compare;
mod points;

pub use compare::{Checked, Mismatch};

use crate::Array;
use crate::compose::{ArgsOf, DiffFn, Slot, TreeS, TreeVal};
use crate::tree::Tree;
use std::borrow::Borrow;

/// How [`check_grads_with`] checks: the highest order, the tolerances
/// (`|a - b| <= atol + rtol · max(|a|, |b|)`), the finite-difference step
/// (relative to `max(1, |x|)`) and how many elements of each array it
/// perturbs (all of them up to this count, else that many spread evenly).
#[derive(Clone, Debug)]
pub struct Options {
    /// 1: first derivatives; 2: also the derivatives of the JVP and of the
    /// VJP (forward-over-forward and forward-over-reverse).
    pub order: usize,
    /// Absolute tolerance; `None`: 1e-5 for f64, 5e-3 for f32.
    pub atol: Option<f64>,
    /// Relative tolerance; `None`: as `atol`.
    pub rtol: Option<f64>,
    /// Finite-difference step; `None`: 1e-6 (differences are taken in
    /// f64, f32 arguments promoted where the function accepts it, else
    /// 1e-3 in f32).
    pub eps: Option<f64>,
    /// Elements perturbed per array, and cotangent elements per output.
    pub max_elements: usize,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            order: 2,
            atol: None,
            rtol: None,
            eps: None,
            max_elements: 12,
        }
    }
}

/// Checks `f`'s derivatives at `args` up to `order` (1 or 2) and panics
/// with a report of the worst disagreement: which argument and element,
/// which output element, which order and mode, both values and by how
/// much. `args` is `f`'s argument tuple (`&(x, y)` for `f(x, y)`; trees
/// of arrays where `f` takes trees). Integer and boolean arrays are held
/// fixed.
///
/// ```should_panic
/// use nabla::{Array, ArrayValue};
///
/// // The VJP rule is off by a factor of two: check_grads names the
/// // mode, the argument and the element, and both values.
/// #[nabla::custom_op(jvp = cube_jvp, vjp = cube_vjp)]
/// fn cube(x: &Array) -> Array {
///     x * x * x
/// }
/// fn cube_jvp<V: ArrayValue>(x: &V, _y: &V, dx: Option<&V>) -> V {
///     dx.map(|d| x.mul(x).mul(d).mul_scalar(3.0)).unwrap_or_else(|| x.zeros_like())
/// }
/// fn cube_vjp<V: ArrayValue>(x: &V, _y: &V, ct: &V) -> V {
///     x.mul(x).mul(ct).mul_scalar(6.0)
/// }
///
/// fn main() {
///     let x = Array::from_vec(vec![0.5f64, 2.0], &[2]);
///     nabla::testing::check_grads(cube, &(x,), 1);
/// }
/// ```
#[track_caller]
pub fn check_grads<F: DiffFn>(f: F, args: &ArgsOf<F, Array>, order: usize) {
    let opts = Options {
        order,
        ..Options::default()
    };
    if let Err(m) = check_grads_with(f, args, &opts) {
        panic!("{m}");
    }
}

/// [`check_grads`] with [`Options`], returning what it compared or the
/// worst disagreement as a value.
///
/// ```
/// use nabla::Array;
/// use nabla::testing::{check_grads_with, Options};
///
/// #[nabla::differentiable]
/// fn f(x: &Array) -> Array {
///     x.exp().sum()
/// }
///
/// fn main() {
///     let x = Array::from_vec(vec![0.1f32, 0.2, 0.3], &[3]);
///     let opts = Options { order: 1, ..Options::default() };
///     let checked = check_grads_with(f, &(x,), &opts).expect("exp's rules are right");
///     assert!(checked.comparisons > 0);
/// }
/// ```
#[track_caller]
pub fn check_grads_with<F: DiffFn>(
    f: F,
    args: &ArgsOf<F, Array>,
    opts: &Options,
) -> Result<Checked, Box<Mismatch>> {
    let _ = f;
    assert!(
        (1..=2).contains(&opts.order),
        "check_grads: order {} is not supported; use 1 (first derivatives) or 2 (also forward-over-forward and forward-over-reverse)",
        opts.order
    );
    compare::run::<F>(args, opts)
}

/// A tree argument as [`check_grads`] takes it: a `#[derive(Tree)]`
/// struct, or a slice or `Vec` of arrays next to other parameters, as the
/// structure of arrays `f`'s programs run on. (A function of one
/// `&[Array]` alone takes the `Vec` itself.)
///
/// ```
/// use nabla::Array;
/// use nabla::testing::{check_grads, tree};
///
/// #[nabla::differentiable]
/// fn layers(ws: &[Array], x: &Array) -> Array {
///     let mut h = x.clone();
///     for w in ws {
///         h = h.matmul(w).tanh();
///     }
///     h.sum()
/// }
///
/// fn main() {
///     let ws = vec![
///         Array::from_vec(vec![0.5f64, -0.3, 0.2, 0.8], &[2, 2]),
///         Array::from_vec(vec![-0.1f64, 0.4, 0.6, 0.3], &[2, 2]),
///     ];
///     let x = Array::from_vec(vec![1.0f64, -2.0], &[1, 2]);
///     check_grads(layers, &(tree(&ws[..]), x), 2);
/// }
/// ```
pub fn tree<T: Tree + ?Sized + 'static>(t: &T) -> TreeVal<T, Array>
where
    T::Grad: Borrow<T> + 'static,
{
    <TreeS<T> as Slot>::arg(t)
}
