//! Transforms called inside differentiable code: `nabla::vmap(f)(z)`,
//! `nabla::grad(f)(x)`, `jacfwd!(g, argnums = 1)(x, a)`, nested to any
//! depth, `let (y, y_dot) = nabla::jvp(g)((x,), (t,))` and
//! `let (y, g) = nabla::value_and_grad(f)(x)`, and a function planned over
//! a mesh, `dist::auto(f, mesh)(x)`. The call becomes a
//! [`Stmt::Call`] of a function value ([`Callee::Value`] or
//! [`Callee::Jvp`]; `value_and_grad` is a call of `f` and one of
//! `grad(f)`): generated code runs the value's composable programs at the
//! enclosing function's value type, so the result is differentiable again
//! (a gradient penalty under `grad`, `sum(vmap(f)(z))` under `vmap`).
//!
//! [`Stmt::Call`]: crate::ir::Stmt::Call

use super::{Lowerer, Operand, strip};
use crate::ir::{Callee, Kind};
use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::Expr;
use syn::spanned::Spanned;

/// The transforms whose results differentiable code can call, and how
/// many values each call gives.
const TRANSFORMS: [(&str, usize); 8] = [
    ("auto", 1),
    ("grad", 1),
    ("vmap", 1),
    ("jacfwd", 1),
    ("jacrev", 1),
    ("hessian", 1),
    ("jvp", 2),
    ("value_and_grad", 2),
];

