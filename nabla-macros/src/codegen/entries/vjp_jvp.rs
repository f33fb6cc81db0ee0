//! `vjp(f)` and `jvp(f)`: monomorphic entry points for a function with one
//! value output (or a `[f64; M]` of them), and the `VjpFn` / `JvpFn` impls
//! pointing at them.

use super::{Entries, per_tree, rebuild};
use crate::codegen::names;
use crate::codegen::sig::with_lifetime;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Type;

impl Entries<'_> {
    /// `vjp(f)`: the output and a boxed pullback over the differentiable
    /// arguments.
    pub(super) fn vjp_entry(&self) -> TokenStream {
        let Entries {
            f,
            vis,
            krate,
            tr,
            name,
            c,
            vjp,
            user_params,
            user_types,
            call_args,
            tree_binds,
            ..
        } = self;
        let diff: Vec<usize> = f
            .params
            .iter()
            .enumerate()
            .filter(|(_, p)| p.var.is_some())
            .map(|(i, _)| i)
            .collect();
        let ct_ty = |i: &usize| match &f.params[*i].tree {
            Some(tree) => quote!(<#tree as #krate::tree::Tree<#c>>::Grad),
            None => c.clone(),
        };
        let user_cts = if diff.len() == 1 {
            ct_ty(&diff[0])
        } else {
            let cs = diff.iter().map(ct_ty);
            quote!((#(#cs,)*))
        };
        let pick = if diff.len() == 1 {
            let i = syn::Index::from(diff[0]);
            quote!(__all.#i)
        } else {
            let is = diff.iter().map(|&i| syn::Index::from(i));
            quote!((#(__all.#is,)*))
        };
        let vjp_entry = names::item(f, "vjp_entry");
        let has_refs = f.params.iter().any(|p| matches!(p.ty, Type::Reference(_)));
        let lt = if has_refs {
            quote!('__a)
        } else {
            quote!('static)
        };
        let (out_c, out_of, _) = self.out_conversion();
        let ct_in = self.ct_conversion();
        let pb_ty = quote!(::std::boxed::Box<dyn ::core::ops::FnOnce(&#out_c) -> #user_cts + #lt>);
        let owned_skeletons = per_tree(f, "", |id, r| {
            let o = format_ident!("__skeleton_{}", id);
            quote!(let #o = ::std::borrow::ToOwned::to_owned(#r);)
        });
        let convert_owned = rebuild(f, |id| {
            let o = format_ident!("__skeleton_{}", id);
            quote!(&#o)
        });
        quote! {
            #[doc(hidden)]
            #[allow(clippy::all)]
            #vis fn #vjp_entry<'__a>(#(#user_params),*) -> (#out_c, #pb_ty) {
                #tree_binds
                #owned_skeletons
                let (__y, __pullback) = #vjp::<#c>(#(#call_args),*);
                (#out_of, ::std::boxed::Box::new(move |__ct: &#out_c| {
                    let __all = __pullback(#ct_in);
                    #convert_owned
                    #pick
                }))
            }
            impl #tr::VjpFn for #name::Function {
                type Ptr = for<'__a> fn(#(#user_types),*) -> (#out_c, #pb_ty);
                const PTR: &'static Self::Ptr = &(#vjp_entry as for<'__a> fn(#(#user_types),*) -> (#out_c, #pb_ty));
            }
        }
    }

    /// `jvp(f)`: (primals, tangents) → (output, tangent).
    pub(super) fn jvp_entry(&self) -> TokenStream {
        let Entries {
            f,
            vis,
            krate,
            tr,
            name,
            c,
            jvp,
            user_types,
            call_args,
            tree_binds,
            ..
        } = self;
        let jvp_entry = names::item(f, "jvp_entry");
        let prim_names: Vec<&syn::Ident> = f.params.iter().map(|p| &p.ident).collect();
        let diff = || f.params.iter().filter(|p| p.var.is_some());
        let tan_names: Vec<syn::Ident> = diff().map(|p| format_ident!("{}_dot", p.ident)).collect();
        let tan_types: Vec<TokenStream> = diff().map(|p| with_lifetime(&p.ty)).collect();
        let tan_args: Vec<TokenStream> = diff()
            .map(|p| {
                let t = format_ident!("{}_dot", p.ident);
                if p.tree.is_some() {
                    let l = format_ident!("__tangent_leaves_{}", p.ident);
                    quote!(::core::option::Option::Some(&#l[..]))
                } else if p.by_ref {
                    quote!(::core::option::Option::Some(#t))
                } else {
                    quote!(::core::option::Option::Some(&#t))
                }
            })
            .collect();
        let (out_c, _, pair_of) = self.out_conversion();
        let tangent_leaves = per_tree(f, "_dot", |id, r| {
            let l = format_ident!("__tangent_leaves_{}", id);
            match super::fixed_len(f, id) {
                Some(k) => quote!(let #l = #krate::tree::fixed_leaves::<#c, _, { #k }>(#r);),
                None => quote!(let #l = #krate::tree::leaves(#r);),
            }
        });
        quote! {
            #[doc(hidden)]
            #[allow(clippy::all)]
            #vis fn #jvp_entry<'__a>(__primals: (#(#user_types,)*), __tangents: (#(#tan_types,)*)) -> (#out_c, #out_c) {
                let (#(#prim_names,)*) = __primals;
                let (#(#tan_names,)*) = __tangents;
                #tree_binds
                #tangent_leaves
                let __pair = #jvp::<#c>(#(#call_args,)* #(#tan_args),*);
                #pair_of
            }
            impl #tr::JvpFn for #name::Function {
                type Ptr = for<'__a> fn((#(#user_types,)*), (#(#tan_types,)*)) -> (#out_c, #out_c);
                const PTR: &'static Self::Ptr = &(#jvp_entry as for<'__a> fn((#(#user_types,)*), (#(#tan_types,)*)) -> (#out_c, #out_c));
            }
        }
    }

    /// The entry points' output type (`c`, or `[c; M]` for an array
    /// output), the output `__y` of a generated variant in that type, and
    /// a variant's `(output, tangent)` `__pair` in that type.
    pub(super) fn out_conversion(&self) -> (TokenStream, TokenStream, TokenStream) {
        let c = &self.c;
        if !self.f.array_output {
            return (c.clone(), quote!(__y), quote!(__pair));
        }
        let m = self.f.outputs.len();
        let idx: Vec<syn::Index> = (0..m).map(syn::Index::from).collect();
        (
            quote!([#c; #m]),
            quote!([#(__y.#idx),*]),
            quote!(([#(__pair.0.#idx),*], [#(__pair.1.#idx),*])),
        )
    }

    /// The cotangent a generated pullback takes, from the entry point's
    /// `__ct: &out` (one `Some` per element of an array output).
    pub(super) fn ct_conversion(&self) -> TokenStream {
        if !self.f.array_output {
            return quote!(::core::clone::Clone::clone(__ct));
        }
        let k = 0..self.f.outputs.len();
        quote!((#(::core::option::Option::Some(__ct[#k]),)*))
    }
}
