//! Nabla's procedural macros: the `#[differentiable]` source
//! transformation and the transform macros. This crate depends on nothing
//! of Nabla's and emits paths under `::nabla` (or the path given with
//! `#[differentiable(crate = ..)]`).
//!
//! `#[differentiable]` is a compiler pipeline (`expand_differentiable`):
//!
//! 1. `lower`: the options and the `syn::ItemFn` → the A-normal-form `ir`,
//!    applying the syntax rewrites of `desugar` on the way;
//! 2. `fusion`: trees of elementwise operations become calls of fused
//!    regions (skipped with `fuse = false`);
//! 3. `analysis`: activity and the output-only tail, computed once;
//! 4. `codegen`: the forward, JVP and VJP programs, the regions' items and
//!    the entry points.
//!
//! Option parsing and lowering report their errors to one `errors::Errors`
//! context, and the macro emits them together, with a stand-in of the
//! function (`lower::stub`: its signature, outputs never computed) so that
//! each mistake is one error, not a cascade at its callers. The op table (`optable`,
//! with the tail rules in `tail`) is shared by lowering, analysis and code
//! generation. The other macros are `custom` (`#[custom_op]`), `tree`
//! (`#[derive(Tree)]`) and `transforms` (`grad!`, `vmap!`, ..).

mod analysis;
mod codegen;
mod custom;
mod desugar;
mod errors;
#[cfg(test)]
mod expansion_tests;
mod fusion;
mod ir;
mod lower;
mod optable;
mod tail;
mod transforms;
mod tree;

use errors::Errors;
use proc_macro::TokenStream;

/// Makes a function differentiable: generates its forward, JVP and VJP
/// variants as Rust code at compile time, so every transform (`grad`,
/// `value_and_grad`, `vjp`, `jvp`, `vmap`, `jacfwd`, `jacrev`, `hessian`,
/// `checkpoint`, and `jvp`/`vjp` of `grad`) calls generated code and
/// nothing is traced at run time. The function stays callable as written.
///
/// Parameters are arrays (`Array`/`&Array`), floats (`f32`/`f64`, for
/// functions of floats only), trees (`#[derive(Tree)]` structs, `Vec`s,
/// slices and tuples of arrays) or statics (integers, bools, `#[nondiff]`
/// parameters, anything else that is not differentiated). A method
/// `fn m(&self, ..)` in an inherent `impl` of a `#[derive(Tree)]` type is
/// differentiable too (`self` is a tree), and differentiable code calls it
/// on a tree or a part of one: `model.forward(&x)`,
/// `self.blocks[i].forward(&h)`. The body may use
/// `let`, `let mut` and reassignment, arithmetic, the ops as methods or
/// `nabla::` functions, calls of other differentiable functions, `if` and
/// `match` (on static or data-derived conditions), `for` and `while` loops,
/// `break`, `continue` and early `return`, `if let Some(b) = &self.bias` on
/// an optional part of a tree, `*self.eps` to read a `Setting`; anything
/// else is a compile error
/// that says what to write instead. `#[differentiable(crate = path)]`
/// names the crate the generated code refers to (default `::nabla`).
///
/// ```
/// use nabla::prelude::*;
///
/// #[differentiable]
/// fn loss(w: &Array, x: &Array) -> Array {
///     nabla::mean(&x.matmul(w).tanh().square())
/// }
///
/// fn main() {
///     let w = Array::from_vec(vec![0.5f64, -0.25], &[2, 1]);
///     let x = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]);
///     let l = loss(&w, &x); // an ordinary call
///     let (value, g) = value_and_grad(loss)(&w, &x);
///     assert_eq!(value.item(), l.item());
///     assert_eq!(g.shape(), w.shape());
/// }
/// ```
#[proc_macro_attribute]
pub fn differentiable(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand_differentiable(attr.into(), item.into()).into()
}

/// `#[differentiable]` on `proc_macro2` tokens: lower, analyse, expand.
fn expand_differentiable(
    attr: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    let mut cx = Errors::new();
    let Some((opts, item)) = lower::parse(attr, item, &mut cx) else {
        return cx.into_compile_error();
    };
    let lowered = lower::lower(&item, &opts, &mut cx);
    let Some(mut ir) = lowered.filter(|_| cx.is_empty()) else {
        // One error per mistake: the errors, and a stand-in with the
        // declared signature that keeps callers from cascading.
        let stub = lower::stub(&item, &opts);
        return codegen::with_errors(&item, stub.as_ref(), cx);
    };
    let regions = if opts.fuse {
        fusion::fuse(&mut ir)
    } else {
        Vec::new()
    };
    let analysis = analysis::analyse(&ir);
    codegen::expand(&ir, &analysis, &item, &regions)
}

