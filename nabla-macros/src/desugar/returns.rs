//! Early `return` (anywhere: in branches, in loops at any depth),
//! rewritten before lowering into a result variable, a static flag and
//! guarded statements, so the rest of the pipeline sees one tail value:
//!
//! ```text
//! let mut rv = <a value parameter>;   // overwritten before it is read
//! let mut done = false;
//! ... `return e;`  ->  rv = e; done = true;   (+ `break;` inside a loop)
//! ... after a statement that may return:  if !done { rest }
//!     (inside a loop body:  if done { break; }  then the rest)
//! ... the final expression `t`  ->  rv = t;
//! rv
//! ```
//!
//! `rv` starts as a clone of the first differentiable parameter (same value
//! type in the Array and the float tiers); its value is never used, and no
//! cotangent reaches that parameter through it because every path assigns
//! `rv` before the end. Loops get their `break`s rewritten by `jumps`.

use proc_macro2::Span;
use quote::quote;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Block, Expr, Ident, Stmt};

struct Finder {
    found: Option<Span>,
}

impl<'ast> Visit<'ast> for Finder {
    fn visit_expr_return(&mut self, e: &'ast syn::ExprReturn) {
        self.found.get_or_insert(e.span());
    }
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

fn stmt_returns(s: &Stmt) -> Option<Span> {
    let mut f = Finder { found: None };
    f.visit_stmt(s);
    f.found
}

/// True when `block` returns early (a `return` other than as its last
/// statement).
pub fn has_early_return(block: &Block) -> bool {
    let n = block.stmts.len();
    block.stmts.iter().enumerate().any(|(i, s)| match s {
        Stmt::Expr(Expr::Return(_), _) if i + 1 == n => false,
        s => stmt_returns(s).is_some(),
    })
}

struct Names<'a> {
    rv: &'a Ident,
    done: &'a Ident,
}

