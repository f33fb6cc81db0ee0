//! `continue` and `break` in differentiable loops, rewritten before
//! lowering into static flags and guarded statements, so the rest of the
//! pipeline only sees `if`s and a loop exit test:
//!
//! * each iteration starts with `let mut skip = false;`;
//! * `continue;` becomes `skip = true;`, `break;` becomes
//!   `brk = true; skip = true;` (`brk` is declared before the loop and
//!   tested before each iteration, like a `while` condition);
//! * after any statement that may jump, the rest of its block runs under
//!   `if !skip { .. }`.
//!
//! Jumps may sit in statement-position `if`/`else` chains and blocks of the
//! loop body at any depth; jumps of nested loops belong to those loops.

use proc_macro2::Span;
use quote::quote;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Block, Expr, Ident, Stmt};

/// A loop body with its jumps rewritten.
pub struct Desugared {
    pub body: Block,
    /// The body contained `break` (the loop needs the exit flag).
    pub breaks: bool,
}

/// The first `break`/`continue` of this loop inside `node` (not of nested
/// loops or closures).
fn first_jump(visit: impl FnOnce(&mut Finder)) -> Option<Span> {
    let mut f = Finder(None);
    visit(&mut f);
    f.0
}

struct Finder(Option<Span>);

impl<'ast> Visit<'ast> for Finder {
    fn visit_expr_break(&mut self, e: &'ast syn::ExprBreak) {
        self.0.get_or_insert(e.span());
    }
    fn visit_expr_continue(&mut self, e: &'ast syn::ExprContinue) {
        self.0.get_or_insert(e.span());
    }
    fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
    fn visit_expr_for_loop(&mut self, e: &'ast syn::ExprForLoop) {
        // The iterator expression belongs to this loop; the body does not.
        self.visit_expr(&e.expr);
    }
    fn visit_expr_while(&mut self, e: &'ast syn::ExprWhile) {
        self.visit_expr(&e.cond);
    }
    fn visit_expr_loop(&mut self, _: &'ast syn::ExprLoop) {}
}

fn stmt_jump(s: &Stmt) -> Option<Span> {
    first_jump(|f| f.visit_stmt(s))
}

/// Rewrites `body`'s jumps; `None` when it has none.
pub fn desugar(body: &Block, skip: &Ident, brk: &Ident) -> syn::Result<Option<Desugared>> {
    if !body.stmts.iter().any(|s| stmt_jump(s).is_some()) {
        return Ok(None);
    }
    let mut breaks = false;
    let mut stmts: Vec<Stmt> = vec![syn::parse_quote!(let mut #skip = false;)];
    stmts.extend(seq(&body.stmts, skip, brk, &mut breaks)?);
    Ok(Some(Desugared {
        body: Block {
            brace_token: body.brace_token,
            stmts,
        },
        breaks,
    }))
}

/// A statement list with its jumps rewritten.
fn seq(stmts: &[Stmt], skip: &Ident, brk: &Ident, breaks: &mut bool) -> syn::Result<Vec<Stmt>> {
    let mut out = Vec::new();
    for (i, s) in stmts.iter().enumerate() {
        let Some(span) = stmt_jump(s) else {
            out.push(s.clone());
            continue;
        };
        match s {
            Stmt::Expr(Expr::Continue(c), _) => {
                if let Some(l) = &c.label {
                    return Err(syn::Error::new(
                        l.span(),
                        "labelled `continue` is not supported in differentiable loops",
                    ));
                }
                out.push(syn::parse_quote!(#skip = true;));
                return Ok(out); // the rest is unreachable
            }
            Stmt::Expr(Expr::Break(b), _) => {
                if let Some(l) = &b.label {
                    return Err(syn::Error::new(
                        l.span(),
                        "labelled `break` is not supported in differentiable loops",
                    ));
                }
                if let Some(e) = &b.expr {
                    return Err(syn::Error::new(
                        e.span(),
                        "`break` with a value is not supported in differentiable loops; assign the value to a variable declared before the loop, then `break;`",
                    ));
                }
                *breaks = true;
                out.push(syn::parse_quote!(#brk = true;));
                out.push(syn::parse_quote!(#skip = true;));
                return Ok(out);
            }
            Stmt::Expr(Expr::If(ei), semi) => {
                out.push(Stmt::Expr(
                    Expr::If(rewrite_if(ei, skip, brk, breaks)?),
                    *semi,
                ));
            }
            Stmt::Expr(Expr::Block(b), semi) => {
                let mut nb = b.clone();
                nb.block.stmts = seq(&b.block.stmts, skip, brk, breaks)?;
                out.push(Stmt::Expr(Expr::Block(nb), *semi));
            }
            _ => {
                return Err(syn::Error::new(
                    span,
                    "`continue`/`break` in a differentiable loop must be a statement of the loop body or of an `if`/`else` or block in it, not part of an expression; write `if cond { continue; }`",
                ));
            }
        }
        let rest = seq(&stmts[i + 1..], skip, brk, breaks)?;
        if !rest.is_empty() {
            let guarded = quote!(if !#skip { #(#rest)* });
            out.push(Stmt::Expr(syn::parse2(guarded)?, None));
        }
        return Ok(out);
    }
    Ok(out)
}

fn rewrite_if(
    ei: &syn::ExprIf,
    skip: &Ident,
    brk: &Ident,
    breaks: &mut bool,
) -> syn::Result<syn::ExprIf> {
    let mut n = ei.clone();
    if let Some(span) = first_jump(|f| f.visit_expr(&ei.cond)) {
        return Err(syn::Error::new(
            span,
            "`continue`/`break` cannot be part of an `if` condition",
        ));
    }
    n.then_branch.stmts = seq(&ei.then_branch.stmts, skip, brk, breaks)?;
    if let Some((tok, e)) = &ei.else_branch {
        let e2 = match &**e {
            Expr::If(inner) => Expr::If(rewrite_if(inner, skip, brk, breaks)?),
            Expr::Block(b) => {
                let mut nb = b.clone();
                nb.block.stmts = seq(&b.block.stmts, skip, brk, breaks)?;
                Expr::Block(nb)
            }
            other => other.clone(),
        };
        n.else_branch = Some((*tok, Box::new(e2)));
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::ToTokens;

    fn run(body: Block) -> String {
        let (s, b) = (
            Ident::new("skip", Span::call_site()),
            Ident::new("brk", Span::call_site()),
        );
        let d = desugar(&body, &s, &b).unwrap().unwrap();
        d.body.to_token_stream().to_string()
    }

    #[test]
    fn continue_guards_the_rest_and_break_sets_both_flags() {
        let out = run(syn::parse_quote!({
            x = x + 1.0;
            if a {
                continue;
            }
            y = y * x;
            if b {
                z = 1.0;
                break;
            }
            w = 2.0;
        }));
        let want = quote!({
            let mut skip = false;
            x = x + 1.0;
            if a {
                skip = true;
            }
            if !skip {
                y = y * x;
                if b {
                    z = 1.0;
                    brk = true;
                    skip = true;
                }
                if !skip {
                    w = 2.0;
                }
            }
        });
        assert_eq!(out, want.to_string());
    }

    #[test]
    fn inner_loops_keep_their_jumps() {
        let body: Block = syn::parse_quote!({
            for j in 0..3 {
                if c {
                    break;
                }
            }
            y = 1.0;
        });
        let (s, b) = (
            Ident::new("skip", Span::call_site()),
            Ident::new("brk", Span::call_site()),
        );
        assert!(desugar(&body, &s, &b).unwrap().is_none());
    }

    #[test]
    fn jumps_inside_expressions_are_errors() {
        let body: Block = syn::parse_quote!({
            let v = if c { continue } else { 1.0 };
        });
        let (s, b) = (
            Ident::new("skip", Span::call_site()),
            Ident::new("brk", Span::call_site()),
        );
        let e = desugar(&body, &s, &b).err().unwrap();
        assert!(e.to_string().contains("not part of an expression"));
    }
}
