//! The rustdoc of a function value: the user's docs with the function's
//! signature after their first paragraph. A `#[differentiable] fn f` is a
//! constant (`const f: f::Function`), which rustdoc shows without
//! parameters; every function value gets this line, so the signature of
//! each is in its docs by construction.

use crate::ir::Function;
use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::Attribute;

/// `attrs`' doc attributes with the signature block of `f` inserted after
/// the first paragraph (at the end when there is one paragraph or none).
pub fn with_signature(f: &Function, attrs: &[Attribute]) -> TokenStream {
    let docs: Vec<&Attribute> = attrs.iter().filter(|a| a.path().is_ident("doc")).collect();
    let blank = |a: &Attribute| match &a.meta {
        syn::Meta::NameValue(nv) => matches!(
            &nv.value,
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) if s.value().trim().is_empty()
        ),
        _ => false,
    };
    let at = docs.iter().position(|a| blank(a)).unwrap_or(docs.len());
    let (first, rest) = docs.split_at(at);
    let mut lines = signature_lines(f);
    if first.is_empty() {
        lines.remove(0);
    }
    quote! {
        #(#first)*
        #(#[doc = #lines])*
        #(#rest)*
    }
}

/// The doc lines: a blank line (dropped when the docs start with them),
/// the signature as a `text` block, and which
/// parameters are differentiable.
fn signature_lines(f: &Function) -> Vec<String> {
    let params: Vec<String> = f
        .params
        .iter()
        .map(|p| format!("{}: {}", p.ident, pretty(&p.ty)))
        .collect();
    let sig = format!(
        "fn {}({}) -> {}",
        f.ident,
        params.join(", "),
        pretty(&f.ret_ty)
    );
    let names = |diff: bool| -> Vec<String> {
        f.params
            .iter()
            .filter(|p| p.var.is_some() == diff)
            .map(|p| format!("`{}`", p.ident))
            .collect()
    };
    let (d, s) = (names(true), names(false));
    let mut kinds = format!("Differentiable in {}", d.join(", "));
    if !s.is_empty() {
        kinds.push_str(&format!("; {} static", s.join(", ")));
    }
    kinds.push_str(&format!(
        ". A `#[differentiable]` function value: call it (`{}(..)`) or transform it (`nabla::grad({})`).",
        f.ident, f.ident
    ));
    // Each line starts with a space, as a `///` comment's do.
    vec![
        String::new(),
        " ```text".into(),
        format!(" {sig}"),
        " ```".into(),
        format!(" {kinds}"),
        String::new(),
    ]
}

/// A type as a person writes it: `&Array`, `Option<f64>`, `&[Array]`.
fn pretty(ty: &syn::Type) -> String {
    let mut s = ty.to_token_stream().to_string();
    for (from, to) in [
        (" :: ", "::"),
        (":: ", "::"),
        ("& '", "&'"),
        ("& ", "&"),
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
        (" ,", ","),
        ("[ ", "["),
        (" ]", "]"),
        ("( ", "("),
        (" )", ")"),
        (" ;", ";"),
    ] {
        s = s.replace(from, to);
    }
    s
}

#[cfg(test)]
mod tests {
    /// Every function value's docs show its signature and its parameters'
    /// kinds, after the first paragraph of the user's docs.
    #[test]
    fn docs_show_the_signature() {
        let item: syn::ItemFn = syn::parse_quote! {
            /// Mean cross-entropy.
            ///
            /// More.
            fn cross_entropy(logits: &Array, #[nondiff] targets: &Array, dims: Option<Vec<usize>>) -> Array {
                logits.sin()
            }
        };
        let f = crate::lower::lower_ok(&item);
        let docs = super::with_signature(&f, &item.attrs).to_string();
        let at = |s: &str| docs.find(s).unwrap_or_else(|| panic!("no {s:?} in {docs}"));
        assert!(at("Mean cross-entropy.") < at("```text"));
        at(
            "\" fn cross_entropy(logits: &Array, targets: &Array, dims: Option<Vec<usize>>) -> Array\"",
        );
        at(" Differentiable in `logits`; `targets`, `dims` static.");
        assert!(at("```text") < at("More."));
    }
}
