//! Nabla's procedural macros: the `#[differentiable]` source
//! transformation and the transform macros. This crate depends on nothing
//! of Nabla's and emits paths under `::nabla` (or the path given with
//! `#[differentiable(crate = ..)]`).
//!
//! `#[differentiable]` is a compiler pipeline (`expand_differentiable`):
//!
//! 1. `lower`: the options and the `syn::ItemFn` → the A-normal-form `ir`,
//!    applying the syntax rewrites of `desugar` on the way;
//! 2. `analysis`: activity and the output-only tail, computed once;
//! 3. `codegen`: the forward, JVP and VJP programs and the entry points.
//!
//! Option parsing and lowering report their errors to one `errors::Errors`
//! context, and the macro emits them together. The op table (`optable`,
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
mod ir;
mod lower;
mod optable;
mod tail;
mod transforms;
mod tree;

use errors::Errors;
use proc_macro::TokenStream;

/// Makes a function differentiable: generates its forward, JVP and VJP
/// variants at compile time. See the `nabla` crate for the full story.
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
    let Some(ir) = lower::lower(&item, &opts, &mut cx) else {
        return codegen::with_errors(&item, cx);
    };
    let analysis = analysis::analyse(&ir);
    codegen::expand(&ir, &analysis, &item)
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
#[proc_macro_derive(Tree)]
pub fn derive_tree(input: TokenStream) -> TokenStream {
    match syn::parse::<syn::DeriveInput>(input).and_then(tree::derive) {
        Ok(ts) => ts.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// `grad!(f)`, `grad!(f, argnums = (0, 1))`, `grad!(f, has_aux)`: the
/// gradient of a differentiable function as a callable value.
#[proc_macro]
pub fn grad(input: TokenStream) -> TokenStream {
    match syn::parse::<transforms::TransformArgs>(input) {
        Ok(a) => transforms::grad(a, false).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// `value_and_grad!(f, argnums = .., has_aux)`: the output and the gradient.
#[proc_macro]
pub fn value_and_grad(input: TokenStream) -> TokenStream {
    match syn::parse::<transforms::TransformArgs>(input) {
        Ok(a) => transforms::grad(a, true).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// `vjp!(f)(args..) -> (output, pullback)`.
#[proc_macro]
pub fn vjp(input: TokenStream) -> TokenStream {
    let f = proc_macro2::TokenStream::from(input);
    quote::quote!(::nabla::vjp(#f)).into()
}

/// `jvp!(f)((primals..), (tangents..)) -> (output, output tangent)`.
#[proc_macro]
pub fn jvp(input: TokenStream) -> TokenStream {
    let f = proc_macro2::TokenStream::from(input);
    quote::quote!(::nabla::jvp(#f)).into()
}

/// `vmap!(f)`, `vmap!(f, in_axes = (None, 0, 0), out_axes = 0)`: `f`
/// mapped over the given axes of its arguments (`None`: shared).
#[proc_macro]
pub fn vmap(input: TokenStream) -> TokenStream {
    match syn::parse::<transforms::TransformArgs>(input) {
        Ok(a) => transforms::vmap(a).into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// `jacfwd!(f)`, `jacfwd!(f, argnums = i)`: the Jacobian by forward mode.
#[proc_macro]
pub fn jacfwd(input: TokenStream) -> TokenStream {
    match syn::parse::<transforms::TransformArgs>(input) {
        Ok(a) => transforms::jacobian(a, "jacfwd").into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// `jacrev!(f)`, `jacrev!(f, argnums = i)`: the Jacobian by reverse mode.
#[proc_macro]
pub fn jacrev(input: TokenStream) -> TokenStream {
    match syn::parse::<transforms::TransformArgs>(input) {
        Ok(a) => transforms::jacobian(a, "jacrev").into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// `hessian!(f)`, `hessian!(f, argnums = i)`: `jacfwd(jacrev(f))`.
#[proc_macro]
pub fn hessian(input: TokenStream) -> TokenStream {
    match syn::parse::<transforms::TransformArgs>(input) {
        Ok(a) => transforms::jacobian(a, "hessian").into(),
        Err(e) => e.to_compile_error().into(),
    }
}
