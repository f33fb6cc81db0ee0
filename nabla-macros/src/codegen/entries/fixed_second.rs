//! `jvp(grad(f))` of a function of floats with fixed-size array arguments
//! (`[f64; N]`, `[[f64; N]; M]`): the gradient and its tangent (a
//! Hessian-vector product) in the user's shapes, from one
//! forward-over-reverse run on `Dual<f64>` leaves kept on the stack.

use super::Entries;
use crate::codegen::names;
use crate::codegen::sig::with_lifetime;
use crate::codegen::variants::dual_args;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

impl Entries<'_> {
    /// `GradJvpFn<A>` for a function of floats and fixed-size arrays of
    /// floats with one output.
    pub(super) fn fixed_grad_jvp(&self) -> TokenStream {
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
        let tan_types: Vec<TokenStream> = diff().map(|p| with_lifetime(&p.ty)).collect();
        let dual = quote!(#krate::Dual<#c>);
        let reference =
            |id: &syn::Ident, by_ref: bool| if by_ref { quote!(#id) } else { quote!(&#id) };
        // Each differentiable argument as duals: a float, or the leaves of
        // a fixed-size array with the tangent's leaves.
        let duals = diff().map(|p| {
            let (id, t) = (&p.ident, format_ident!("{}_dot", p.ident));
            let d = format_ident!("__dual_{}", p.ident);
            let (x, dx) = (reference(id, p.by_ref), reference(&t, p.by_ref));
            match p.fixed_len() {
                Some(k) => quote! {
                    let #d = #krate::tree::TreeArg {
                        skeleton: #x,
                        leaves: {
                            let __l = #krate::tree::fixed_leaves::<#c, _, { #k }>(#x);
                            let __t = #krate::tree::fixed_leaves::<#c, _, { #k }>(#dx);
                            ::core::array::from_fn(|__i| #krate::Dual::new(__l[__i], ::core::option::Option::Some(__t[__i])))
                        },
                    };
                },
                None => quote! {
                    let #d: #dual = #krate::Dual::new(*#x, ::core::option::Option::Some(*#dx));
                },
            }
        });
        let args = dual_args(f);
        let all: Vec<syn::Ident> = (0..f.params.len())
            .map(|i| format_ident!("__ct{}", i))
            .collect();
        // The cotangents' primals are the gradient, their tangents its
        // tangent; fixed-size arrays are rebuilt in the user's shape.
        let part = |pick: TokenStream| -> Vec<TokenStream> {
            f.params
                .iter()
                .zip(&all)
                .map(|(p, a)| match (&p.tree, p.var.is_some()) {
                    (Some(tree), true) => {
                        let r = reference(&p.ident, p.by_ref);
                        quote!(<#tree as #krate::tree::Tree<#c>>::rebuild(#r, &mut #a.iter().map(#pick)))
                    }
                    (None, true) => quote!((#pick)(&#a)),
                    (_, false) => quote!(#tr::Static),
                })
                .collect()
        };
        let primals = part(quote!(|__d: &#dual| __d.primal));
        let tangents = part(quote!(|__d: &#dual| __d.tangent_or_zero()));
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
