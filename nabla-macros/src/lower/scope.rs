//! Variables and scopes: fresh SSA names, binding and rebinding user
//! names, and what an operand is (a value, a tree, static tokens).

use super::{Lowerer, Operand};
use crate::ir::{Kind, Stmt, Var, VarId};
use proc_macro2::Ident;
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
    /// A new variable named after `hint`: a user's name is kept (`h`), and
    /// later variables of that name are `h_1`, `h_2`, ..; a value
    /// temporary's hint `__<op>` gives `<op>1`, `<op>2`, ..; other
    /// generated hints keep their `__` (`__tuple1`). Names never repeat
    /// and a generated name never equals an identifier of the user's item.
    pub(super) fn fresh(&mut self, hint: &str, kind: Kind) -> VarId {
        let ident = self.free_name(hint, kind);
        self.f.vars.push(Var { ident, kind });
        let v = self.f.vars.len() - 1;
        if kind == Kind::Value && hint.starts_with("__") {
            self.temps.insert(v);
        }
        v
    }

    /// The name [`Self::fresh`] gives a new variable.
    fn free_name(&mut self, hint: &str, kind: Kind) -> Ident {
        let user = !hint.starts_with("__");
        if user && self.f.vars.iter().all(|v| v.ident != hint) {
            return format_ident!("{}", hint);
        }
        let base = match hint.strip_prefix("__") {
            Some(op) if kind == Kind::Value => op,
            _ => hint,
        };
        let sep = if user || base.ends_with(|c: char| c.is_ascii_digit()) {
            "_"
        } else {
            ""
        };
        let n = self.names.entry(base.to_string()).or_insert(0);
        loop {
            *n += 1;
            let name = format!("{base}{sep}{n}");
            if self.f.is_free(&name) {
                return format_ident!("{}", name);
            }
        }
    }

    /// Names a value temporary after the user's `let name` it is bound to
    /// (once: a later alias keeps the first name).
    pub(super) fn name_after(&mut self, name: &str, v: VarId) {
        if !name.starts_with("__") && self.temps.remove(&v) {
            self.f.vars[v].ident = self.free_name(name, Kind::Value);
        }
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
        self.name_after(name, v);
        self.bind(name, v);
    }

    /// `name = op` for an existing variable: a new SSA version.
    pub(super) fn reassign(&mut self, name: &str, op: Operand) {
        let v = self.materialize(name, op);
        self.name_after(name, v);
        self.rebind(name, v);
    }

    /// A variable holding `op` (static tokens get a `let`).
    pub(super) fn materialize(&mut self, name: &str, op: Operand) -> VarId {
        match op {
            Operand::Var(v) => v,
            Operand::Tok(ts) => {
                let numeric = self.is_number(&Operand::Tok(ts.clone()));
                let v = self.fresh(name, Kind::Static);
                if numeric {
                    self.numeric.insert(v);
                }
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
