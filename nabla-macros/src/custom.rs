//! `#[custom_op(jvp = .., vjp = ..)]`: a user-defined primitive. The
//! annotated function is the forward computation on arrays (it may call
//! custom kernels); the two rules are generic functions over the value
//! traits. The expansion gives the op the same interface as a
//! `#[differentiable]` function (value, module, transform entry points), so
//! it is called the same way everywhere.

use crate::codegen;
use crate::ir::{Function, Kind, Output, Param, Tier, Var};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::{FnArg, ItemFn, Pat, Path, ReturnType};

/// Options: `jvp = path, vjp = path` (and optionally `crate = path`).
pub struct Rules {
    jvp: Option<Path>,
    vjp: Option<Path>,
    krate: TokenStream,
}

/// Parses the attribute's arguments.
pub fn rules(attr: TokenStream) -> syn::Result<Rules> {
    let mut r = Rules {
        jvp: None,
        vjp: None,
        krate: quote!(::nabla),
    };
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("jvp") {
            r.jvp = Some(meta.value()?.parse()?);
        } else if meta.path.is_ident("vjp") {
            r.vjp = Some(meta.value()?.parse()?);
        } else if meta.path.is_ident("crate") {
            let p: Path = meta.value()?.parse()?;
            r.krate = quote!(#p);
        } else {
            return Err(
                meta.error("unknown option; #[custom_op] takes `jvp = path` and `vjp = path`")
            );
        }
        Ok(())
    });
    syn::parse::Parser::parse2(parser, attr)?;
    Ok(r)
}

