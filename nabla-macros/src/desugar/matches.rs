//! `match` on a static (or data-derived) scrutinee, rewritten as an
//! `if`/`else if` chain of `matches!` tests whose last arm is the `else`
//! (rustc checks the primal's `match` for exhaustiveness). Names an arm's
//! pattern binds are static copies taken from the scrutinee first.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Expr, ExprMatch, Ident, Pat};

/// The arms of `m` as a chain of `if`s testing the scrutinee variable
/// `scrutinee`: an `Expr::If`, or the last arm's `Expr::Block` when it is
/// the only one. `bound` names the tuple a binding arm extracts; `m` has at
/// least one arm.
pub fn if_chain(m: &ExprMatch, scrutinee: &Ident, bound: &Ident, krate: &TokenStream) -> Expr {
    let (last, rest) = m.arms.split_last().expect("a match with arms");
    let mut chain: Expr = Expr::Block(syn::ExprBlock {
        attrs: Vec::new(),
        label: None,
        block: arm_block(&last.pat, &last.body, scrutinee, bound, krate),
    });
    for arm in rest.iter().rev() {
        let pat = &arm.pat;
        let guard = arm.guard.as_ref().map(|(_, g)| quote!(if #g));
        // Without a guard, match a reference (bindings never move out of
        // the scrutinee); a guard sees its bindings by value, as written.
        let cond: Expr = if guard.is_some() {
            syn::parse_quote!(::core::matches!(#scrutinee, #pat #guard))
        } else {
            syn::parse_quote!(::core::matches!(&#scrutinee, #pat))
        };
        let then_branch = arm_block(&arm.pat, &arm.body, scrutinee, bound, krate);
        chain = Expr::If(syn::ExprIf {
            attrs: Vec::new(),
            if_token: Default::default(),
            cond: Box::new(cond),
            then_branch,
            else_branch: Some((Default::default(), Box::new(chain))),
        });
    }
    chain
}

/// An arm's body, preceded by the names its pattern binds.
fn arm_block(
    pat: &Pat,
    e: &Expr,
    scrutinee: &Ident,
    bound: &Ident,
    krate: &TokenStream,
) -> syn::Block {
    let mut names = Vec::new();
    bindings(pat, &mut names);
    if names.is_empty() {
        return syn::parse_quote!({ #e });
    }
    // One extraction of all the names (before any is in scope), then
    // its fields.
    let fields = names.iter().enumerate().map(|(k, n)| {
        let k = syn::Index::from(k);
        quote!(let #n = #bound.#k;)
    });
    syn::parse_quote!({
        let #bound = #krate::__match_bind!(#scrutinee, #pat, (#(#names,)*));
        #(#fields)*
        #e
    })
}

/// The names a pattern binds (in an or-pattern, those of its first case).
fn bindings(p: &Pat, out: &mut Vec<syn::Ident>) {
    match p {
        Pat::Ident(pi) => {
            out.push(pi.ident.clone());
            if let Some((_, sub)) = &pi.subpat {
                bindings(sub, out);
            }
        }
        Pat::Or(o) => {
            if let Some(first) = o.cases.first() {
                bindings(first, out);
            }
        }
        Pat::Paren(pp) => bindings(&pp.pat, out),
        Pat::Reference(r) => bindings(&r.pat, out),
        Pat::Tuple(t) => t.elems.iter().for_each(|e| bindings(e, out)),
        Pat::TupleStruct(t) => t.elems.iter().for_each(|e| bindings(e, out)),
        Pat::Struct(st) => st.fields.iter().for_each(|f| bindings(&f.pat, out)),
        Pat::Slice(sl) => sl.elems.iter().for_each(|e| bindings(e, out)),
        Pat::Type(t) => bindings(&t.pat, out),
        _ => {}
    }
}
