//! The forward program: the function's body in A-normal form, generic over
//! the value type. Instantiated at `Array` it is the ordinary function; at
//! `Dual<V>` it is the JVP; the reverse sweep reuses its statements.

use crate::ir::{CallArg, Function, Stmt};
use proc_macro2::TokenStream;
use quote::quote;

/// Arguments of a call in generated code (values by reference).
pub fn call_args(f: &Function, args: &[CallArg]) -> Vec<TokenStream> {
    args.iter()
        .map(|a| match a {
            CallArg::Value(v) => {
                let id = f.name(*v);
                quote!(&#id)
            }
            CallArg::Static(t) => t.clone(),
        })
        .collect()
}

/// The forward statement for `stmt`. In the VJP's forward sweep, calls of
/// other differentiable functions go through their `vjp` and keep the
/// pullback (`pullback = Some(name)`).
pub fn stmt(f: &Function, stmt: &Stmt, pullback: Option<&proc_macro2::Ident>) -> TokenStream {
    let krate = &f.krate;
    match stmt {
        Stmt::Prim {
            out,
            op,
            inputs,
            params,
            span,
        } => {
            let out = f.name(*out);
            let rule = syn::Ident::new(op.rule, *span);
            let ins = inputs.iter().map(|v| f.name(*v));
            let params = params.iter().map(param);
            if op.variadic {
                quote!(let #out = #krate::rules::#rule::forward(&[#(&#ins),*], #(#params),*);)
            } else {
                quote!(let #out = #krate::rules::#rule::forward(#(&#ins,)* #(#params),*);)
            }
        }
        Stmt::Call {
            outs,
            path,
            args,
            span,
        } => {
            let names: Vec<_> = outs.iter().map(|v| f.name(*v)).collect();
            let pat = if names.len() == 1 {
                quote!(#(#names)*)
            } else {
                quote!((#(#names),*))
            };
            let args = call_args(f, args);
            // `forward`/`vjp` carry the call's span, so calling a function
            // that is not #[differentiable] is reported at the call.
            let (fwd, vjp) = (
                syn::Ident::new("forward", *span),
                syn::Ident::new("vjp", *span),
            );
            match pullback {
                Some(pb) => quote!(let (#pat, #pb) = #path::#vjp::<__V>(#(#args),*);),
                None => quote!(let #pat = #path::#fwd::<__V>(#(#args),*);),
            }
        }
        Stmt::Static { out, expr } | Stmt::Constant { out, expr } => {
            let out = f.name(*out);
            quote!(let #out = #expr;)
        }
    }
}

/// A static parameter of an operation. Parameters are evaluated in the
/// forward sweep and again in the reverse sweep, so they are cloned rather
/// than moved (a no-op for `Copy` values).
pub fn param(p: &TokenStream) -> TokenStream {
    let toks: Vec<proc_macro2::TokenTree> = p.clone().into_iter().collect();
    match &toks[..] {
        [proc_macro2::TokenTree::Ident(id)] if id != "true" && id != "false" => {
            quote!(::core::clone::Clone::clone(&#id))
        }
        _ => p.clone(),
    }
}

/// The whole forward body (without the return expression).
pub fn body(f: &Function) -> TokenStream {
    let stmts = f.body.iter().map(|s| stmt(f, s, None));
    quote!(#(#stmts)*)
}
