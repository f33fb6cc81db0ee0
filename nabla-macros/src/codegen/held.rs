//! How the VJP's forward sweep holds residuals for its reverse sweep beyond
//! the closure's captures: those of the branch that ran (in its branch
//! holder) and of each loop iteration (on the loop's tape). Which names are
//! residuals the reverse sweep says (`reverse::residuals`: the names a body
//! binds that its reverse sweep mentions); this module lists the names a
//! body binds, keeps those a reverse sweep reads, and holds static residuals
//! owned, since they may borrow static arguments.

use super::names::{branch_holders, pullback, tape};
use super::reads;
use crate::ir::{Function, Stmt};
use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};
use std::collections::HashSet;

/// Whether the loop variable goes onto the tape: not `_`, and not the
/// synthetic item of a rewritten loop (`for (a, b) in ..`, `for w in ws`),
/// which the body only reads through statics that are taped themselves.
pub fn tapes_loop_var(pat: &TokenStream) -> bool {
    let s = pat.to_string();
    s != "_" && !s.starts_with("__nabla_item")
}

/// Whether the loop variable goes onto the tape: [`tapes_loop_var`], and
/// the body's reverse sweep reads it.
pub fn keeps_loop_var(pat: &TokenStream, read: &HashSet<String>) -> bool {
    tapes_loop_var(pat)
        && crate::ir::idents(pat.clone())
            .iter()
            .any(|i| read.contains(i))
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

/// Which of `names` (residuals of `body`) are static `let`s.
pub fn flags(f: &Function, body: &[Stmt], names: &[Ident]) -> Vec<bool> {
    let statics: HashSet<String> = body
        .iter()
        .filter_map(|s| match s {
            Stmt::Static { out, .. } => Some(f.name(*out).to_string()),
            _ => None,
        })
        .collect();
    names
        .iter()
        .map(|i| statics.contains(&i.to_string()))
        .collect()
}

/// The names `body` binds (its statements' results, the shapes taken for
/// their reverse steps, nested pullbacks, holders and tapes) that are in
/// `read`.
pub fn read_residuals(
    f: &Function,
    body: &[Stmt],
    active: &[bool],
    read: &HashSet<String>,
) -> Vec<Ident> {
    let mut names = bound(f, body, active);
    names.extend(reads::shape_names(f, body, active));
    names.retain(|n| read.contains(&n.to_string()));
    names
}

/// The names a body's statements bind (not those of nested bodies, which
/// nested holders and tapes keep).
fn bound(f: &Function, body: &[Stmt], active: &[bool]) -> Vec<Ident> {
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
