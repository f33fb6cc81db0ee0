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
    /// `in_axes`: one entry (`None` = unmapped) per argument, or one for all.
    pub in_axes: Option<Vec<Option<isize>>>,
    pub in_axes_tuple: bool,
    pub out_axes: Option<isize>,
    /// Names of the options given, for "not supported here" errors.
    pub given: Vec<syn::Ident>,
}

fn axis(input: ParseStream) -> syn::Result<Option<isize>> {
    if input.peek(syn::Ident) {
        let id: syn::Ident = input.parse()?;
        if id == "None" {
            return Ok(None);
        }
        return Err(syn::Error::new(
            id.span(),
            "an axis is an integer (negative counts from the end) or `None`",
        ));
    }
    let neg = input.peek(Token![-]);
    if neg {
        input.parse::<Token![-]>()?;
    }
    let l: LitInt = input.parse()?;
    let v: isize = l.base10_parse()?;
    Ok(Some(if neg { -v } else { v }))
}

impl Parse for TransformArgs {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let func: Expr = input.parse()?;
        let mut args = TransformArgs {
            func,
            argnums: vec![0],
            tuple: false,
            has_aux: false,
            in_axes: None,
            in_axes_tuple: false,
            out_axes: None,
            given: Vec::new(),
        };
        while input.peek(Token![,]) {
            input.parse::<Token![,]>()?;
            if input.is_empty() {
                break;
            }
            let key: syn::Ident = input.parse()?;
            args.given.push(key.clone());
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
                "in_axes" => {
                    input.parse::<Token![=]>()?;
                    if input.peek(syn::token::Paren) {
                        let content;
                        syn::parenthesized!(content in input);
                        let mut list = Vec::new();
                        while !content.is_empty() {
                            list.push(axis(&content)?);
                            if content.peek(Token![,]) {
                                content.parse::<Token![,]>()?;
                            }
                        }
                        args.in_axes = Some(list);
                        args.in_axes_tuple = true;
                    } else {
                        args.in_axes = Some(vec![axis(input)?]);
                    }
                }
                "out_axes" => {
                    input.parse::<Token![=]>()?;
                    let a = axis(input)?;
                    args.out_axes = Some(a.ok_or_else(|| {
                        syn::Error::new(key.span(), "out_axes must be an axis, not None")
                    })?);
                }
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

/// Rejects options a transform does not take.
pub fn only(a: &TransformArgs, name: &str, allowed: &[&str]) -> Option<TokenStream> {
    a.given
        .iter()
        .find(|k| !allowed.contains(&k.to_string().as_str()))
        .map(|k| {
            let msg = if allowed.is_empty() {
                format!("`{name}!` takes no options")
            } else {
                format!(
                    "`{name}!` does not take `{k}`; its options: {}",
                    allowed.join(", ")
                )
            };
            syn::Error::new(k.span(), msg).to_compile_error()
        })
}

/// `vmap!(f, in_axes = .., out_axes = ..)`.
pub fn vmap(a: TransformArgs) -> TokenStream {
    if let Some(e) = only(&a, "vmap", &["in_axes", "out_axes"]) {
        return e;
    }
    let f = &a.func;
    let ax = |v: &Option<isize>| match v {
        Some(i) => quote!(::nabla::compose::Axis<#i>),
        None => quote!(::nabla::compose::NoAxis),
    };
    let in_axes = match (&a.in_axes, a.in_axes_tuple) {
        (None, _) => quote!(::nabla::compose::AllZero),
        (Some(list), true) => {
            let items = list.iter().map(ax);
            quote!((#(#items,)*))
        }
        (Some(list), false) if list[0] == Some(0) => quote!(::nabla::compose::AllZero),
        (Some(list), false) => {
            let one = ax(&list[0]);
            quote!(::nabla::compose::All<#one>)
        }
    };
    let out = ax(&Some(a.out_axes.unwrap_or(0)));
    quote!(::nabla::compose::vmap_with::<#in_axes, #out, _>(#f))
}

/// `jacfwd!`, `jacrev!`, `hessian!` with `argnums = i` (and `jacfwd!`/`jacrev!`
/// with `argnums = (i, j, ..)`: a tuple of Jacobians).
pub fn jacobian(a: TransformArgs, which: &str) -> TokenStream {
    if let Some(e) = only(&a, which, &["argnums"]) {
        return e;
    }
    let f = &a.func;
    if a.tuple && which != "hessian" {
        // A tuple of Jacobians, one per selected argument (terminal).
        let sel = argnums_type(&a);
        let path: TokenStream = format!("::nabla::compose::{which}_many")
            .parse()
            .expect("path");
        return quote!(#path::<#sel, _>(#f));
    }
    if a.tuple || a.argnums.len() != 1 {
        return syn::Error::new(
            proc_macro2::Span::call_site(),
            "`hessian!` takes one argument index (`argnums = i`); for a cross block write `jacfwd!(jacrev!(f, argnums = i), argnums = j)`",
        )
        .to_compile_error();
    }
    let i = a.argnums[0];
    let path: TokenStream = format!("::nabla::compose::{which}_with")
        .parse()
        .expect("path");
    quote!(#path::<::nabla::transforms::Argnum<#i>, _>(#f))
}
