//! Variables and scopes: fresh SSA names, binding and rebinding user
//! names, and what an operand is (a value, a tree, static tokens).

use super::{Lowerer, Operand};
use crate::ir::{Kind, Stmt, Var, VarId};
use proc_macro2::{TokenStream, TokenTree};
use quote::{ToTokens, format_ident};
use std::collections::HashMap;
use syn::Expr;
use syn::spanned::Spanned;

/// One scope: each name bound in it, with its current variable.
pub(super) type Scope = HashMap<String, VarId>;

/// The variable `name` is bound to in a stack of scopes (innermost last).
pub(super) fn find(scopes: &[Scope], name: &str) -> Option<VarId> {
    scopes.iter().rev().find_map(|s| s.get(name).copied())
}

/// Every name bound in a stack of scopes, sorted, once each.
pub(super) fn all_names(scopes: &[Scope]) -> Vec<String> {
    let mut names: Vec<String> = scopes.iter().flat_map(|s| s.keys().cloned()).collect();
    names.sort();
    names.dedup();
    names
}

impl Lowerer<'_> {
    /// A new variable named after `hint` (`x_1`, `x_2`, ..; `__sum1`, ..).
    pub(super) fn fresh(&mut self, hint: &str, kind: Kind) -> VarId {
        let n = self.names.entry(hint.to_string()).or_insert(0);
        *n += 1;
        let ident = if hint.starts_with("__") {
            format_ident!("{}{}", hint, n)
        } else {
            format_ident!("{}_{}", hint, n)
        };
        self.f.vars.push(Var { ident, kind });
        self.f.vars.len() - 1
    }

    /// Binds `name` to `v` in the innermost scope (`let`).
    pub(super) fn bind(&mut self, name: &str, v: VarId) {
        self.scopes
            .last_mut()
            .expect("a scope")
            .insert(name.to_string(), v);
    }

    /// Rebinds an existing name in the scope that defines it (assignment).
    pub(super) fn rebind(&mut self, name: &str, v: VarId) {
        match self.scopes.iter_mut().rev().find(|s| s.contains_key(name)) {
            Some(scope) => {
                scope.insert(name.to_string(), v);
            }
            None => self.bind(name, v),
        }
    }

    /// A fresh id for a statement or a generated name.
    pub(super) fn id(&mut self) -> usize {
        self.next_id += 1;
        self.next_id
    }

    /// The variable `name` is bound to, if any.
    pub(super) fn lookup(&self, name: &str) -> Option<VarId> {
        find(&self.scopes, name)
    }

    /// Variable `v`'s kind.
    pub(super) fn kind(&self, v: VarId) -> Kind {
        self.f.vars[v].kind
    }

    /// Binds `name` to an operand (static operands get their own variable).
    pub(super) fn assign(&mut self, name: &str, op: Operand) {
        let v = self.materialize(name, op);
        self.bind(name, v);
    }

    /// `name = op` for an existing variable: a new SSA version.
    pub(super) fn reassign(&mut self, name: &str, op: Operand) {
        let v = self.materialize(name, op);
        self.rebind(name, v);
    }

    /// A variable holding `op` (static tokens get a `let`).
    pub(super) fn materialize(&mut self, name: &str, op: Operand) -> VarId {
        match op {
            Operand::Var(v) => v,
            Operand::Tok(ts) => {
                let v = self.fresh(name, Kind::Static);
                self.f.body.push(Stmt::Static { out: v, expr: ts });
                v
            }
        }
    }

    /// The tokens of an operand: its variable, or its static tokens.
    pub(super) fn tok(&self, op: &Operand) -> TokenStream {
        match op {
            Operand::Var(v) => self.f.vars[*v].ident.to_token_stream(),
            Operand::Tok(t) => t.clone(),
        }
    }

    /// Whether `op` is a value variable.
    pub(super) fn is_value(&self, op: &Operand) -> bool {
        matches!(op, Operand::Var(v) if self.kind(*v) == Kind::Value)
    }

    /// Whether `op` is a tree variable.
    pub(super) fn is_tree(&self, op: &Operand) -> bool {
        matches!(op, Operand::Var(v) if self.kind(*v) == Kind::Tree)
    }

    /// `op`'s variable when it is a value.
    pub(super) fn value_var(&self, op: &Operand) -> Option<VarId> {
        match op {
            Operand::Var(v) if self.kind(*v) == Kind::Value => Some(*v),
            _ => None,
        }
    }

    /// Lowers an expression that must be static.
    pub(super) fn static_expr(&mut self, e: &Expr) -> Option<TokenStream> {
        let op = self.expr(e)?;
        if self.is_value(&op) {
            self.cx.error(
                e.span(),
                "a differentiable value cannot be used here; this position needs a static value",
            );
            return None;
        }
        Some(self.tok(&op))
    }

    /// Renames identifiers of static variables inside macro tokens.
    pub(super) fn rename_tokens(&mut self, ts: TokenStream) -> TokenStream {
        let toks: Vec<TokenTree> = ts.into_iter().collect();
        let mut out = Vec::with_capacity(toks.len());
        for (i, t) in toks.iter().enumerate() {
            match t {
                TokenTree::Ident(id) => {
                    let prev_dot = i > 0
                        && matches!(&toks[i - 1], TokenTree::Punct(p) if p.as_char() == '.' || p.as_char() == ':');
                    let next_path = matches!(toks.get(i + 1), Some(TokenTree::Punct(p)) if p.as_char() == ':' || p.as_char() == '!');
                    match self.lookup(&id.to_string()) {
                        Some(v) if !prev_dot && !next_path => {
                            if self.kind(v) == Kind::Value {
                                self.cx.error(
                                    id.span(),
                                    "differentiable values cannot be used inside macros",
                                );
                            }
                            let mut new = self.f.vars[v].ident.clone();
                            new.set_span(id.span());
                            out.push(TokenTree::Ident(new));
                        }
                        _ => out.push(t.clone()),
                    }
                }
                TokenTree::Group(g) => {
                    let inner = self.rename_tokens(g.stream());
                    let mut ng = proc_macro2::Group::new(g.delimiter(), inner);
                    ng.set_span(g.span());
                    out.push(TokenTree::Group(ng));
                }
                other => out.push(other.clone()),
            }
        }
        out.into_iter().collect()
    }
}
