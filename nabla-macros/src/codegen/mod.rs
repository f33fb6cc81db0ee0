//! Code generation: assembles the generated items for one function.
//!
//! For `fn foo` the output is, at the function's own level:
//!
//! * `const foo: foo::Function` — the function value: it dereferences to a
//!   plain `fn` pointer (so `foo(&x)` works) and implements the transform
//!   traits (so `nabla::grad(foo)` works);
//! * `mod foo` — `Function` and the variants: `primal` (the body as
//!   written), `forward::<V>` (generic A-normal form), `jvp::<V>` (forward
//!   at `Dual<V>`), `vjp::<V>` (forward sweep + reverse-sweep closure);
//! * hidden `__nabla_foo_*` items holding those variants and the monomorphic
//!   entry points of `grad`, `value_and_grad`, `vjp` and `jvp` (they live at
//!   the function's level so every path in the body resolves as written).
//!
//! The pieces:
//!
//! * [`sig`](mod@sig): the generic variants' signature;
//! * [`variants`]: `primal`, `forward` and `jvp`;
//! * [`forward`]: the forward program (also the VJP's forward sweep), with
//!   [`held`] (how branches and loop iterations hold their residuals for
//!   the reverse sweep) and [`revolve`] (checkpointed loops);
//! * [`vjp`]: the VJP programs, whose pullbacks run [`reverse`] (which also
//!   says what each body's residuals are), with [`reads`] (what each
//!   primitive's reverse step reads, so only that is kept);
//! * [`shapes`]: the shape-only VJP of a function with an output-only tail;
//! * [`entries`](mod@entries): the monomorphic entry points and transform trait impls;
//! * [`names`]: names shared by the generated pieces;
//! * [`docs`]: the function value's rustdoc, with the signature.

mod docs;
mod entries;
mod forward;
mod fused;
mod held;
pub(crate) mod names;
mod reads;
mod reverse;
mod revolve;
mod shapes;
mod sig;
mod variants;
mod vjp;

pub use entries::entries;
pub use sig::{sig, with_lifetime};
pub use variants::callable;

use crate::analysis::Analysis;
use crate::errors::Errors;
use crate::ir::Function;
use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemFn;

/// Everything generated for one annotated function.
pub fn expand(
    f: &Function,
    analysis: &Analysis,
    item: &ItemFn,
    regions: &[crate::fusion::Region],
) -> TokenStream {
    let s = sig(f);
    if f.method {
        return method_items(f, analysis, item, &s, regions);
    }
    let fused = fused::items(regions);
    let primal = variants::primal_fn(f, item);
    let forward = variants::forward_fn(f, &s);
    let jvp = variants::jvp_fn(f, &s);
    let vjp = vjp::vjp_fn(f, &analysis.active, &s);
    let shapes = analysis
        .tail
        .as_ref()
        .map(|t| shapes::vjp_tail_fn(f, &analysis.active, &s, t));
    let value = function_value(f, item, !regions.is_empty());
    let callable = variants::callable(f, &s);
    let entries = entries(f, &s, analysis);
    quote! {
        #[doc(hidden)]
        #primal
        #forward
        #jvp
        #vjp
        #shapes
        #fused

        #value
        #callable

        #entries
    }
}

