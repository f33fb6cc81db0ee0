//! Lowering: a `syn::ItemFn` into the A-normal-form IR ([`crate::ir`]).
//!
//! Expressions are flattened so every intermediate value gets a name;
//! `let mut` rebinding and compound assignment become fresh (SSA)
//! variables; references are dropped for values (the generated code passes
//! every value by reference). Anything outside the supported subset is a
//! spanned error saying what to write instead; errors go to the shared
//! [`Errors`] context so they all show at once.
//!
//! One [`Lowerer`] walks the function; its methods are grouped by concern:
//!
//! * [`signature`]: parameters, their kinds and the value tier;
//! * [`scope`]: variables, SSA scopes and operands;
//! * [`stmt`]: blocks, `let`s and assignments;
//! * [`expr`]: expressions and arithmetic;
//! * [`calls`]: methods, `nabla::` operations and calls of differentiable
//!   functions;
//! * [`control`]: `if` and `match`;
//! * [`loops`]: `for` and `while` (with their carried values);
//! * [`transforms`]: transformed functions called inside the body
//!   (`nabla::vmap(f)(z)`, `let (y, t) = nabla::jvp(g)((x,), (v,))`);
//! * [`promote`]: statics that a loop or a branch turns into values;
//! * [`tree`]: reads of tree parameters' leaves;
//! * [`outputs`]: the returned value(s);
//! * [`stub`](mod@stub): the stand-in emitted for a function with errors.
//!
//! Syntax-level rewrites ([`crate::desugar`]: early returns, `break` and
//! `continue`, loop attributes, `match` arms) are applied here as the
//! lowerer meets them.

mod calls;
mod control;
mod expr;
mod loops;
mod outputs;
mod promote;
mod scope;
mod signature;
mod stmt;
mod stub;
mod transforms;
mod tree;

pub use stub::stub;

use crate::errors::Errors;
use crate::ir::{Function, Tier, VarId};
use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use std::collections::HashMap;
use syn::{Expr, ItemFn, ReturnType};

/// Options of `#[differentiable(..)]`.
pub struct Options {
    /// `crate = path`: where the facade lives (`::nabla` by default; the
    /// runtime itself uses `crate`).
    pub krate: TokenStream,
    /// `fuse = false`: keep every elementwise operation a separate pass
    /// (for debugging and comparison); regions fuse by default.
    pub fuse: bool,
}

/// Parses the attribute's arguments.
fn options(attr: TokenStream) -> syn::Result<Options> {
    let mut krate = quote!(::nabla);
    let mut fuse = true;
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("crate") {
            let p: syn::Path = meta.value()?.parse()?;
            krate = p.to_token_stream();
            Ok(())
        } else if meta.path.is_ident("fuse") {
            let b: syn::LitBool = meta.value()?.parse()?;
            fuse = b.value;
            Ok(())
        } else {
            Err(meta.error(
                "unknown option; #[differentiable] accepts `crate = path` and `fuse = false`",
            ))
        }
    });
    syn::parse::Parser::parse2(parser, attr)?;
    Ok(Options { krate, fuse })
}

/// The attribute's options and the annotated function; `None` after
/// reporting that the item is not a function.
pub fn parse(attr: TokenStream, item: TokenStream, cx: &mut Errors) -> Option<(Options, ItemFn)> {
    // Bad options are reported; the function is still lowered (with the
    // defaults) to a stand-in, so its callers see no follow-on errors.
    let opts = cx.ok(options(attr)).unwrap_or_else(|| Options {
        krate: quote!(::nabla),
        fuse: true,
    });
    let item = cx.ok(syn::parse2::<ItemFn>(item).map_err(|e| {
        syn::Error::new(
            e.span(),
            "#[differentiable] applies to functions (`fn name(..) -> .. { .. }`)",
        )
    }))?;
    Some((opts, item))
}

/// Lowers an annotated function; `None` when it reported errors to `cx`.
pub fn lower(item: &ItemFn, opts: &Options, cx: &mut Errors) -> Option<Function> {
    let mut l = Lowerer::new(item, opts, cx);
    l.signature(item);
    let desugared;
    let mut body = &*item.block;
    if l.cx.is_empty() && crate::desugar::returns::has_early_return(body) {
        match l.early_return_body(item) {
            Some(b) => {
                desugared = b;
                body = &desugared;
            }
            None => body = &item.block,
        }
    }
    if l.cx.is_empty()
        && let Some(t) = l.block(body, true)
    {
        l.outputs(t);
    }
    l.cx.is_empty().then_some(l.f)
}

