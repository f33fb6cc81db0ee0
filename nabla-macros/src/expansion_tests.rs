//! Golden expansions: each `tests-data/expansions/<case>.rs` holds one item
//! under `#[differentiable(..)]` or `#[custom_op(..)]`; its expansion must
//! equal `<case>.txt` token for token. Any change to what the macros emit
//! shows up here; after an intended change,
//! `NABLA_BLESS_EXPANSIONS=1 cargo test -p nabla-macros` rewrites the
//! `.txt` files (review their diff).
//!
//! The same command regenerates the code blocks of
//! `docs/generated-code.md` (see [`generated_code_doc_is_current`]).

use proc_macro2::TokenStream;
use quote::ToTokens;
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests-data/expansions")
}

/// The expansion of the item in `path`, by the macro its attribute names.
fn expand(path: &Path) -> String {
    let src = std::fs::read_to_string(path).expect("read a case");
    let file = syn::parse_file(&src).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let [item] = &file.items[..] else {
        panic!("{}: one item per case", path.display());
    };
    let mut item = item.clone();
    let attrs = match &mut item {
        syn::Item::Fn(f) => &mut f.attrs,
        syn::Item::Struct(s) => &mut s.attrs,
        other => panic!("{}: unexpected item {other:?}", path.display()),
    };
    let k = attrs
        .iter()
        .position(|a| a.path().is_ident("differentiable") || a.path().is_ident("custom_op"))
        .unwrap_or_else(|| panic!("{}: no macro attribute", path.display()));
    let attr = attrs.remove(k);
    let args = match &attr.meta {
        syn::Meta::List(l) => l.tokens.clone(),
        _ => TokenStream::new(),
    };
    let item = item.into_token_stream();
    let out = if attr.path().is_ident("differentiable") {
        crate::expand_differentiable(args, item)
    } else {
        crate::expand_custom_op(args, item)
    };
    out.to_string()
}

/// `s` around byte `at`, for a failure message.
fn around(s: &str, at: usize) -> &str {
    let mut from = at.saturating_sub(200);
    while !s.is_char_boundary(from) {
        from -= 1;
    }
    let mut to = (at + 200).min(s.len());
    while !s.is_char_boundary(to) {
        to += 1;
    }
    &s[from.min(s.len())..to]
}

/// Every case expands to its golden text.
#[test]
fn expansions_match_the_golden_files() {
    let bless = std::env::var_os("NABLA_BLESS_EXPANSIONS").is_some();
    let mut cases: Vec<PathBuf> = std::fs::read_dir(dir())
        .expect("the golden directory")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    cases.sort();
    assert!(!cases.is_empty(), "no cases in {}", dir().display());
    let mut failed = Vec::new();
    for case in &cases {
        let got = expand(case);
        let golden = case.with_extension("txt");
        if bless {
            std::fs::write(&golden, format!("{got}\n")).expect("write a golden file");
            continue;
        }
        let want = std::fs::read_to_string(&golden).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (bless with NABLA_BLESS_EXPANSIONS=1)",
                golden.display()
            )
        });
        let want = want.strip_suffix('\n').unwrap_or(&want);
        if got != want {
            let at = got
                .bytes()
                .zip(want.bytes())
                .position(|(a, b)| a != b)
                .unwrap_or(got.len().min(want.len()));
            eprintln!(
                "{}: the expansion differs at byte {at}\n  got:  ..{}..\n  want: ..{}..",
                case.display(),
                around(&got, at),
                around(want, at)
            );
            failed.push(case.file_stem().map(|s| s.to_string_lossy().into_owned()));
        }
    }
    assert!(failed.is_empty(), "expansions differ: {failed:?}");
}

/// The documented example: the Rust block after `marker`.
fn doc_example(doc: &str, marker: &str) -> syn::ItemFn {
    let at = doc.find(marker).expect("an example marker");
    let block = &doc[at..];
    let start = block.find("```rust\n").expect("the example's code block") + 8;
    let len = block[start..].find("```").expect("the example block's end");
    let mut item: syn::ItemFn = syn::parse_str(&block[start..start + len]).expect("the example");
    item.attrs.retain(|a| !a.path().is_ident("differentiable"));
    item
}

