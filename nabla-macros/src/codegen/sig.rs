//! The signature of the generic variants (`forward`, `jvp`, `vjp` and the
//! VJP programs): their parameters over `__V`, the bound on `__V`, and the
//! types of outputs and cotangents.

use crate::ir::{Function, Output, Tier};
use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::{Type, Visibility};

/// Signature pieces shared by the generic variants.
pub struct Sig {
    /// The parameters: values as `&__V`, trees as `&TreeArg<'_, T, __V>`,
    /// statics with their own type.
    pub generic_params: Vec<TokenStream>,
    /// `ArrayValue` or `Value`.
    pub bound: TokenStream,
    /// The outputs' type.
    pub out_ty: TokenStream,
    /// The outputs' cotangents (what a pullback takes).
    pub out_ct_ty: TokenStream,
    /// The parameters' cotangents (what a pullback returns).
    pub arg_cts_ty: TokenStream,
    /// A `let` per tree parameter binding its variable to an owned copy of
    /// its leaves (value parameters are used by reference).
    pub owned_params: Vec<TokenStream>,
    pub vis: Visibility,
}

/// Gives every top-level reference in a type the lifetime `'__a`.
pub fn with_lifetime(ty: &Type) -> TokenStream {
    match ty {
        Type::Reference(r) => {
            let (m, elem) = (&r.mutability, &r.elem);
            quote!(&'__a #m #elem)
        }
        Type::Tuple(t) => {
            let elems = t.elems.iter().map(with_lifetime);
            quote!((#(#elems,)*))
        }
        other => other.to_token_stream(),
    }
}

/// A tree parameter's leaves in generated code: `Vec<__V>`, or `[__V; K]`
/// for a fixed-size array of floats.
pub fn leaves_ty(p: &crate::ir::Param) -> TokenStream {
    match p.fixed_len() {
        Some(k) => quote!([__V; #k]),
        None => quote!(::std::vec::Vec<__V>),
    }
}

/// The signature pieces of `f`'s generic variants.
pub fn sig(f: &Function) -> Sig {
    let krate = &f.krate;
    let bound = match f.tier {
        Tier::Array => quote!(#krate::ArrayValue),
        Tier::Scalar(_) => quote!(#krate::Value),
    };
    // A method's variants are methods too: `&self` (the skeleton again)
    // is what method resolution finds them by.
    let mut generic_params = if f.method {
        vec![quote!(&self)]
    } else {
        Vec::new()
    };
    let mut owned_params = Vec::new();
    for p in &f.params {
        let id = &p.ident;
        match (p.var, &p.tree) {
            (Some(v), Some(tree)) => {
                let leaves = leaves_ty(p);
                generic_params.push(quote!(#id: &#krate::tree::TreeArg<'_, #tree, #leaves>));
                let var = f.name(v);
                owned_params
                    .push(quote!(let #var: #leaves = ::core::clone::Clone::clone(&#id.leaves);));
            }
            (Some(v), None) => {
                generic_params.push(quote!(#id: &__V));
                // Used by reference; renamed only if its name was taken.
                let var = f.name(v);
                if var != id {
                    owned_params.push(quote!(let #var: &__V = #id;));
                }
            }
            (None, _) => {
                let ty = with_lifetime(&p.ty);
                generic_params.push(quote!(#id: #ty));
            }
        }
    }
    let out_items: Vec<TokenStream> = f
        .outputs
        .iter()
        .map(|o| match o {
            Output::Value(_) => quote!(__V),
            Output::Static(_, ty) => with_lifetime(ty),
        })
        .collect();
    let ct_items: Vec<TokenStream> = f
        .outputs
        .iter()
        .map(|o| match o {
            Output::Value(_) => quote!(::core::option::Option<__V>),
            Output::Static(..) => quote!(()),
        })
        .collect();
    let (out_ty, out_ct_ty) = if f.tuple_output {
        (quote!((#(#out_items,)*)), quote!((#(#ct_items,)*)))
    } else {
        (quote!(#(#out_items)*), quote!(__V))
    };
    let arg_cts = f.params.iter().map(|p| {
        if p.tree.is_some() {
            leaves_ty(p)
        } else if p.var.is_some() {
            quote!(__V)
        } else {
            quote!(#krate::transforms::Static)
        }
    });
    Sig {
        generic_params,
        bound,
        out_ty,
        out_ct_ty,
        arg_cts_ty: quote!((#(#arg_cts,)*)),
        owned_params,
        vis: f.vis.clone(),
    }
}