impl Lowerer<'_> {
    /// A transform's name, if `func` is `nabla::name(f)`, `name(f)`,
    /// `name!(..)` or `nabla::name!(..)`, or a function planned over a
    /// mesh: `dist::auto(f, mesh)` (or `nabla::dist::auto`).
    fn transform_name(&self, func: &Expr) -> Option<String> {
        if let Expr::Call(c) = strip(func)
            && c.args.len() == 2
            && let Expr::Path(p) = strip(&c.func)
            && p.qself.is_none()
        {
            let names: Vec<String> = p
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            let on_mesh = match names.iter().map(String::as_str).collect::<Vec<_>>()[..] {
                ["dist", "auto"] | ["nabla", "dist", "auto"] => true,
                [_, "dist", "auto"] => self.is_nabla_path(&p.path),
                _ => false,
            };
            return on_mesh.then(|| names[names.len() - 1].clone());
        }
        let path = match strip(func) {
            Expr::Call(c) if c.args.len() == 1 => match strip(&c.func) {
                Expr::Path(p) if p.qself.is_none() => &p.path,
                _ => return None,
            },
            Expr::Macro(m) => &m.mac.path,
            _ => return None,
        };
        let ok = path.segments.len() == 1 || (path.segments.len() == 2 && self.is_nabla_path(path));
        ok.then(|| path.segments.last().map(|s| s.ident.to_string()))?
    }

    /// `g(args..)` where `g` is a transformed function value, lowered to a
    /// call with `n` outputs; `None` if `func` is not one. After an error
    /// the outputs are placeholders, so nothing more is reported.
    pub(super) fn transform_call(&mut self, c: &syn::ExprCall, n: usize) -> Option<Vec<Operand>> {
        let name = self.transform_name(&c.func)?;
        if name == "vjp" {
            self.cx.error(
                c.func.span(),
                "`vjp` returns a pullback, which differentiable code cannot hold; call `nabla::grad(f)(..)` for a gradient, or `nabla::jacrev(f)(..)` for the Jacobian",
            );
            return Some(self.placeholders(n));
        }
        let &(_, want) = TRANSFORMS.iter().find(|(t, _)| *t == name)?;
        if n != want {
            let msg = match name.as_str() {
                "jvp" => "bind both results of jvp: `let (y, y_dot) = nabla::jvp(g)((x,), (t,));`",
                "value_and_grad" => {
                    "bind both results of value_and_grad: `let (y, g) = nabla::value_and_grad(f)(x);`"
                }
                _ => "a transformed function returns one value here; bind it with `let y = ..;`",
            };
            self.cx.error(c.span(), msg);
            return Some(self.placeholders(n));
        }
        let Some(lowered) = self.transform_args(c, &name) else {
            return Some(self.placeholders(n));
        };
        if !lowered.iter().any(|o| self.is_value(o)) {
            if n == 1 {
                // Nothing differentiable flows in: an ordinary call.
                let args: Vec<TokenStream> = lowered.iter().map(|o| self.tok(o)).collect();
                let func = &c.func;
                return Some(vec![Operand::Tok(quote!(#func(#(#args),*)))]);
            }
            self.cx.error(
                c.span(),
                format!("nothing differentiable flows into this {name}; compute it outside the differentiable function and pass the result in"),
            );
            return Some(self.placeholders(n));
        }
        let span = c.span();
        let outs = match name.as_str() {
            "jvp" => self.emit_callee(Callee::Jvp(inner(&c.func)), &name, lowered, 2, span),
            "value_and_grad" => {
                let Some(grad) = self.grad_of(&c.func) else {
                    return Some(self.placeholders(n));
                };
                let mut outs = self.emit_callee(
                    Callee::Value(inner(&c.func)),
                    "value",
                    lowered.clone(),
                    1,
                    span,
                );
                outs.extend(self.emit_callee(Callee::Value(grad), "grad", lowered, 1, span));
                outs
            }
            _ => self.emit_callee(
                Callee::Value(c.func.to_token_stream()),
                &name,
                lowered,
                1,
                span,
            ),
        };
        Some(outs.into_iter().map(Operand::Var).collect())
    }

    /// `nabla::jvp(g)(..).1`, `value_and_grad(f)(x).0`: one result of a
    /// transform call with two; `None` if `base` is not one.
    pub(super) fn transform_field(&mut self, base: &Expr, member: &syn::Member) -> Option<Operand> {
        let Expr::Call(c) = strip(base) else {
            return None;
        };
        let name = self.transform_name(&c.func)?;
        if !matches!(name.as_str(), "jvp" | "value_and_grad") {
            return None;
        }
        let mut outs = self.transform_call(c, 2)?;
        match member {
            syn::Member::Unnamed(i) if i.index < 2 => Some(outs.swap_remove(i.index as usize)),
            _ => {
                self.cx.error(
                    member.span(),
                    format!("{name} gives two results: `.0` or `.1`"),
                );
                Some(outs.swap_remove(0))
            }
        }
    }

    /// The arguments, lowered: `jvp`'s primals then its tangents.
    fn transform_args(&mut self, c: &syn::ExprCall, name: &str) -> Option<Vec<Operand>> {
        let exprs: Vec<&Expr> = if name == "jvp" {
            match c.args.iter().map(strip).collect::<Vec<_>>()[..] {
                [Expr::Tuple(p), Expr::Tuple(t)] if p.elems.len() == t.elems.len() => {
                    p.elems.iter().chain(&t.elems).collect()
                }
                _ => {
                    self.cx.error(
                        c.span(),
                        "jvp takes a tuple of primals and a tuple of tangents of the same length: `nabla::jvp(g)((x,), (t,))`",
                    );
                    return None;
                }
            }
        } else {
            c.args.iter().collect()
        };
        let mut lowered = Vec::new();
        for e in exprs {
            lowered.push(self.expr(e)?);
        }
        Some(lowered)
    }

    /// `grad(f)` for `value_and_grad(f)`: the function form, or `grad!`
    /// with the same options (`has_aux` is not supported here).
    fn grad_of(&mut self, func: &Expr) -> Option<TokenStream> {
        let krate = self.f.krate.clone();
        match strip(func) {
            Expr::Macro(m) => {
                let tokens = &m.mac.tokens;
                if tokens.to_string().contains("has_aux") {
                    self.cx.error(
                        m.span(),
                        "value_and_grad with has_aux is not supported inside differentiable code; return the aux value from a function called directly",
                    );
                    return None;
                }
                Some(quote!(#krate::grad!(#tokens)))
            }
            _ => {
                let g = inner(func);
                Some(quote!(#krate::grad(#g)))
            }
        }
    }

    /// Stand-ins for the results of a call that was reported as an error.
    fn placeholders(&mut self, n: usize) -> Vec<Operand> {
        (0..n)
            .map(|_| {
                let v = self.fresh("__error", Kind::Value);
                self.placeholders.insert(v);
                Operand::Var(v)
            })
            .collect()
    }
}

/// The function a transform is applied to: `f` in `jvp(f)` or `jvp!(f)`,
/// and in `value_and_grad!(f, argnums = 1)`.
fn inner(func: &Expr) -> TokenStream {
    match strip(func) {
        Expr::Call(c) => c.args.to_token_stream(),
        Expr::Macro(m) => m
            .mac
            .tokens
            .clone()
            .into_iter()
            .take_while(|t| !matches!(t, proc_macro2::TokenTree::Punct(p) if p.as_char() == ','))
            .collect(),
        e => e.to_token_stream(),
    }
}