/// The documented blocks of the example's expansion, formatted:
/// `expansion` (everything up to the function value's `Deref`, without the
/// shape-only VJP) and `vjp_tail` (the shape-only VJP).
fn doc_blocks(item: &syn::ItemFn) -> Vec<(&'static str, String)> {
    let out = crate::expand_differentiable(TokenStream::new(), item.to_token_stream());
    let file: syn::File = syn::parse2(out).expect("the expansion parses");
    let tail_name = format!("__nabla_{}_vjp_tail", item.sig.ident);
    let (mut main, mut tail) = (Vec::new(), Vec::new());
    for it in file.items {
        let is_tail = matches!(&it, syn::Item::Fn(f) if f.sig.ident == tail_name);
        let is_deref = matches!(&it, syn::Item::Impl(i)
            if i.trait_.as_ref().is_some_and(|(_, p, _)| p.segments.last().is_some_and(|s| s.ident == "Deref")));
        if is_tail {
            tail.push(it);
        } else {
            main.push(it);
        }
        if is_deref {
            break;
        }
    }
    let fmt = |items: Vec<syn::Item>| {
        prettyplease::unparse(&syn::File {
            shebang: None,
            attrs: Vec::new(),
            items,
        })
    };
    vec![("expansion", fmt(main)), ("vjp_tail", fmt(tail))]
}

/// The documented blocks of the fused example: `fused` (the function's
/// forward program and its masked VJP, which call the region, then the
/// region's float-tier forward program and straight-line VJP (the fused
/// reverse sweep), its type and its `Region` impl).
fn fused_blocks(item: &syn::ItemFn) -> Vec<(&'static str, String)> {
    let out = crate::expand_differentiable(TokenStream::new(), item.to_token_stream());
    let file: syn::File = syn::parse2(out).expect("the expansion parses");
    let f = item.sig.ident.to_string();
    let wanted = [
        format!("__nabla_{f}_forward"),
        format!("__nabla_{f}_vjp_masked"),
        format!("__nabla_{f}_fused0_scalar_forward"),
        format!("__nabla_{f}_fused0_scalar_vjp_direct"),
    ];
    let region = format!("__nabla_{f}_fused0");
    let keep = |it: &syn::Item| match it {
        syn::Item::Fn(x) => wanted.contains(&x.sig.ident.to_string()),
        syn::Item::Struct(x) => x.ident == region,
        syn::Item::Impl(i) => {
            matches!(&*i.self_ty, syn::Type::Path(p) if p.path.is_ident(&region))
        }
        _ => false,
    };
    let items: Vec<syn::Item> = file.items.into_iter().filter(keep).collect();
    let code = prettyplease::unparse(&syn::File {
        shebang: None,
        attrs: Vec::new(),
        items,
    });
    vec![("fused", code)]
}

/// `doc` with the code block between each `<!-- generated:<name> begin -->`
/// and `<!-- generated:<name> end -->` replaced by `blocks`' code.
fn with_blocks(doc: &str, blocks: &[(&str, String)]) -> String {
    let mut out = doc.to_string();
    for (name, code) in blocks {
        let begin = format!("<!-- generated:{name} begin -->\n");
        let end = format!("<!-- generated:{name} end -->");
        let from = out
            .find(&begin)
            .unwrap_or_else(|| panic!("no `{begin}` marker"))
            + begin.len();
        let to = from
            + out[from..]
                .find(&end)
                .unwrap_or_else(|| panic!("no `{end}` marker"));
        out.replace_range(from..to, &format!("```rust\n{code}```\n"));
    }
    out
}

/// docs/generated-code.md shows the macro's current output: its generated
/// blocks equal a fresh expansion of its example, formatted with
/// `prettyplease` (`NABLA_BLESS_EXPANSIONS=1` rewrites them).
#[test]
fn generated_code_doc_is_current() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/generated-code.md");
    let doc = std::fs::read_to_string(&path).expect("read docs/generated-code.md");
    let want = with_blocks(&doc, &doc_blocks(&doc_example(&doc, "<!-- example -->")));
    let want = with_blocks(
        &want,
        &fused_blocks(&doc_example(&want, "<!-- example:fused -->")),
    );
    if std::env::var_os("NABLA_BLESS_EXPANSIONS").is_some() {
        std::fs::write(&path, &want).expect("write docs/generated-code.md");
        return;
    }
    if doc != want {
        let at = doc
            .bytes()
            .zip(want.bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(doc.len().min(want.len()));
        panic!(
            "docs/generated-code.md is stale at byte {at} (bless with NABLA_BLESS_EXPANSIONS=1)\n  doc:  ..{}..\n  code: ..{}..",
            around(&doc, at),
            around(&want, at)
        );
    }
}
