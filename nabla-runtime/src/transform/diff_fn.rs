//! [`DiffFn`]: a composable function value's two generic programs
//! (`eval::<V>` and `vjp::<V>`), the types of its arguments and outputs
//! at a value type, and how a function value is called ([`Caller`]).

use crate::vocab::arity::{AList, Arity};
use crate::vocab::structure::{Slot, Structure};
use crate::{Array, ArrayValue};

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

use crate::vocab::accumulate::OutSpec;

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