/// `#[custom_op(jvp = my_jvp, vjp = my_vjp, batch = ..)]` on `fn op(x:
/// &Array, .., k: f64, ..) -> Array`: a user-defined primitive. The function
/// is the forward computation on arrays (custom kernels allowed); parameters
/// that are not arrays are static. The rules are
/// `fn my_jvp<V: ArrayValue>(x: &V, .., out: &V, dx: Option<&V>, .., k: f64, ..) -> V`
/// and `fn my_vjp<V: ArrayValue>(x: &V, .., out: &V, ct: &V, k: f64, ..) -> V`
/// (a tuple of cotangents for several inputs); at least one is required.
/// `batch = elementwise` runs the op once on the stacked inputs under
/// `vmap`; `batch = my_batch` names a rule
/// `fn my_batch<V: ArrayValue>(x: &V, .., batched: [bool; N], k: f64, ..) -> V`
/// whose batched inputs carry the batch axis first, as must its output.
///
/// ```
/// use nabla::prelude::*;
///
/// /// `x³` with hand-written rules.
/// #[custom_op(jvp = cube_jvp, vjp = cube_vjp, batch = elementwise)]
/// fn cube(x: &Array) -> Array {
///     x * &(x * x)
/// }
/// fn cube_jvp<V: ArrayValue>(x: &V, _y: &V, dx: Option<&V>) -> V {
///     dx.map(|d| d.mul(&x.square().mul_scalar(3.0))).unwrap_or_else(|| x.zeros_like())
/// }
/// fn cube_vjp<V: ArrayValue>(x: &V, _y: &V, ct: &V) -> V {
///     ct.mul(&x.square().mul_scalar(3.0))
/// }
///
/// #[differentiable]
/// fn total(x: &Array) -> Array {
///     nabla::sum(&cube(x))
/// }
///
/// fn main() {
///     let x = Array::from_vec(vec![1.0f64, 2.0], &[2]);
///     assert_eq!(grad(total)(&x).to_vec::<f64>(), vec![3.0, 12.0]);
///     // Check hand-written rules against each other and against finite
///     // differences, derivatives of the rules included.
///     nabla::testing::check_grads(cube, &(x,), 2);
/// }
/// ```
///
/// The rules are trusted as given: run
/// `nabla::testing::check_grads(op, &(args..,), 2)` on every custom op, at
/// a few points of its domain (it names the mode, argument and element of
/// a wrong rule).
#[proc_macro_attribute]
pub fn custom_op(attr: TokenStream, item: TokenStream) -> TokenStream {
    expand_custom_op(attr.into(), item.into()).into()
}