/// Expands a custom op.
pub fn expand(r: Rules, item: &ItemFn) -> syn::Result<TokenStream> {
    let sig = &item.sig;
    let name = &sig.ident;
    let (Some(jvp_rule), Some(vjp_rule)) = (&r.jvp, &r.vjp) else {
        return Err(syn::Error::new(
            name.span(),
            "#[custom_op] needs both rules: `#[custom_op(jvp = my_jvp, vjp = my_vjp)]` (the JVP rule gives forward mode, the VJP rule reverse mode)",
        ));
    };
    let mut names = Vec::new();
    let mut by_ref = Vec::new();
    for arg in &sig.inputs {
        let FnArg::Typed(pt) = arg else {
            return Err(syn::Error::new(
                arg.span(),
                "a custom op is a free function of arrays",
            ));
        };
        let Pat::Ident(pi) = &*pt.pat else {
            return Err(syn::Error::new(
                pt.pat.span(),
                "custom op parameters must be plain names",
            ));
        };
        let ty = quote!(#pt.ty).to_string();
        let is_ref = matches!(&*pt.ty, syn::Type::Reference(_));
        if !ty.contains("Array") {
            return Err(syn::Error::new(
                pt.ty.span(),
                "custom op parameters must be arrays (`&Array` or `Array`)",
            ));
        }
        names.push(pi.ident.clone());
        by_ref.push(is_ref);
    }
    let n = names.len();
    if n == 0 || n > 6 {
        return Err(syn::Error::new(
            sig.inputs.span(),
            "a custom op takes one to six arrays",
        ));
    }
    if !matches!(&sig.output, ReturnType::Type(_, t) if quote!(#t).to_string().contains("Array")) {
        return Err(syn::Error::new(
            sig.ident.span(),
            "a custom op returns one `Array`",
        ));
    }
    let krate = &r.krate;
    let vis = &item.vis;
    let arity = format_ident!("A{}", n);
    let primal = format_ident!("__nabla_{}_primal", name);
    let fwd = format_ident!("__nabla_{}_forward", name);
    let vjp = format_ident!("__nabla_{}_vjp", name);
    let masked = format_ident!("__nabla_{}_vjp_masked", name);
    let jvp = format_ident!("__nabla_{}_jvp", name);
    let idx: Vec<syn::Index> = (0..n).map(syn::Index::from).collect();
    let vs: Vec<TokenStream> = (0..n).map(|_| quote!(__V)).collect();
    let arrays: Vec<TokenStream> = (0..n).map(|_| quote!(#krate::Array)).collect();
    let dots: Vec<syn::Ident> = names.iter().map(|i| format_ident!("{}_dot", i)).collect();
    let primal_args: Vec<TokenStream> = idx
        .iter()
        .zip(&by_ref)
        .map(|(i, r)| {
            if *r {
                quote!(&x.#i)
            } else {
                quote!(::core::clone::Clone::clone(&x.#i))
            }
        })
        .collect();
    let name_str = name.to_string();
    let cts = if n == 1 {
        quote!((#vjp_rule(#(&x.#idx,)* y, ct),))
    } else {
        quote!(#vjp_rule(#(&x.#idx,)* y, ct))
    };
    let mut orig = item.clone();
    orig.sig.ident = primal.clone();
    orig.attrs.retain(|a| !a.path().is_ident("doc"));
    let docs: Vec<&syn::Attribute> = item
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .collect();
    let user_types: Vec<&syn::Type> = sig
        .inputs
        .iter()
        .map(|a| match a {
            FnArg::Typed(pt) => &*pt.ty,
            FnArg::Receiver(_) => unreachable!("checked"),
        })
        .collect();
    let call_owned: Vec<TokenStream> = names
        .iter()
        .zip(&by_ref)
        .map(|(i, r)| {
            if *r {
                quote!(::core::clone::Clone::clone(#i))
            } else {
                quote!(#i)
            }
        })
        .collect();
    let ret = &sig.output;
    let reexport = match vis {
        syn::Visibility::Inherited => quote!(pub(super)),
        syn::Visibility::Public(_) => quote!(pub),
        syn::Visibility::Restricted(_) => quote!(pub(crate)),
    };
    let call_fn = format_ident!("__nabla_{}_call", name);

    // The same interface as a #[differentiable] function.
    let f = Function {
        vis: vis.clone(),
        ident: name.clone(),
        tier: Tier::Array,
        params: names
            .iter()
            .zip(&user_types)
            .zip(&by_ref)
            .enumerate()
            .map(|(k, ((i, t), r))| Param {
                ident: i.clone(),
                ty: (*t).clone(),
                var: Some(k),
                by_ref: *r,
                tree: None,
            })
            .collect(),
        vars: names
            .iter()
            .map(|i| Var {
                ident: i.clone(),
                kind: Kind::Value,
            })
            .collect(),
        body: Vec::new(),
        outputs: vec![Output::Value(0)],
        tuple_output: false,
        ret_ty: match &sig.output {
            ReturnType::Type(_, t) => (**t).clone(),
            ReturnType::Default => unreachable!("checked"),
        },
        krate: krate.clone(),
    };
    let s = codegen::sig(&f);
    let entries = codegen::entries(&f, &s);

    Ok(quote! {
        #[doc(hidden)]
        #orig

        #(#docs)*
        #[allow(non_upper_case_globals)]
        #vis const #name: #name::Function = #name::Function;

        #[doc = concat!("The custom op `", #name_str, "`: `Op` (its [`CustomOp`] impl) and the generated variants.")]
        #vis mod #name {
            #reexport use super::{#primal as primal, #fwd as forward, #jvp as jvp, #vjp as vjp};
            /// The op's [`CustomOp`] implementation.
            #[derive(Clone, Copy, Debug, Default)]
            #reexport struct Op;
            /// The type of the op's function value.
            #[derive(Clone, Copy, Debug, Default)]
            #reexport struct Function;
        }

        impl #krate::custom::CustomOp<#krate::compose::#arity> for #name::Op {
            const NAME: &'static str = #name_str;
            fn forward(x: &(#(#arrays,)*)) -> #krate::Array {
                #primal(#(#primal_args),*)
            }
            fn jvp<__V: #krate::ArrayValue>(x: &(#(#vs,)*), y: &__V, dx: &(#(::core::option::Option<#vs>,)*)) -> __V {
                #jvp_rule(#(&x.#idx,)* y, #(dx.#idx.as_ref()),*)
            }
            fn vjp<__V: #krate::ArrayValue>(x: &(#(#vs,)*), y: &__V, ct: &__V) -> (#(#vs,)*) {
                #cts
            }
        }

        #[doc(hidden)]
        #vis fn #call_fn(#(#names: #user_types),*) #ret {
            #krate::custom::call::<#name::Op, #krate::compose::#arity>(&(#(#call_owned,)*))
        }

        impl ::core::ops::Deref for #name::Function {
            type Target = fn(#(#user_types),*) #ret;
            fn deref(&self) -> &Self::Target {
                &(#call_fn as fn(#(#user_types),*) #ret)
            }
        }

        #[doc(hidden)]
        #vis fn #fwd<'__a, __V: #krate::ArrayValue + '__a>(#(#names: &__V),*) -> __V {
            <__V as #krate::ArrayValue>::apply_custom::<#name::Op, #krate::compose::#arity>(&(#(::core::clone::Clone::clone(#names),)*))
        }

        #[doc(hidden)]
        #vis fn #vjp<'__a, __V: #krate::ArrayValue + '__a>(#(#names: &__V),*)
            -> (__V, impl ::core::ops::FnOnce(__V) -> (#(#vs,)*) + use<__V>)
        {
            let x = (#(::core::clone::Clone::clone(#names),)*);
            let y = <__V as #krate::ArrayValue>::apply_custom::<#name::Op, #krate::compose::#arity>(&x);
            let out = ::core::clone::Clone::clone(&y);
            (y, move |ct: __V| {
                <#name::Op as #krate::custom::CustomOp<#krate::compose::#arity>>::vjp::<__V>(&x, &out, &ct)
            })
        }

        #[doc(hidden)]
        #vis fn #masked<'__a, __V: #krate::ArrayValue + '__a>(#(#names: &__V,)* __want: [bool; #n])
            -> (__V, impl ::core::ops::FnOnce(__V) -> (#(#vs,)*) + use<__V>)
        {
            #vjp::<__V>(#(#names),*)
        }

        #[doc(hidden)]
        #vis fn #jvp<'__a, __V: #krate::ArrayValue + '__a>(#(#names: &__V,)* #(#dots: ::core::option::Option<&'__a __V>),*) -> (__V, __V) {
            let d = (#(#krate::Dual::new(::core::clone::Clone::clone(#names), #dots.cloned()),)*);
            let y = <#krate::Dual<__V> as #krate::ArrayValue>::apply_custom::<#name::Op, #krate::compose::#arity>(&d);
            let t = y.tangent_or_zero();
            (y.primal, t)
        }

        #entries
    })
}