/// What a `#[differentiable]` method expands to, inside its `impl`: the
/// method as written (what direct calls and the tape run), and hidden
/// methods `__nabla_<m>_forward` and `__nabla_<m>_vjp` (with
/// `_vjp_masked`) that differentiable code calling `part.m(..)` runs. An
/// `impl` holds no structs, so the fused regions' items are local items
/// of the hidden methods that call them.
fn method_items(
    f: &Function,
    analysis: &Analysis,
    item: &ItemFn,
    s: &sig::Sig,
    regions: &[crate::fusion::Region],
) -> TokenStream {
    let mut primal = variants::as_written(item);
    primal.vis = f.vis.clone();
    let forward = variants::forward_fn(f, s);
    let vjp = vjp::vjp_fn(f, &analysis.active, s);
    let hidden = quote!(#forward #vjp);
    if regions.is_empty() {
        return quote!(#primal #hidden);
    }
    let fused = fused::items(regions);
    let (Ok(mut file), Ok(local)) = (
        syn::parse2::<syn::File>(hidden.clone()),
        syn::parse2::<syn::File>(fused),
    ) else {
        return quote!(#primal #hidden);
    };
    let masked = names::item(f, "vjp_masked").to_string();
    let fwd = names::item(f, "forward").to_string();
    for it in &mut file.items {
        if let syn::Item::Fn(func) = it
            && (func.sig.ident == masked || func.sig.ident == fwd)
        {
            let stmts = local.items.iter().cloned().map(syn::Stmt::Item);
            func.block.stmts.splice(0..0, stmts);
        }
    }
    quote!(#primal #file)
}

/// Whether direct calls of `f` go through its forward program: a function
/// of arrays returning one array, with a fused region (`fused`).
fn fused_call(f: &Function, fused: bool) -> bool {
    fused
        && f.tier == crate::ir::Tier::Array
        && !f.tuple_output
        && matches!(f.outputs.first(), Some(crate::ir::Output::Value(_)))
        && f.params.iter().all(|p| p.var.is_some() && p.tree.is_none())
}

/// What a function that failed to lower expands to: the errors, then the
/// expansion of `stub` (the function's signature with outputs that are
/// never computed, `lower::stub`), whose body as written is replaced too,
/// so the rest of the crate type-checks, calls and transforms of the
/// function report nothing more, and rustc does not report the
/// unsupported code a second time. Without a stub (the signature has
/// errors), the function as written.
pub fn with_errors(item: &ItemFn, stub: Option<&Function>, cx: Errors) -> TokenStream {
    let err = cx.into_compile_error();
    let Some(f) = stub else {
        let plain = variants::as_written(item);
        return quote!(#err #[allow(warnings)] #plain);
    };
    let mut unwritten = item.clone();
    let krate = &f.krate;
    unwritten.block = syn::parse_quote!({
        #krate::transforms::private::failed()
    });
    unwritten.attrs.push(syn::parse_quote!(#[allow(warnings)]));
    let analysis = crate::analysis::analyse(f);
    let expanded = expand(f, &analysis, &unwritten, &[]);
    quote!(#err #expanded)
}

/// The function value (`const foo`, with the user's docs), the module of
/// its variants, and its `Deref` to the primal as a `fn` pointer.
fn function_value(f: &Function, item: &ItemFn, fused: bool) -> TokenStream {
    let name = &f.ident;
    let vis = &f.vis;
    let primal = names::item(f, "primal");
    let (fwd, jvp, vjp) = (
        names::item(f, "forward"),
        names::item(f, "jvp"),
        names::item(f, "vjp"),
    );
    let docs = docs::with_signature(f, &item.attrs);
    let user_types: Vec<&syn::Type> = f.params.iter().map(|p| &p.ty).collect();
    let ret_ty = &f.ret_ty;
    let reexport = names::reexport(vis);
    let module_doc = format!(
        "Generated variants of the differentiable function [`{name}`](const@{name}): `primal` (as written), \
         `forward::<V>`, `jvp::<V>` and `vjp::<V>`."
    );
    // A function of arrays returning one array is called through its
    // forward program at `Array`, so a direct call runs fused regions too;
    // other functions run the body as written.
    let (target, call) = if fused_call(f, fused) {
        let entry = names::item(f, "call");
        let krate = &f.krate;
        let params = f.params.iter().map(|p| {
            let (id, ty) = (&p.ident, &p.ty);
            quote!(#id: #ty)
        });
        let args = f.params.iter().map(|p| {
            let id = &p.ident;
            if p.by_ref { quote!(#id) } else { quote!(&#id) }
        });
        (
            entry.clone(),
            quote! {
                #[doc(hidden)]
                #[track_caller]
                #[allow(clippy::all)]
                fn #entry(#(#params),*) -> #ret_ty {
                    #fwd::<#krate::Array>(#(#args),*)
                }
            },
        )
    } else {
        (primal.clone(), quote!())
    };
    quote! {
        #call
        #docs
        #[allow(non_upper_case_globals)]
        #vis const #name: #name::Function = #name::Function;

        #[doc = #module_doc]
        #vis mod #name {
            #reexport use super::{#primal as primal, #fwd as forward, #jvp as jvp, #vjp as vjp};
            /// The type of the function value (see the constant of the same name).
            #[derive(Clone, Copy, Debug, Default)]
            #reexport struct Function;
        }

        impl ::core::ops::Deref for #name::Function {
            type Target = fn(#(#user_types),*) -> #ret_ty;
            fn deref(&self) -> &Self::Target {
                &(#target as fn(#(#user_types),*) -> #ret_ty)
            }
        }
    }
}