/// Lowers `item` with the default options, panicking on errors (for
/// tests).
#[cfg(test)]
pub fn lower_ok(item: &ItemFn) -> Function {
    let opts = Options {
        krate: quote!(::nabla),
        fuse: true,
    };
    let mut cx = Errors::new();
    lower(item, &opts, &mut cx).unwrap_or_else(|| panic!("{}", cx.into_compile_error()))
}

/// The value of a block: one operand, or a tuple of them.
enum BlockValue {
    Single(Operand),
    Tuple(Vec<Operand>),
    /// `vec![a, b, ..]` returned as a `Vec<Array>`.
    List(Vec<Operand>),
    /// `[a, b, ..]` returned as a `[f64; M]`.
    Fixed(Vec<Operand>),
}

/// A lowered expression: a variable, or static Rust tokens.
#[derive(Clone)]
enum Operand {
    Var(VarId),
    Tok(TokenStream),
}

/// The state of lowering one function.
struct Lowerer<'cx> {
    /// The function built so far; statements go to `f.body`.
    f: Function,
    /// Names in scope, innermost last, each bound to its current variable.
    scopes: Vec<scope::Scope>,
    /// How many variables were made from each name hint (for fresh names).
    names: HashMap<String, usize>,
    /// Value temporaries not yet named after a user `let` (see
    /// `Lowerer::assign`).
    temps: std::collections::HashSet<VarId>,
    cx: &'cx mut Errors,
    /// The last id given to a statement or a generated name.
    next_id: usize,
    /// Set while lowering `nabla::checkpoint(f)(..)`.
    checkpoint_next: bool,
    /// Stand-ins for the results of calls already reported as errors:
    /// uses of them report nothing more.
    placeholders: std::collections::HashSet<VarId>,
    /// Static variables known to hold numbers (numeric parameters, `let`s
    /// of number expressions): arithmetic with a value takes them as the
    /// `f64` parameter of `add_scalar`/`mul_scalar`. Other statics may be
    /// arrays and go through `add_const`/`mul_const` (see `expr::arith`).
    numeric: std::collections::HashSet<VarId>,
    /// The names of functions the body calls ([`stmt::callees`]): no
    /// `let` may bind them.
    callees: std::collections::HashSet<String>,
    /// Names bound by `if let Some(b) = &self.bias`: each stands for the
    /// contents of an optional part of a tree, innermost last.
    tree_aliases: Vec<(String, Expr, VarId)>,
}

impl<'cx> Lowerer<'cx> {
    /// A lowerer for `item`, with its signature not yet lowered.
    fn new(item: &ItemFn, opts: &Options, cx: &'cx mut Errors) -> Self {
        let ret_ty = match &item.sig.output {
            ReturnType::Type(_, t) => (**t).clone(),
            ReturnType::Default => syn::parse_quote!(()),
        };
        Lowerer {
            f: Function {
                vis: item.vis.clone(),
                ident: item.sig.ident.clone(),
                tier: Tier::Array,
                params: Vec::new(),
                vars: Vec::new(),
                body: Vec::new(),
                outputs: Vec::new(),
                tuple_output: false,
                list_output: false,
                array_output: false,
                ret_ty,
                krate: opts.krate.clone(),
                user_idents: crate::ir::idents(item.to_token_stream()),
                method: false,
                promoted: false,
            },
            scopes: vec![HashMap::new()],
            names: HashMap::new(),
            temps: Default::default(),
            cx,
            next_id: 0,
            checkpoint_next: false,
            placeholders: Default::default(),
            tree_aliases: Vec::new(),
            numeric: Default::default(),
            callees: stmt::callees(&item.block),
        }
    }
}

/// `e` without parentheses and invisible groups.
fn strip(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip(&p.expr),
        Expr::Group(g) => strip(&g.expr),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn expand_tree_access() {
        let item: syn::ItemFn = syn::parse_quote! {
            fn weighted(ws: &Vec<Array>, xs: &[Array], k: usize) -> Array {
                let a = &ws[0] * &xs[k];
                nabla::sum(&a)
            }
        };
        let f = super::lower_ok(&item);
        let kinds: Vec<_> = f
            .vars
            .iter()
            .map(|v| (v.ident.to_string(), v.kind))
            .collect();
        assert!(
            kinds
                .iter()
                .any(|(n, k)| n.starts_with("ws_leaves") && *k == crate::ir::Kind::Tree),
            "{kinds:?}"
        );
        assert!(
            f.body
                .iter()
                .any(|s| matches!(s, crate::ir::Stmt::Leaf { .. })),
            "no leaf access lowered: {kinds:?}"
        );
    }
}
