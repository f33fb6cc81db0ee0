//! Transforms of `grad(f)`: `jvp(grad(f))` and `vjp(grad(f))`, both
//! forward-over-reverse. The masked VJP runs at `Dual<V>` with tangents on
//! the arguments, so the pullback's cotangents carry the gradient (primal)
//! and a Hessian-vector product (tangent). For `vjp` the tangent is the
//! gradient's cotangent, placed on the selected arguments: by the symmetry
//! of second derivatives that is the VJP of the gradient.

use super::Entries;
use crate::codegen::names;
use crate::codegen::variants::dual_args;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

impl Entries<'_> {
    /// `GradJvpFn<A>` (so `Grad<f::Function, A, NoAux>: JvpFn`):
    /// `(primals, tangents) ↦ (grad, tangent of grad)`, for a function of
    /// arrays or floats (no tree arguments) with one value output.
    pub(super) fn grad_jvp(&self) -> TokenStream {
        let Entries {
            f,
            vis,
            krate,
            tr,
            private,
            name,
            c,
            masked,
            user_types,
            cts_c,
            sel,
            ..
        } = self;
        let prim_names: Vec<&syn::Ident> = f.params.iter().map(|p| &p.ident).collect();
        let diff = || f.params.iter().filter(|p| p.var.is_some());
        let tan_names: Vec<syn::Ident> = diff().map(|p| format_ident!("{}_dot", p.ident)).collect();
        let tan_types: Vec<TokenStream> = diff()
            .map(|p| crate::codegen::sig::with_lifetime(&p.ty))
            .collect();
        let dual = quote!(#krate::Dual<#c>);
        // Each differentiable argument as a dual number with its tangent.
        let duals = diff().map(|p| {
            let (id, t) = (&p.ident, format_ident!("{}_dot", p.ident));
            let d = format_ident!("__dual_{}", p.ident);
            let (x, dx) = if p.by_ref {
                (quote!(#id), quote!(#t))
            } else {
                (quote!(&#id), quote!(&#t))
            };
            quote! {
                let #d: #dual = #krate::Dual::new(
                    ::core::clone::Clone::clone(#x),
                    ::core::option::Option::Some(::core::clone::Clone::clone(#dx)),
                );
            }
        });
        let args = dual_args(f);
        let all: Vec<syn::Ident> = (0..f.params.len())
            .map(|i| format_ident!("__ct{}", i))
            .collect();
        let (primals, tangents): (Vec<TokenStream>, Vec<TokenStream>) = f
            .params
            .iter()
            .zip(&all)
            .map(|(p, a)| {
                if p.var.is_some() {
                    (quote!(#a.primal.clone()), quote!(#a.tangent_or_zero()))
                } else {
                    (quote!(#tr::Static), quote!(#tr::Static))
                }
            })
            .unzip();
        let np = f.params.len();
        let entry = names::item(f, "grad_jvp");
        quote! {
            #[doc(hidden)]
            #[allow(clippy::all)]
            #vis fn #entry<'__a, __A: #tr::Select<#cts_c>>(
                __primals: (#(#user_types,)*),
                __tangents: (#(#tan_types,)*),
            ) -> (#sel, #sel) {
                let (#(#prim_names,)*) = __primals;
                let (#(#tan_names,)*) = __tangents;
                #(#duals)*
                let mut __want = [false; #np];
                for &__i in <__A as #tr::Select<#cts_c>>::INDICES {
                    __want[__i] = true;
                }
                let (__y, __pullback) = #masked::<#dual>(#(#args,)* __want);
                let __seed = #krate::Dual::new(#private::Seed::seed(&__y.primal, "jvp(grad(f))"), ::core::option::Option::None);
                let (#(#all,)*) = __pullback(__seed);
                let __grad: #cts_c = (#(#primals,)*);
                let __tangent: #cts_c = (#(#tangents,)*);
                (
                    <__A as #tr::Select<#cts_c>>::select(&__grad),
                    <__A as #tr::Select<#cts_c>>::select(&__tangent),
                )
            }
            impl<__A: #tr::Select<#cts_c> + 'static> #tr::GradJvpFn<__A> for #name::Function
            where #sel: 'static
            {
                type Ptr = for<'__a> fn((#(#user_types,)*), (#(#tan_types,)*)) -> (#sel, #sel);
                const PTR: &'static Self::Ptr =
                    &(#entry::<__A> as for<'__a> fn((#(#user_types,)*), (#(#tan_types,)*)) -> (#sel, #sel));
            }
        }
    }
}

/// Whether a static parameter of this type can be used twice without a
/// clone: a reference or a primitive number or bool.
fn reusable(ty: &syn::Type) -> bool {
    match ty {
        syn::Type::Reference(r) => r.mutability.is_none(),
        syn::Type::Path(p) => {
            p.qself.is_none() && p.path.segments.len() == 1 && {
                let id = p.path.segments[0].ident.to_string();
                matches!(
                    id.as_str(),
                    "f32"
                        | "f64"
                        | "i8"
                        | "i16"
                        | "i32"
                        | "i64"
                        | "isize"
                        | "u8"
                        | "u16"
                        | "u32"
                        | "u64"
                        | "usize"
                        | "bool"
                )
            }
        }
        _ => false,
    }
}

impl Entries<'_> {
    /// Whether `vjp(grad(f))` is generated: no tree arguments, and every
    /// static argument reusable (its pullback calls `f`'s VJP again).
    pub(super) fn has_grad_vjp(&self) -> bool {
        self.f
            .params
            .iter()
            .all(|p| p.tree.is_none() && (p.var.is_some() || reusable(&p.ty)))
    }

    /// `GradVjpFn<A>` (so `Grad<f::Function, A, NoAux>: VjpFn`): the
    /// gradient, and a pullback that puts the cotangent `u` on the selected
    /// arguments' tangents and runs the masked VJP at `Dual<V>` again, all
    /// cotangents wanted; their tangents are `H[:, argnums] · u`.
    pub(super) fn grad_vjp(&self) -> TokenStream {
        let Entries {
            f,
            vis,
            krate,
            tr,
            private,
            name,
            c,
            masked,
            user_params,
            user_types,
            cts_c,
            sel,
            ..
        } = self;
        let names: Vec<&syn::Ident> = f.params.iter().map(|p| &p.ident).collect();
        let diff: Vec<usize> = (0..f.params.len())
            .filter(|&i| f.params[i].var.is_some())
            .collect();
        let dual = quote!(#krate::Dual<#c>);
        let owned = diff.iter().map(|&i| {
            let p = &f.params[i];
            let (id, o) = (&p.ident, format_ident!("__primal_{}", p.ident));
            let x = if p.by_ref { quote!(#id) } else { quote!(&#id) };
            quote!(let #o: #c = ::core::clone::Clone::clone(#x);)
        });
        let duals = diff.iter().map(|&i| {
            let p = &f.params[i];
            let (o, d) = (
                format_ident!("__primal_{}", p.ident),
                format_ident!("__dual_{}", p.ident),
            );
            quote!(let #d: #dual = #krate::Dual::new(#o, __t[#i].take());)
        });
        let args = dual_args(f);
        let all: Vec<syn::Ident> = (0..f.params.len())
            .map(|i| format_ident!("__ct{}", i))
            .collect();
        let tangents: Vec<TokenStream> = diff
            .iter()
            .map(|&i| {
                let a = &all[i];
                quote!(#a.tangent_or_zero())
            })
            .collect();
        let (user_cts, result) = if diff.len() == 1 {
            (c.clone(), tangents[0].clone())
        } else {
            let cs = diff.iter().map(|_| c.clone());
            (quote!((#(#cs,)*)), quote!((#(#tangents,)*)))
        };
        let has_refs = f
            .params
            .iter()
            .any(|p| matches!(p.ty, syn::Type::Reference(_)));
        let lt = if has_refs {
            quote!('__a)
        } else {
            quote!('static)
        };
        let pb_ty = quote!(::std::boxed::Box<dyn ::core::ops::FnOnce(&#sel) -> #user_cts + #lt>);
        let np = f.params.len();
        let (entry, grad_fn) = (names::item(f, "grad_vjp"), names::item(f, "grad"));
        let bound = quote!(#tr::Select<#cts_c> + #tr::Scatter<#c, Out = #sel>);
        quote! {
            #[doc(hidden)]
            #[allow(clippy::all)]
            #vis fn #entry<'__a, __A: #bound>(#(#user_params),*) -> (#sel, #pb_ty) {
                let __g = #grad_fn::<__A>(#(#names),*);
                #(#owned)*
                (__g, ::std::boxed::Box::new(move |__u: &#sel| {
                    let mut __t: ::std::vec::Vec<::core::option::Option<#c>> = ::std::vec![::core::option::Option::None; #np];
                    for (__i, __v) in <__A as #tr::Scatter<#c>>::scatter(__u) {
                        __t[__i] = ::core::option::Option::Some(__v);
                    }
                    #(#duals)*
                    let (__y, __pullback) = #masked::<#dual>(#(#args,)* [true; #np]);
                    let __seed = #krate::Dual::new(#private::Seed::seed(&__y.primal, "vjp(grad(f))"), ::core::option::Option::None);
                    let (#(#all,)*) = __pullback(__seed);
                    #result
                }))
            }
            impl<__A: #bound + 'static> #tr::GradVjpFn<__A> for #name::Function
            where #sel: 'static
            {
                type Ptr = for<'__a> fn(#(#user_types),*) -> (#sel, #pb_ty);
                const PTR: &'static Self::Ptr = &(#entry::<__A> as for<'__a> fn(#(#user_types),*) -> (#sel, #pb_ty));
            }
        }
    }
}
