//! `#[nabla::checkpoint(snapshots = N)]` on a loop: parsing the attribute,
//! and removing it from the code the macro emits as written (the primal),
//! since rustc has no such attribute.

use syn::visit_mut::VisitMut;
use syn::{Attribute, Expr, ItemFn, Meta};

/// Whether `a` is `#[checkpoint(..)]` or `#[nabla::checkpoint(..)]`.
pub fn is_checkpoint(a: &Attribute) -> bool {
    let segs: Vec<String> = a
        .path()
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    matches!(
        segs.iter().map(String::as_str).collect::<Vec<_>>()[..],
        ["checkpoint"] | ["nabla", "checkpoint"]
    )
}

const HINT: &str = "write `#[nabla::checkpoint(snapshots = 20)]`: the number of loop states kept at once (at least 1)";

/// The snapshot count of a loop's checkpoint attribute, if it has one.
pub fn snapshots(attrs: &[Attribute]) -> syn::Result<Option<usize>> {
    let Some(a) = attrs.iter().find(|a| is_checkpoint(a)) else {
        return Ok(None);
    };
    let Meta::List(list) = &a.meta else {
        return Err(syn::Error::new_spanned(
            a,
            format!("the loop checkpoint needs a snapshot count; {HINT}"),
        ));
    };
    let mut count = None;
    list.parse_nested_meta(|m| {
        if !m.path.is_ident("snapshots") {
            let key = quote::ToTokens::to_token_stream(&m.path).to_string();
            return Err(m.error(format!("unknown checkpoint option `{key}`; {HINT}")));
        }
        let lit: syn::LitInt = m.value()?.parse().map_err(|e| {
            syn::Error::new(e.span(), format!("expected an integer literal; {HINT}"))
        })?;
        let n: usize = lit.base10_parse()?;
        if n == 0 {
            return Err(syn::Error::new(
                lit.span(),
                format!("`snapshots = 0` keeps no state to restart from; {HINT}"),
            ));
        }
        count = Some(n);
        Ok(())
    })?;
    match count {
        Some(n) => Ok(Some(n)),
        None => Err(syn::Error::new_spanned(
            list,
            format!("the loop checkpoint needs a snapshot count; {HINT}"),
        )),
    }
}

/// Removes loop checkpoint attributes from a function body.
pub fn strip(item: &mut ItemFn) {
    struct Strip;
    impl VisitMut for Strip {
        fn visit_expr_mut(&mut self, e: &mut Expr) {
            match e {
                Expr::ForLoop(f) => f.attrs.retain(|a| !is_checkpoint(a)),
                Expr::While(w) => w.attrs.retain(|a| !is_checkpoint(a)),
                _ => {}
            }
            syn::visit_mut::visit_expr_mut(self, e);
        }
    }
    Strip.visit_block_mut(&mut item.block);
}