/// The function body rewritten (see the module docs); `init` is the
/// expression `rv` starts from.
pub fn desugar(block: &Block, init: &Expr) -> syn::Result<Block> {
    let rv = Ident::new("__nabla_return_value", Span::call_site());
    let done = Ident::new("__nabla_returned", Span::call_site());
    let names = Names {
        rv: &rv,
        done: &done,
    };
    // The final expression becomes a `return` like the others.
    let mut stmts = block.stmts.clone();
    match stmts.pop() {
        Some(Stmt::Expr(e, None)) if !matches!(e, Expr::Return(_)) => {
            stmts.push(syn::parse_quote!(return #e;))
        }
        Some(last) => stmts.push(last),
        None => {}
    }
    let mut out: Vec<Stmt> = vec![
        syn::parse_quote!(let mut #rv = #init;),
        syn::parse_quote!(let mut #done = false;),
    ];
    out.extend(seq(&stmts, &names, false)?);
    out.push(Stmt::Expr(syn::parse_quote!(#rv), None));
    Ok(Block {
        brace_token: block.brace_token,
        stmts: out,
    })
}

fn seq(stmts: &[Stmt], n: &Names<'_>, in_loop: bool) -> syn::Result<Vec<Stmt>> {
    let (rv, done) = (n.rv, n.done);
    let mut out = Vec::new();
    for (i, s) in stmts.iter().enumerate() {
        let Some(span) = stmt_returns(s) else {
            out.push(s.clone());
            continue;
        };
        match s {
            Stmt::Expr(Expr::Return(r), _) => {
                let Some(e) = &r.expr else {
                    return Err(syn::Error::new(
                        r.span(),
                        "a differentiable function must return a value",
                    ));
                };
                out.push(syn::parse_quote!(#rv = #e;));
                out.push(syn::parse_quote!(#done = true;));
                if in_loop {
                    out.push(syn::parse_quote!(break;));
                }
                return Ok(out); // the rest of this block is unreachable
            }
            Stmt::Expr(Expr::If(ei), semi) => {
                out.push(Stmt::Expr(Expr::If(rewrite_if(ei, n, in_loop)?), *semi));
            }
            Stmt::Expr(Expr::Block(b), semi) if b.label.is_none() => {
                let mut nb = b.clone();
                nb.block.stmts = seq(&b.block.stmts, n, in_loop)?;
                out.push(Stmt::Expr(Expr::Block(nb), *semi));
            }
            Stmt::Expr(Expr::ForLoop(fl), semi) => {
                let mut nf = fl.clone();
                nf.body.stmts = seq(&fl.body.stmts, n, true)?;
                out.push(Stmt::Expr(Expr::ForLoop(nf), *semi));
            }
            Stmt::Expr(Expr::While(w), semi) => {
                let mut nw = w.clone();
                nw.body.stmts = seq(&w.body.stmts, n, true)?;
                out.push(Stmt::Expr(Expr::While(nw), *semi));
            }
            _ => {
                return Err(syn::Error::new(
                    span,
                    "`return` in a differentiable function must be a statement (of the body, or of an `if`/`else`, block or loop in it), not part of an expression; write `if cond { return value; }`",
                ));
            }
        }
        let rest = seq(&stmts[i + 1..], n, in_loop)?;
        if in_loop {
            out.push(syn::parse_quote!(if #done { break; }));
            out.extend(rest);
        } else if !rest.is_empty() {
            let guarded = quote!(if !#done { #(#rest)* });
            out.push(Stmt::Expr(syn::parse2(guarded)?, None));
        }
        return Ok(out);
    }
    Ok(out)
}

fn rewrite_if(ei: &syn::ExprIf, n: &Names<'_>, in_loop: bool) -> syn::Result<syn::ExprIf> {
    let mut f = Finder { found: None };
    f.visit_expr(&ei.cond);
    if let Some(span) = f.found {
        return Err(syn::Error::new(
            span,
            "`return` cannot be part of an `if` condition",
        ));
    }
    let mut out = ei.clone();
    out.then_branch.stmts = seq(&ei.then_branch.stmts, n, in_loop)?;
    if let Some((tok, e)) = &ei.else_branch {
        let e2 = match &**e {
            Expr::If(inner) => Expr::If(rewrite_if(inner, n, in_loop)?),
            Expr::Block(b) => {
                let mut nb = b.clone();
                nb.block.stmts = seq(&b.block.stmts, n, in_loop)?;
                Expr::Block(nb)
            }
            other => other.clone(),
        };
        out.else_branch = Some((*tok, Box::new(e2)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::ToTokens;

    #[test]
    fn returns_become_a_value_a_flag_and_guards() {
        let body: Block = syn::parse_quote!({
            let y = x * 2.0;
            if c {
                return y;
            }
            for i in 0..3 {
                if d {
                    return y * 3.0;
                }
                z = z + 1.0;
            }
            y + z
        });
        assert!(has_early_return(&body));
        let init: Expr = syn::parse_quote!(x.clone());
        let got = desugar(&body, &init).unwrap().to_token_stream().to_string();
        let want = quote!({
            let mut __nabla_return_value = x.clone();
            let mut __nabla_returned = false;
            let y = x * 2.0;
            if c {
                __nabla_return_value = y;
                __nabla_returned = true;
            }
            if !__nabla_returned {
                for i in 0..3 {
                    if d {
                        __nabla_return_value = y * 3.0;
                        __nabla_returned = true;
                        break;
                    }
                    if __nabla_returned {
                        break;
                    }
                    z = z + 1.0;
                }
                if !__nabla_returned {
                    __nabla_return_value = y + z;
                    __nabla_returned = true;
                }
            }
            __nabla_return_value
        });
        assert_eq!(got, want.to_string());
    }

    #[test]
    fn a_final_return_alone_is_not_early() {
        let body: Block = syn::parse_quote!({
            let y = x;
            return y;
        });
        assert!(!has_early_return(&body));
    }
}
