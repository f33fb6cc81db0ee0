//! Loops: `for` over a static iterator (a range, a tree's leaves, tuples)
//! and `while` on a static condition, with `break`/`continue` rewritten
//! first; the two-pass lowering finds the carried values.

use super::scope::{all_names, find};
use super::{Lowerer, Operand, strip};
use crate::desugar::{for_pat, jumps, loop_attr};
use crate::ir::{Carried, Kind, Stmt, VarId};
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use std::collections::HashMap;
use syn::spanned::Spanned;
use syn::{Expr, Pat};

impl Lowerer<'_> {
    /// `for pat in iter { .. }` over a static iterator: the body is lowered
    /// twice, first to find the variables it rebinds (the carried values),
    /// then for real with those names bound to loop-start variables.
    pub(super) fn lower_for(&mut self, fl: &syn::ExprForLoop) -> Option<Operand> {
        if let Some(l) = &fl.label {
            self.cx.error(
                l.span(),
                "labelled loops are not supported in differentiable functions",
            );
            return None;
        }
        let snapshots = self.cx.ok(loop_attr::snapshots(&fl.attrs))?;
        // `for (a, b) in it` (a tuple of names): one static item, then its
        // fields.
        let untupled;
        let fl = if for_pat::is_tuple_of_names(&fl.pat) {
            let item = format_ident!("__nabla_item{}", self.id());
            untupled = for_pat::untuple(fl, &item);
            &untupled
        } else {
            fl
        };
        // `for w in ws` over a slice/Vec of arrays (a tree parameter): a
        // static index loop whose body starts with `let w = &ws[i];`.
        let over_tree;
        let (fl, iter) = match self.iterated_tree(&fl.expr) {
            Some(ws) => {
                let i = format_ident!("__nabla_item{}", self.id());
                if !matches!(&*fl.pat, Pat::Ident(_) | Pat::Wild(_)) {
                    self.cx.error(
                        fl.pat.span(),
                        "the loop variable over arrays must be a name or `_`",
                    );
                    return None;
                }
                over_tree = for_pat::index_tree(fl, &ws, &i);
                (&over_tree, quote!(0..#ws.skeleton.len()))
            }
            None => (fl, self.static_expr(&fl.expr)?),
        };
        let (jumps, brk) = self.desugar_jumps(&fl.body)?;
        let desugared;
        let fl = match &jumps {
            Some(d) => {
                desugared = syn::ExprForLoop {
                    body: d.body.clone(),
                    ..fl.clone()
                };
                &desugared
            }
            None => fl,
        };
        if jumps.as_ref().is_some_and(|d| d.breaks) {
            return self.lower_for_with_break(fl, iter, &brk);
        }
        let (pat, body, carried) =
            self.lower_loop(fl.for_token.span(), |p| Some(p.loop_body(fl)))?;
        let id = self.id();
        self.f.body.push(Stmt::For {
            pat,
            iter,
            body,
            carried,
            id,
            cond: None,
            snapshots,
        });
        Some(Operand::Tok(quote!(())))
    }

    /// A `for` loop whose (rewritten) body sets the break flag `brk`: the
    /// flag is tested before each iteration, as a `while` condition is.
    fn lower_for_with_break(
        &mut self,
        fl: &syn::ExprForLoop,
        iter: TokenStream,
        brk: &syn::Ident,
    ) -> Option<Operand> {
        if let Some(a) = fl.attrs.iter().find(|a| loop_attr::is_checkpoint(a)) {
            self.cx.error_spanned(
                a,
                "binomial checkpointing needs the trip count before the loop starts, which a loop with `break` does not have; loop over the exact range, or checkpoint the body's call with `nabla::checkpoint(step)(..)`",
            );
            return None;
        }
        self.declare_flag(brk);
        let ((pat, k, test), body, carried) =
            self.lower_loop(fl.for_token.span(), |p| p.loop_body_with_exit(fl, brk))?;
        let id = self.id();
        self.f.body.push(Stmt::For {
            pat,
            iter,
            body,
            carried,
            id,
            cond: Some((k, test)),
            snapshots: None,
        });
        Some(Operand::Tok(quote!(())))
    }

    /// The tree parameter a `for` loop iterates over: `ws`, `&ws` or
    /// `ws.iter()` where `ws` is a slice or `Vec` of arrays.
    fn iterated_tree(&self, e: &Expr) -> Option<syn::Ident> {
        let base = match strip(e) {
            Expr::Reference(r) => strip(&r.expr),
            Expr::MethodCall(m) if m.method == "iter" && m.args.is_empty() => strip(&m.receiver),
            other => other,
        };
        let Expr::Path(p) = base else { return None };
        let id = p.path.get_ident()?;
        let v = self.lookup(&id.to_string())?;
        (self.kind(v) == Kind::Tree).then(|| id.clone())
    }

    /// A loop body with its `continue`/`break` rewritten (see [`jumps`];
    /// `None` inside when it has none) and the name of its break flag;
    /// `None` after reporting an error.
    fn desugar_jumps(
        &mut self,
        body: &syn::Block,
    ) -> Option<(Option<jumps::Desugared>, syn::Ident)> {
        let n = self.id();
        let skip = format_ident!("__nabla_skip{}", n);
        let brk = format_ident!("__nabla_break{}", n);
        let jumps = self.cx.ok(jumps::desugar(body, &skip, &brk))?;
        Some((jumps, brk))
    }

    /// `let mut flag = false;` (a static) in the current scope.
    fn declare_flag(&mut self, flag: &syn::Ident) {
        let stmt: syn::Stmt = syn::parse_quote!(let mut #flag = false;);
        if let syn::Stmt::Local(l) = stmt {
            self.local(&l);
        }
    }

    /// `while cond { .. }`: like `for`, with the condition's statements at
    /// the start of each iteration. The condition must be static; it may
    /// read the data (`x.item() > 0.0`), which makes the trip count
    /// data-dependent.
    pub(super) fn lower_while(&mut self, w: &syn::ExprWhile) -> Option<Operand> {
        if let Some(l) = &w.label {
            self.cx.error(
                l.span(),
                "labelled loops are not supported in differentiable functions",
            );
            return None;
        }
        if let Some(a) = w.attrs.iter().find(|a| loop_attr::is_checkpoint(a)) {
            self.cx.error_spanned(
                a,
                "binomial checkpointing needs the trip count before the loop starts, which a `while` loop does not have; loop over a range (`for i in 0..n`) with the exit test outside, or checkpoint the body's call with `nabla::checkpoint(step)(..)`",
            );
            return None;
        }
        if let Expr::Let(l) = strip(&w.cond) {
            self.cx.error(
                l.span(),
                "`while let` is not supported in differentiable functions",
            );
            return None;
        }
        let (jumps, brk) = self.desugar_jumps(&w.body)?;
        let desugared;
        let w = match &jumps {
            Some(d) => {
                let cond = &w.cond;
                let cond: Expr = if d.breaks {
                    self.declare_flag(&brk);
                    syn::parse_quote!(!#brk && (#cond))
                } else {
                    (**cond).clone()
                };
                desugared = syn::ExprWhile {
                    cond: Box::new(cond),
                    body: d.body.clone(),
                    ..w.clone()
                };
                &desugared
            }
            None => w,
        };
        let ((k, test), body, carried) =
            self.lower_loop(w.while_token.span(), |p| p.while_body(w))?;
        let id = self.id();
        self.f.body.push(Stmt::For {
            pat: quote!(_),
            iter: quote!(()),
            body,
            carried,
            id,
            cond: Some((k, test)),
            snapshots: None,
        });
        Some(Operand::Tok(quote!(())))
    }

    /// The two-pass lowering shared by `for` and `while`. `lower_body`
    /// lowers the loop's body (and a `while`'s condition) into `self.f.body`.
    /// Pass 1 runs it to find the outer names the loop rebinds (the carried
    /// values) and throws its statements away; pass 2 runs it for real with
    /// those names bound to loop-start variables (phis), then binds each name
    /// to the loop's result. Returns what `lower_body` returned, the body's
    /// statements and the carried values; `None` after an error.
    fn lower_loop<R>(
        &mut self,
        span: Span,
        mut lower_body: impl FnMut(&mut Self) -> Option<R>,
    ) -> Option<(R, Vec<Stmt>, Vec<Carried>)> {
        let mut before = self.scopes.clone();
        let mut outer = std::mem::take(&mut self.f.body);
        // Pass 1: which outer names does the loop rebind? A static that the
        // body turns into a value is promoted before the loop (`promote`),
        // and pass 1 runs again until no more are.
        let carried_names: Vec<(String, VarId)> = loop {
            lower_body(self);
            let probe = std::mem::replace(&mut self.scopes, before.clone());
            self.f.body = Vec::new();
            if !self.cx.is_empty() {
                self.f.body = outer;
                return None;
            }
            let carried: Vec<(String, VarId)> = all_names(&before)
                .into_iter()
                .filter_map(|n| {
                    let b = find(&before, &n)?;
                    (find(&probe, &n)? != b).then_some((n, b))
                })
                .collect();
            let mut promoted = false;
            for (n, init) in &carried {
                let becomes_value = find(&probe, n).is_some_and(|v| self.kind(v) == Kind::Value);
                if self.kind(*init) == Kind::Static
                    && becomes_value
                    && let Some(v) = self.promote_into(&mut outer, *init)
                {
                    self.rebind(n, v);
                    promoted = true;
                }
            }
            if !promoted {
                break carried;
            }
            before = self.scopes.clone();
        };
        // Pass 2: loop-start variables, then the body.
        let mut phis = Vec::new();
        for (n, init) in &carried_names {
            let phi = self.fresh(n, self.kind(*init));
            self.rebind(n, phi);
            phis.push(phi);
        }
        let lowered = lower_body(self);
        let body = std::mem::take(&mut self.f.body);
        let after = std::mem::replace(&mut self.scopes, before);
        self.f.body = outer;
        let lowered = lowered?;
        let mut carried = Vec::new();
        for ((n, init), phi) in carried_names.into_iter().zip(phis) {
            // Pass 2 binds every name pass 1 did; if not, an error was reported.
            let next = find(&after, &n)?;
            if self.kind(next) != self.kind(init) {
                self.cx.error(span, format!("`{n}` changes between a differentiable value and a static one inside the loop; start it from a value (e.g. `x * 0.0` for a parameter `x`) or keep it static"));
                continue;
            }
            let out = self.fresh(&n, self.kind(init));
            carried.push(Carried {
                init,
                phi,
                next,
                out,
            });
            self.rebind(&n, out);
        }
        Some((lowered, body, carried))
    }

    /// Lowers a `while` loop's condition (returning how many statements it
    /// took and its tokens) and body.
    fn while_body(&mut self, w: &syn::ExprWhile) -> Option<(usize, TokenStream)> {
        self.scopes.push(HashMap::new());
        let cond = self.expr(&w.cond);
        let k = self.f.body.len();
        let test = match cond {
            Some(op) if self.is_value(&op) => {
                self.cx.error(
                    w.cond.span(),
                    "the condition of a `while` must be static (read the data with `.item()`)",
                );
                None
            }
            Some(op) => Some(self.tok(&op)),
            None => None,
        };
        self.branch_block(&w.body, false);
        self.scopes.pop();
        test.map(|t| (k, t))
    }

    /// Binds the loop variable (a static) and lowers the body; the loop
    /// variable's scope ends with the body.
    fn loop_body(&mut self, fl: &syn::ExprForLoop) -> TokenStream {
        self.scopes.push(HashMap::new());
        let pat = self.loop_var(fl);
        self.branch_block(&fl.body, false);
        self.scopes.pop();
        pat
    }

    /// Like [`Self::loop_body`] for a loop with `break`: after binding the
    /// loop variable, the exit test `!brk` (its statements counted, as a
    /// `while` condition's are), then the body.
    fn loop_body_with_exit(
        &mut self,
        fl: &syn::ExprForLoop,
        brk: &syn::Ident,
    ) -> Option<(TokenStream, usize, TokenStream)> {
        self.scopes.push(HashMap::new());
        let pat = self.loop_var(fl);
        let test: Expr = syn::parse_quote!(!#brk);
        let cond = self.expr(&test);
        let k = self.f.body.len();
        let test = cond.map(|op| self.tok(&op));
        self.branch_block(&fl.body, false);
        self.scopes.pop();
        test.map(|t| (pat, k, t))
    }

    /// Binds a `for` loop's variable (a static name or `_`).
    fn loop_var(&mut self, fl: &syn::ExprForLoop) -> TokenStream {
        match &*fl.pat {
            Pat::Ident(pi) if pi.subpat.is_none() && pi.by_ref.is_none() => {
                let v = self.fresh(&pi.ident.to_string(), Kind::Static);
                self.bind(&pi.ident.to_string(), v);
                let id = self.f.vars[v].ident.clone();
                quote!(#id)
            }
            Pat::Wild(_) => quote!(_),
            other => {
                self.cx.error(
                    other.span(),
                    "the loop variable of a differentiable loop must be a name or `_`",
                );
                quote!(_)
            }
        }
    }
}
