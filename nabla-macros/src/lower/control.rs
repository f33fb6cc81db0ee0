//! Branches: `if` on a static (possibly data-derived) condition, with the
//! names either branch rebinds leaving through merges, and `match`,
//! lowered as an `if` chain.

use super::scope::{Scope, all_names, find};
use super::{BlockValue, Lowerer, Operand, strip};
use crate::desugar::matches;
use crate::ir::{Kind, Merge, Stmt, VarId};
use quote::{format_ident, quote};
use syn::Expr;
use syn::spanned::Spanned;

impl Lowerer<'_> {
    /// `let Some(b) = &<tree path>` (or without `&`): the name, the path
    /// and its tree's variable.
    fn optional_part(&self, l: &syn::ExprLet) -> Option<(String, Expr, VarId)> {
        let (name, part) = some_binding(l)?;
        let root = self.tree_root(&part)?;
        Some((name, part, root))
    }

    /// `let Some(name) = <static expression>` (with or without `&`): the
    /// name and the option's tokens.
    fn static_option(&mut self, l: &syn::ExprLet) -> Option<(String, Operand)> {
        let (name, e) = some_binding(l)?;
        match self.expr(&e)? {
            Operand::Var(v) if self.kind(v) != Kind::Static => None,
            op => Some((name, op)),
        }
    }

    /// `if` on a static condition. Both branches are lowered into their own
    /// bodies; names they rebind and the branch value become merges.
    pub(super) fn lower_if(&mut self, ei: &syn::ExprIf, want_value: bool) -> Option<Operand> {
        let mut alias = None;
        let mut static_some = None;
        let cond_op = if let Expr::Let(l) = strip(&ei.cond) {
            if let Some((name, part, root)) = self.optional_part(l) {
                let cond = self.skeleton_read(&part, |s| quote!((#s).is_some()))?;
                alias = Some((name, part, root));
                cond
            } else if let Some((name, opt)) = self.static_option(l) {
                let v = self.materialize("__option", opt);
                let ident = &self.f.vars[v].ident;
                static_some = Some((name, quote!(#ident.clone().unwrap())));
                Operand::Tok(quote!(#ident.is_some()))
            } else {
                self.cx.error(l.span(), "`if let` in a differentiable function takes `Some(name)` of a static `Option` (`if let Some(l) = limit`) or of an optional part of a tree (`if let Some(b) = &self.bias { .. }`); otherwise match outside and call a differentiable function per case");
                return None;
            }
        } else {
            self.expr(&ei.cond)?
        };
        if self.is_value(&cond_op) {
            self.cx.error(ei.cond.span(), "the condition of an `if` must be static (integers, bools, shapes); data-dependent branches are not supported yet");
            return None;
        }
        let cond = self.tok(&cond_op);
        let before = self.scopes.clone();
        let outer = std::mem::take(&mut self.f.body);

        let then_tail = match alias {
            None if static_some.is_some() => {
                let (name, some) = static_some.expect("checked");
                self.scopes.push(Scope::new());
                let v = self.materialize(&name, Operand::Tok(some));
                self.bind(&name, v);
                let tail = self.branch_block(&ei.then_branch, want_value);
                self.scopes.pop();
                tail
            }
            Some((name, part, root)) => {
                self.scopes.push(Scope::new());
                self.bind(&name, root);
                self.tree_aliases.push((name, part, root));
                let tail = self.branch_block(&ei.then_branch, want_value);
                self.tree_aliases.pop();
                self.scopes.pop();
                tail
            }
            None => self.branch_block(&ei.then_branch, want_value),
        };
        let mut then_body = std::mem::take(&mut self.f.body);
        let then_scopes = std::mem::replace(&mut self.scopes, before.clone());

        let else_tail = match &ei.else_branch {
            Some((_, e)) => match strip(e) {
                Expr::Block(b) => self.branch_block(&b.block, want_value),
                Expr::If(inner) => self
                    .lower_if(inner, want_value)
                    .map(|o| self.materialize("__if", o)),
                other => {
                    self.cx.error(other.span(), "expected a block after `else`");
                    None
                }
            },
            None => {
                if want_value {
                    self.cx.error(
                        ei.if_token.span(),
                        "an `if` used as a value needs an `else` branch",
                    );
                }
                None
            }
        };
        let mut else_body = std::mem::take(&mut self.f.body);
        let else_scopes = std::mem::replace(&mut self.scopes, before.clone());
        self.f.body = outer;

        let mut bodies = [&mut then_body, &mut else_body];
        let (mut merges, rebinds) = self.rebound_names(
            ei,
            &before,
            [&then_scopes[..], &else_scopes[..]],
            &mut bodies,
        );
        let mut value = None;
        if want_value && let (Some(t), Some(e)) = (then_tail, else_tail) {
            match self.same_kind(t, e, &mut bodies) {
                Some((t, e)) => {
                    let out = self.fresh("__if", self.kind(t));
                    merges.push(Merge { out, then_v: t, else_v: e });
                    value = Some(Operand::Var(out));
                }
                None => self.cx.error(
                    ei.if_token.span(),
                    "one branch gives a differentiable value and the other a static one, and this function has no array or float parameter to make the static a value from; make both branches values",
                ),
            }
        }
        let id = self.id();
        self.f.body.push(Stmt::If {
            cond,
            then_body,
            else_body,
            merges,
            id,
        });
        for (n, out) in rebinds {
            self.rebind(&n, out);
        }
        if want_value {
            value
        } else {
            Some(Operand::Tok(quote!(())))
        }
    }

    /// The branches' results `t` and `e` as the same kind: a static one
    /// promoted to a value (at the end of its branch's body) when the other
    /// is a value; `None` when that is impossible.
    fn same_kind(
        &mut self,
        t: VarId,
        e: VarId,
        bodies: &mut [&mut Vec<Stmt>; 2],
    ) -> Option<(VarId, VarId)> {
        match (self.kind(t), self.kind(e)) {
            (a, b) if a == b => Some((t, e)),
            (Kind::Static, Kind::Value) => Some((self.promote_into(bodies[0], t)?, e)),
            (Kind::Value, Kind::Static) => Some((t, self.promote_into(bodies[1], e)?)),
            _ => None,
        }
    }

    /// The names either branch rebound, each merged into a fresh variable
    /// (the merges, and the rebindings to make after the `if`). A name
    /// that is a value in one branch and static in the other is promoted
    /// in the static branch.
    fn rebound_names(
        &mut self,
        ei: &syn::ExprIf,
        before: &[Scope],
        [then_scopes, else_scopes]: [&[Scope]; 2],
        bodies: &mut [&mut Vec<Stmt>; 2],
    ) -> (Vec<Merge>, Vec<(String, VarId)>) {
        let mut merges = Vec::new();
        let mut rebinds = Vec::new();
        for n in all_names(before) {
            let (b, t, e) = (
                find(before, &n),
                find(then_scopes, &n),
                find(else_scopes, &n),
            );
            let (Some(b), Some(t), Some(e)) = (b, t, e) else {
                continue;
            };
            if t == b && e == b {
                continue;
            }
            let Some((t, e)) = self.same_kind(t, e, bodies) else {
                self.cx.error(ei.if_token.span(), format!("`{n}` is a differentiable value in one branch and static in the other, and this function has no array or float parameter to make the static a value from; make both branches give the same kind"));
                continue;
            };
            let out = self.fresh(&n, self.kind(t));
            merges.push(Merge {
                out,
                then_v: t,
                else_v: e,
            });
            rebinds.push((n, out));
        }
        (merges, rebinds)
    }

    /// `match` on a static (or data-derived) scrutinee: the scrutinee
    /// becomes a static variable and the arms the `if` chain of
    /// [`matches::if_chain`].
    pub(super) fn lower_match(&mut self, m: &syn::ExprMatch, want_value: bool) -> Option<Operand> {
        let scrut = self.static_expr(&m.expr)?;
        let v = self.materialize("__match", Operand::Tok(scrut));
        let id = self.f.vars[v].ident.clone();
        if m.arms.is_empty() {
            self.cx
                .error(m.match_token.span(), "an empty `match` has no value");
            return None;
        }
        let krate = self.f.krate.clone();
        let bound = format_ident!("__nabla_bound{}", self.id());
        let chain = matches::if_chain(m, &id, &bound, &krate);
        match chain {
            Expr::If(ei) => self.lower_if(&ei, want_value),
            Expr::Block(b) => {
                if want_value {
                    match self.block(&b.block, false)? {
                        BlockValue::Single(o) => Some(o),
                        BlockValue::Tuple(_) | BlockValue::List(_) | BlockValue::Fixed(_) => None,
                    }
                } else {
                    self.branch_block(&b.block, false);
                    Some(Operand::Tok(quote!(())))
                }
            }
            _ => unreachable!("built above"),
        }
    }
}

/// `let Some(name) = <expr>` or `= &<expr>`: the name and the expression
/// (without the `&`).
fn some_binding(l: &syn::ExprLet) -> Option<(String, Expr)> {
    let syn::Pat::TupleStruct(ts) = &*l.pat else {
        return None;
    };
    if !ts.path.is_ident("Some") || ts.elems.len() != 1 {
        return None;
    }
    let syn::Pat::Ident(pi) = &ts.elems[0] else {
        return None;
    };
    let e = match strip(&l.expr) {
        Expr::Reference(r) => strip(&r.expr).clone(),
        e => e.clone(),
    };
    Some((pi.ident.to_string(), e))
}
