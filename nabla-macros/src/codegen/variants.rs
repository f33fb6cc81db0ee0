//! The function's own variants: `primal` (the body as written),
//! `forward::<V>` (the A-normal form, generic over the value type) and
//! `jvp::<V>` (`forward` at `Dual<V>`).

use super::forward;
use super::names;
use super::sig::Sig;
use super::vjp;
use crate::desugar::loop_attr;
use crate::ir::{Function, Output};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ItemFn;

/// The function as written, without the markers only the macro reads
/// (`#[nondiff]` on parameters, checkpoint attributes on loops).
pub fn as_written(item: &ItemFn) -> ItemFn {
    let mut plain = item.clone();
    loop_attr::strip(&mut plain);
    for arg in plain.sig.inputs.iter_mut() {
        if let syn::FnArg::Typed(pt) = arg {
            pt.attrs.retain(|a| !a.path().is_ident("nondiff"));
        }
    }
    plain
}

/// `__nabla_<f>_primal`: the function as written, with `f`'s visibility and
/// without its docs (they go on the function value).
pub fn primal_fn(f: &Function, item: &ItemFn) -> ItemFn {
    let mut orig = as_written(item);
    orig.sig.ident = names::item(f, "primal");
    orig.vis = f.vis.clone();
    orig.attrs.retain(|a| !a.path().is_ident("doc"));
    if f.promoted && f.tier == crate::ir::Tier::Array {
        orig.block = Box::new(through_forward(f));
        orig.attrs.push(syn::parse_quote!(#[track_caller]));
    }
    orig
}

/// The body of a function of arrays whose statics become values (`let mut
/// v = 0.0;` then `v += dt * a`, which Rust does not compile as written):
/// its forward program at `Array`, its trees passed as their leaves.
fn through_forward(f: &Function) -> syn::Block {
    let krate = &f.krate;
    let fwd = names::item(f, "forward");
    let mut binds = Vec::new();
    let args = f.params.iter().map(|p| {
        let id = &p.ident;
        let r = if p.by_ref { quote!(#id) } else { quote!(&#id) };
        if p.tree.is_some() {
            let t = format_ident!("__tree_{}", id);
            binds.push(quote!(let #t = #krate::tree::TreeArg::new(#r);));
            quote!(&#t)
        } else if p.var.is_some() {
            r
        } else {
            quote!(#id)
        }
    });
    let args: Vec<TokenStream> = args.collect();
    let out = if f.list_output {
        let idx = (0..f.outputs.len()).map(syn::Index::from);
        quote!(::std::vec![#(__out.#idx),*])
    } else {
        quote!(__out)
    };
    syn::parse_quote!({
        #(#binds)*
        let __out = #fwd::<#krate::Array>(#(#args),*);
        #out
    })
}

/// `__nabla_<f>_forward::<V>`: the forward program.
pub fn forward_fn(f: &Function, sig: &Sig) -> TokenStream {
    let Sig {
        generic_params,
        bound,
        out_ty,
        owned_params,
        vis,
        ..
    } = sig;
    let fwd = names::item(f, "forward");
    let body = forward::body(f);
    let outs = vjp::outputs(f);
    quote! {
        #[doc(hidden)]
        #[allow(unused_variables, clippy::all)]
        #vis fn #fwd<'__a, __V: #bound + '__a>(#(#generic_params),*) -> #out_ty {
            #(#owned_params)*
            #body
            #outs
        }
    }
}

/// `__nabla_<f>_jvp::<V>`: the forward program at `Dual<V>`, with an
/// optional tangent per differentiable parameter; returns the outputs and
/// their tangents.
pub fn jvp_fn(f: &Function, sig: &Sig) -> TokenStream {
    let Sig {
        generic_params,
        bound,
        out_ty,
        vis,
        ..
    } = sig;
    let krate = &f.krate;
    let (fwd, jvp) = (names::item(f, "forward"), names::item(f, "jvp"));
    let dual = quote!(#krate::Dual<__V>);
    let tangent_params = f.params.iter().filter(|p| p.var.is_some()).map(|p| {
        let t = format_ident!("{}_dot", p.ident);
        if p.tree.is_some() {
            quote!(#t: ::core::option::Option<&'__a [__V]>)
        } else {
            quote!(#t: ::core::option::Option<&'__a __V>)
        }
    });
    let jvp_generic: Vec<TokenStream> = generic_params
        .iter()
        .cloned()
        .chain(tangent_params)
        .collect();
    let dual_args = dual_args(f);
    let dual_binds = dual_binds(f);
    let (jvp_ret, jvp_split) = split_duals(f, out_ty);
    quote! {
        #[doc(hidden)]
        #[allow(unused_variables, clippy::all)]
        #vis fn #jvp<'__a, __V: #bound + '__a>(#(#jvp_generic),*) -> #jvp_ret {
            #(#dual_binds)*
            let __y = #fwd::<#dual>(#(#dual_args),*);
            #jvp_split
        }
    }
}

/// `let __dual_<x> = ..`: each differentiable parameter paired with its
/// tangent (leaf by leaf for a tree).
fn dual_binds(f: &Function) -> Vec<TokenStream> {
    let krate = &f.krate;
    f.params.iter().filter(|p| p.var.is_some()).map(|p| {
        let (id, d, t) = (
            &p.ident,
            format_ident!("__dual_{}", p.ident),
            format_ident!("{}_dot", p.ident),
        );
        if p.fixed_len().is_some() {
            quote! {
                let #d = #krate::tree::TreeArg {
                    skeleton: #id.skeleton,
                    leaves: ::core::array::from_fn(|__i| {
                        #krate::Dual::new(::core::clone::Clone::clone(&#id.leaves[__i]), #t.map(|__t| ::core::clone::Clone::clone(&__t[__i])))
                    }),
                };
            }
        } else if p.tree.is_some() {
            quote! {
                let #d = #krate::tree::TreeArg {
                    skeleton: #id.skeleton,
                    leaves: #id.leaves.iter().enumerate().map(|(__i, __l)| {
                        #krate::Dual::new(::core::clone::Clone::clone(__l), #t.map(|__t| ::core::clone::Clone::clone(&__t[__i])))
                    }).collect(),
                };
            }
        } else {
            quote!(let #d = #krate::Dual::new(::core::clone::Clone::clone(#id), #t.cloned());)
        }
    }).collect()
}

/// The JVP's return type, and the expression splitting the dual outputs
/// `__y` into primals and tangents.
fn split_duals(f: &Function, out_ty: &TokenStream) -> (TokenStream, TokenStream) {
    if !f.tuple_output {
        return (
            quote!((__V, __V)),
            quote!({
                let __t = __y.tangent_or_zero();
                (__y.primal, __t)
            }),
        );
    }
    let prim = f.outputs.iter().enumerate().map(|(i, o)| {
        let idx = syn::Index::from(i);
        match o {
            Output::Value(_) => quote!(__y.#idx.primal),
            Output::Static(..) => quote!(__y.#idx),
        }
    });
    let tan = f.outputs.iter().enumerate().map(|(i, o)| {
        let idx = syn::Index::from(i);
        match o {
            Output::Value(_) => quote!(__y.#idx.tangent_or_zero()),
            Output::Static(..) => quote!(()),
        }
    });
    let tan_ty = f.outputs.iter().map(|o| match o {
        Output::Value(_) => quote!(__V),
        Output::Static(..) => quote!(()),
    });
    (
        quote!((#out_ty, (#(#tan_ty,)*))),
        quote!({ let __t = (#(#tan,)*); ((#(#prim,)*), __t) }),
    )
}

/// The arguments of a generic variant at `Dual<V>`: each differentiable
/// parameter's dual number (`__dual_<name>`), the statics as they are.
pub(crate) fn dual_args(f: &Function) -> Vec<TokenStream> {
    f.params
        .iter()
        .map(|p| {
            let id = &p.ident;
            if p.var.is_some() {
                let d = format_ident!("__dual_{}", id);
                quote!(&#d)
            } else {
                quote!(#id)
            }
        })
        .collect()
}

/// What differentiable code calls `f` through (`variants(&f).forward::<V>(..)`,
/// `codegen::forward::callee_call`): `f`'s function value implements
/// `transforms::private::Differentiable`, and its hidden methods `forward`
/// and `vjp` run the generic programs. A call reaches them through the
/// value, not the module, so calling a function that is not
/// `#[differentiable]` is the trait's one error at the call.
pub fn callable(f: &Function, sig: &Sig) -> TokenStream {
    let Sig {
        generic_params,
        bound,
        out_ty,
        out_ct_ty,
        arg_cts_ty,
        vis,
        ..
    } = sig;
    let (name, krate) = (&f.ident, &f.krate);
    let (fwd, vjp) = (names::item(f, "forward"), names::item(f, "vjp"));
    let masked = names::item(f, "vjp_masked");
    let np = f.params.len();
    let args: Vec<&syn::Ident> = f.params.iter().map(|p| &p.ident).collect();
    quote! {
        #[allow(clippy::all)]
        impl #name::Function {
            #[doc(hidden)]
            #vis fn forward<'__a, __V: #bound + '__a>(self, #(#generic_params),*) -> #out_ty {
                #fwd::<__V>(#(#args),*)
            }
            #[doc(hidden)]
            #vis fn vjp<'__a, __V: #bound + '__a>(self, #(#generic_params),*)
                -> (#out_ty, impl ::core::ops::FnOnce(#out_ct_ty) -> #arg_cts_ty + use<__V>)
            {
                #vjp::<__V>(#(#args),*)
            }
            /// The VJP computing cotangents only for the arguments flagged
            /// in `__want` (a caller passes what reaches its wanted
            /// parameters).
            #[doc(hidden)]
            #vis fn vjp_with_mask<'__a, __V: #bound + '__a>(self, #(#generic_params,)* __want: [bool; #np])
                -> (#out_ty, impl ::core::ops::FnOnce(#out_ct_ty) -> #arg_cts_ty + use<__V>)
            {
                #masked::<__V>(#(#args,)* __want)
            }
        }
        #[diagnostic::do_not_recommend]
        impl #krate::transforms::private::Differentiable for #name::Function {
            type Variants = Self;
            fn variants(&self) -> Self {
                *self
            }
        }
    }
}
