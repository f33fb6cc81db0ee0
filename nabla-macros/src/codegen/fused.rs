//! The items of fused regions (`crate::fusion`): each region's generic
//! programs at the array tier (its op-by-op path) and at the float tier
//! (what the fused kernel runs per element), and the region's type, whose
//! `forward`/`vjp` the enclosing function calls as it calls another
//! differentiable function and which implements `nabla::fused::Region`.

use super::{names, shapes, sig, variants, vjp};
use crate::analysis;
use crate::fusion::Region;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// Every region's items.
pub fn items(regions: &[Region]) -> TokenStream {
    regions.iter().map(region).collect()
}

/// `items` with every function marked `#[inline(always)]`: the float-tier
/// programs inline into the fused pass, which is compiled for the widest
/// vectors the CPU has.
fn inlined(items: TokenStream) -> TokenStream {
    match syn::parse2::<syn::File>(items.clone()) {
        Ok(mut file) => {
            for item in &mut file.items {
                if let syn::Item::Fn(f) = item {
                    f.attrs.push(syn::parse_quote!(#[inline(always)]));
                }
            }
            quote!(#file)
        }
        Err(_) => items,
    }
}

fn region(r: &Region) -> TokenStream {
    let krate = &r.array.krate;
    let programs = |f: &crate::ir::Function| {
        let s = sig(f);
        let active = analysis::analyse(f).active;
        let fwd = variants::forward_fn(f, &s);
        let vjp = vjp::vjp_fn(f, &active, &s);
        quote!(#fwd #vjp)
    };
    let array = programs(&r.array);
    // The shape-only VJP of the array-tier program, when it has a tail.
    let tail = r.tail.as_ref().map(|t| {
        let s = sig(&r.array);
        let active = analysis::analyse(&r.array).active;
        shapes::vjp_tail_fn(&r.array, &active, &s, t)
    });
    let scalar = {
        let f = &r.scalar;
        let s = sig(f);
        let active = analysis::analyse(f).active;
        let fwd = variants::forward_fn(f, &s);
        let vjp = vjp::direct_vjp_fn(f, &active, &s);
        inlined(quote!(#fwd #vjp))
    };
    let (fwd_a, vjp_a) = (
        names::item(&r.array, "forward"),
        names::item(&r.array, "vjp"),
    );
    let (fwd_s, vjp_s) = (
        names::item(&r.scalar, "forward"),
        names::item(&r.scalar, "vjp_direct"),
    );
    let ty = &r.ty;
    let (n, b) = (r.inputs, r.args);
    let args: Vec<syn::Ident> = (0..b).map(|j| format_ident!("__b{}", j)).collect();
    let cs: Vec<syn::Ident> = (0..b).map(|j| format_ident!("__c{}", j)).collect();
    let idx: Vec<syn::Index> = (0..n).map(syn::Index::from).collect();
    let ks: Vec<usize> = (0..n).collect();
    // Each slice operand's axis and range, after the arguments.
    let mut statics = Vec::new();
    let inputs: Vec<TokenStream> = r
        .operands
        .iter()
        .enumerate()
        .map(|(k, &(j, slice))| {
            if slice {
                let (a, rg) = (format_ident!("__axis{}", k), format_ident!("__range{}", k));
                statics.push(quote!(#a: isize, #rg: ::core::ops::Range<usize>));
                quote!(#krate::fused::Input::Slice { arg: #j, axis: #a, range: #rg })
            } else {
                quote!(#krate::fused::Input::Arg(#j))
            }
        })
        .collect();
    let vs: Vec<TokenStream> = (0..b).map(|_| quote!(__V)).collect();
    let ct_tuple = quote!((#(#vs,)*));
    let (reduce, result, mean) = (r.reduce, r.result, r.mean);
    let ops_vjp_shapes = if tail.is_some() {
        let vjp_t = names::item(&r.array, "vjp_tail");
        quote! {
            let (__spec, __pullback) = #vjp_t::<__V>(#(__x[#ks],)* [true; #n]);
            (__spec, move |__ct: __V| {
                let __c = __pullback(__ct);
                [#(__c.#idx),*]
            })
        }
    } else {
        quote!(#krate::fused::spec_of(Self::ops_vjp(__x)))
    };
    quote! {
        #array
        #tail
        #scalar
        #[doc(hidden)]
        #[allow(non_camel_case_types)]
        struct #ty;
        #[allow(clippy::all)]
        impl #ty {
            #[track_caller]
            fn forward<'__a, __V: #krate::ArrayValue + '__a>(#(#args: &__V,)* #(#statics),*) -> __V {
                #krate::fused::forward::<__V, #ty, #n, #b>([#(#args),*], [#(#inputs),*])
            }
            #[track_caller]
            fn vjp<'__a, __V: #krate::ArrayValue + '__a>(#(#args: &__V,)* #(#statics),*)
                -> (__V, impl ::core::ops::FnOnce(__V) -> #ct_tuple + use<__V>)
            {
                let (__y, __pullback) = #krate::fused::vjp::<__V, #ty, #n, #b>([#(#args),*], [#(#inputs),*]);
                (__y, move |__ct: __V| {
                    let [#(#cs),*] = __pullback(__ct);
                    (#(#cs,)*)
                })
            }
            #[track_caller]
            #[allow(dead_code)]
            fn vjp_shapes<'__a, __V: #krate::ArrayValue + '__a>(#(#args: &__V,)* #(#statics),*)
                -> (#krate::compose::OutSpec, impl ::core::ops::FnOnce(__V) -> #ct_tuple + use<__V>)
            {
                let (__s, __pullback) =
                    #krate::fused::vjp_shapes::<__V, #ty, #n, #b>([#(#args),*], [#(#inputs),*]);
                (__s, move |__ct: __V| {
                    let [#(#cs),*] = __pullback(__ct);
                    (#(#cs,)*)
                })
            }
        }
        #[allow(clippy::all)]
        impl #krate::fused::Region<#n> for #ty {
            const REDUCE: bool = #reduce;
            const MEAN: bool = #mean;
            const RESULT: bool = #result;
            #[inline(always)]
            fn scalar<__T: #krate::Value + ::core::marker::Copy>(__x: &[__T; #n]) -> __T {
                #fwd_s::<__T>(#(&__x[#ks]),*)
            }
            #[inline(always)]
            fn scalar_vjp<__T: #krate::Value + ::core::marker::Copy>(__x: &[__T; #n], __ct: &__T) -> [__T; #n] {
                let __c = #vjp_s::<__T>(#(&__x[#ks],)* *__ct);
                [#(__c.#idx),*]
            }
            fn ops<__V: #krate::ArrayValue>(__x: [&__V; #n]) -> __V {
                #fwd_a::<__V>(#(__x[#ks]),*)
            }
            fn ops_vjp<__V: #krate::ArrayValue>(__x: [&__V; #n])
                -> (__V, impl ::core::ops::FnOnce(__V) -> [__V; #n] + use<__V>)
            {
                let (__y, __pullback) = #vjp_a::<__V>(#(__x[#ks]),*);
                (__y, move |__ct: __V| {
                    let __c = __pullback(__ct);
                    [#(__c.#idx),*]
                })
            }
            fn ops_vjp_shapes<__V: #krate::ArrayValue>(__x: [&__V; #n])
                -> (#krate::compose::OutSpec, impl ::core::ops::FnOnce(__V) -> [__V; #n] + use<__V>)
            {
                #ops_vjp_shapes
            }
        }
    }
}
