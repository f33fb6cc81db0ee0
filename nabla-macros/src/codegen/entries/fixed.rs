//! `jacfwd`, `jacrev` and `hessian` of a function of floats (arguments
//! `f64` or fixed-size arrays of floats, result `f64` or `[f64; M]`): entry
//! points over floats returning the user's shapes, and the `FixedJac` /
//! `FixedHessian` impls pointing at them (see `transform/fixed.rs` in the
//! runtime). `jacfwd` runs the JVP once per input leaf, `jacrev` the VJP
//! once per output, `hessian` the VJP at `Dual<f64>` once per input leaf.

use super::Entries;
use crate::codegen::names;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Type;

impl Entries<'_> {
    /// The Jacobian (and, for one output, Hessian) entry points for every
    /// differentiable argument.
    pub(super) fn fixed_jacobians(&self) -> TokenStream {
        let f = self.f;
        f.params
            .iter()
            .enumerate()
            .filter(|(_, p)| p.var.is_some())
            .map(|(k, _)| {
                let mut out = self.jacobians_of(k);
                if self.single {
                    out.extend(self.hessian_of(k));
                }
                out
            })
            .collect()
    }

    /// Parameter `k`'s type without a reference.
    fn owned_ty(&self, k: usize) -> &Type {
        match &self.f.params[k].ty {
            Type::Reference(r) => &r.elem,
            t => t,
        }
    }

    /// A reference to parameter `k` as the entry point holds it.
    fn param_ref(&self, k: usize) -> TokenStream {
        let p = &self.f.params[k];
        let id = &p.ident;
        if p.by_ref { quote!(#id) } else { quote!(&#id) }
    }

    /// The lengths of parameter `k`'s array axes, outermost first (none
    /// for a float): `[M, N]` for `[[f64; N]; M]`.
    fn array_dims(&self, k: usize) -> Vec<syn::Expr> {
        let mut dims = Vec::new();
        let mut ty = self.owned_ty(k);
        while let Type::Array(a) = ty {
            dims.push(a.len.clone());
            ty = &a.elem;
        }
        dims
    }

    /// The arguments of a generated variant inside a loop: statics cloned
    /// (a call per iteration).
    fn loop_args(&self) -> Vec<TokenStream> {
        self.f
            .params
            .iter()
            .zip(&self.call_args)
            .map(|(p, a)| {
                if p.var.is_some() {
                    a.clone()
                } else {
                    let id = &p.ident;
                    quote!(::core::clone::Clone::clone(&#id))
                }
            })
            .collect()
    }

    /// The number of leaves of parameter `k` (1 for a float).
    fn leaf_count(&self, k: usize) -> TokenStream {
        let (krate, c) = (self.krate, &self.c);
        if self.f.params[k].tree.is_some() {
            let (ty, r) = (self.owned_ty(k), self.param_ref(k));
            quote!(<#ty as #krate::tree::Tree<#c>>::num_leaves(#r))
        } else {
            quote!(1usize)
        }
    }

    /// The Jacobian's type: parameter `k`'s type per output.
    fn jacobian_ty(&self, k: usize) -> TokenStream {
        let ty = self.owned_ty(k);
        if self.f.array_output {
            let m = self.f.outputs.len();
            quote!([#ty; #m])
        } else {
            quote!(#ty)
        }
    }

    /// The Jacobian from `__rows` (one `Vec` of parameter `k`'s leaves per
    /// output), in the user's shapes.
    fn assemble(&self, k: usize) -> TokenStream {
        let (krate, c) = (self.krate, &self.c);
        let one = if self.f.params[k].tree.is_some() {
            let (ty, r) = (self.owned_ty(k), self.param_ref(k));
            quote!(|__row: ::std::vec::Vec<#c>| <#ty as #krate::tree::Tree<#c>>::rebuild(#r, &mut __row.into_iter()))
        } else {
            quote!(|__row: ::std::vec::Vec<#c>| __row[0])
        };
        if self.f.array_output {
            quote! {{
                let __one = #one;
                let mut __it = __rows.into_iter();
                ::core::array::from_fn(|_| __one(__it.next().expect("one row per output")))
            }}
        } else {
            quote! {{
                let __one = #one;
                __one(__rows.into_iter().next().expect("one row"))
            }}
        }
    }

    /// `jacfwd` and `jacrev` w.r.t. parameter `k`, and their impl.
    fn jacobians_of(&self, k: usize) -> TokenStream {
        let Entries {
            f,
            vis,
            krate,
            name,
            c,
            jvp,
            vjp,
            user_params,
            user_types,
            tree_binds,
            ..
        } = self;
        let call_args = self.loop_args();
        let m = f.outputs.len();
        let n = self.leaf_count(k);
        let jac = self.jacobian_ty(k);
        let assemble = self.assemble(k);
        let (fwd_entry, rev_entry) = (
            names::item(f, &format!("jacfwd_{k}")),
            names::item(f, &format!("jacrev_{k}")),
        );
        // The tangents: a one-hot leaf `__k` of parameter `k`, none else.
        let tangents = f
            .params
            .iter()
            .enumerate()
            .filter(|(_, p)| p.var.is_some())
            .map(|(i, p)| match (i == k, p.tree.is_some()) {
                (true, true) => quote!(::core::option::Option::Some(&__onehot[..])),
                (true, false) => quote!(::core::option::Option::Some(&__onehot[0])),
                (false, _) => quote!(::core::option::Option::None),
            });
        let idx: Vec<syn::Index> = (0..m).map(syn::Index::from).collect();
        let push_tangents = if f.array_output {
            quote!(#(__rows[#idx].push(__pair.1.#idx);)*)
        } else {
            quote!(__rows[0].push(__pair.1);)
        };
        let seed = if f.array_output {
            let os = 0..m;
            quote!((#((__o == #os).then_some(1.0 as #c),)*))
        } else {
            quote!(1.0 as #c)
        };
        let ki = syn::Index::from(k);
        let row = if f.params[k].tree.is_some() {
            quote!(::core::iter::IntoIterator::into_iter(__all.#ki).collect::<::std::vec::Vec<#c>>())
        } else {
            quote!(::std::vec![__all.#ki])
        };
        let tr = &self.tr;
        quote! {
            #[doc(hidden)]
            #[allow(clippy::all)]
            #vis fn #fwd_entry<'__a>(#(#user_params),*) -> #jac {
                #tree_binds
                let __n: usize = #n;
                let mut __rows: ::std::vec::Vec<::std::vec::Vec<#c>> = ::std::vec![::std::vec::Vec::with_capacity(__n); #m];
                for __k in 0..__n {
                    let __onehot: ::std::vec::Vec<#c> = (0..__n).map(|__i| if __i == __k { 1.0 } else { 0.0 }).collect();
                    let __pair = #jvp::<#c>(#(#call_args,)* #(#tangents),*);
                    #push_tangents
                }
                #assemble
            }
            #[doc(hidden)]
            #[allow(clippy::all)]
            #vis fn #rev_entry<'__a>(#(#user_params),*) -> #jac {
                #tree_binds
                let mut __rows: ::std::vec::Vec<::std::vec::Vec<#c>> = ::std::vec::Vec::with_capacity(#m);
                for __o in 0..#m {
                    let (_, __pullback) = #vjp::<#c>(#(#call_args),*);
                    let __all = __pullback(#seed);
                    __rows.push(#row);
                }
                #assemble
            }
            impl #krate::compose::FixedJac<#tr::Argnum<#k>> for #name::Function {
                type Fwd = for<'__a> fn(#(#user_types),*) -> #jac;
                const FWD: &'static Self::Fwd = &(#fwd_entry as for<'__a> fn(#(#user_types),*) -> #jac);
                type Rev = for<'__a> fn(#(#user_types),*) -> #jac;
                const REV: &'static Self::Rev = &(#rev_entry as for<'__a> fn(#(#user_types),*) -> #jac);
            }
        }
    }

    /// `hessian` w.r.t. parameter `k` (an `f64`, `[f64; N]` or a nested
    /// array) of a function with one output, and its impl: for a
    /// parameter of type `T` with axes `[d0, d1, ..]`, `H[i0][i1]..[j0][j1]..`
    /// of type `[[T; d1]; d0]`, like JAX's `in_shape ++ in_shape`.
    fn hessian_of(&self, k: usize) -> TokenStream {
        let Entries {
            f,
            vis,
            krate,
            name,
            c,
            vjp,
            user_params,
            user_types,
            ..
        } = self;
        let dims = self.array_dims(k);
        let n = self.leaf_count(k);
        let entry = names::item(f, &format!("hessian_{k}"));
        let dual = quote!(#krate::Dual<#c>);
        // Every differentiable argument as duals (tangent `e___k` on
        // parameter `k`), statics as they are.
        let mut binds = Vec::new();
        let args: Vec<TokenStream> = f
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let id = &p.ident;
                let d = format_ident!("__dual_{}", id);
                let r = self.param_ref(i);
                let hot = i == k;
                match (p.var.is_some(), p.tree.is_some()) {
                    (true, true) => {
                        let k = p.fixed_len().unwrap_or_else(|| quote!(0usize));
                        binds.push(quote! {
                            let #d = #krate::tree::TreeArg {
                                skeleton: #r,
                                leaves: {
                                    let __l = #krate::tree::fixed_leaves::<#c, _, { #k }>(#r);
                                    ::core::array::from_fn(|__i| #krate::Dual::new(__l[__i], (#hot && __i == __k).then_some(1.0 as #c)))
                                },
                            };
                        });
                        quote!(&#d)
                    }
                    (true, false) => {
                        binds.push(quote! {
                            let #d: #dual = #krate::Dual::new(*#r, #hot.then_some(1.0 as #c));
                        });
                        quote!(&#d)
                    }
                    (false, _) => quote!(::core::clone::Clone::clone(&#id)),
                }
            })
            .collect();
        let ki = syn::Index::from(k);
        let col = if f.params[k].tree.is_some() {
            quote!(__all.#ki.iter().map(|__d| __d.tangent_or_zero()).collect::<::std::vec::Vec<#c>>())
        } else {
            quote!(::std::vec![__all.#ki.tangent_or_zero()])
        };
        let (ty, assemble) = if dims.is_empty() {
            (quote!(#c), quote!(__cols[0][0]))
        } else {
            // `[[T; d1]; d0]` around the parameter's own type.
            let own = self.owned_ty(k);
            let ty = dims
                .iter()
                .rev()
                .fold(quote!(#own), |t, d| quote!([#t; #d]));
            let is: Vec<syn::Ident> = (0..dims.len()).map(|a| format_ident!("__i{}", a)).collect();
            let js: Vec<syn::Ident> = (0..dims.len()).map(|a| format_ident!("__j{}", a)).collect();
            let (a, b) = (flat_all(&is, &dims), flat_all(&js, &dims));
            let inner = quote!(__cols[#b][#a]);
            let body = is
                .iter()
                .chain(&js)
                .rev()
                .fold(inner, |acc, i| quote!(::core::array::from_fn(|#i| #acc)));
            (ty, body)
        };
        let tr = &self.tr;
        quote! {
            #[doc(hidden)]
            #[allow(clippy::all)]
            #vis fn #entry<'__a>(#(#user_params),*) -> #ty {
                let __n: usize = #n;
                let mut __cols: ::std::vec::Vec<::std::vec::Vec<#c>> = ::std::vec::Vec::with_capacity(__n);
                for __k in 0..__n {
                    #(#binds)*
                    let (_, __pullback) = #vjp::<#dual>(#(#args),*);
                    let __all = __pullback(#krate::Dual::constant(1.0 as #c));
                    __cols.push(#col);
                }
                #assemble
            }
            impl #krate::compose::FixedHessian<#tr::Argnum<#k>> for #name::Function {
                type Ptr = for<'__a> fn(#(#user_types),*) -> #ty;
                const PTR: &'static Self::Ptr = &(#entry as for<'__a> fn(#(#user_types),*) -> #ty);
            }
        }
    }
}

/// The row-major flat index `((i0 · d1 + i1) · d2 + i2) ..` of the index
/// variables `ix` over axes of lengths `dims`.
fn flat_all(ix: &[syn::Ident], dims: &[syn::Expr]) -> TokenStream {
    let first = &ix[0];
    ix.iter()
        .zip(dims)
        .skip(1)
        .fold(quote!(#first), |acc, (i, d)| quote!((#acc) * (#d) + #i))
}
