//! The forward program: the function's body in A-normal form, generic over
//! the value type. Instantiated at `Array` it is the ordinary function; at
//! `Dual<V>` it is the JVP; the reverse sweep reuses its statements.

use crate::ir::{CallArg, Function, Stmt};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

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
            quote_spanned!(*span=> let #out = #krate::rules::#rule::forward(#(&#ins,)* #(#params),*);)
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
            match pullback {
                Some(pb) => {
                    quote_spanned!(*span=> let (#pat, #pb) = #path::vjp::<__V>(#(#args),*);)
                }
                None => quote_spanned!(*span=> let #pat = #path::forward::<__V>(#(#args),*);),
            }
        }
        Stmt::Static { out, expr } | Stmt::Constant { out, expr } => {
            let out = f.name(*out);
            quote!(let #out = #expr;)
        }
    }
}

/// The whole forward body (without the return expression).
pub fn body(f: &Function) -> TokenStream {
    let stmts = f.body.iter().map(|s| stmt(f, s, None));
    quote!(#(#stmts)*)
}
