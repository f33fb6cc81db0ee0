//! The shape-only VJP (`vjp_tail`), for callers that need only the
//! outputs' shapes and dtypes (`DiffFn::vjp_masked_shapes`): the statements
//! of the output-only tail ([`crate::analysis::residuals`]) compute their
//! shapes (`rules::tail::<op>::out_shape`) instead of their values, and
//! their reverse steps call `rules::tail::<op>::vjp_<k>`, which read no
//! output. It returns the outputs' `OutSpec`s with the pullback.

use super::forward::{self, Mode};
use super::names::{self, ct, pullback, shape};
use super::reads;
use super::reverse::{self, guarded};
use super::sig::Sig;
use super::vjp::{Program, program};
use crate::analysis::residuals::{Tail, region_call};
use crate::ir::{CallArg, Callee, Function, Stmt, VarId};
use crate::tail::Use;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// The `vjp_tail` program of a function with an output-only tail.
pub fn vjp_tail_fn(f: &Function, active: &[bool], sig: &Sig, tail: &Tail) -> TokenStream {
    let dead = &tail.dead;
    let (fwd, dtype_of) = forward_sweep(f, active, dead);
    let (spec, spec_ty) = specs(f, tail, &dtype_of);
    let rev: Vec<TokenStream> = f
        .body
        .iter()
        .rev()
        .map(|s| match s {
            Stmt::Prim { out, .. } if dead[*out] && active[*out] => {
                tail_reverse(f, active, dead, s)
            }
            _ if region_call(s).is_some_and(|(y, _)| dead[y]) => region_reverse(f, active, s),
            _ => reverse::stmt(f, active, s),
        })
        .collect();
    program(
        f,
        active,
        sig,
        Program {
            name: &names::item(f, "vjp_tail"),
            doc: "The VJP for callers that need only the output's shape and dtype: the output-only \
                  tail is not computed.",
            first_ty: &spec_ty,
            fwd: &fwd,
            first: &spec,
            rev: &quote!(#(#rev)*),
        },
    )
}

/// The forward sweep: live statements as in `vjp`; a tail statement's
/// shape from its inputs' shapes (a live input's shape is taken once).
/// Also gives, for each variable, the live variable whose dtype it has.
fn forward_sweep(f: &Function, active: &[bool], dead: &[bool]) -> (Vec<TokenStream>, Vec<VarId>) {
    let krate = &f.krate;
    let mut has_shape = dead.to_vec();
    let mut dtype_of: Vec<VarId> = (0..f.vars.len()).collect();
    let mut fwd = Vec::new();
    for s in &f.body {
        if let Some((y, args)) = region_call(s)
            && dead[y]
            && let Stmt::Call {
                callee: Callee::Region(path),
                id,
                span,
                ..
            } = s
        {
            // A fused region in the tail: its shape and pullback from its
            // own shape-only VJP.
            let (a, pb, sy) = (forward::call_args(f, args), pullback(*id), shape(f, y));
            let name = syn::Ident::new("vjp_shapes", *span);
            fwd.push(
                quote!(let (__spec, #pb) = #path::#name::<__V>(#(#a),*); let #sy = __spec.shape;),
            );
            if let Some(CallArg::Value(v)) = args.first() {
                dtype_of[y] = dtype_of[*v];
            }
            continue;
        }
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
            fwd.push(reads::shape_bindings(f, s, active, &mut has_shape));
            continue;
        }
        for &v in inputs {
            if !has_shape[v] {
                has_shape[v] = true;
                let (sv, x) = (shape(f, v), f.val(v));
                fwd.push(quote!(let #sv = #krate::Value::shape_vec(#x);));
            }
        }
        dtype_of[*out] = dtype_of[inputs[0]];
        let rule = syn::Ident::new(op.rule, *span);
        let (so, ins) = (shape(f, *out), inputs.iter().map(|&v| shape(f, v)));
        let params = params.iter().map(forward::param);
        fwd.push(quote!(let #so = #krate::rules::tail::#rule::out_shape(#(&#ins,)* #(#params),*);));
    }
    (fwd, dtype_of)
}

/// Each output's spec (from the shape computed in the forward sweep when
/// it is in the tail, from its value otherwise), and their type.
fn specs(f: &Function, tail: &Tail, dtype_of: &[VarId]) -> (TokenStream, TokenStream) {
    let krate = &f.krate;
    let specs: Vec<TokenStream> = tail
        .outs
        .iter()
        .map(|&v| {
            if tail.dead[v] {
                let (so, src) = (shape(f, v), f.val(dtype_of[v]));
                quote!(#krate::compose::OutSpec {
                    shape: ::core::clone::Clone::clone(&#so),
                    dtype: #krate::ArrayValue::dtype(#src),
                })
            } else {
                let x = f.val(v);
                quote!(#krate::compose::OutSpec::of(#x))
            }
        })
        .collect();
    if f.tuple_output {
        let tys = specs.iter().map(|_| quote!(#krate::compose::OutSpec));
        (quote!((#(#specs,)*)), quote!((#(#tys,)*)))
    } else {
        (specs[0].clone(), quote!(#krate::compose::OutSpec))
    }
}

/// The reverse step of a fused region in the tail: its shape-only
/// pullback on the output's cotangent (made the output's shape: inside the
/// tail it may be unbroadcast), accumulated into the arguments'.
fn region_reverse(f: &Function, active: &[bool], s: &Stmt) -> TokenStream {
    let (Some((y, args)), Stmt::Call { id, callee, .. }) = (region_call(s), s) else {
        return reverse::stmt(f, active, s);
    };
    let krate = &f.krate;
    let (pb, cy, sy) = (pullback(*id), ct(f, y), shape(f, y));
    let updates = reverse::arg_updates(f, active, callee, args);
    quote! {
        if let ::core::option::Option::Some(__g) = #cy.take() {
            let __arg_cts = #pb(#krate::rules::tail::fit(__g, &#sy));
            #(#updates)*
        }
    }
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
        // Only primitives are in a tail (`residuals::tail`).
        return reverse::stmt(f, active, s);
    };
    let (out, rule, span) = (*out, op.rule, *span);
    let krate = &f.krate;
    let private = quote!(#krate::transforms::private);
    // Every tail statement's rule is in the table (`residuals::tail`).
    let uses = crate::tail::uses(rule).unwrap_or_default();
    let rule_id = syn::Ident::new(rule, span);
    let cy = ct(f, out);
    let args: Vec<TokenStream> = inputs
        .iter()
        .zip(uses)
        .map(|(&v, u)| match u {
            Use::Value => f.val(v),
            Use::Shape => {
                let s = shape(f, v);
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
                let sv = shape(f, *v);
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