/// `#[custom_op]` on `proc_macro2` tokens.
fn expand_custom_op(
    attr: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> proc_macro2::TokenStream {
    let rules = match custom::rules(attr) {
        Ok(r) => r,
        Err(e) => return e.to_compile_error(),
    };
    let item: syn::ItemFn = match syn::parse2(item) {
        Ok(i) => i,
        Err(e) => return e.to_compile_error(),
    };
    match custom::expand(rules, &item) {
        Ok(ts) => ts,
        Err(e) => {
            let err = e.to_compile_error();
            quote::quote!(#err #[allow(warnings)] #item)
        }
    }
}

/// `#[derive(Tree)]`: a struct of arrays (fields: `Array`, `Vec<Array>`,
/// nested `Tree` structs, arrays, tuples) that can be passed to a
/// differentiable function; its gradient is a value of the same struct.
///
/// ```
/// use nabla::prelude::*;
///
/// #[derive(Clone, Tree)]
/// struct Linear {
///     w: Array,
///     b: Array,
/// }
///
/// #[differentiable]
/// fn energy(p: &Linear, x: &Array) -> Array {
///     nabla::sum(&(x.matmul(&p.w) + &p.b).square())
/// }
///
/// fn main() {
///     let p = Linear { w: Array::ones(&[2, 2], DType::F64), b: Array::zeros(&[2], DType::F64) };
///     let x = Array::ones(&[1, 2], DType::F64);
///     let g: Linear = grad(energy)(&p, &x);
///     assert_eq!(g.b.to_vec::<f64>(), vec![4.0, 4.0]);
/// }
/// ```
#[proc_macro_derive(Tree)]
pub fn derive_tree(input: TokenStream) -> TokenStream {
    match syn::parse::<syn::DeriveInput>(input).and_then(tree::derive) {
        Ok(ts) => ts.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// `grad!(f)`, `grad!(f, argnums = (0, 1))`, `grad!(f, has_aux)`: the
/// gradient of a differentiable function as a callable value.
///
/// ```
/// use nabla::prelude::*;
///
/// #[differentiable]
/// fn f(a: f64, b: f64) -> f64 {
///     a * a * b
/// }
///
/// fn main() {
///     assert_eq!(grad!(f)(3.0, 2.0), 12.0);
///     assert_eq!(grad!(f, argnums = (0, 1))(3.0, 2.0), (12.0, 9.0));
/// }
/// ```
#[proc_macro]
pub fn grad(input: TokenStream) -> TokenStream {
    match syn::parse::<transforms::TransformArgs>(input) {
        Ok(a) => transforms::grad(a, false).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// `value_and_grad!(f, argnums = .., has_aux)`: the output and the gradient.
///
/// ```
/// use nabla::prelude::*;
///
/// #[differentiable]
/// fn f(a: f64, b: f64) -> f64 {
///     a * b
/// }
///
/// fn main() {
///     assert_eq!(value_and_grad!(f, argnums = 1)(3.0, 2.0), (6.0, 3.0));
/// }
/// ```
#[proc_macro]
pub fn value_and_grad(input: TokenStream) -> TokenStream {
    match syn::parse::<transforms::TransformArgs>(input) {
        Ok(a) => transforms::grad(a, true).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// `vjp!(f)(args..) -> (output, pullback)`; the pullback maps an output
/// cotangent to one cotangent per differentiable argument.
///
/// ```
/// use nabla::prelude::*;
///
/// #[differentiable]
/// fn f(a: f64, b: f64) -> f64 {
///     a * b
/// }
///
/// fn main() {
///     let (y, pullback) = vjp!(f)(3.0, 2.0);
///     assert_eq!((y, pullback(&1.0)), (6.0, (2.0, 3.0)));
/// }
/// ```
#[proc_macro]
pub fn vjp(input: TokenStream) -> TokenStream {
    let f = proc_macro2::TokenStream::from(input);
    quote::quote!(::nabla::vjp(#f)).into()
}

/// `jvp!(f)((primals..), (tangents..)) -> (output, output tangent)`.
///
/// ```
/// use nabla::prelude::*;
///
/// #[differentiable]
/// fn f(a: f64, b: f64) -> f64 {
///     a * b
/// }
///
/// fn main() {
///     assert_eq!(jvp!(f)((3.0, 2.0), (1.0, 0.0)), (6.0, 2.0));
///     // The gradient and a Hessian-vector product:
///     assert_eq!(jvp!(grad!(f))((3.0, 2.0), (0.0, 1.0)), (2.0, 1.0));
/// }
/// ```
#[proc_macro]
pub fn jvp(input: TokenStream) -> TokenStream {
    let f = proc_macro2::TokenStream::from(input);
    quote::quote!(::nabla::jvp(#f)).into()
}

/// `vmap!(f)`, `vmap!(f, in_axes = (None, 0, 0), out_axes = 0)`: `f`
/// mapped over the given axes of its arguments (`None`: shared).
///
/// ```
/// use nabla::prelude::*;
///
/// #[differentiable]
/// fn dot(a: &Array, b: &Array) -> Array {
///     nabla::sum(&(a * b))
/// }
///
/// fn main() {
///     let a = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]);
///     let b = Array::from_vec(vec![1.0f64, 1.0], &[2]);
///     let rows = vmap!(dot, in_axes = (0, None))(&a, &b);
///     assert_eq!(rows.to_vec::<f64>(), vec![3.0, 7.0]);
/// }
/// ```
#[proc_macro]
pub fn vmap(input: TokenStream) -> TokenStream {
    match syn::parse::<transforms::TransformArgs>(input) {
        Ok(a) => transforms::vmap(a).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// `jacfwd!(f)`, `jacfwd!(f, argnums = i)`: the Jacobian by forward mode,
/// output axes first (`out_shape ++ in_shape`, as in JAX).
///
/// ```
/// use nabla::prelude::*;
///
/// #[differentiable]
/// fn double(x: &Array) -> Array {
///     x * 2.0
/// }
///
/// fn main() {
///     let x = Array::ones(&[2], DType::F64);
///     assert_eq!(jacfwd!(double)(&x).to_vec::<f64>(), vec![2.0, 0.0, 0.0, 2.0]);
/// }
/// ```
#[proc_macro]
pub fn jacfwd(input: TokenStream) -> TokenStream {
    match syn::parse::<transforms::TransformArgs>(input) {
        Ok(a) => transforms::jacobian(a, "jacfwd").into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// `jacrev!(f)`, `jacrev!(f, argnums = i)`: the Jacobian by reverse mode.
///
/// ```
/// use nabla::prelude::*;
///
/// #[differentiable]
/// fn squares(x: &Array) -> Array {
///     x * x
/// }
///
/// fn main() {
///     let x = Array::from_vec(vec![1.0f64, 3.0], &[2]);
///     assert_eq!(jacrev!(squares)(&x).to_vec::<f64>(), vec![2.0, 0.0, 0.0, 6.0]);
/// }
/// ```
#[proc_macro]
pub fn jacrev(input: TokenStream) -> TokenStream {
    match syn::parse::<transforms::TransformArgs>(input) {
        Ok(a) => transforms::jacobian(a, "jacrev").into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// `hessian!(f)`, `hessian!(f, argnums = i)`: `jacfwd(jacrev(f))`.
///
/// ```
/// use nabla::prelude::*;
///
/// #[differentiable]
/// fn cubes(x: &Array) -> Array {
///     nabla::sum(&(x * x * x))
/// }
///
/// fn main() {
///     let x = Array::from_vec(vec![1.0f64, 2.0], &[2]);
///     assert_eq!(hessian!(cubes)(&x).to_vec::<f64>(), vec![6.0, 0.0, 0.0, 12.0]);
/// }
/// ```
#[proc_macro]
pub fn hessian(input: TokenStream) -> TokenStream {
    match syn::parse::<transforms::TransformArgs>(input) {
        Ok(a) => transforms::jacobian(a, "hessian").into(),
        Err(e) => e.to_compile_error().into(),
    }
}
