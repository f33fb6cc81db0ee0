//! The reverse sweep: each statement's VJP, in reverse order, inside the
//! pullback closure. Cotangents are `Option`s (`None` is a symbolic zero),
//! accumulated when a value is used several times, and taken (freed) as
//! soon as they are consumed; only active variables have one.
//!
//! A body's residuals, which the forward sweep keeps for it (`held`), are
//! the names the body binds that its reverse sweep mentions (each
//! primitive's step mentions only what it reads, `reads`): a value only the
//! forward computation needed is dropped with the iteration.

use super::forward;
use super::held::{flags, keeps_loop_var, read_residuals, rebound_residuals};
use super::names::{branch_holders, ct, flow, pullback, tape};
use super::{reads, revolve};
use crate::ir::{CallArg, Callee, Carried, Function, Kind, Merge, Stmt, VarId};
use proc_macro2::{Ident, TokenStream};
use quote::{ToTokens, format_ident, quote};
use std::collections::HashSet;

/// Wraps an update of `v`'s cotangent so it only runs when `v` is a
/// parameter the caller asked a cotangent for.
pub fn guarded(f: &Function, v: VarId, update: TokenStream) -> TokenStream {
    match f.params.iter().position(|p| p.var == Some(v)) {
        Some(k) => quote!(if __want[#k] { #update }),
        None => update,
    }
}

/// The reverse sweep of a body: its statements' VJPs in reverse order.
pub fn body(f: &Function, active: &[bool], body: &[Stmt]) -> TokenStream {
    let stmts = body.iter().rev().map(|s| stmt(f, active, s));
    quote!(#(#stmts)*)
}

/// The reverse step of one statement (nothing for an inactive one).
pub fn stmt(f: &Function, active: &[bool], s: &Stmt) -> TokenStream {
    let live = |c: &Carried| active[c.out];
    match s {
        Stmt::Prim { out, .. } if active[*out] => prim(f, active, s),
        Stmt::Call { outs, .. } if outs.iter().any(|&o| active[o]) => call(f, active, s),
        Stmt::If { .. } => branch(f, active, s),
        Stmt::Leaf { out, tree, index } if active[*out] => {
            let krate = &f.krate;
            let private = quote!(#krate::transforms::private);
            let (co, ct_tree, index) = (ct(f, *out), ct(f, *tree), f.name(*index));
            quote!(if let ::core::option::Option::Some(__g) = #co.take() { #private::acc(&mut #ct_tree[#index], __g); })
        }
        Stmt::For {
            snapshots: Some(_),
            cond: None,
            carried,
            ..
        } if carried.iter().any(live) => revolve::reverse(f, active, s),
        Stmt::For { carried, .. } if carried.iter().any(live) => repeat(f, active, s),
        _ => quote!(),
    }
}

/// `out = op(inputs..)`: `rules::<op>::vjp_<k>` for each active input, on
/// what that step reads.
fn prim(f: &Function, active: &[bool], s: &Stmt) -> TokenStream {
    let Stmt::Prim {
        out,
        op,
        inputs,
        params,
        span,
    } = s
    else {
        return quote!();
    };
    let krate = &f.krate;
    let private = quote!(#krate::transforms::private);
    let rule = syn::Ident::new(op.rule, *span);
    let cy = ct(f, *out);
    let params: Vec<TokenStream> = params.iter().map(forward::param).collect();
    let updates = inputs.iter().enumerate().filter(|(_, v)| active[**v]).map(|(k, v)| {
        let cx = ct(f, *v);
        // Exactly what the rule reads (`reads::args`).
        let reads = reads::args(f, s, k);
        if op.variadic {
            return guarded(f, *v, quote!(#private::acc(&mut #cx, #krate::rules::#rule::vjp(#k, #(#reads,)* #(#params,)* &__g));));
        }
        if op.accumulates_own_cotangent() {
            let acc_k = format_ident!("acc_{}", k);
            return guarded(f, *v, quote!(#krate::rules::#rule::#acc_k(&mut #cx, #(#reads,)* #(#params,)* &__g);));
        }
        let vjp_k = format_ident!("vjp_{}", k);
        guarded(f, *v, quote!(#private::acc(&mut #cx, #krate::rules::#rule::#vjp_k(#(#reads,)* #(#params,)* &__g));))
    });
    quote! {
        if let ::core::option::Option::Some(__g) = #cy.take() {
            #(#updates)*
        }
    }
}

/// A call: its pullback (recomputed first for a checkpointed call) on the
/// outputs' cotangents, accumulated into the arguments'.
fn call(f: &Function, active: &[bool], s: &Stmt) -> TokenStream {
    let Stmt::Call {
        outs,
        args,
        arg_spans,
        id,
        callee,
        span,
        checkpoint,
        ..
    } = s
    else {
        return quote!();
    };
    let krate = &f.krate;
    let private = quote!(#krate::transforms::private);
    let pb = pullback(*id);
    // A checkpointed call kept only its arguments: recompute its
    // forward sweep now to get the pullback.
    let recompute = match callee {
        Callee::Fn(path) if *checkpoint => {
            let vjp = syn::Ident::new("vjp", *span);
            let owned = forward::call_args(f, args)
                .iter()
                .map(forward::param)
                .collect();
            let a = forward::checked(f, args, owned, arg_spans, *span);
            let g = forward::function(f, path);
            quote!(let (_, #pb) = #g.#vjp::<__V>(#(#a),*);)
        }
        _ => quote!(),
    };
    let cts: Vec<Ident> = outs.iter().map(|&o| ct(f, o)).collect();
    let any = quote!(#(#cts.is_some())||*);
    let seed = if outs.len() == 1 {
        let (c, y) = (&cts[0], f.val(outs[0]));
        quote!(#private::or_zeros(#c.take(), #y))
    } else {
        quote!((#(#cts.take(),)*))
    };
    let updates = arg_updates(f, active, callee, args);
    let needed = wanted(f, active, args);
    quote! {
        if #any {
            if #needed {
                #recompute
                let __arg_cts = #pb(#seed);
                #(#updates)*
            } else {
                #(let _ = #cts.take();)*
            }
        }
    }
}

/// Whether a call's pullback is needed at all: some active argument is not
/// a parameter, or is one the caller asked a cotangent for (`__want`). A
/// call whose only active arguments are unwanted parameters (a row of a
/// data array read in a loop) is skipped, not run and discarded.
fn wanted(f: &Function, active: &[bool], args: &[CallArg]) -> TokenStream {
    let mut flags = Vec::new();
    for a in args {
        let v = match a {
            CallArg::Value(v) if active[*v] => *v,
            CallArg::Part { tree, .. } if active[*tree] => *tree,
            _ => continue,
        };
        match f.params.iter().position(|p| p.var == Some(v)) {
            Some(k) => flags.push(quote!(__want[#k])),
            None => return quote!(true),
        }
    }
    if flags.is_empty() {
        quote!(true)
    } else {
        quote!((#(#flags)||*))
    }
}

/// A call's pullback result `__arg_cts` added into its active arguments'
/// cotangents.
pub fn arg_updates(
    f: &Function,
    active: &[bool],
    callee: &Callee,
    args: &[CallArg],
) -> Vec<TokenStream> {
    let krate = &f.krate;
    let private = quote!(#krate::transforms::private);
    args.iter()
        .enumerate()
        .filter_map(|(k, a)| match a {
            CallArg::Value(v) if active[*v] => {
                let cx = ct(f, *v);
                let idx = arg_ct_index(callee, k, args.len());
                if f.vars[*v].kind == Kind::Tree {
                    Some(quote!(#krate::tree::acc_leaves(&mut #cx, __arg_cts.#idx);))
                } else if matches!(callee, Callee::Fn(_) | Callee::Method(_)) {
                    // `Static` when the parameter was static: `value_arg`
                    // reported it, and nothing is added.
                    Some(quote!(#private::acc_arg(&mut #cx, __arg_cts.#idx);))
                } else {
                    Some(quote!(#private::acc(&mut #cx, __arg_cts.#idx);))
                }
            }
            CallArg::Part { tree, range, .. } if active[*tree] => {
                let (cx, range) = (ct(f, *tree), f.name(*range));
                let idx = arg_ct_index(callee, k, args.len());
                Some(quote!(#krate::tree::acc_part(&mut #cx, #range, __arg_cts.#idx);))
            }
            _ => None,
        })
        .collect()
}

/// Where argument `k` of `n` finds its cotangent in a call's pullback
/// result: position `k`, or for `jvp(g)` (primals, then tangents) in the
/// primals' or the tangents' tuple.
fn arg_ct_index(callee: &Callee, k: usize, n: usize) -> TokenStream {
    match callee {
        Callee::Jvp(_) if k < n / 2 => {
            let i = syn::Index::from(k);
            quote!(0.#i)
        }
        Callee::Jvp(_) => {
            let i = syn::Index::from(k - n / 2);
            quote!(1.#i)
        }
        _ => {
            let i = syn::Index::from(k);
            quote!(#i)
        }
    }
}

/// An `if`: the branch that ran (the one whose holder is `Some`) gets the
/// merged cotangents and is replayed in reverse with its residuals.
fn branch(f: &Function, active: &[bool], s: &Stmt) -> TokenStream {
    let Stmt::If {
        then_body,
        else_body,
        merges,
        id,
        ..
    } = s
    else {
        return quote!();
    };
    let krate = &f.krate;
    let private = quote!(#krate::transforms::private);
    let (th, eh) = branch_holders(*id);
    let held = |b: &[Stmt], tag: String| {
        let names: Vec<TokenStream> = residuals(f, b, active).iter().map(|i| quote!(#i)).collect();
        rebound_residuals(&names, &static_flags(f, b, active), &tag)
    };
    let (tr, trebind) = held(then_body, format!("then{id}"));
    let (er, erebind) = held(else_body, format!("else{id}"));
    // The merged cotangents flow into the branch that ran.
    let flow = |pick: fn(&Merge) -> VarId| {
        let parts: Vec<TokenStream> = merges
            .iter()
            .filter(|m| active[m.out] && active[pick(m)])
            .map(|m| {
                let (co, ci) = (ct(f, m.out), ct(f, pick(m)));
                quote!(if let ::core::option::Option::Some(__g) = #co.take() { #private::acc(&mut #ci, __g); })
            })
            .collect();
        quote!(#(#parts)*)
    };
    let (tflow, eflow) = (flow(|m| m.then_v), flow(|m| m.else_v));
    let (trev, erev) = (body(f, active, then_body), body(f, active, else_body));
    quote! {
        if let ::core::option::Option::Some((#(#tr,)*)) = #th {
            #trebind
            #tflow
            #trev
        } else if let ::core::option::Option::Some((#(#er,)*)) = #eh {
            #erebind
            #eflow
            #erev
        }
    }
}

/// How the cotangents of a loop's live carried values (those whose result
/// is active) move in its reverse sweep: each has a flow variable, which
/// enters an iteration as the cotangent of its end value (`into_next`),
/// leaves it as that of its start value (`from_phi`), and after the first
/// iteration reaches the value before the loop (`into_init`).
pub struct Flows<'c> {
    pub live: Vec<&'c Carried>,
    pub flows: Vec<Ident>,
    pub into_next: Vec<TokenStream>,
    pub from_phi: Vec<TokenStream>,
    pub into_init: Vec<TokenStream>,
}

impl<'c> Flows<'c> {
    /// The flows of loop `id`'s live carried values.
    pub fn new(f: &Function, active: &[bool], id: usize, carried: &'c [Carried]) -> Self {
        let krate = &f.krate;
        let private = quote!(#krate::transforms::private);
        let live: Vec<&Carried> = carried.iter().filter(|c| active[c.out]).collect();
        let flows: Vec<Ident> = (0..live.len()).map(|j| flow(id, j)).collect();
        let into_next = live.iter().zip(&flows).filter(|(c, _)| active[c.next]).map(|(c, fl)| {
            let cn = ct(f, c.next);
            quote!(if let ::core::option::Option::Some(__g) = #fl.take() { #private::acc(&mut #cn, __g); })
        }).collect();
        let from_phi = live
            .iter()
            .zip(&flows)
            .map(|(c, fl)| {
                let cp = ct(f, c.phi);
                quote!(#fl = #cp.take();)
            })
            .collect();
        let into_init = live
            .iter()
            .zip(&flows)
            .filter(|(c, _)| active[c.init])
            .map(|(c, fl)| {
                let ci = ct(f, c.init);
                quote!(if let ::core::option::Option::Some(__g) = #fl { #private::acc(&mut #ci, __g); })
            })
            .collect();
        Flows {
            live,
            flows,
            into_next,
            from_phi,
            into_init,
        }
    }
}

/// A loop: its tape's iterations replayed in reverse, each rebinding its
/// residuals and running the body's reverse sweep.
fn repeat(f: &Function, active: &[bool], s: &Stmt) -> TokenStream {
    let Stmt::For {
        pat,
        body: loop_body,
        carried,
        id,
        ..
    } = s
    else {
        return quote!();
    };
    let t = tape(*id);
    // Statics come back owned; rebind each as it was.
    let (res, rebind) = rebound_residuals(
        &loop_residuals(f, pat, loop_body, carried, active),
        &static_residuals(f, pat, loop_body, carried, active),
        &format!("loop{id}"),
    );
    let Flows {
        live,
        flows,
        into_next,
        from_phi,
        into_init,
    } = Flows::new(f, active, *id, carried);
    let starts = live.iter().zip(&flows).map(|(c, fl)| {
        let co = ct(f, c.out);
        quote!(let mut #fl: ::core::option::Option<__V> = #co.take();)
    });
    let rev = body(f, active, loop_body);
    quote! {
        {
            #(#starts)*
            for (#(#res,)*) in #t.into_iter().rev() {
                #rebind
                #(#into_next)*
                #rev
                #(#from_phi)*
            }
            #(#into_init)*
        }
    }
}

/// The variables a body defines, nested bodies included.
pub fn defined(body: &[Stmt], out: &mut Vec<VarId>) {
    for s in body {
        match s {
            Stmt::Prim { out: v, .. }
            | Stmt::Static { out: v, .. }
            | Stmt::Constant { out: v, .. }
            | Stmt::Leaf { out: v, .. } => out.push(*v),
            Stmt::Call { outs, .. } => out.extend(outs),
            Stmt::If {
                then_body,
                else_body,
                merges,
                ..
            } => {
                defined(then_body, out);
                defined(else_body, out);
                out.extend(merges.iter().map(|m| m.out));
            }
            Stmt::For { body, carried, .. } => {
                defined(body, out);
                out.extend(carried.iter().flat_map(|c| [c.phi, c.out]));
            }
        }
    }
}

/// The identifiers the reverse sweep of `stmts` mentions.
fn mentioned(f: &Function, stmts: &[Stmt], active: &[bool]) -> HashSet<String> {
    crate::ir::idents(body(f, active, stmts))
}

/// The residuals one loop iteration keeps, of those its reverse sweep
/// reads: the loop variable, the carried values at the start of the
/// iteration, and what the body binds ([`residuals`]).
pub fn loop_residuals(
    f: &Function,
    pat: &TokenStream,
    body: &[Stmt],
    carried: &[Carried],
    active: &[bool],
) -> Vec<TokenStream> {
    let read = mentioned(f, body, active);
    let mut r: Vec<TokenStream> = Vec::new();
    if keeps_loop_var(pat, &read) {
        r.push(pat.clone());
    }
    r.extend(
        carried
            .iter()
            .map(|c| f.name(c.phi))
            .filter(|n| read.contains(&n.to_string()))
            .map(|n| n.to_token_stream()),
    );
    r.extend(
        read_residuals(f, body, active, &read)
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
    carried: &[Carried],
    active: &[bool],
) -> Vec<bool> {
    let read = mentioned(f, body, active);
    let mut r: Vec<bool> = Vec::new();
    if keeps_loop_var(pat, &read) {
        r.push(true);
    }
    r.extend(
        carried
            .iter()
            .filter(|c| read.contains(&f.name(c.phi).to_string()))
            .map(|c| f.vars[c.phi].kind == Kind::Static),
    );
    r.extend(flags(f, body, &read_residuals(f, body, active, &read)));
    r
}

/// Which of [`residuals`]`(body)` are static `let`s.
pub fn static_flags(f: &Function, body: &[Stmt], active: &[bool]) -> Vec<bool> {
    flags(f, body, &residuals(f, body, active))
}

/// The names a body binds that its reverse sweep reads: what a branch
/// holder or a loop iteration keeps.
pub fn residuals(f: &Function, body: &[Stmt], active: &[bool]) -> Vec<Ident> {
    read_residuals(f, body, active, &mentioned(f, body, active))
}
