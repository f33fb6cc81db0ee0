//! The function-like transform macros: `grad!`, `value_and_grad!`, `vjp!`,
//! `jvp!`. They parse options and expand to the transform functions of the
//! runtime with type-level `argnums`, so the work happens in generated,
//! monomorphised code.

use proc_macro2::TokenStream;
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::{Expr, LitInt, Token};

/// `f` followed by `, argnums = i | (i, j, ..)` and/or `, has_aux`.
pub struct TransformArgs {
    pub func: Expr,
    pub argnums: Vec<usize>,
    pub tuple: bool,
    pub has_aux: bool,
}

impl Parse for TransformArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let func: Expr = input.parse()?;
        let mut args = TransformArgs {
            func,
            argnums: vec![0],
            tuple: false,
            has_aux: false,
        };
        while input.peek(Token![,]) {
            input.parse::<Token![,]>()?;
            if input.is_empty() {
                break;
            }
            let key: syn::Ident = input.parse()?;
            match key.to_string().as_str() {
                "argnums" => {
                    input.parse::<Token![=]>()?;
                    if input.peek(syn::token::Paren) {
                        let content;
                        syn::parenthesized!(content in input);
                        let list = content.parse_terminated(LitInt::parse, Token![,])?;
                        if list.is_empty() {
                            return Err(syn::Error::new(
                                key.span(),
                                "argnums needs at least one argument index",
                            ));
                        }
                        args.argnums = list
                            .iter()
                            .map(|l| l.base10_parse())
                            .collect::<syn::Result<_>>()?;
                        args.tuple = true;
                    } else {
                        let l: LitInt = input.parse()?;
                        args.argnums = vec![l.base10_parse()?];
                    }
                }
                "has_aux" => args.has_aux = true,
                other => {
                    return Err(syn::Error::new(
                        key.span(),
                        format!(
                            "unknown option `{other}`; expected `argnums = i`, `argnums = (i, j)` or `has_aux`"
                        ),
                    ));
                }
            }
        }
        Ok(args)
    }
}

fn argnums_type(a: &TransformArgs) -> TokenStream {
    let items = a
        .argnums
        .iter()
        .map(|i| quote!(::nabla::transforms::Argnum<#i>));
    if a.tuple {
        quote!((#(#items,)*))
    } else {
        quote!(#(#items)*)
    }
}

/// `grad!(f, ..)` and `value_and_grad!(f, ..)`.
pub fn grad(a: TransformArgs, value: bool) -> TokenStream {
    let f = &a.func;
    let argnums = argnums_type(&a);
    let aux = if a.has_aux {
        quote!(::nabla::transforms::HasAux)
    } else {
        quote!(::nabla::transforms::NoAux)
    };
    if value {
        quote!(::nabla::transforms::value_and_grad_with::<#argnums, #aux, _>(#f))
    } else {
        quote!(::nabla::transforms::grad_with::<#argnums, #aux, _>(#f))
    }
}
