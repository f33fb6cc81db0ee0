//! What the VJP's forward sweep holds for its reverse sweep beyond the
//! closure's captures: the residuals of the branch that ran (in its branch
//! holder) and of each loop iteration (on the loop's tape). Static
//! residuals are held owned, since they may borrow static arguments.

use super::names::{branch_holders, pullback, tape};
use crate::ir::{Carried, Function, Kind, Stmt};
use proc_macro2::{Ident, TokenStream};
use quote::{ToTokens, format_ident, quote};

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
    carried: &[Carried],
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
    carried: &[Carried],
    active: &[bool],
) -> Vec<bool> {
    let mut r: Vec<bool> = Vec::new();
    if tapes_loop_var(pat) {
        r.push(true);
    }
    r.extend(carried.iter().map(|c| f.vars[c.phi].kind == Kind::Static));
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
