//! Calls: methods and `nabla::` functions in the op table become
//! primitives; composites, constants and static queries have their own
//! forms; any other call that receives a value or a tree is a call of a
//! differentiable function (`nabla::checkpoint(f)(..)` too).

use super::{Lowerer, Operand, strip};
use crate::ir::{CallArg, Callee, Kind, Stmt, VarId};
use crate::optable::{self, OpSpec};
use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::Expr;
use syn::spanned::Spanned;

impl Lowerer<'_> {
    /// `recv.name(args..)`: on a static receiver an ordinary call; on a
    /// value a clone, a static query, a constant, a composite, `item` or an
    /// operation of the table.
    pub(super) fn method(&mut self, m: &syn::ExprMethodCall) -> Option<Operand> {
        if self.tree_root(&m.receiver).is_some()
            && let Some(o) = self.tree_method(m)
        {
            return o;
        }
        let recv = self.expr(&m.receiver)?;
        let name = m.method.to_string();
        let span = m.method.span();
        let Some(v) = self.value_var(&recv) else {
            // A static receiver: an ordinary method call on static values.
            let rt = self.tok(&recv);
            let mut args = Vec::new();
            for a in &m.args {
                args.push(self.static_expr(a)?);
            }
            let (method, turbo) = (&m.method, &m.turbofish);
            return Some(Operand::Tok(quote!((#rt).#method #turbo (#(#args),*))));
        };
        let krate = self.f.krate.clone();
        let ident = m.method.clone();
        let vt = self.f.val(v);
        if name == "clone" && m.args.is_empty() {
            return Some(recv);
        }
        if optable::static_query(&name) {
            let q = match name.as_str() {
                "shape" | "shape_vec" => quote!(#krate::Value::shape_vec(#vt)),
                "ndim" => quote!(#krate::Value::ndim(#vt)),
                "dtype" => quote!(#krate::ArrayValue::dtype(#vt)),
                "device" => quote!(#krate::ArrayValue::device(#vt)),
                _ => quote!(#krate::Value::shape_vec(#vt).iter().product::<usize>()),
            };
            return Some(Operand::Tok(q));
        }
        if optable::constant_method(&name) {
            let e = match name.as_str() {
                "stop_gradient" | "detach" => quote!(#krate::Value::stop_gradient(#vt)),
                "full_like" => {
                    let [a] = m.args.iter().collect::<Vec<_>>()[..] else {
                        self.cx
                            .error(m.span(), "full_like takes one argument, the fill value");
                        return None;
                    };
                    let a = self.static_expr(a)?;
                    quote!(#krate::Value::full_like(#vt, (#a) as f64))
                }
                "zeros_like" => quote!(#krate::Value::zeros_like(#vt)),
                _ => quote!(#krate::Value::ones_like(#vt)),
            };
            return Some(self.constant(e));
        }
        if optable::composite_method(&name) {
            let path: syn::Path = match syn::parse2(quote!(#krate::#ident)) {
                Ok(p) => p,
                Err(e) => {
                    self.cx.error(span, e);
                    return None;
                }
            };
            let mut lowered = vec![Operand::Var(v)];
            for a in &m.args {
                lowered.push(Operand::Tok(self.static_expr(a)?));
            }
            let spans = std::iter::once(m.receiver.span())
                .chain(m.args.iter().map(|a| a.span()))
                .collect();
            let outs = self.emit_call(&path, lowered, spans, 1, m.span());
            return Some(Operand::Var(outs[0]));
        }
        if name == "item" && m.args.is_empty() {
            // A static f64 read from the data (no derivative): usable in
            // conditions; the branch taken is recorded for the reverse sweep.
            return Some(Operand::Tok(quote!(#krate::Value::item_f64(#vt))));
        }
        if name == "log" && self.f.tier != crate::ir::Tier::Array {
            // On a float, `log` is Rust's own logarithm to a base.
            self.cx.error(
                span,
                "on `f64`/`f32`, `x.log(base)` is Rust's logarithm to a given base; write `x.ln()` for the natural logarithm (and `x.ln() / base.ln()` for another base)",
            );
            return None;
        }
        let Some(op) = optable::lookup(&name) else {
            let hint = optable::suggestion(&name)
                .map(|s| format!("did you mean `{s}`? "))
                .unwrap_or_default();
            self.cx.error(
                span,
                format!(
                    "`{name}` is not an operation Nabla can differentiate; {hint}the operations are the \
                     elementwise, reduction, shape and matmul methods of `Value`/`ArrayValue` and their \
                     `nabla::` functions (the op registry, `nabla-ops`); or call a #[differentiable] function"
                ),
            );
            return None;
        };
        let args: Vec<&Expr> = m.args.iter().collect();
        self.apply_op(op, Some(v), &args, m.span(), &name)
    }

    /// A method on a tree path: `self.blocks.len()` (and `is_empty`,
    /// `is_some`, `is_none`) reads the skeleton; a method that is not an
    /// operation of the table (`self.attn.forward(&x)`) calls the part's
    /// `#[differentiable]` method. `None` for operations on a leaf
    /// (`p.w.matmul(x)`), which lower as usual.
    fn tree_method(&mut self, m: &syn::ExprMethodCall) -> Option<Option<Operand>> {
        let name = m.method.to_string();
        let method = &m.method;
        if matches!(name.as_str(), "len" | "is_empty" | "is_some" | "is_none") && m.args.is_empty()
        {
            return Some(self.skeleton_read(&m.receiver, |s| quote!((#s).#method())));
        }
        // A list's own methods (`for w in ws.iter()`, `ws.to_vec()`) keep
        // their lowering.
        if matches!(
            name.as_str(),
            "iter" | "into_iter" | "to_vec" | "to_owned" | "first" | "last" | "get" | "as_slice"
        ) || name == "clone"
            || optable::static_query(&name)
            || optable::constant_method(&name)
            || optable::composite_method(&name)
            || name == "item"
            || optable::lookup(&name).is_some()
        {
            return None;
        }
        let Some(part) = self.part(&m.receiver) else {
            return Some(None);
        };
        let mut args = vec![part];
        for a in &m.args {
            let o = match self.expr(a) {
                Some(o) => o,
                None => return Some(None),
            };
            args.push(self.call_arg(o));
        }
        let spans = std::iter::once(m.receiver.span())
            .chain(m.args.iter().map(|a| a.span()))
            .collect();
        let outs = self.emit_args(
            Callee::Method(method.clone()),
            &name,
            args,
            spans,
            1,
            m.span(),
        );
        Some(Some(Operand::Var(outs[0])))
    }

    /// An operation of the table applied to its value inputs (`first`, the
    /// receiver, then `args`) and static parameters.
    fn apply_op(
        &mut self,
        op: &'static OpSpec,
        first: Option<VarId>,
        args: &[&Expr],
        span: Span,
        name: &str,
    ) -> Option<Operand> {
        if op.variadic {
            return self.variadic_op(op, args, span, name);
        }
        let mut leading = Vec::new();
        let args = if first.is_none() && op.leading > 0 && args.len() >= op.leading {
            for a in &args[..op.leading] {
                leading.push(self.static_expr(a)?);
            }
            &args[op.leading..]
        } else {
            args
        };
        let mut inputs: Vec<VarId> = first.into_iter().collect();
        let want = op.values + op.params;
        if inputs.len() + args.len() != want {
            let got = inputs.len() + args.len();
            self.cx.error(span, format!("`{name}` takes {} value argument(s) and {} static parameter(s), found {got} argument(s) in all", op.values, op.params));
            return None;
        }
        let mut params = Vec::new();
        for a in args {
            if inputs.len() < op.values {
                let o = self.expr(a)?;
                match self.value_var(&o) {
                    Some(v) => inputs.push(v),
                    None => {
                        self.cx.error(a.span(), format!("`{name}` needs a differentiable value here (an Array or float that depends on the inputs); found a static value"));
                        return None;
                    }
                }
            } else {
                params.push(self.static_expr(a)?);
            }
        }
        params.extend(leading);
        Some(self.prim(op, inputs, params, span))
    }

    /// `concat(&[a, b, ..], axis)` / `stack(..)`: the values are listed in
    /// an array literal.
    fn variadic_op(
        &mut self,
        op: &'static OpSpec,
        args: &[&Expr],
        span: Span,
        name: &str,
    ) -> Option<Operand> {
        let list = match args.first().map(|a| strip(a)) {
            Some(Expr::Reference(r)) => match strip(&r.expr) {
                Expr::Array(a) => Some(a),
                _ => None,
            },
            Some(Expr::Array(a)) => Some(a),
            _ => None,
        };
        let (Some(list), true) = (list, args.len() == 1 + op.params) else {
            self.cx.error(span, format!("`{name}` in a differentiable function takes the values as an array literal, e.g. `{name}(&[a, b], axis)`"));
            return None;
        };
        let mut inputs = Vec::new();
        for e in &list.elems {
            let o = self.expr(e)?;
            match self.value_var(&o) {
                Some(v) => inputs.push(v),
                None => {
                    self.cx.error(
                        e.span(),
                        format!("every element given to `{name}` must be a differentiable value"),
                    );
                    return None;
                }
            }
        }
        let mut params = Vec::new();
        for a in &args[1..] {
            params.push(self.static_expr(a)?);
        }
        Some(self.prim(op, inputs, params, span))
    }

    /// Whether `path` names something in the facade (`nabla::..`, or the
    /// crate named by the `crate` option: `crate::..` inside the runtime).
    pub(super) fn is_nabla_path(&self, path: &syn::Path) -> bool {
        let first = path.segments.first().map(|s| s.ident.to_string());
        // The crate option's name (`crate = nabla_runtime`) counts too.
        let krate = self.f.krate.to_string().replace(' ', "");
        let named = krate.trim_start_matches("::");
        path.segments.len() >= 2
            && (first.as_deref() == Some("nabla") || first.as_deref() == Some(named))
    }

    /// `f(args..)`: `nabla::checkpoint(f)(..)`, `nabla::stop_gradient`, an
    /// operation of the table, a call of a differentiable function (when it
    /// receives a value or a tree), or an ordinary call on statics.
    pub(super) fn call(&mut self, c: &syn::ExprCall) -> Option<Operand> {
        // `nabla::checkpoint(f)(args..)`: a checkpointed call of `f`.
        if let Expr::Call(inner) = strip(&c.func)
            && let Expr::Path(ip) = strip(&inner.func)
            && self.is_nabla_path(&ip.path)
            && ip
                .path
                .segments
                .last()
                .is_some_and(|s| s.ident == "checkpoint")
        {
            let [Expr::Path(fp)] = inner.args.iter().map(strip).collect::<Vec<_>>()[..] else {
                self.cx.error(inner.span(), "checkpoint takes the name of a #[differentiable] function: `nabla::checkpoint(f)(args..)`");
                return None;
            };
            let mut lowered = Vec::new();
            for a in &c.args {
                lowered.push(self.expr(a)?);
            }
            self.checkpoint_next = true;
            let outs = self.emit_call(&fp.path, lowered, arg_spans(&c.args), 1, c.span());
            return Some(Operand::Var(outs[0]));
        }
        // `nabla::vmap(f)(..)`, `grad!(f, argnums = 1)(..)`: a transformed
        // function value.
        if let Some(outs) = self.transform_call(c, 1) {
            return outs.into_iter().next();
        }
        let Expr::Path(fp) = strip(&c.func) else {
            self.cx.error(
                c.func.span(),
                "only calls of named functions and of transformed functions (`nabla::grad(f)(x)`, `nabla::vmap(f)(xs)`) are supported in differentiable functions",
            );
            return None;
        };
        let path = &fp.path;
        let last = path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default();
        if self.is_nabla_path(path) {
            if last == "stop_gradient" {
                let [a] = c.args.iter().collect::<Vec<_>>()[..] else {
                    self.cx.error(c.span(), "stop_gradient takes one argument");
                    return None;
                };
                let o = self.expr(a)?;
                return match self.value_var(&o) {
                    Some(v) => {
                        let (krate, vt) = (self.f.krate.clone(), self.f.val(v));
                        Some(self.constant(quote!(#krate::Value::stop_gradient(#vt))))
                    }
                    None => Some(o),
                };
            }
            if let Some(op) = optable::lookup(&last) {
                let args: Vec<&Expr> = c.args.iter().collect();
                return self.apply_op(op, None, &args, c.span(), &last);
            }
        }
        // Another function: differentiable if it receives a value.
        let mut lowered = Vec::new();
        for a in &c.args {
            lowered.push(self.expr(a)?);
        }
        if lowered.iter().any(|o| self.is_value(o) || self.is_tree(o)) {
            let outs = self.emit_call(path, lowered, arg_spans(&c.args), 1, c.span());
            return Some(Operand::Var(outs[0]));
        }
        let args: Vec<TokenStream> = lowered.iter().map(|o| self.tok(o)).collect();
        Some(Operand::Tok(quote!(#fp(#(#args),*))))
    }

    /// A call of a differentiable function with `n` outputs, if `c` is one.
    pub(super) fn diff_call(&mut self, c: &syn::ExprCall, n: usize) -> Option<Vec<VarId>> {
        if let Some(outs) = self.transform_call(c, n) {
            return match outs
                .iter()
                .map(|o| self.value_var(o))
                .collect::<Option<Vec<_>>>()
            {
                Some(vs) => Some(vs),
                None => {
                    self.cx.error(
                        c.span(),
                        "destructuring a static call: bind the tuple first, then its fields",
                    );
                    None
                }
            };
        }
        let Expr::Path(fp) = strip(&c.func) else {
            return None;
        };
        // `nabla::` operations of the table have one output; any other
        // `nabla::` function (`nabla::linalg::slogdet`) is a differentiable
        // function like the user's own.
        let op = |s: &syn::PathSegment| {
            let name = s.ident.to_string();
            optable::lookup(&name).is_some() || name == "stop_gradient"
        };
        let nabla = self.is_nabla_path(&fp.path);
        if nabla && fp.path.segments.last().is_none_or(op) {
            return None;
        }
        let mut lowered = Vec::new();
        for a in &c.args {
            lowered.push(self.expr(a)?);
        }
        if nabla && !lowered.iter().any(|o| self.is_value(o)) {
            // A static helper of the library (`shape plans`): a static
            // tuple, lowered by the caller (static arguments lower to
            // tokens, with no statements).
            return None;
        }
        if !lowered.iter().any(|o| self.is_value(o)) {
            self.cx.error(
                c.span(),
                "destructuring a static call: bind the tuple first, then its fields",
            );
            return None;
        }
        Some(self.emit_call(&fp.path, lowered, arg_spans(&c.args), n, c.span()))
    }

    /// Emits a call of a differentiable function with `n` outputs;
    /// `arg_spans` are its arguments' spans.
    fn emit_call(
        &mut self,
        path: &syn::Path,
        args: Vec<Operand>,
        arg_spans: Vec<Span>,
        n: usize,
        span: Span,
    ) -> Vec<VarId> {
        if path.get_ident().is_some_and(|i| *i == self.f.ident) {
            self.cx.error(
                span,
                "a differentiable function cannot call itself (its generated variants would nest without end); write the recursion as a loop with carried values (`for`/`while`, with `break` if needed)",
            );
        }
        let base = path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_else(|| "call".into());
        let args = args.into_iter().map(|o| self.call_arg(o)).collect();
        self.emit_args(Callee::Fn(path.clone()), &base, args, arg_spans, n, span)
    }

    /// An operand as a call's argument.
    fn call_arg(&self, o: Operand) -> CallArg {
        match o {
            Operand::Var(v) if self.kind(v) != Kind::Static => CallArg::Value(v),
            o => CallArg::Static(self.tok(&o)),
        }
    }

    /// Emits a call of `callee` with `n` outputs named after `base`.
    pub(super) fn emit_callee(
        &mut self,
        callee: Callee,
        base: &str,
        args: Vec<Operand>,
        n: usize,
        span: Span,
    ) -> Vec<VarId> {
        let args = args.into_iter().map(|o| self.call_arg(o)).collect();
        self.emit_args(callee, base, args, Vec::new(), n, span)
    }

    /// Emits a call of `callee` on lowered arguments.
    fn emit_args(
        &mut self,
        callee: Callee,
        base: &str,
        args: Vec<CallArg>,
        arg_spans: Vec<Span>,
        n: usize,
        span: Span,
    ) -> Vec<VarId> {
        let outs: Vec<VarId> = (0..n)
            .map(|_| self.fresh(&format!("__{base}"), Kind::Value))
            .collect();
        let id = self.id();
        let checkpoint = std::mem::take(&mut self.checkpoint_next);
        self.f.body.push(Stmt::Call {
            checkpoint,
            region_tail: false,
            outs: outs.clone(),
            callee,
            args,
            arg_spans,
            span,
            id,
        });
        outs
    }
}

/// The spans of a call's arguments.
fn arg_spans(args: &syn::punctuated::Punctuated<Expr, syn::Token![,]>) -> Vec<Span> {
    args.iter().map(|a| a.span()).collect()
}
