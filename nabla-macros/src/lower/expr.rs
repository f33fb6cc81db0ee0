//! Expressions: literals, paths, operators, indexing, fields, casts,
//! ranges and arrays, with a spanned error for each unsupported form, and
//! the four arithmetic operators on values and statics.

use super::{BlockValue, Lowerer, Operand, strip};
use crate::ir::{Kind, Stmt, VarId};
use crate::optable::{self, OpSpec};
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{BinOp, Expr, UnOp};

impl Lowerer<'_> {
    /// Emits a primitive; its result is a fresh value.
    pub(super) fn prim(
        &mut self,
        op: &'static OpSpec,
        inputs: Vec<VarId>,
        params: Vec<TokenStream>,
        span: Span,
    ) -> Operand {
        let hint = format!("__{}", op.rule);
        let out = self.fresh(&hint, Kind::Value);
        self.f.body.push(Stmt::Prim {
            out,
            op,
            inputs,
            params,
            span,
        });
        Operand::Var(out)
    }

    /// Emits a value with no derivative (`zeros_like`, `stop_gradient`, ..).
    pub(super) fn constant(&mut self, expr: TokenStream) -> Operand {
        let out = self.fresh("__const", Kind::Value);
        self.f.body.push(Stmt::Constant { out, expr });
        Operand::Var(out)
    }

    /// Lowers an expression: its value is a variable or static tokens;
    /// `None` after reporting an error.
    pub(super) fn expr(&mut self, e: &Expr) -> Option<Operand> {
        match e {
            Expr::Lit(l) => Some(Operand::Tok(l.to_token_stream())),
            Expr::Path(_) if self.tree_alias(e).is_some() => self.leaf(e),
            Expr::Path(p) => {
                if let Some(id) = p.path.get_ident()
                    && let Some(v) = self.lookup(&id.to_string())
                {
                    return Some(Operand::Var(v));
                }
                Some(Operand::Tok(p.to_token_stream()))
            }
            Expr::Paren(p) => self.expr(&p.expr),
            Expr::Group(g) => self.expr(&g.expr),
            Expr::Reference(r) => self.reference(r),
            Expr::Unary(u) => self.unary(u),
            Expr::Binary(b) => self.binary(b),
            Expr::MethodCall(m) => self.method(m),
            Expr::Call(c) => self.call(c),
            Expr::Block(b) if b.label.is_none() => match self.block(&b.block, false)? {
                BlockValue::Single(o) => Some(o),
                BlockValue::Tuple(_) | BlockValue::List(_) | BlockValue::Fixed(_) => None,
            },
            Expr::Index(_) | Expr::Field(_) if self.tree_root(e).is_some() => self.leaf(e),
            Expr::Index(ix) => {
                let base = self.expr(&ix.expr)?;
                let idx = self.expr(&ix.index)?;
                if self.is_value(&base) || self.is_value(&idx) {
                    self.cx.error(ix.span(), "indexing a differentiable value is not supported yet; use x.slice_axis(axis, a..b) or x.index_select(axis, &idx)");
                    return None;
                }
                let (bt, it) = (self.tok(&base), self.tok(&idx));
                Some(Operand::Tok(quote!((#bt)[#it])))
            }
            Expr::Field(fe) => {
                if let Some(o) = self.transform_field(&fe.base, &fe.member) {
                    return Some(o);
                }
                let base = self.expr(&fe.base)?;
                if let Operand::Var(v) = base
                    && self.placeholders.contains(&v)
                {
                    return Some(base);
                }
                if self.is_value(&base) {
                    self.cx.error(
                        fe.span(),
                        "field access on differentiable values is not supported",
                    );
                    return None;
                }
                let (bt, member) = (self.tok(&base), &fe.member);
                Some(Operand::Tok(quote!((#bt).#member)))
            }
            Expr::Cast(c) => {
                let inner = self.expr(&c.expr)?;
                if self.is_value(&inner) {
                    self.cx.error(c.span(), "`as` casts of differentiable values are not supported; use .cast(DType::..) outside, or keep one float type");
                    return None;
                }
                let (t, ty) = (self.tok(&inner), &c.ty);
                Some(Operand::Tok(quote!((#t) as #ty)))
            }
            Expr::Macro(m) => Some(Operand::Tok(self.rename_tokens(m.to_token_stream()))),
            Expr::Range(r) => {
                let start = match &r.start {
                    Some(s) => Some(self.static_expr(s)?),
                    None => None,
                };
                let end = match &r.end {
                    Some(s) => Some(self.static_expr(s)?),
                    None => None,
                };
                let lim = &r.limits;
                Some(Operand::Tok(quote!(#start #lim #end)))
            }
            Expr::Array(a) => {
                let mut items = Vec::new();
                for e in &a.elems {
                    items.push(self.static_expr(e)?);
                }
                Some(Operand::Tok(quote!([#(#items),*])))
            }
            Expr::Repeat(r) => {
                let v = self.static_expr(&r.expr)?;
                let n = self.static_expr(&r.len)?;
                Some(Operand::Tok(quote!([#v; #n])))
            }
            Expr::If(i) => self.lower_if(i, true),
            Expr::Match(m) => self.lower_match(m, true),
            Expr::ForLoop(f) => self.lower_for(f),
            Expr::While(w) => self.lower_while(w),
            other => {
                self.unsupported(other);
                None
            }
        }
    }

    /// `&x`: a value stays the value (generated code passes values by
    /// reference); a static keeps its `&`.
    fn reference(&mut self, r: &syn::ExprReference) -> Option<Operand> {
        let inner = self.expr(&r.expr)?;
        if self.is_value(&inner) {
            if r.mutability.is_some() {
                self.cx.error(r.span(), "`&mut` to a differentiable value is not supported; values are immutable: compute a new one");
                return None;
            }
            return Some(inner);
        }
        let t = self.tok(&inner);
        let m = r.mutability;
        Some(Operand::Tok(quote!(&#m #t)))
    }

    /// `-x` (`neg` on a value), `*x` (the value itself), `!b` (statics
    /// only).
    fn unary(&mut self, u: &syn::ExprUnary) -> Option<Operand> {
        if matches!(u.op, UnOp::Deref(_))
            && matches!(strip(&u.expr), Expr::Field(_) | Expr::Index(_))
            && self.tree_root(&u.expr).is_some()
        {
            // `*self.eps`: a setting of a tree, static.
            return self.skeleton_read(&u.expr, |s| quote!(::core::clone::Clone::clone(&*(#s))));
        }
        let inner = self.expr(&u.expr)?;
        match (&u.op, self.value_var(&inner)) {
            (UnOp::Neg(_), Some(v)) => {
                Some(self.prim(optable::op("neg"), vec![v], vec![], u.span()))
            }
            (UnOp::Deref(_), Some(_)) => Some(inner),
            (_, Some(_)) => {
                self.cx
                    .error(u.span(), "`!` does not apply to differentiable values");
                None
            }
            (op, None) => {
                let t = self.tok(&inner);
                Some(Operand::Tok(quote!(#op (#t))))
            }
        }
    }

    /// A binary operator: arithmetic (see [`Self::arith`]), any operator on
    /// statics, or a comparison reading values' data.
    fn binary(&mut self, b: &syn::ExprBinary) -> Option<Operand> {
        let l = self.expr(&b.left)?;
        let r = self.expr(&b.right)?;
        match arith_op(&b.op) {
            Some(op) => self.arith(op, l, r, b.span()),
            None if !self.is_value(&l) && !self.is_value(&r) => {
                let (lt, rt, op) = (self.tok(&l), self.tok(&r), &b.op);
                Some(Operand::Tok(quote!((#lt) #op (#rt))))
            }
            None if is_comparison(&b.op) => {
                // A comparison reads the data: each value side is
                // its single element as a static f64 (no derivative).
                let krate = self.f.krate.clone();
                let side = |this: &Self, o: &Operand| match this.value_var(o) {
                    Some(v) => {
                        let id = this.f.val(v);
                        quote!(#krate::Value::item_f64(#id))
                    }
                    None => {
                        let t = this.tok(o);
                        quote!(((#t) as f64))
                    }
                };
                let (lt, rt, op) = (side(self, &l), side(self, &r), &b.op);
                Some(Operand::Tok(quote!((#lt) #op (#rt))))
            }
            None => {
                self.cx.error(b.span(), "this operator does not apply to differentiable values; compare them (`<`, `>`, ..) or use nabla::maximum / clip");
                None
            }
        }
    }

    /// Reports an expression outside the supported subset, saying what to
    /// write instead where there is an alternative.
    fn unsupported(&mut self, e: &Expr) {
        match e {
            Expr::Tuple(t) => {
                self.cx.error(t.span(), "tuples are only supported as the returned value or directly in `let (a, b) = (x, y)`");
            }
            Expr::Loop(l) => {
                self.cx.error(
                    l.loop_token.span(),
                    "`loop` in differentiable functions is not supported yet; use `while` with the exit test as its condition, or `for` over a range",
                );
            }
            Expr::Closure(c) => {
                self.cx.error(c.span(), "closures are not supported in differentiable functions; write a separate #[differentiable] fn and call it");
            }
            Expr::Unsafe(u) => {
                self.cx.error(u.unsafe_token.span(), "`unsafe` blocks cannot be differentiated; move the unsafe code into an ordinary function with static arguments");
            }
            Expr::Async(a) => {
                self.cx.error(
                    a.async_token.span(),
                    "`async` blocks cannot be differentiated",
                );
            }
            Expr::Await(a) => {
                self.cx.error(a.span(), "`.await` cannot be differentiated");
            }
            Expr::Try(t) => {
                self.cx.error(
                    t.span(),
                    "`?` is not supported in differentiable functions; handle errors outside",
                );
            }
            Expr::Return(r) => {
                self.cx
                    .error(r.span(), "`return` is only supported as the last statement");
            }
            other => {
                self.cx.error(
                    other.span(),
                    "this expression is not supported in a differentiable function",
                );
            }
        }
    }

    /// `l op r`: a primitive when a side is a value, static tokens
    /// otherwise. A static side known to be a number becomes the `f64`
    /// parameter of `add_scalar` / `mul_scalar`; any other static (it may
    /// be an array: a `#[nondiff]` label, `Array::eye(..)`) goes through
    /// `add_const` / `mul_const`, which accept numbers and arrays alike.
    pub(super) fn arith(
        &mut self,
        op: Arith,
        l: Operand,
        r: Operand,
        span: Span,
    ) -> Option<Operand> {
        let (lv, rv) = (self.value_var(&l), self.value_var(&r));
        let name = op.rule();
        match (lv, rv) {
            (Some(a), Some(b)) => Some(self.prim(optable::op(name), vec![a, b], vec![], span)),
            (Some(a), None) if !self.is_number(&r) => {
                let c = self.tok(&r);
                let c = quote_spanned!(span=> &(#c));
                let (rule, flag) = match op {
                    Arith::Add => ("add_const", false),
                    Arith::Sub => ("add_const", true),
                    Arith::Mul => ("mul_const", false),
                    Arith::Div => ("mul_const", true),
                };
                Some(self.prim(optable::op(rule), vec![a], vec![c, quote!(#flag)], span))
            }
            (Some(a), None) => {
                let c = self.tok(&r);
                let (rule, param) = match op {
                    Arith::Add => ("add_scalar", quote_spanned!(span=> (#c) as f64)),
                    Arith::Sub => ("add_scalar", quote_spanned!(span=> -((#c) as f64))),
                    Arith::Mul => ("mul_scalar", quote_spanned!(span=> (#c) as f64)),
                    Arith::Div => ("mul_scalar", quote_spanned!(span=> 1.0 / ((#c) as f64))),
                };
                Some(self.prim(optable::op(rule), vec![a], vec![param], span))
            }
            (None, Some(b)) => {
                let number = self.is_number(&l);
                let c = self.tok(&l);
                let (add, mul, params) = if number {
                    (
                        "add_scalar",
                        "mul_scalar",
                        vec![quote_spanned!(span=> (#c) as f64)],
                    )
                } else {
                    (
                        "add_const",
                        "mul_const",
                        vec![quote_spanned!(span=> &(#c)), quote!(false)],
                    )
                };
                let b = match op {
                    Arith::Add | Arith::Mul => b,
                    Arith::Sub => {
                        let n = self.prim(optable::op("neg"), vec![b], vec![], span);
                        self.value_var(&n).expect("value")
                    }
                    Arith::Div => {
                        let inv = self.prim(optable::op("recip"), vec![b], vec![], span);
                        self.value_var(&inv).expect("value")
                    }
                };
                let rule = if matches!(op, Arith::Add | Arith::Sub) {
                    add
                } else {
                    mul
                };
                Some(self.prim(optable::op(rule), vec![b], params, span))
            }
            (None, None) => {
                let (lt, rt, sym) = (self.tok(&l), self.tok(&r), op.symbol());
                Some(Operand::Tok(quote!((#lt) #sym (#rt))))
            }
        }
    }

    /// Whether a static operand is certainly a number: always in a function
    /// of floats; in one of arrays, a literal, a cast to a number type,
    /// arithmetic and float methods of numbers, or a variable known to
    /// hold one.
    pub(super) fn is_number(&self, o: &Operand) -> bool {
        if self.f.tier != crate::ir::Tier::Array {
            return true;
        }
        match o {
            Operand::Var(v) => self.numeric.contains(v),
            Operand::Tok(t) => syn::parse2::<Expr>(t.clone()).is_ok_and(|e| self.number_expr(&e)),
        }
    }

    fn number_expr(&self, e: &Expr) -> bool {
        const FLOAT_METHODS: [&str; 16] = [
            "sqrt", "exp", "ln", "log10", "log2", "abs", "powi", "powf", "sin", "cos", "tan",
            "tanh", "recip", "min", "max", "item",
        ];
        match strip(e) {
            Expr::Lit(l) => matches!(l.lit, syn::Lit::Float(_) | syn::Lit::Int(_)),
            Expr::Unary(u) => matches!(u.op, syn::UnOp::Neg(_)) && self.number_expr(&u.expr),
            Expr::Cast(c) => super::signature::is_number_type(&c.ty),
            Expr::Binary(b) => {
                matches!(
                    b.op,
                    syn::BinOp::Add(_)
                        | syn::BinOp::Sub(_)
                        | syn::BinOp::Mul(_)
                        | syn::BinOp::Div(_)
                ) && self.number_expr(&b.left)
                    && self.number_expr(&b.right)
            }
            Expr::Path(p) => p.path.get_ident().is_some_and(|id| {
                self.f
                    .vars
                    .iter()
                    .enumerate()
                    .any(|(v, var)| var.ident == *id && self.numeric.contains(&v))
            }),
            Expr::MethodCall(m) => {
                let name = m.method.to_string();
                name == "item"
                    || (FLOAT_METHODS.contains(&name.as_str()) && self.number_expr(&m.receiver))
            }
            _ => false,
        }
    }
}

/// The four arithmetic operators.
#[derive(Clone, Copy)]
pub(super) enum Arith {
    Add,
    Sub,
    Mul,
    Div,
}

impl Arith {
    /// The rule of the operator on two values.
    fn rule(self) -> &'static str {
        match self {
            Arith::Add => "add",
            Arith::Sub => "sub",
            Arith::Mul => "mul",
            Arith::Div => "div",
        }
    }
    /// The operator on statics.
    fn symbol(self) -> TokenStream {
        match self {
            Arith::Add => quote!(+),
            Arith::Sub => quote!(-),
            Arith::Mul => quote!(*),
            Arith::Div => quote!(/),
        }
    }
}

/// The arithmetic operator `op` is, if any.
fn arith_op(op: &BinOp) -> Option<Arith> {
    match op {
        BinOp::Add(_) => Some(Arith::Add),
        BinOp::Sub(_) => Some(Arith::Sub),
        BinOp::Mul(_) => Some(Arith::Mul),
        BinOp::Div(_) => Some(Arith::Div),
        _ => None,
    }
}

/// Whether `op` compares.
fn is_comparison(op: &BinOp) -> bool {
    matches!(
        op,
        BinOp::Lt(_) | BinOp::Le(_) | BinOp::Gt(_) | BinOp::Ge(_) | BinOp::Eq(_) | BinOp::Ne(_)
    )
}

/// The arithmetic of a compound assignment (`+=`, ..), if `op` is one.
pub(super) fn compound(op: &BinOp) -> Option<Arith> {
    match op {
        BinOp::AddAssign(_) => Some(Arith::Add),
        BinOp::SubAssign(_) => Some(Arith::Sub),
        BinOp::MulAssign(_) => Some(Arith::Mul),
        BinOp::DivAssign(_) => Some(Arith::Div),
        _ => None,
    }
}
