//! The forward program: the function's body in A-normal form, generic over
//! the value type. Instantiated at `Array` it is the ordinary function; at
//! `Dual<V>` it is the JVP; the VJP's forward sweep is the same program
//! keeping what its reverse sweep needs.

use crate::ir::{CallArg, Function, Stmt};
use proc_macro2::{Ident, TokenStream};
use quote::{ToTokens, format_ident, quote};

/// Which program a statement is generated for.
#[derive(Clone, Copy)]
pub enum Mode<'a> {
    /// The plain forward program.
    Forward,
    /// The VJP's forward sweep: active calls keep their pullback and
    /// branches return their residuals. `active` is the activity analysis.
    Sweep { active: &'a [bool] },
}

/// The name of a call's pullback in the VJP.
pub fn pullback(id: usize) -> Ident {
    format_ident!("__pullback{}", id)
}

/// The names holding a branch's residuals (`Some` for the branch taken).
pub fn branch_holders(id: usize) -> (Ident, Ident) {
    (format_ident!("__then{}", id), format_ident!("__else{}", id))
}

/// The tape of a loop in the VJP: one residual tuple per iteration.
pub fn tape(id: usize) -> Ident {
    format_ident!("__tape{}", id)
}

/// The running value of a loop's `j`-th carried variable.
pub fn carry(id: usize, j: usize) -> Ident {
    format_ident!("__carry{}_{}", id, j)
}

/// Whether the loop variable goes onto the tape: not `_`, and not the
/// synthetic item of a rewritten loop (`for (a, b) in ..`, `for w in ws`),
/// which the body only reads through statics that are taped themselves.
pub fn tapes_loop_var(pat: &TokenStream) -> bool {
    let s = pat.to_string();
    s != "_" && !s.starts_with("__nabla_item")
}

/// The residuals one loop iteration keeps: the loop variable, the carried
/// values at the start of the iteration and everything the body defines.
pub fn loop_residuals(
    f: &Function,
    pat: &TokenStream,
    body: &[Stmt],
    carried: &[crate::ir::Carried],
    active: &[bool],
) -> Vec<TokenStream> {
    let mut r: Vec<TokenStream> = Vec::new();
    if tapes_loop_var(pat) {
        r.push(pat.clone());
    }
    r.extend(carried.iter().map(|c| f.name(c.phi).to_token_stream()));
    r.extend(
        residuals(f, body, active)
            .into_iter()
            .map(|i| i.to_token_stream()),
    );
    r
}

/// Which entries of [`loop_residuals`] are static (the loop variable, static
/// carried values, static `let`s): those go onto the tape owned (see
/// `transforms::private::Own`), since they may borrow static arguments.
pub fn static_residuals(
    f: &Function,
    pat: &TokenStream,
    body: &[Stmt],
    carried: &[crate::ir::Carried],
    active: &[bool],
) -> Vec<bool> {
    let mut r: Vec<bool> = Vec::new();
    if tapes_loop_var(pat) {
        r.push(true);
    }
    r.extend(
        carried
            .iter()
            .map(|c| f.vars[c.phi].kind == crate::ir::Kind::Static),
    );
    r.extend(static_flags(f, body, active));
    r
}

