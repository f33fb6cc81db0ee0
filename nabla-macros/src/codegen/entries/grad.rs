//! `grad` and `value_and_grad`: monomorphic functions running the masked
//! VJP seeded with the output (the first output, with aux) and selecting the
//! wanted cotangents, and the `GradFn` / `ValueAndGradFn` impls pointing at
//! them.

use super::Entries;
use crate::codegen::names;
use crate::codegen::sig::with_lifetime;
use crate::ir::Output;
use proc_macro2::TokenStream;
use quote::quote;

impl Entries<'_> {
    /// `grad` and `value_and_grad`: the masked VJP seeded with the output
    /// (the first output with aux), the wanted cotangents selected.
    pub(super) fn grad(&self) -> TokenStream {
        let Entries {
            vis,
            tr,
            private,
            name,
            c,
            masked,
            user_params,
            user_types,
            call_args,
            tree_binds,
            convert,
            cts_c,
            sel,
            ..
        } = self;
        let (marker, seed, value, aux_ty, aux_val) = if self.single {
            (
                quote!(#tr::NoAux),
                quote!(#private::Seed::seed(&__y, __op)),
                quote!(__y),
                None,
                None,
            )
        } else {
            let second = match &self.f.outputs[1] {
                Output::Value(_) => quote!(::core::option::Option::None),
                Output::Static(..) => quote!(()),
            };
            let aux_ty = match &self.f.outputs[1] {
                Output::Value(_) => c.clone(),
                Output::Static(_, ty) => with_lifetime(ty),
            };
            (
                quote!(#tr::HasAux),
                quote!((::core::option::Option::Some(#private::Seed::seed(&__y.0, __op)), #second)),
                quote!(__y),
                Some(aux_ty),
                Some(quote!(__y.1)),
            )
        };
        let grad_fn = names::item(self.f, "grad");
        let vg_fn = names::item(self.f, "value_and_grad");
        let (grad_ret, grad_val) = match (&aux_ty, &aux_val) {
            (Some(t), Some(v)) => (quote!((#sel, #t)), quote!((__g, #v))),
            _ => (quote!(#sel), quote!(__g)),
        };
        let value_ret = if self.single {
            c.clone()
        } else {
            self.out_ty_c()
        };
        let np = self.f.params.len();
        quote! {
            #[doc(hidden)]
            #[allow(clippy::all)]
            #vis fn #grad_fn<'__a, __A: #tr::Select<#cts_c>>(#(#user_params),*) -> #grad_ret {
                let __op = "grad";
                #tree_binds
                let mut __want = [false; #np];
                for &__i in <__A as #tr::Select<#cts_c>>::INDICES {
                    __want[__i] = true;
                }
                let (__y, __pullback) = #masked::<#c>(#(#call_args,)* __want);
                let __seed = #seed;
                let __all = __pullback(__seed);
                #convert
                let __g = <__A as #tr::Select<#cts_c>>::select(&__all);
                #grad_val
            }
            #[doc(hidden)]
            #[allow(clippy::all)]
            #vis fn #vg_fn<'__a, __A: #tr::Select<#cts_c>>(#(#user_params),*) -> (#value_ret, #sel) {
                let __op = "value_and_grad";
                #tree_binds
                let mut __want = [false; #np];
                for &__i in <__A as #tr::Select<#cts_c>>::INDICES {
                    __want[__i] = true;
                }
                let (__y, __pullback) = #masked::<#c>(#(#call_args,)* __want);
                let __seed = #seed;
                let __value = ::core::clone::Clone::clone(&#value);
                let __all = __pullback(__seed);
                #convert
                (__value, <__A as #tr::Select<#cts_c>>::select(&__all))
            }
            impl<__A: #tr::Select<#cts_c> + 'static> #tr::GradFn<__A, #marker> for #name::Function
            where #sel: 'static
            {
                type Ptr = for<'__a> fn(#(#user_types),*) -> #grad_ret;
                const PTR: &'static Self::Ptr = &(#grad_fn::<__A> as for<'__a> fn(#(#user_types),*) -> #grad_ret);
            }
            impl<__A: #tr::Select<#cts_c> + 'static> #tr::ValueAndGradFn<__A, #marker> for #name::Function
            where #sel: 'static
            {
                type Ptr = for<'__a> fn(#(#user_types),*) -> (#value_ret, #sel);
                const PTR: &'static Self::Ptr = &(#vg_fn::<__A> as for<'__a> fn(#(#user_types),*) -> (#value_ret, #sel));
            }
        }
    }
}
