//! Transforms of `grad(f)`: `jvp(grad(f))`, forward-over-reverse. The
//! masked VJP runs at `Dual<V>` with the tangents on the arguments, so the
//! pullback's cotangents carry the gradient (primal) and the
//! Hessian-vector product (tangent); `nabla::hvp` is a name for it.

use super::Entries;
use crate::codegen::names;
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
        let args = f.params.iter().map(|p| {
            if p.var.is_some() {
                let d = format_ident!("__dual_{}", p.ident);
                quote!(&#d)
            } else {
                let id = &p.ident;
                quote!(#id)
            }
        });
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