/// Residual expressions for a tape or branch holder: the static ones
/// (`statics[k]`) are wrapped so they are held owned (see
/// `transforms::private::Own`).
pub fn owned_residuals(f: &Function, res: &[TokenStream], statics: &[bool]) -> Vec<TokenStream> {
    let krate = &f.krate;
    let private = quote!(#krate::transforms::private);
    res.iter()
        .zip(statics)
        .map(|(r, &s)| {
            if s {
                quote!({
                    #[allow(unused_imports)]
                    use #private::{OwnRef as _, OwnVal as _};
                    (&#private::Own(#r)).own()
                })
            } else {
                r.clone()
            }
        })
        .collect()
}

/// The other side of [`owned_residuals`]: patterns to destructure held
/// residuals with, and the statements that rebind each static as it was (a
/// reference again if it was one). `tag` keeps the names unique.
pub fn rebound_residuals(
    res: &[TokenStream],
    statics: &[bool],
    tag: &str,
) -> (Vec<TokenStream>, TokenStream) {
    let mut pats = Vec::new();
    let mut rebinds = Vec::new();
    for (k, (r, &s)) in res.iter().zip(statics).enumerate() {
        if s {
            let held = format_ident!("__held{}_{}", tag, k);
            rebinds.push(quote!(let #r = #held.1.back(&#held.0);));
            pats.push(quote!(#held));
        } else {
            pats.push(r.clone());
        }
    }
    (pats, quote!(#(#rebinds)*))
}

/// Which of [`residuals`]`(body)` are static `let`s.
pub fn static_flags(f: &Function, body: &[Stmt], active: &[bool]) -> Vec<bool> {
    let statics: std::collections::HashSet<String> = body
        .iter()
        .filter_map(|s| match s {
            Stmt::Static { out, .. } => Some(f.name(*out).to_string()),
            _ => None,
        })
        .collect();
    residuals(f, body, active)
        .iter()
        .map(|i| statics.contains(&i.to_string()))
        .collect()
}

/// The names a branch body defines that its reverse sweep may need.
pub fn residuals(f: &Function, body: &[Stmt], active: &[bool]) -> Vec<Ident> {
    let mut names = Vec::new();
    for s in body {
        match s {
            // The tuple a binding `match` arm extracts is read only through
            // its fields, which are residuals themselves.
            Stmt::Static { out, .. } if f.name(*out).to_string().starts_with("__nabla_bound") => {}
            Stmt::Prim { out, .. }
            | Stmt::Static { out, .. }
            | Stmt::Constant { out, .. }
            | Stmt::Leaf { out, .. } => names.push(f.name(*out).clone()),
            Stmt::Call {
                outs,
                id,
                checkpoint,
                ..
            } => {
                names.extend(outs.iter().map(|o| f.name(*o).clone()));
                if !*checkpoint && outs.iter().any(|&o| active[o]) {
                    names.push(pullback(*id));
                }
            }
            Stmt::If { merges, id, .. } => {
                names.extend(merges.iter().map(|m| f.name(m.out).clone()));
                let (t, e) = branch_holders(*id);
                names.push(t);
                names.push(e);
            }
            Stmt::For { carried, id, .. } => {
                names.extend(carried.iter().map(|c| f.name(c.out).clone()));
                names.push(tape(*id));
            }
        }
    }
    names
}

/// Arguments of a call in generated code (values by reference).
pub fn call_args(f: &Function, args: &[CallArg]) -> Vec<TokenStream> {
    args.iter()
        .map(|a| match a {
            CallArg::Value(v) => match f.param_of(*v).filter(|p| p.tree.is_some()) {
                // A tree is passed on as the caller received it.
                Some(p) => p.ident.to_token_stream(),
                None => {
                    let id = f.name(*v);
                    quote!(&#id)
                }
            },
            CallArg::Static(t) => t.clone(),
        })
        .collect()
}

/// The forward statement for `stmt` (see [`Mode`]).
pub fn stmt(f: &Function, s: &Stmt, mode: Mode) -> TokenStream {
    let krate = &f.krate;
    match s {
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
            id,
            checkpoint,
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
            match mode {
                Mode::Sweep { active } if !*checkpoint && outs.iter().any(|&o| active[o]) => {
                    let pb = pullback(*id);
                    quote!(let (#pat, #pb) = #path::#vjp::<__V>(#(#args),*);)
                }
                _ => quote!(let #pat = #path::#fwd::<__V>(#(#args),*);),
            }
        }
        Stmt::If {
            cond,
            then_body,
            else_body,
            merges,
            id,
        } => {
            let outs: Vec<&Ident> = merges.iter().map(|m| f.name(m.out)).collect();
            let then_stmts: Vec<TokenStream> = then_body.iter().map(|t| stmt(f, t, mode)).collect();
            let else_stmts: Vec<TokenStream> = else_body.iter().map(|t| stmt(f, t, mode)).collect();
            let clone = |v| {
                let v = f.name(v);
                quote!(::core::clone::Clone::clone(&#v))
            };
            let tv: Vec<TokenStream> = merges.iter().map(|m| clone(m.then_v)).collect();
            let ev: Vec<TokenStream> = merges.iter().map(|m| clone(m.else_v)).collect();
            match mode {
                Mode::Forward => quote! {
                    let (#(#outs,)*) = if #cond { #(#then_stmts)* (#(#tv,)*) } else { #(#else_stmts)* (#(#ev,)*) };
                },
                Mode::Sweep { active } => {
                    let (th, eh) = branch_holders(*id);
                    let names = |b: &[Stmt]| -> Vec<TokenStream> {
                        residuals(f, b, active).iter().map(|i| quote!(#i)).collect()
                    };
                    let tr =
                        owned_residuals(f, &names(then_body), &static_flags(f, then_body, active));
                    let er =
                        owned_residuals(f, &names(else_body), &static_flags(f, else_body, active));
                    let some = quote!(::core::option::Option::Some);
                    let none = quote!(::core::option::Option::None);
                    quote! {
                        let (#(#outs,)* #th, #eh) = if #cond {
                            #(#then_stmts)*
                            (#(#tv,)* #some((#(#tr,)*)), #none)
                        } else {
                            #(#else_stmts)*
                            (#(#ev,)* #none, #some((#(#er,)*)))
                        };
                    }
                }
            }
        }
        Stmt::For {
            pat,
            iter,
            body,
            carried,
            id,
            cond,
            snapshots,
        } => {
            if let (Mode::Sweep { active }, Some(snaps), None) = (mode, snapshots, cond) {
                return revolve_sweep(f, s, active, *snaps);
            }
            let cs: Vec<Ident> = (0..carried.len()).map(|j| carry(*id, j)).collect();
            let inits = carried.iter().map(|c| {
                let v = f.name(c.init);
                quote!(::core::clone::Clone::clone(&#v))
            });
            let phis = carried.iter().map(|c| f.name(c.phi));
            let nexts = carried.iter().map(|c| {
                let v = f.name(c.next);
                quote!(::core::clone::Clone::clone(&#v))
            });
            let outs = carried.iter().map(|c| f.name(c.out));
            let stmts: Vec<TokenStream> = body.iter().map(|t| stmt(f, t, mode)).collect();
            let (tape_decl, push) = match mode {
                Mode::Forward => (quote!(), quote!()),
                Mode::Sweep { active } => {
                    let t = tape(*id);
                    // Statics are taped owned (a reference into a borrowed
                    // static argument cannot outlive the call).
                    let res = owned_residuals(
                        f,
                        &loop_residuals(f, pat, body, carried, active),
                        &static_residuals(f, pat, body, carried, active),
                    );
                    (
                        quote!(let mut #t = ::std::vec::Vec::new();),
                        quote!(#t.push((#(#res,)*));),
                    )
                }
            };
            let Some((k, test)) = cond else {
                // The forward sweep sizes the tape from the iterator's
                // length hint (exact for ranges): no regrowth while taping.
                let (tape_decl, iter) = match mode {
                    Mode::Forward => (tape_decl, iter.clone()),
                    Mode::Sweep { .. } => {
                        let (t, it) = (tape(*id), format_ident!("__loop{}", id));
                        (
                            quote! {
                                let #it = ::core::iter::IntoIterator::into_iter(#iter);
                                let mut #t = ::std::vec::Vec::with_capacity(::core::iter::Iterator::size_hint(&#it).0);
                            },
                            it.to_token_stream(),
                        )
                    }
                };
                return quote! {
                    #tape_decl
                    #(let mut #cs = #inits;)*
                    for #pat in #iter {
                        #(let #phis = #cs;)*
                        #(#stmts)*
                        #(#cs = #nexts;)*
                        #push
                    }
                    #(let #outs = #cs;)*
                };
            };
            // while (or a `for` with `break`): the condition's statements,
            // the test, then the body. A `for` first takes its next item.
            let (head, tail) = stmts.split_at(*k);
            let phis: Vec<&Ident> = carried.iter().map(|c| f.name(c.phi)).collect();
            let (it_decl, next) = if iter.to_string() == "()" {
                (quote!(), quote!())
            } else {
                let it = format_ident!("__loop{}", id);
                (
                    quote!(let mut #it = ::core::iter::IntoIterator::into_iter(#iter);),
                    quote!(let ::core::option::Option::Some(#pat) = ::core::iter::Iterator::next(&mut #it) else { break; };),
                )
            };
            quote! {
                #tape_decl
                #it_decl
                #(let mut #cs = #inits;)*
                loop {
                    #next
                    #(let #phis = #cs;)*
                    #(#head)*
                    if !(#test) {
                        #(#cs = #phis;)*
                        break;
                    }
                    #(#tail)*
                    #(#cs = #nexts;)*
                    #push
                }
                #(let #outs = #cs;)*
            }
        }
        Stmt::Static { out, expr } | Stmt::Constant { out, expr } => {
            let out = f.name(*out);
            quote!(let #out = #expr;)
        }
        Stmt::Leaf { out, tree, index } => {
            let (out, tree, index) = (f.name(*out), f.name(*tree), f.name(*index));
            quote!(let #out = ::core::clone::Clone::clone(&#tree[#index]);)
        }
    }
}

/// The vector of a checkpointed loop's iterator values (so the trip count
/// is known before the loop runs), or only their number when the loop
/// variable is `_`.
pub fn iters(id: usize) -> Ident {
    format_ident!("__iters{}", id)
}

/// The step closures of a checkpointed loop (see `nabla::revolve`):
/// `advance(i, state) -> state` runs iteration `i` plainly and
/// `record(i, state) -> (state, residuals)` runs it keeping the residuals
/// its reverse sweep needs. The state is the tuple of carried values.
pub fn revolve_steps(f: &Function, s: &Stmt, active: &[bool]) -> (TokenStream, TokenStream) {
    let Stmt::For {
        pat,
        body,
        carried,
        id,
        ..
    } = s
    else {
        return (quote!(), quote!());
    };
    let it = iters(*id);
    let bind = if pat.to_string() == "_" {
        quote!()
    } else {
        quote!(let #pat = ::core::clone::Clone::clone(&#it[__i]);)
    };
    let phis: Vec<&Ident> = carried.iter().map(|c| f.name(c.phi)).collect();
    let nexts: Vec<TokenStream> = carried
        .iter()
        .map(|c| {
            let v = f.name(c.next);
            quote!(::core::clone::Clone::clone(&#v))
        })
        .collect();
    let plain: Vec<TokenStream> = body.iter().map(|t| stmt(f, t, Mode::Forward)).collect();
    let sweep: Vec<TokenStream> = body
        .iter()
        .map(|t| stmt(f, t, Mode::Sweep { active }))
        .collect();
    let res = loop_residuals(f, pat, body, carried, active);
    (
        quote!(|__i: usize, (#(#phis,)*)| { #bind #(#plain)* (#(#nexts,)*) }),
        quote!(|__i: usize, (#(#phis,)*)| { #bind #(#sweep)* ((#(#nexts,)*), (#(#res,)*)) }),
    )
}

/// The VJP's forward sweep of a checkpointed loop: the iterator's values
/// are collected, then `Revolve::forward` runs the loop keeping only its
/// snapshots and the last iteration's residuals (held, with the iterator
/// values, in the loop's tape variable).
fn revolve_sweep(f: &Function, s: &Stmt, active: &[bool], snaps: usize) -> TokenStream {
    let Stmt::For {
        pat,
        iter,
        carried,
        id,
        ..
    } = s
    else {
        return quote!();
    };
    let krate = &f.krate;
    let (it, t) = (iters(*id), tape(*id));
    let inits = carried.iter().map(|c| {
        let v = f.name(c.init);
        quote!(::core::clone::Clone::clone(&#v))
    });
    let outs = carried.iter().map(|c| f.name(c.out));
    let (advance, record) = revolve_steps(f, s, active);
    // With `_` for the loop variable only the trip count is needed.
    let (values, len) = if pat.to_string() == "_" {
        (
            quote!(let #it: usize = ::core::iter::Iterator::count(::core::iter::IntoIterator::into_iter(#iter));),
            quote!(#it),
        )
    } else {
        (
            quote!(let #it: ::std::vec::Vec<_> = ::core::iter::Iterator::collect(::core::iter::IntoIterator::into_iter(#iter));),
            quote!(#it.len()),
        )
    };
    quote! {
        #values
        let ((#(#outs,)*), #t) = {
            let (__state, __revolve) = #krate::revolve::Revolve::forward(#len, #snaps, (#(#inits,)*), #advance, #record);
            (__state, (#it, __revolve))
        };
    }
}

/// A static parameter of an operation. Parameters are evaluated in the
/// forward sweep and again in the reverse sweep, so a bare variable is
/// cloned rather than moved (a no-op for `Copy` values).
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
    let stmts = f.body.iter().map(|s| stmt(f, s, Mode::Forward));
    quote!(#(#stmts)*)
}
