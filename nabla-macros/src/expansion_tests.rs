//! Golden expansions: each `tests-data/expansions/<case>.rs` holds one item
//! under `#[differentiable(..)]` or `#[custom_op(..)]`; its expansion must
//! equal `<case>.txt` token for token. Any change to what the macros emit
//! shows up here; after an intended change,
//! `NABLA_BLESS_EXPANSIONS=1 cargo test -p nabla-macros` rewrites the
//! `.txt` files (review their diff).

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
