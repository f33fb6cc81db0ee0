//! Blocks and statements: `let` bindings (names, tuples, `_`),
//! assignments and compound assignments (new SSA versions), statement
//! expressions, and a block's final value.

use super::expr::compound;
use super::{BlockValue, Lowerer, Operand, strip};
use crate::ir::{Kind, Stmt, VarId};
use quote::quote;
use std::collections::HashMap;
use syn::spanned::Spanned;
use syn::{Expr, Pat};

impl Lowerer<'_> {
    /// Lowers a block in its own scope; its final expression (or final
    /// `return`) is its value. `top`: the function's body, whose value may
    /// be a tuple or a list.
    pub(super) fn block(&mut self, block: &syn::Block, top: bool) -> Option<BlockValue> {
        self.scopes.push(HashMap::new());
        let mut tail = None;
        let n = block.stmts.len();
        for (i, stmt) in block.stmts.iter().enumerate() {
            let last = i + 1 == n;
            match stmt {
                syn::Stmt::Local(local) => self.local(local),
                syn::Stmt::Expr(Expr::Return(r), _) if last => {
                    tail = match &r.expr {
                        Some(e) => self.tail_expr(e, top),
                        None => {
                            self.cx.error(r.span(), "a differentiable function must return a value");
                            None
                        }
                    }
                }
                syn::Stmt::Expr(Expr::Return(r), _) => self.cx.error(
                    r.span(),
                    "early `return` is not supported yet; restructure so the value is the block's last expression",
                ),
                syn::Stmt::Expr(e, None) if last => tail = self.tail_expr(e, top),
                syn::Stmt::Expr(e, _) => self.statement_expr(e),
                syn::Stmt::Item(it) => {
                    self.cx.error(it.span(), "items cannot be declared inside a differentiable function; move them outside")
                }
                syn::Stmt::Macro(m) => self.cx.error(
                    m.span(),
                    "statement macros (println!, assert!, ...) are not supported in differentiable functions; compute outside, or on the values returned",
                ),
            }
        }
        self.scopes.pop();
        if tail.is_none() && n == 0 {
            self.cx
                .error(block.span(), "a differentiable block must end with a value");
        }
        tail
    }

    /// A `let`: a name, `_` (evaluated, then dropped) or a tuple of names.
    pub(super) fn local(&mut self, local: &syn::Local) {
        let Some(init) = &local.init else {
            self.cx.error(
                local.span(),
                "declare variables with a value (`let x = ...;`)",
            );
            return;
        };
        if let Some((_, e)) = &init.diverge {
            self.cx.error(
                e.span(),
                "`let ... else` is not supported in differentiable functions",
            );
            return;
        }
        let pat = match &local.pat {
            Pat::Type(pt) => &*pt.pat,
            p => p,
        };
        // (A closure is reported as such, below.)
        if !matches!(strip(&init.expr), Expr::Closure(_)) && !self.shadows_no_function(pat) {
            return;
        }
        match pat {
            Pat::Ident(pi) if pi.subpat.is_none() && pi.by_ref.is_none() => {
                let name = pi.ident.to_string();
                match self.expr(&init.expr) {
                    Some(op) => self.assign(&name, op),
                    None => {
                        // Already reported: bind a placeholder value so later
                        // uses do not cascade into follow-up errors.
                        let v = self.fresh(&name, Kind::Value);
                        self.bind(&name, v);
                    }
                }
            }
            Pat::Wild(_) => {
                // Evaluated for its effect (e.g. a check), then dropped.
                if let Some(op) = self.expr(&init.expr) {
                    self.assign("__unused", op);
                }
            }
            Pat::Tuple(t) => self.tuple_let(t, &init.expr),
            other => self.cx.error(
                other.span(),
                "only `let name = ...` and `let (a, b) = ...` patterns are supported",
            ),
        }
    }

    /// The name an element of a tuple pattern binds (`_` for a wildcard).
    fn pat_name(&mut self, p: &Pat) -> Option<String> {
        match p {
            Pat::Ident(pi) if pi.subpat.is_none() && pi.by_ref.is_none() => {
                Some(pi.ident.to_string())
            }
            Pat::Wild(_) => Some("_".into()),
            Pat::Type(pt) => self.pat_name(&pt.pat),
            other => {
                self.cx
                    .error(other.span(), "tuple patterns may only contain names");
                None
            }
        }
    }

    /// `let (a, b) = init`: a tuple of expressions, a call of a
    /// differentiable function with several outputs, or a static tuple.
    fn tuple_let(&mut self, t: &syn::PatTuple, init: &Expr) {
        let names: Vec<Option<String>> = t.elems.iter().map(|p| self.pat_name(p)).collect();
        if let Expr::Tuple(et) = strip(init) {
            if et.elems.len() != names.len() {
                self.cx.error(
                    init.span(),
                    format!("expected a tuple of {} values", names.len()),
                );
                return;
            }
            let ops: Vec<Option<Operand>> = et.elems.iter().map(|e| self.expr(e)).collect();
            for (n, op) in names.into_iter().zip(ops) {
                if let (Some(n), Some(op)) = (n, op)
                    && n != "_"
                {
                    self.assign(&n, op);
                }
            }
            return;
        }
        // A call of a differentiable function returning a tuple of values.
        if let Expr::Call(c) = strip(init)
            && let Some(outs) = self.diff_call(c, names.len())
        {
            for (n, v) in names.into_iter().zip(outs) {
                if let Some(n) = n.filter(|n| n != "_") {
                    self.name_after(&n, v);
                    self.bind(&n, v);
                }
            }
            return;
        }
        // Otherwise a static tuple.
        match self.expr(init) {
            Some(Operand::Tok(ts)) => {
                let tup = self.fresh("__tuple", Kind::Static);
                self.f.body.push(Stmt::Static { out: tup, expr: ts });
                let tup_ident = self.f.vars[tup].ident.clone();
                for (i, n) in names.into_iter().enumerate() {
                    if let Some(n) = n.filter(|n| n != "_") {
                        let idx = syn::Index::from(i);
                        self.assign(&n, Operand::Tok(quote!(#tup_ident.#idx)));
                    }
                }
            }
            Some(Operand::Var(_)) => self.cx.error(
                init.span(),
                "a single value cannot be destructured into a tuple",
            ),
            None => {}
        }
    }

    /// An expression statement: an assignment, a compound assignment, or
    /// control flow; anything else has no effect in a pure function.
    fn statement_expr(&mut self, e: &Expr) {
        match e {
            Expr::Assign(a) => {
                let Some(name) = self.target(&a.left) else { return };
                if let Some(op) = self.expr(&a.right) {
                    self.reassign(&name, op);
                }
            }
            Expr::Binary(b) if compound(&b.op).is_some() => {
                let Some(name) = self.target(&b.left) else { return };
                let op = compound(&b.op).expect("checked");
                let (Some(l), Some(r)) = (self.expr(&b.left), self.expr(&b.right)) else { return };
                if let Some(res) = self.arith(op, l, r, b.span()) {
                    self.reassign(&name, res);
                }
            }
            Expr::If(i) => {
                self.lower_if(i, false);
            }
            Expr::ForLoop(f) => {
                self.lower_for(f);
            }
            Expr::While(w) => {
                self.lower_while(w);
            }
            Expr::Match(m) => {
                self.lower_match(m, false);
            }
            Expr::Loop(_) | Expr::Unsafe(_)
            | Expr::Async(_) | Expr::Closure(_) => {
                // Reported with the construct's own message.
                self.expr(e);
            }
            other => self.cx.error(
                other.span(),
                "this statement has no effect on the result; differentiable functions are pure: bind values with `let` and return the result",
            ),
        }
    }

    /// The variable an assignment rebinds (a whole variable in scope).
    fn target(&mut self, e: &Expr) -> Option<String> {
        match strip(e) {
            Expr::Path(p) if p.path.get_ident().is_some() => {
                let name = p.path.get_ident().expect("checked").to_string();
                if self.lookup(&name).is_none() {
                    self.cx
                        .error(e.span(), format!("cannot find variable `{name}`"));
                    return None;
                }
                Some(name)
            }
            other => {
                self.cx.error(
                    other.span(),
                    "only whole variables can be reassigned in differentiable functions (no field, index or `*x` assignment); rebind with `let` instead",
                );
                None
            }
        }
    }

    /// Lowers a block's final expression; tuples are allowed at the top.
    fn tail_expr(&mut self, e: &Expr, top: bool) -> Option<BlockValue> {
        match strip(e) {
            Expr::Tuple(t) if top => {
                let mut items = Vec::new();
                for el in &t.elems {
                    items.push(self.expr(el)?);
                }
                Some(BlockValue::Tuple(items))
            }
            Expr::Array(a) if top && matches!(self.f.ret_ty, syn::Type::Array(_)) => {
                let mut items = Vec::new();
                for el in &a.elems {
                    items.push(self.expr(el)?);
                }
                Some(BlockValue::Fixed(items))
            }
            Expr::Macro(m) if top && m.mac.path.is_ident("vec") => {
                let parser = syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated;
                let Ok(elems) = m.mac.parse_body_with(parser) else {
                    self.cx.error(
                        m.span(),
                        "return a list of arrays as `vec![a, b, ..]`, one element per output (the `vec![x; n]` form is not supported)",
                    );
                    return None;
                };
                let mut items = Vec::new();
                for el in &elems {
                    items.push(self.expr(el)?);
                }
                Some(BlockValue::List(items))
            }
            _ => self.expr(e).map(BlockValue::Single),
        }
    }

    /// Lowers a branch; its value (if wanted) becomes a variable.
    pub(super) fn branch_block(&mut self, b: &syn::Block, want_value: bool) -> Option<VarId> {
        if !want_value {
            // A statement: the block's own value (if any) is discarded.
            self.scopes.push(HashMap::new());
            for stmt in &b.stmts {
                match stmt {
                    syn::Stmt::Local(local) => self.local(local),
                    syn::Stmt::Expr(e, _) => self.statement_expr(e),
                    syn::Stmt::Item(it) => self.cx.error(
                        it.span(),
                        "items cannot be declared inside a differentiable function",
                    ),
                    syn::Stmt::Macro(m) => self.cx.error(
                        m.span(),
                        "statement macros are not supported in differentiable functions",
                    ),
                }
            }
            self.scopes.pop();
            return None;
        }
        match self.block(b, false)? {
            BlockValue::Single(op) => Some(self.materialize("__branch", op)),
            BlockValue::Tuple(_) | BlockValue::List(_) | BlockValue::Fixed(_) => None,
        }
    }
}

impl Lowerer<'_> {
    /// Whether `pat` binds no name of a function this body calls (or
    /// transforms, or of the function itself); reports each that it does.
    /// A `#[differentiable]` function is a constant, so `let loss =
    /// loss(w)` would be a pattern matching against it, not a new
    /// variable, and rustc's error would name generated types.
    fn shadows_no_function(&mut self, pat: &Pat) -> bool {
        let mut idents = Vec::new();
        pattern_idents(pat, &mut idents);
        let mut ok = true;
        for id in idents {
            let name = id.to_string();
            if self.callees.contains(&name) || (!self.f.method && *id == self.f.ident) {
                self.cx.error(
                    id.span(),
                    format!(
                        "`{name}` names a function this body uses; a #[differentiable] function is a \
                         constant (`const {name}`), so `let {name} = ..` would be a pattern matching \
                         against it, not a new variable: give the variable another name, e.g. \
                         `let {name}_value = ..`"
                    ),
                );
                ok = false;
            }
        }
        ok
    }
}

/// The identifiers a `let` pattern binds (names and tuple elements).
fn pattern_idents<'p>(pat: &'p Pat, out: &mut Vec<&'p syn::Ident>) {
    match pat {
        Pat::Ident(pi) => out.push(&pi.ident),
        Pat::Type(pt) => pattern_idents(&pt.pat, out),
        Pat::Tuple(t) => t.elems.iter().for_each(|p| pattern_idents(p, out)),
        Pat::Paren(p) => pattern_idents(&p.pat, out),
        _ => {}
    }
}

