//! `for` loops whose pattern or iterator the IR does not model directly,
//! rewritten as loops over one static item or index whose body binds the
//! user's names first:
//!
//! * `for (a, b) in it { .. }` → `for item in it { let a = item.0; let b = item.1; .. }`;
//! * `for w in ws { .. }` over a tree `ws` (a slice or `Vec` of arrays) →
//!   a loop over the leaf indices `i` whose body starts with `let w = &ws[i];`.

use quote::quote;
use syn::{ExprForLoop, Ident, Pat};

/// Whether `pat` is a tuple of names and `_`s.
pub fn is_tuple_of_names(pat: &Pat) -> bool {
    matches!(pat, Pat::Tuple(t) if t.elems.iter().all(|p| matches!(p, Pat::Ident(_) | Pat::Wild(_))))
}

/// `fl` (whose pattern is a tuple of names) over one static `item`, then
/// its fields.
pub fn untuple(fl: &ExprForLoop, item: &Ident) -> ExprForLoop {
    let Pat::Tuple(t) = &*fl.pat else {
        return fl.clone();
    };
    let binds = t.elems.iter().enumerate().filter_map(|(k, p)| {
        let idx = syn::Index::from(k);
        match p {
            Pat::Ident(pi) => {
                let n = &pi.ident;
                Some(quote!(let #n = #item.#idx;))
            }
            _ => None,
        }
    });
    let stmts = &fl.body.stmts;
    let mut nf = fl.clone();
    nf.pat = Box::new(syn::parse_quote!(#item));
    nf.body = syn::parse_quote!({ #(#binds)* #(#stmts)* });
    nf
}

/// `fl` over the tree `ws` as a loop over the index `i` (the caller gives
/// the index range).
pub fn index_tree(fl: &ExprForLoop, ws: &Ident, i: &Ident) -> ExprForLoop {
    let pat = &fl.pat;
    let stmts = &fl.body.stmts;
    let mut nf = fl.clone();
    nf.pat = Box::new(syn::parse_quote!(#i));
    nf.body = syn::parse_quote!({ let #pat = &#ws[#i]; #(#stmts)* });
    nf
}
