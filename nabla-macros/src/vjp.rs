//! Reverse mode: one VJP program per function.
//!
//! `vjp` runs the forward sweep (the forward statements, with calls of other
//! differentiable functions going through *their* `vjp`) and returns the
//! outputs with a `move` closure — the reverse sweep. The closure captures
//! exactly the variables the reverse sweep mentions: those are the
//! residuals, owned by the closure, with no tape and no boxing. Cotangents
//! are `Option`s (`None` is a symbolic zero), accumulated when a value is
//! used several times, and taken (freed) as soon as they are consumed.

use crate::codegen::Sig;
use crate::forward::{self, Mode};
use crate::ir::{CallArg, Function, Kind, Output, Stmt, VarId};
use crate::tail::{Tail, Use};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

/// Wraps an update of `v`'s cotangent so it only runs when `v` is a
/// parameter the caller asked a cotangent for.
fn guarded(f: &Function, v: VarId, update: TokenStream) -> TokenStream {
    match f.params.iter().position(|p| p.var == Some(v)) {
        Some(k) => quote!(if __want[#k] { #update }),
        None => update,
    }
}

fn ct(f: &Function, v: VarId) -> Ident {
    format_ident!("__ct_{}", f.name(v))
}

/// The `vjp` function.
pub fn vjp_fn(f: &Function, active: &[bool], sig: &Sig) -> TokenStream {
    let Sig {
        generic_params,
        bound,
        out_ty,
        out_ct_ty,
        arg_cts_ty,
        vis,
        ..
    } = sig;
    let name = format_ident!("__nabla_{}_vjp", f.ident);

    // Forward sweep.
    let fwd: Vec<TokenStream> = f
        .body
        .iter()
        .map(|s| forward::stmt(f, s, Mode::Sweep { active }))
        .collect();
    let outs = outputs(f);

    let rev = reverse_body(f, active, &f.body);

    let masked = format_ident!("__nabla_{}_vjp_masked", f.ident);
    let masked_fn = program(
        f,
        active,
        sig,
        &masked,
        "The VJP computing cotangents only for the parameters flagged in `__want` \
         (the others come back as zeros): what `grad` with `argnums` runs.",
        out_ty,
        &fwd,
        &outs,
        &rev,
    );
    let np = f.params.len();
    let names: Vec<&Ident> = f.params.iter().map(|p| &p.ident).collect();
    quote! {
        #[doc(hidden)]
        #[allow(unused_variables, unused_mut, clippy::all)]
        #vis fn #name<'__a, __V: #bound + '__a>(#(#generic_params),*)
            -> (#out_ty, impl ::core::ops::FnOnce(#out_ct_ty) -> #arg_cts_ty + use<__V>)
        {
            #masked::<__V>(#(#names,)* [true; #np])
        }

        #masked_fn
    }
}

/// The VJP program for callers that need only the output's shape and dtype
/// (`DiffFn::vjp_masked_shapes`): the statements of the output-only tail
/// (`crate::tail`) compute their shapes (`rules::tail::<op>::out_shape`)
/// instead of their values, and their reverse steps call
/// `rules::tail::<op>::vjp_<k>`, which read no output. Returns the output's
/// `OutSpec` with the pullback.
pub fn vjp_tail_fn(f: &Function, active: &[bool], sig: &Sig, tail: &Tail) -> TokenStream {
    let krate = &f.krate;
    let dead = &tail.dead;
    let shape = |v: VarId| format_ident!("__shape_{}", f.name(v));

    // Forward sweep: live statements as in `vjp`; a tail statement's shape
    // from its inputs' shapes (a live input's shape is taken once).
    let mut has_shape = dead.clone();
    // The live variable whose dtype each tail variable has.
    let mut dtype_of: Vec<VarId> = (0..f.vars.len()).collect();
    let mut fwd = Vec::new();
    for s in &f.body {
        let Stmt::Prim {
            out,
            op,
            inputs,
            params,
            span,
        } = s
        else {
            fwd.push(forward::stmt(f, s, Mode::Sweep { active }));
            continue;
        };
        if !dead[*out] {
            fwd.push(forward::stmt(f, s, Mode::Sweep { active }));
            continue;
        }
        for &v in inputs {
            if !has_shape[v] {
                has_shape[v] = true;
                let (sv, x) = (shape(v), f.name(v));
                fwd.push(quote!(let #sv = #krate::Value::shape_vec(&#x);));
            }
        }
        dtype_of[*out] = dtype_of[inputs[0]];
        let rule = syn::Ident::new(op.rule, *span);
        let (so, ins) = (shape(*out), inputs.iter().map(|&v| shape(v)));
        let params = params.iter().map(forward::param);
        fwd.push(quote!(let #so = #krate::rules::tail::#rule::out_shape(#(&#ins,)* #(#params),*);));
    }
    // Each output's spec: from the shape computed above when it is in the
    // tail, from its value otherwise.
    let specs: Vec<TokenStream> = tail
        .outs
        .iter()
        .map(|&v| {
            if dead[v] {
                let (so, src) = (shape(v), f.name(dtype_of[v]));
                quote!(#krate::compose::OutSpec {
                    shape: ::core::clone::Clone::clone(&#so),
                    dtype: #krate::ArrayValue::dtype(&#src),
                })
            } else {
                let x = f.name(v);
                quote!(#krate::compose::OutSpec::of(&#x))
            }
        })
        .collect();
    let (spec, spec_ty) = if f.tuple_output {
        let tys = specs.iter().map(|_| quote!(#krate::compose::OutSpec));
        (quote!((#(#specs,)*)), quote!((#(#tys,)*)))
    } else {
        (specs[0].clone(), quote!(#krate::compose::OutSpec))
    };

    let rev: Vec<TokenStream> = f
        .body
        .iter()
        .rev()
        .map(|s| match s {
            Stmt::Prim { out, .. } if dead[*out] && active[*out] => {
                tail_reverse(f, active, dead, s)
            }
            _ => reverse(f, active, s),
        })
        .collect();

    let name = format_ident!("__nabla_{}_vjp_tail", f.ident);
    program(
        f,
        active,
        sig,
        &name,
        "The VJP for callers that need only the output's shape and dtype: the output-only \
         tail is not computed.",
        &spec_ty,
        &fwd,
        &spec,
        &quote!(#(#rev)*),
    )
}

/// The reverse step of a tail statement `out = op(inputs..)`: inputs its
/// rule reads by value are passed as values, the others as shapes. The
/// cotangent of a computed (not `dead`) input goes through
/// `rules::tail::fit`: inside the tail, cotangents may stay unbroadcast.
fn tail_reverse(f: &Function, active: &[bool], dead: &[bool], s: &Stmt) -> TokenStream {
    let Stmt::Prim {
        out,
        op,
        inputs,
        params,
        span,
    } = s
    else {
        // Only primitives are in a tail (`tail::analyse`).
        return reverse(f, active, s);
    };
    let (out, rule, span) = (*out, op.rule, *span);
    let krate = &f.krate;
    let private = quote!(#krate::transforms::private);
    // Every tail statement's rule is in the table (`tail::analyse`).
    let uses = crate::tail::uses(rule).unwrap_or_default();
    let rule_id = syn::Ident::new(rule, span);
    let cy = ct(f, out);
    let args: Vec<TokenStream> = inputs
        .iter()
        .zip(uses)
        .map(|(&v, u)| match u {
            Use::Value => {
                let x = f.name(v);
                quote!(&#x)
            }
            Use::Shape => {
                let s = format_ident!("__shape_{}", f.name(v));
                quote!(&#s)
            }
        })
        .collect();
    let params: Vec<TokenStream> = params.iter().map(forward::param).collect();
    let updates = inputs
        .iter()
        .enumerate()
        .filter(|(_, v)| active[**v])
        .map(|(k, v)| {
            let cx = ct(f, *v);
            if rule == "square" {
                // Always the full shape: `2 x ȳ` with `x` computed.
                return guarded(
                    f,
                    *v,
                    quote!(#krate::rules::tail::#rule_id::acc_0(&mut #cx, #(#args,)* &__g);),
                );
            }
            let vjp_k = format_ident!("vjp_{}", k);
            let mut g = quote!(#krate::rules::tail::#rule_id::#vjp_k(#(#args,)* #(#params,)* &__g));
            if !dead[*v] {
                // Cotangents inside the tail may be left unbroadcast
                // (`rules::tail`'s docs); one that leaves it is made full.
                let sv = format_ident!("__shape_{}", f.name(*v));
                g = quote!(#krate::rules::tail::fit(#g, &#sv));
            }
            guarded(f, *v, quote!(#private::acc(&mut #cx, #g);))
        });
    quote! {
        if let ::core::option::Option::Some(__g) = #cy.take() {
            #(#updates)*
        }
    }
}

/// One VJP program, as a function of the parameters and `__want`: the
/// forward sweep `fwd`, then `(first, pullback)`, where `first` (of type
/// `first_ty`) is the outputs or their spec and the pullback runs the
/// reverse statements `rev`. Static reference parameters are copied into
/// the pullback, so it never borrows from its caller.
#[allow(clippy::too_many_arguments)]
fn program(
    f: &Function,
    active: &[bool],
    sig: &Sig,
    name: &Ident,
    doc: &str,
    first_ty: &TokenStream,
    fwd: &[TokenStream],
    first: &TokenStream,
    rev: &TokenStream,
) -> TokenStream {
    let Sig {
        generic_params,
        bound,
        out_ct_ty,
        arg_cts_ty,
        owned_params,
        vis,
        ..
    } = sig;
    let krate = &f.krate;
    let private = quote!(#krate::transforms::private);
    // Static reference parameters: the reverse sweep owns a copy, so the
    // pullback does not borrow from the caller.
    let refs: Vec<(&syn::Ident, &syn::Type)> = f
        .params
        .iter()
        .filter(|p| p.var.is_none())
        .filter_map(|p| match &p.ty {
            syn::Type::Reference(r) if r.mutability.is_none() => Some((&p.ident, &*r.elem)),
            _ => None,
        })
        .collect();
    let own: Vec<TokenStream> = refs
        .iter()
        .map(|(id, _)| {
            let o = format_ident!("__owned_{}", id);
            quote!(let #o = ::std::borrow::ToOwned::to_owned(#id);)
        })
        .collect();
    let reborrow: Vec<TokenStream> = refs
        .iter()
        .map(|(id, ty)| {
            let o = format_ident!("__owned_{}", id);
            quote!(let #id: &#ty = ::std::borrow::Borrow::borrow(&#o);)
        })
        .collect();

    // Reverse sweep.
    let slots: Vec<TokenStream> = (0..f.vars.len()).filter(|&v| active[v] && f.vars[v].kind != Kind::Static).map(|v| {
        let c = ct(f, v);
        if f.vars[v].kind == Kind::Tree {
            let leaves = f.name(v);
            quote!(let mut #c: ::std::vec::Vec<::core::option::Option<__V>> = ::std::vec![::core::option::Option::None; #leaves.len()];)
        } else {
            quote!(let mut #c: ::core::option::Option<__V> = ::core::option::Option::None;)
        }
    }).collect();
    let result: Vec<TokenStream> = f
        .params
        .iter()
        .map(|p| match p.var {
            Some(v) if p.tree.is_some() => {
                let (c, x) = (ct(f, v), f.name(v));
                quote!(#krate::tree::leaves_or_zeros(#c, &#x))
            }
            Some(v) if active[v] => {
                let (c, x) = (ct(f, v), f.name(v));
                quote!(#private::or_zeros(#c, &#x))
            }
            Some(v) => {
                let x = f.name(v);
                quote!(#krate::Value::zeros_like(&#x))
            }
            None => quote!(#krate::transforms::Static),
        })
        .collect();

    let seed = seed(f, active);
    let np = f.params.len();
    quote! {
        #[doc = #doc]
        #[doc(hidden)]
        #[allow(unused_variables, unused_mut, clippy::all)]
        #vis fn #name<'__a, __V: #bound + '__a>(#(#generic_params,)* __want: [bool; #np])
            -> (#first_ty, impl ::core::ops::FnOnce(#out_ct_ty) -> #arg_cts_ty + use<__V>)
        {
            #(#owned_params)*
            #(#fwd)*
            let __outputs = #first;
            #(#own)*
            (__outputs, move |__ct: #out_ct_ty| {
                #(#reborrow)*
                #(#slots)*
                #seed
                #rev
                (#(#result,)*)
            })
        }
    }
}

/// The returned outputs (values cloned: the closure keeps the originals).
pub fn outputs(f: &Function) -> TokenStream {
    let items: Vec<TokenStream> = f
        .outputs
        .iter()
        .map(|o| match o {
            Output::Value(v) => {
                let x = f.name(*v);
                quote!(::core::clone::Clone::clone(&#x))
            }
            Output::Static(t, _) => t.clone(),
        })
        .collect();
    if f.tuple_output {
        quote!((#(#items,)*))
    } else {
        quote!(#(#items)*)
    }
}

fn seed(f: &Function, active: &[bool]) -> TokenStream {
    let krate = &f.krate;
    let private = quote!(#krate::transforms::private);
    if !f.tuple_output {
        return match &f.outputs[0] {
            Output::Value(v) if active[*v] => {
                let c = ct(f, *v);
                quote!(#private::acc(&mut #c, __ct);)
            }
            _ => quote!(let _ = __ct;),
        };
    }
    let parts = f.outputs.iter().enumerate().map(|(i, o)| {
        let idx = syn::Index::from(i);
        match o {
            Output::Value(v) if active[*v] => {
                let c = ct(f, *v);
                quote!(if let ::core::option::Option::Some(__g) = __ct.#idx { #private::acc(&mut #c, __g); })
            }
            _ => quote!(),
        }
    });
    quote!(#(#parts)*)
}

/// The reverse sweep of a body: its statements' VJPs in reverse order.
fn reverse_body(f: &Function, active: &[bool], body: &[Stmt]) -> TokenStream {
    let stmts = body.iter().rev().map(|s| reverse(f, active, s));
    quote!(#(#stmts)*)
}

fn reverse(f: &Function, active: &[bool], s: &Stmt) -> TokenStream {
    let krate = &f.krate;
    let private = quote!(#krate::transforms::private);
    match s {
        Stmt::Prim {
            out,
            op,
            inputs,
            params,
            span,
        } if active[*out] => {
            let rule = syn::Ident::new(op.rule, *span);
            let cy = ct(f, *out);
            let y = f.name(*out);
            let ins: Vec<&Ident> = inputs.iter().map(|v| f.name(*v)).collect();
            let params: Vec<TokenStream> = params.iter().map(forward::param).collect();
            let updates = inputs.iter().enumerate().filter(|(_, v)| active[**v]).map(|(k, v)| {
                let cx = ct(f, *v);
                if op.variadic {
                    return guarded(f, *v, quote!(#private::acc(&mut #cx, #krate::rules::#rule::vjp(#k, &[#(&#ins),*], &#y, #(#params,)* &__g));));
                }
                if op.accumulates_own_cotangent() {
                    let acc_k = format_ident!("acc_{}", k);
                    return guarded(f, *v, quote!(#krate::rules::#rule::#acc_k(&mut #cx, #(&#ins,)* &#y, #(#params,)* &__g);));
                }
                let vjp_k = format_ident!("vjp_{}", k);
                guarded(f, *v, quote!(#private::acc(&mut #cx, #krate::rules::#rule::#vjp_k(#(&#ins,)* &#y, #(#params,)* &__g));))
            });
            quote! {
                if let ::core::option::Option::Some(__g) = #cy.take() {
                    #(#updates)*
                }
            }
        }
        Stmt::Call {
            outs,
            args,
            id,
            path,
            span,
            checkpoint,
        } if outs.iter().any(|&o| active[o]) => {
            let pb = forward::pullback(*id);
            // A checkpointed call kept only its arguments: recompute its
            // forward sweep now to get the pullback.
            let recompute = if *checkpoint {
                let vjp = syn::Ident::new("vjp", *span);
                let a = forward::call_args(f, args)
                    .iter()
                    .map(forward::param)
                    .collect::<Vec<_>>();
                quote!(let (_, #pb) = #path::#vjp::<__V>(#(#a),*);)
            } else {
                quote!()
            };
            let cts: Vec<Ident> = outs.iter().map(|&o| ct(f, o)).collect();
            let any = quote!(#(#cts.is_some())||*);
            let seed = if outs.len() == 1 {
                let (c, y) = (&cts[0], f.name(outs[0]));
                quote!(#private::or_zeros(#c.take(), &#y))
            } else {
                quote!((#(#cts.take(),)*))
            };
            let updates = args.iter().enumerate().filter_map(|(k, a)| match a {
                CallArg::Value(v) if active[*v] => {
                    let cx = ct(f, *v);
                    let idx = syn::Index::from(k);
                    if f.vars[*v].kind == Kind::Tree {
                        Some(quote!(#krate::tree::acc_leaves(&mut #cx, __arg_cts.#idx);))
                    } else {
                        Some(quote!(#private::acc(&mut #cx, __arg_cts.#idx);))
                    }
                }
                _ => None,
            });
            quote! {
                if #any {
                    #recompute
                    let __arg_cts = #pb(#seed);
                    #(#updates)*
                }
            }
        }
        Stmt::If {
            then_body,
            else_body,
            merges,
            id,
            ..
        } => {
            let (th, eh) = forward::branch_holders(*id);
            let names = |b: &[Stmt]| -> Vec<TokenStream> {
                forward::residuals(f, b, active)
                    .iter()
                    .map(|i| quote!(#i))
                    .collect()
            };
            let (tr, trebind) = forward::rebound_residuals(
                &names(then_body),
                &forward::static_flags(f, then_body, active),
                &format!("then{id}"),
            );
            let (er, erebind) = forward::rebound_residuals(
                &names(else_body),
                &forward::static_flags(f, else_body, active),
                &format!("else{id}"),
            );
            // The merged cotangents flow into the branch that ran.
            let flow = |pick: fn(&crate::ir::Merge) -> VarId| {
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
            let (trev, erev) = (
                reverse_body(f, active, then_body),
                reverse_body(f, active, else_body),
            );
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
        Stmt::Leaf { out, tree, index } if active[*out] => {
            let (co, ct_tree, index) = (ct(f, *out), ct(f, *tree), f.name(*index));
            quote!(if let ::core::option::Option::Some(__g) = #co.take() { #private::acc(&mut #ct_tree[#index], __g); })
        }
        Stmt::For {
            snapshots: Some(_),
            cond: None,
            carried,
            ..
        } if carried.iter().any(|c| active[c.out]) => revolve_reverse(f, active, s),
        Stmt::For {
            pat,
            body,
            carried,
            id,
            ..
        } if carried.iter().any(|c| active[c.out]) => {
            let t = forward::tape(*id);
            // Statics come back owned; rebind each as it was.
            let (res, rebind) = forward::rebound_residuals(
                &forward::loop_residuals(f, pat, body, carried, active),
                &forward::static_residuals(f, pat, body, carried, active),
                &format!("loop{id}"),
            );
            let live: Vec<&crate::ir::Carried> = carried.iter().filter(|c| active[c.out]).collect();
            let flows: Vec<Ident> = (0..live.len())
                .map(|j| format_ident!("__flow{}_{}", id, j))
                .collect();
            let starts = live.iter().zip(&flows).map(|(c, fl)| {
                let co = ct(f, c.out);
                quote!(let mut #fl: ::core::option::Option<__V> = #co.take();)
            });
            let into_next = live.iter().zip(&flows).filter(|(c, _)| active[c.next]).map(|(c, fl)| {
                let cn = ct(f, c.next);
                quote!(if let ::core::option::Option::Some(__g) = #fl.take() { #private::acc(&mut #cn, __g); })
            });
            let from_phi = live.iter().zip(&flows).map(|(c, fl)| {
                let cp = ct(f, c.phi);
                quote!(#fl = #cp.take();)
            });
            let into_init = live.iter().zip(&flows).filter(|(c, _)| active[c.init]).map(|(c, fl)| {
                let ci = ct(f, c.init);
                quote!(if let ::core::option::Option::Some(__g) = #fl { #private::acc(&mut #ci, __g); })
            });
            let rev = reverse_body(f, active, body);
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
        _ => quote!(),
    }
}

/// The reverse sweep of a checkpointed loop: `Revolve::reverse` with the
/// loop's step closures (rebuilt here from the values the pullback owns) and
/// one iteration's reverse sweep as a closure from the carried cotangents
/// after the iteration to those before it.
fn revolve_reverse(f: &Function, active: &[bool], s: &Stmt) -> TokenStream {
    let Stmt::For {
        pat,
        body,
        carried,
        id,
        ..
    } = s
    else {
        return quote!();
    };
    let krate = &f.krate;
    let private = quote!(#krate::transforms::private);
    let (it, t) = (forward::iters(*id), forward::tape(*id));
    let res = forward::loop_residuals(f, pat, body, carried, active);
    let live: Vec<&crate::ir::Carried> = carried.iter().filter(|c| active[c.out]).collect();
    let flows: Vec<Ident> = (0..live.len())
        .map(|j| format_ident!("__flow{}_{}", id, j))
        .collect();
    let starts = live.iter().map(|c| {
        let co = ct(f, c.out);
        quote!(#co.take())
    });
    let into_next = live.iter().zip(&flows).filter(|(c, _)| active[c.next]).map(|(c, fl)| {
        let cn = ct(f, c.next);
        quote!(if let ::core::option::Option::Some(__g) = #fl.take() { #private::acc(&mut #cn, __g); })
    });
    let from_phi = live.iter().zip(&flows).map(|(c, fl)| {
        let cp = ct(f, c.phi);
        quote!(#fl = #cp.take();)
    });
    let into_init = live
        .iter()
        .zip(&flows)
        .filter(|(c, _)| active[c.init])
        .map(|(c, fl)| {
            let ci = ct(f, c.init);
            quote!(if let ::core::option::Option::Some(__g) = #fl { #private::acc(&mut #ci, __g); })
        });
    let rev = reverse_body(f, active, body);
    // The cotangent slots of values the body defines live only within one
    // iteration: declared inside the step's closure, they stay in registers
    // instead of being reached through the closure's captures.
    let mut inner = Vec::new();
    defined(body, &mut inner);
    inner.extend(carried.iter().map(|c| c.phi));
    let locals = inner
        .into_iter()
        .filter(|&v| active[v] && f.vars[v].kind == Kind::Value)
        .map(|v| {
            let c = ct(f, v);
            quote!(let mut #c: ::core::option::Option<__V> = ::core::option::Option::None;)
        });
    let (advance, record) = forward::revolve_steps(f, s, active);
    quote! {
        {
            let (#it, __revolve) = #t;
            let (#(#flows,)*) = __revolve.reverse(
                (#(#starts,)*),
                #advance,
                #record,
                |_, (#(#res,)*), (#(mut #flows,)*)| {
                    #(#locals)*
                    #(#into_next)*
                    #rev
                    #(#from_phi)*
                    (#(#flows,)*)
                },
            );
            #(#into_init)*
        }
    }
}

/// The variables a body defines, nested bodies included.
fn defined(body: &[Stmt], out: &mut Vec<VarId>) {
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