/// The names of the functions `block` calls by a bare name (`loss(w)`) or
/// passes to a transform (`nabla::grad(loss)`): local variables must not
/// take them (see [`Lowerer::shadows_no_function`]).
pub(super) fn callees(block: &syn::Block) -> std::collections::HashSet<String> {
    struct Calls(std::collections::HashSet<String>);
    impl<'a> syn::visit::Visit<'a> for Calls {
        fn visit_expr_call(&mut self, c: &'a syn::ExprCall) {
            if let Expr::Path(p) = &*c.func {
                if let Some(id) = p.path.get_ident() {
                    self.0.insert(id.to_string());
                }
                let transform = p.path.segments.last().is_some_and(|s| {
                    matches!(
                        s.ident.to_string().as_str(),
                        "grad"
                            | "value_and_grad"
                            | "vjp"
                            | "jvp"
                            | "vmap"
                            | "jacfwd"
                            | "jacrev"
                            | "hessian"
                            | "checkpoint"
                    )
                });
                for a in &c.args {
                    if let Expr::Path(a) = a
                        && let Some(id) = a.path.get_ident()
                        && transform
                    {
                        // `nabla::grad(loss)`, `nabla::checkpoint(step)`.
                        self.0.insert(id.to_string());
                    }
                }
            }
            syn::visit::visit_expr_call(self, c);
        }
    }
    let mut v = Calls(Default::default());
    syn::visit::Visit::visit_block(&mut v, block);
    v.0
}
