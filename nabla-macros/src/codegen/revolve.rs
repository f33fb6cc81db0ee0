//! Checkpointed loops (`#[nabla::checkpoint(snapshots = s)]` on a `for`):
//! instead of a tape, the VJP keeps at most `s` carried states and
//! recomputes iterations by the binomial (Revolve) schedule of
//! `nabla::revolve`. The forward sweep runs `Revolve::forward`, the reverse
//! sweep `Revolve::reverse`, both with the loop's step closures.

use super::forward::{self, Mode};
use super::names::{ct, iters, tape};
use super::reverse::{self, Flows, loop_residuals};
use crate::ir::{Function, Kind, Stmt};
use proc_macro2::{Ident, TokenStream};
use quote::quote;

/// The step closures of a checkpointed loop (see `nabla::revolve`):
/// `advance(i, state) -> state` runs iteration `i` plainly and
/// `record(i, state) -> (state, residuals)` runs it keeping the residuals
/// its reverse sweep needs. The state is the tuple of carried values.
fn steps(f: &Function, s: &Stmt, active: &[bool]) -> (TokenStream, TokenStream) {
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
            let v = f.val(c.next);
            quote!(::core::clone::Clone::clone(#v))
        })
        .collect();
    let plain = forward::stmts(f, body, Mode::Forward);
    let sweep = forward::stmts(f, body, Mode::Sweep { active });
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
pub fn sweep(f: &Function, s: &Stmt, active: &[bool], snaps: usize) -> TokenStream {
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
        let v = f.val(c.init);
        quote!(::core::clone::Clone::clone(#v))
    });
    let outs = carried.iter().map(|c| f.name(c.out));
    let (advance, record) = steps(f, s, active);
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

/// The reverse sweep of a checkpointed loop: `Revolve::reverse` with the
/// loop's step closures (rebuilt here from the values the pullback owns) and
/// one iteration's reverse sweep as a closure from the carried cotangents
/// after the iteration to those before it.
pub fn reverse(f: &Function, active: &[bool], s: &Stmt) -> TokenStream {
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
    let (it, t) = (iters(*id), tape(*id));
    let res = loop_residuals(f, pat, body, carried, active);
    let Flows {
        live,
        flows,
        into_next,
        from_phi,
        into_init,
    } = Flows::new(f, active, *id, carried);
    let starts = live.iter().map(|c| {
        let co = ct(f, c.out);
        quote!(#co.take())
    });
    let rev = reverse::body(f, active, body);
    // The cotangent slots of values the body defines live only within one
    // iteration: declared inside the step's closure, they stay in registers
    // instead of being reached through the closure's captures.
    let mut inner = Vec::new();
    reverse::defined(body, &mut inner);
    inner.extend(carried.iter().map(|c| c.phi));
    let locals = inner
        .into_iter()
        .filter(|&v| active[v] && f.vars[v].kind == Kind::Value)
        .map(|v| {
            let c = ct(f, v);
            quote!(let mut #c: ::core::option::Option<__V> = ::core::option::Option::None;)
        });
    let (advance, record) = steps(f, s, active);
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
