//! Parsing: a `syn::ItemFn` into the A-normal-form IR ([`crate::ir`]).
//!
//! Expressions are flattened so every intermediate value gets a name;
//! `let mut` rebinding and compound assignment become fresh (SSA)
//! variables; references are dropped for values (the generated code passes
//! every value by reference). Anything outside the supported subset is a
//! spanned error saying what to write instead; errors are collected so they
//! all show at once.

use crate::ir::{
    CallArg, Carried, Function, Kind, Merge, Output, Param, ScalarTy, Stmt, Tier, Var, VarId,
};
use crate::optable::{self, OpSpec};
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use std::collections::HashMap;
use syn::spanned::Spanned;
use syn::{BinOp, Expr, FnArg, ItemFn, Pat, ReturnType, Type, UnOp};

/// Options of `#[differentiable(..)]`.
pub struct Options {
    /// `crate = path`: where the facade lives (`::nabla` by default; the
    /// runtime itself uses `crate`).
    pub krate: TokenStream,
}

/// Parses the attribute's arguments.
pub fn options(attr: TokenStream) -> syn::Result<Options> {
    let mut krate = quote!(::nabla);
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("crate") {
            let p: syn::Path = meta.value()?.parse()?;
            krate = p.to_token_stream();
            Ok(())
        } else {
            Err(meta.error("unknown option; #[differentiable] accepts only `crate = path`"))
        }
    });
    syn::parse::Parser::parse2(parser, attr)?;
    Ok(Options { krate })
}

/// The value of a block: one operand, or a tuple of them.
enum Tail {
    Single(Operand),
    Tuple(Vec<Operand>),
    /// `vec![a, b, ..]` returned as a `Vec<Array>`.
    List(Vec<Operand>),
}

/// A lowered expression: a variable, or static Rust tokens.
#[derive(Clone)]
enum Operand {
    Var(VarId),
    Tok(TokenStream),
}

/// How a parameter or output type is treated.
enum TypeClass {
    Array { by_ref: bool },
    Tree { by_ref: bool },
    Float { ty: ScalarTy, by_ref: bool },
    Static,
    Unsupported(&'static str),
}

fn last_ident(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

fn classify(ty: &Type) -> TypeClass {
    let (inner, by_ref) = match ty {
        Type::Reference(r) => {
            if r.mutability.is_some() {
                return TypeClass::Unsupported(
                    "`&mut` parameters are not supported in differentiable functions: take the value by reference and return the new value instead",
                );
            }
            (&*r.elem, true)
        }
        Type::Paren(p) => (&*p.elem, false),
        other => (other, false),
    };
    match inner {
        Type::Path(_) => match last_ident(inner).as_deref() {
            Some("Array") => TypeClass::Array { by_ref },
            Some("f64") => TypeClass::Float {
                ty: ScalarTy::F64,
                by_ref,
            },
            Some("f32") => TypeClass::Float {
                ty: ScalarTy::F32,
                by_ref,
            },
            Some(id) if mentions_array(inner) || !STATIC_TYPES.contains(&id) => {
                TypeClass::Tree { by_ref }
            }
            _ => TypeClass::Static,
        },
        Type::Slice(_) | Type::Array(_) | Type::Tuple(_) if mentions_array(inner) => {
            TypeClass::Tree { by_ref }
        }
        _ => TypeClass::Static,
    }
}

/// Types that are static without `#[nondiff]`; any other named type (a
/// user struct) is taken to be a `#[derive(Tree)]` struct.
const STATIC_TYPES: &[&str] = &[
    "u8",
    "u16",
    "u32",
    "u64",
    "u128",
    "usize",
    "i8",
    "i16",
    "i32",
    "i64",
    "i128",
    "isize",
    "bool",
    "char",
    "str",
    "String",
    "Range",
    "RangeInclusive",
    "Option",
    "Vec",
    "DType",
    "Device",
    "Key",
    "Duration",
    "Path",
    "PathBuf",
];

/// `Vec<Array>` (any path to `Array`).
fn is_vec_of_arrays(ty: &Type) -> bool {
    let Type::Path(p) = ty else { return false };
    let Some(last) = p.path.segments.last() else {
        return false;
    };
    if last.ident != "Vec" {
        return false;
    }
    let syn::PathArguments::AngleBracketed(args) = &last.arguments else {
        return false;
    };
    matches!(
        args.args.first(),
        Some(syn::GenericArgument::Type(Type::Path(a)))
            if a.path.segments.last().is_some_and(|s| s.ident == "Array")
    )
}

fn mentions_array(ty: &Type) -> bool {
    fn walk(ts: TokenStream) -> bool {
        ts.into_iter().any(|t| match t {
            TokenTree::Ident(i) => i == "Array" || i == "f64" || i == "f32",
            TokenTree::Group(g) => walk(g.stream()),
            _ => false,
        })
    }
    walk(ty.to_token_stream())
}

/// Lowers an annotated function.
pub fn lower(item: &ItemFn, opts: &Options) -> syn::Result<Function> {
    let mut l = Lowerer::new(item, opts);
    l.signature(item);
    let desugared;
    let mut body = &*item.block;
    if l.errors.is_none() && crate::returns::has_early_return(body) {
        match l.early_return_body(item) {
            Some(b) => {
                desugared = b;
                body = &desugared;
            }
            None => body = &item.block,
        }
    }
    if l.errors.is_none()
        && let Some(t) = l.block(body, true)
    {
        l.outputs(t);
    }
    match l.errors.take() {
        Some(e) => Err(e),
        None => Ok(l.f),
    }
}

struct Lowerer {
    f: Function,
    scopes: Vec<HashMap<String, VarId>>,
    names: HashMap<String, usize>,
    errors: Option<syn::Error>,
    next_id: usize,
    /// Set while lowering `nabla::checkpoint(f)(..)`.
    checkpoint_next: bool,
}

impl Lowerer {
    fn new(item: &ItemFn, opts: &Options) -> Self {
        let ret_ty = match &item.sig.output {
            ReturnType::Type(_, t) => (**t).clone(),
            ReturnType::Default => syn::parse_quote!(()),
        };
        Lowerer {
            f: Function {
                vis: item.vis.clone(),
                ident: item.sig.ident.clone(),
                tier: Tier::Array,
                params: Vec::new(),
                vars: Vec::new(),
                body: Vec::new(),
                outputs: Vec::new(),
                tuple_output: false,
                list_output: false,
                ret_ty,
                krate: opts.krate.clone(),
            },
            scopes: vec![HashMap::new()],
            names: HashMap::new(),
            errors: None,
            next_id: 0,
            checkpoint_next: false,
        }
    }

    fn error(&mut self, span: Span, msg: impl std::fmt::Display) {
        self.push_error(syn::Error::new(span, msg));
    }

    /// An error covering all of `tokens` (a whole attribute, say).
    fn error_spanned(&mut self, tokens: impl ToTokens, msg: impl std::fmt::Display) {
        self.push_error(syn::Error::new_spanned(tokens, msg));
    }

    fn fresh(&mut self, hint: &str, kind: Kind) -> VarId {
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

    fn bind(&mut self, name: &str, v: VarId) {
        self.scopes
            .last_mut()
            .expect("a scope")
            .insert(name.to_string(), v);
    }

    /// Rebinds an existing name in the scope that defines it (assignment).
    fn rebind(&mut self, name: &str, v: VarId) {
        match self.scopes.iter_mut().rev().find(|s| s.contains_key(name)) {
            Some(scope) => {
                scope.insert(name.to_string(), v);
            }
            None => self.bind(name, v),
        }
    }

    fn id(&mut self) -> usize {
        self.next_id += 1;
        self.next_id
    }

    fn lookup(&self, name: &str) -> Option<VarId> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    fn kind(&self, v: VarId) -> Kind {
        self.f.vars[v].kind
    }

    // ----- signature -------------------------------------------------------

    fn signature(&mut self, item: &ItemFn) {
        let sig = &item.sig;
        if !sig.generics.params.is_empty() {
            self.error(
                sig.generics.span(),
                "#[differentiable] functions cannot have generic parameters: the macro makes the function generic over its value type itself; use concrete `Array`, `f32` or `f64` types",
            );
        }
        if let Some(a) = &sig.asyncness {
            self.error(a.span(), "async functions cannot be differentiable; differentiate a synchronous function and call it from async code");
        }
        if let Some(u) = &sig.unsafety {
            self.error(u.span(), "unsafe functions cannot be differentiable; move the unsafe part into an ordinary function with static arguments");
        }
        if let Some(c) = &sig.constness {
            self.error(
                c.span(),
                "const functions cannot be differentiable; remove `const`",
            );
        }
        if matches!(sig.output, ReturnType::Default) {
            self.error(
                sig.ident.span(),
                "a differentiable function must return a value (an Array, f32, f64 or a tuple)",
            );
        }
        let mut array = None;
        let mut float: Option<(ScalarTy, Span)> = None;
        for arg in &sig.inputs {
            let pt = match arg {
                FnArg::Receiver(r) => {
                    self.error(r.span(), "methods cannot be differentiable yet; write a free function that takes the value as a parameter");
                    continue;
                }
                FnArg::Typed(pt) => pt,
            };
            let ident = match &*pt.pat {
                Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => pi.ident.clone(),
                other => {
                    self.error(other.span(), "parameters of differentiable functions must be plain names (destructure inside the body with `let`)");
                    continue;
                }
            };
            let nondiff = pt.attrs.iter().any(|a| a.path().is_ident("nondiff"));
            let class = if nondiff {
                TypeClass::Static
            } else {
                classify(&pt.ty)
            };
            let (var, by_ref) = match class {
                TypeClass::Array { by_ref } => {
                    array.get_or_insert(pt.ty.span());
                    (Some(self.fresh(&ident.to_string(), Kind::Value)), by_ref)
                }
                TypeClass::Float { ty, by_ref } => {
                    match float {
                        Some((t, _)) if t != ty => self.error(pt.ty.span(), "all float parameters of a differentiable function must have the same type (all f32 or all f64)"),
                        _ => float = Some((ty, pt.ty.span())),
                    }
                    (Some(self.fresh(&ident.to_string(), Kind::Value)), by_ref)
                }
                TypeClass::Tree { by_ref } => {
                    array.get_or_insert(pt.ty.span());
                    let v = self.fresh(&format!("{ident}_leaves"), Kind::Tree);
                    self.bind(&ident.to_string(), v);
                    let tree = match &*pt.ty {
                        Type::Reference(r) => (*r.elem).clone(),
                        t => t.clone(),
                    };
                    self.f.params.push(Param {
                        ident,
                        ty: (*pt.ty).clone(),
                        var: Some(v),
                        by_ref,
                        tree: Some(tree),
                    });
                    continue;
                }
                TypeClass::Static => {
                    let v = self.fresh(&ident.to_string(), Kind::Static);
                    self.f.vars[v].ident = ident.clone();
                    self.bind(&ident.to_string(), v);
                    self.f.params.push(Param {
                        ident,
                        ty: (*pt.ty).clone(),
                        var: None,
                        by_ref: false,
                        tree: None,
                    });
                    continue;
                }
                TypeClass::Unsupported(msg) => {
                    self.error(pt.ty.span(), msg);
                    continue;
                }
            };
            let v = var.expect("value parameter");
            self.bind(&ident.to_string(), v);
            self.f.params.push(Param {
                ident,
                ty: (*pt.ty).clone(),
                var: Some(v),
                by_ref,
                tree: None,
            });
        }
        match (array, float) {
            (Some(_), Some((_, span))) => self.error(
                span,
                "a differentiable function cannot mix Array and float parameters yet; pass the float as a 0-d array (Array::scalar) or mark it #[nondiff]",
            ),
            (None, Some((ty, _))) => self.f.tier = Tier::Scalar(ty),
            (None, None) if self.errors.is_none() => self.error(
                sig.ident.span(),
                "this function has no differentiable parameter; take at least one Array, f32 or f64 (integers, bools and #[nondiff] parameters are static)",
            ),
            _ => {}
        }
    }

    /// The body with early `return`s rewritten (see `returns`), or `None`
    /// after reporting why it cannot be.
    fn early_return_body(&mut self, item: &ItemFn) -> Option<syn::Block> {
        if matches!(self.f.ret_ty, Type::Tuple(_)) {
            self.error(
                item.sig.output.span(),
                "early `return` with a tuple result is not supported yet; return one value, or restructure so the tuple is the last expression",
            );
            return None;
        }
        let Some(p) = self
            .f
            .params
            .iter()
            .find(|p| p.var.is_some() && p.tree.is_none())
        else {
            self.error(
                item.sig.ident.span(),
                "early `return` needs a plain differentiable parameter (Array, f32 or f64)",
            );
            return None;
        };
        let id = &p.ident;
        let init: Expr = if p.by_ref || matches!(self.f.tier, Tier::Array) {
            syn::parse_quote!(#id.clone())
        } else {
            syn::parse_quote!(#id)
        };
        match crate::returns::desugar(&item.block, &init) {
            Ok(b) => Some(b),
            Err(e) => {
                self.push_error(e);
                None
            }
        }
    }

    // ----- statements ------------------------------------------------------

    fn block(&mut self, block: &syn::Block, top: bool) -> Option<Tail> {
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
                            self.error(r.span(), "a differentiable function must return a value");
                            None
                        }
                    }
                }
                syn::Stmt::Expr(Expr::Return(r), _) => self.error(
                    r.span(),
                    "early `return` is not supported yet; restructure so the value is the block's last expression",
                ),
                syn::Stmt::Expr(e, None) if last => tail = self.tail_expr(e, top),
                syn::Stmt::Expr(e, _) => self.statement_expr(e),
                syn::Stmt::Item(it) => {
                    self.error(it.span(), "items cannot be declared inside a differentiable function; move them outside")
                }
                syn::Stmt::Macro(m) => self.error(
                    m.span(),
                    "statement macros (println!, assert!, ...) are not supported in differentiable functions; compute outside, or on the values returned",
                ),
            }
        }
        self.scopes.pop();
        if tail.is_none() && n == 0 {
            self.error(block.span(), "a differentiable block must end with a value");
        }
        tail
    }

    fn local(&mut self, local: &syn::Local) {
        let Some(init) = &local.init else {
            self.error(
                local.span(),
                "declare variables with a value (`let x = ...;`)",
            );
            return;
        };
        if let Some((_, e)) = &init.diverge {
            self.error(
                e.span(),
                "`let ... else` is not supported in differentiable functions",
            );
            return;
        }
        let pat = match &local.pat {
            Pat::Type(pt) => &*pt.pat,
            p => p,
        };
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
            other => self.error(
                other.span(),
                "only `let name = ...` and `let (a, b) = ...` patterns are supported",
            ),
        }
    }

    fn pat_name(&mut self, p: &Pat) -> Option<String> {
        match p {
            Pat::Ident(pi) if pi.subpat.is_none() && pi.by_ref.is_none() => {
                Some(pi.ident.to_string())
            }
            Pat::Wild(_) => Some("_".into()),
            Pat::Type(pt) => self.pat_name(&pt.pat),
            other => {
                self.error(other.span(), "tuple patterns may only contain names");
                None
            }
        }
    }

    fn tuple_let(&mut self, t: &syn::PatTuple, init: &Expr) {
        let names: Vec<Option<String>> = t.elems.iter().map(|p| self.pat_name(p)).collect();
        if let Expr::Tuple(et) = strip(init) {
            if et.elems.len() != names.len() {
                self.error(
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
            Some(Operand::Var(_)) => self.error(
                init.span(),
                "a single value cannot be destructured into a tuple",
            ),
            None => {}
        }
    }

    /// Binds `name` to an operand (static operands get their own variable).
    fn assign(&mut self, name: &str, op: Operand) {
        let v = self.materialize(name, op);
        self.bind(name, v);
    }

    /// `name = op` for an existing variable: a new SSA version.
    fn reassign(&mut self, name: &str, op: Operand) {
        let v = self.materialize(name, op);
        self.rebind(name, v);
    }

    /// A variable holding `op` (static tokens get a `let`).
    fn materialize(&mut self, name: &str, op: Operand) -> VarId {
        match op {
            Operand::Var(v) => v,
            Operand::Tok(ts) => {
                let v = self.fresh(name, Kind::Static);
                self.f.body.push(Stmt::Static { out: v, expr: ts });
                v
            }
        }
    }

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
            other => self.error(
                other.span(),
                "this statement has no effect on the result; differentiable functions are pure: bind values with `let` and return the result",
            ),
        }
    }

    fn target(&mut self, e: &Expr) -> Option<String> {
        match strip(e) {
            Expr::Path(p) if p.path.get_ident().is_some() => {
                let name = p.path.get_ident().expect("checked").to_string();
                if self.lookup(&name).is_none() {
                    self.error(e.span(), format!("cannot find variable `{name}`"));
                    return None;
                }
                Some(name)
            }
            other => {
                self.error(
                    other.span(),
                    "only whole variables can be reassigned in differentiable functions (no field, index or `*x` assignment); rebind with `let` instead",
                );
                None
            }
        }
    }

    // ----- expressions -----------------------------------------------------

    fn tok(&self, op: &Operand) -> TokenStream {
        match op {
            Operand::Var(v) => self.f.vars[*v].ident.to_token_stream(),
            Operand::Tok(t) => t.clone(),
        }
    }

    fn is_value(&self, op: &Operand) -> bool {
        matches!(op, Operand::Var(v) if self.kind(*v) == Kind::Value)
    }

    fn is_tree(&self, op: &Operand) -> bool {
        matches!(op, Operand::Var(v) if self.kind(*v) == Kind::Tree)
    }

    fn value_var(&self, op: &Operand) -> Option<VarId> {
        match op {
            Operand::Var(v) if self.kind(*v) == Kind::Value => Some(*v),
            _ => None,
        }
    }

    fn prim(
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

    fn constant(&mut self, expr: TokenStream) -> Operand {
        let out = self.fresh("__const", Kind::Value);
        self.f.body.push(Stmt::Constant { out, expr });
        Operand::Var(out)
    }

    fn expr(&mut self, e: &Expr) -> Option<Operand> {
        match e {
            Expr::Lit(l) => Some(Operand::Tok(l.to_token_stream())),
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
            Expr::Reference(r) => {
                let inner = self.expr(&r.expr)?;
                if self.is_value(&inner) {
                    if r.mutability.is_some() {
                        self.error(r.span(), "`&mut` to a differentiable value is not supported; values are immutable: compute a new one");
                        return None;
                    }
                    return Some(inner);
                }
                let t = self.tok(&inner);
                let m = r.mutability;
                Some(Operand::Tok(quote!(&#m #t)))
            }
            Expr::Unary(u) => {
                let inner = self.expr(&u.expr)?;
                match (&u.op, self.value_var(&inner)) {
                    (UnOp::Neg(_), Some(v)) => {
                        Some(self.prim(optable::op("neg"), vec![v], vec![], u.span()))
                    }
                    (UnOp::Deref(_), Some(_)) => Some(inner),
                    (_, Some(_)) => {
                        self.error(u.span(), "`!` does not apply to differentiable values");
                        None
                    }
                    (op, None) => {
                        let t = self.tok(&inner);
                        Some(Operand::Tok(quote!(#op (#t))))
                    }
                }
            }
            Expr::Binary(b) => {
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
                                let id = this.f.vars[v].ident.clone();
                                quote!(#krate::Value::item_f64(&#id))
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
                        self.error(b.span(), "this operator does not apply to differentiable values; compare them (`<`, `>`, ..) or use nabla::maximum / clip");
                        None
                    }
                }
            }
            Expr::MethodCall(m) => self.method(m),
            Expr::Call(c) => self.call(c),
            Expr::Block(b) if b.label.is_none() => match self.block(&b.block, false)? {
                Tail::Single(o) => Some(o),
                Tail::Tuple(_) | Tail::List(_) => None,
            },
            Expr::Tuple(t) => {
                self.error(t.span(), "tuples are only supported as the returned value or directly in `let (a, b) = (x, y)`");
                None
            }
            Expr::Index(_) | Expr::Field(_) if self.tree_root(e).is_some() => self.leaf(e),
            Expr::Index(ix) => {
                let base = self.expr(&ix.expr)?;
                let idx = self.expr(&ix.index)?;
                if self.is_value(&base) || self.is_value(&idx) {
                    self.error(ix.span(), "indexing a differentiable value is not supported yet; use x.slice_axis(axis, a..b) or x.index_select(axis, &idx)");
                    return None;
                }
                let (bt, it) = (self.tok(&base), self.tok(&idx));
                Some(Operand::Tok(quote!((#bt)[#it])))
            }
            Expr::Field(fe) => {
                let base = self.expr(&fe.base)?;
                if self.is_value(&base) {
                    self.error(
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
                    self.error(c.span(), "`as` casts of differentiable values are not supported; use .cast(DType::..) outside, or keep one float type");
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
            Expr::Loop(l) => {
                self.error(
                    l.loop_token.span(),
                    "`loop` in differentiable functions is not supported yet; use `while` with the exit test as its condition, or `for` over a range",
                );
                None
            }
            Expr::Closure(c) => {
                self.error(c.span(), "closures are not supported in differentiable functions; write a separate #[differentiable] fn and call it");
                None
            }
            Expr::Unsafe(u) => {
                self.error(u.unsafe_token.span(), "`unsafe` blocks cannot be differentiated; move the unsafe code into an ordinary function with static arguments");
                None
            }
            Expr::Async(a) => {
                self.error(
                    a.async_token.span(),
                    "`async` blocks cannot be differentiated",
                );
                None
            }
            Expr::Await(a) => {
                self.error(a.span(), "`.await` cannot be differentiated");
                None
            }
            Expr::Try(t) => {
                self.error(
                    t.span(),
                    "`?` is not supported in differentiable functions; handle errors outside",
                );
                None
            }
            Expr::Return(r) => {
                self.error(r.span(), "`return` is only supported as the last statement");
                None
            }
            other => {
                self.error(
                    other.span(),
                    "this expression is not supported in a differentiable function",
                );
                None
            }
        }
    }

    /// Lowers a block's final expression; tuples are allowed at the top.
    fn tail_expr(&mut self, e: &Expr, top: bool) -> Option<Tail> {
        match strip(e) {
            Expr::Tuple(t) if top => {
                let mut items = Vec::new();
                for el in &t.elems {
                    items.push(self.expr(el)?);
                }
                Some(Tail::Tuple(items))
            }
            Expr::Macro(m) if top && m.mac.path.is_ident("vec") => {
                let parser = syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated;
                let Ok(elems) = m.mac.parse_body_with(parser) else {
                    self.error(
                        m.span(),
                        "return a list of arrays as `vec![a, b, ..]`, one element per output (the `vec![x; n]` form is not supported)",
                    );
                    return None;
                };
                let mut items = Vec::new();
                for el in &elems {
                    items.push(self.expr(el)?);
                }
                Some(Tail::List(items))
            }
            _ => self.expr(e).map(Tail::Single),
        }
    }

    /// `if` on a static condition. Both branches are lowered into their own
    /// bodies; names they rebind and the branch value become merges.
    fn lower_if(&mut self, ei: &syn::ExprIf, want_value: bool) -> Option<Operand> {
        if let Expr::Let(l) = strip(&ei.cond) {
            self.error(l.span(), "`if let` is not supported in differentiable functions; match outside and call a differentiable function per case");
            return None;
        }
        let cond_op = self.expr(&ei.cond)?;
        if self.is_value(&cond_op) {
            self.error(ei.cond.span(), "the condition of an `if` must be static (integers, bools, shapes); data-dependent branches are not supported yet");
            return None;
        }
        let cond = self.tok(&cond_op);
        let before = self.scopes.clone();
        let outer = std::mem::take(&mut self.f.body);

        let then_tail = self.branch_block(&ei.then_branch, want_value);
        let then_body = std::mem::take(&mut self.f.body);
        let then_scopes = std::mem::replace(&mut self.scopes, before.clone());

        let else_tail = match &ei.else_branch {
            Some((_, e)) => match strip(e) {
                Expr::Block(b) => self.branch_block(&b.block, want_value),
                Expr::If(inner) => self
                    .lower_if(inner, want_value)
                    .map(|o| self.materialize("__if", o)),
                other => {
                    self.error(other.span(), "expected a block after `else`");
                    None
                }
            },
            None => {
                if want_value {
                    self.error(
                        ei.if_token.span(),
                        "an `if` used as a value needs an `else` branch",
                    );
                }
                None
            }
        };
        let else_body = std::mem::take(&mut self.f.body);
        let else_scopes = std::mem::replace(&mut self.scopes, before.clone());
        self.f.body = outer;

        // Names either branch rebound.
        let find = |scopes: &[HashMap<String, VarId>], n: &str| {
            scopes.iter().rev().find_map(|s| s.get(n).copied())
        };
        let mut names: Vec<String> = before.iter().flat_map(|s| s.keys().cloned()).collect();
        names.sort();
        names.dedup();
        let mut merges = Vec::new();
        let mut rebinds = Vec::new();
        for n in names {
            let (b, t, e) = (
                find(&before, &n),
                find(&then_scopes, &n),
                find(&else_scopes, &n),
            );
            let (Some(b), Some(t), Some(e)) = (b, t, e) else {
                continue;
            };
            if t == b && e == b {
                continue;
            }
            if self.kind(t) != self.kind(e) {
                self.error(ei.if_token.span(), format!("`{n}` is a differentiable value in one branch and static in the other; make both branches give the same kind"));
                continue;
            }
            let out = self.fresh(&n, self.kind(t));
            merges.push(Merge {
                out,
                then_v: t,
                else_v: e,
            });
            rebinds.push((n, out));
        }
        let mut value = None;
        if want_value {
            match (then_tail, else_tail) {
                (Some(t), Some(e)) if self.kind(t) == self.kind(e) => {
                    let out = self.fresh("__if", self.kind(t));
                    merges.push(Merge { out, then_v: t, else_v: e });
                    value = Some(Operand::Var(out));
                }
                (Some(_), Some(_)) => self.error(
                    ei.if_token.span(),
                    "one branch gives a differentiable value and the other a static one; make both branches values (e.g. `x.zeros_like()` instead of `0.0`)",
                ),
                _ => {}
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

    /// `for pat in iter { .. }` over a static iterator: the body is lowered
    /// twice, first to find the variables it rebinds (the carried values),
    /// then for real with those names bound to loop-start variables.
    fn lower_for(&mut self, fl: &syn::ExprForLoop) -> Option<Operand> {
        if let Some(l) = &fl.label {
            self.error(
                l.span(),
                "labelled loops are not supported in differentiable functions",
            );
            return None;
        }
        let snapshots = match crate::loop_attr::snapshots(&fl.attrs) {
            Ok(n) => n,
            Err(e) => {
                self.push_error(e);
                return None;
            }
        };
        // `for (a, b) in it` (a tuple of names): one static item, then its
        // fields.
        let untupled;
        let fl = match &*fl.pat {
            Pat::Tuple(t)
                if t.elems
                    .iter()
                    .all(|p| matches!(p, Pat::Ident(_) | Pat::Wild(_))) =>
            {
                let item = quote::format_ident!("__nabla_item{}", self.id());
                let binds = t.elems.iter().enumerate().filter_map(|(k, p)| {
                    let idx = syn::Index::from(k);
                    match p {
                        Pat::Ident(pi) => {
                            let n = &pi.ident;
                            Some(quote!(let #n = #item.#idx;))
                        }
                        _ => None,
                    }
                });
                let stmts = &fl.body.stmts;
                let mut nf = fl.clone();
                nf.pat = Box::new(syn::parse_quote!(#item));
                nf.body = syn::parse_quote!({ #(#binds)* #(#stmts)* });
                untupled = nf;
                &untupled
            }
            _ => fl,
        };
        // `for w in ws` over a slice/Vec of arrays (a tree parameter): a
        // static index loop whose body starts with `let w = &ws[i];`.
        let over_tree;
        let (fl, iter) = match self.iterated_tree(&fl.expr) {
            Some(ws) => {
                let i = quote::format_ident!("__nabla_item{}", self.id());
                let pat = &fl.pat;
                if !matches!(&**pat, Pat::Ident(_) | Pat::Wild(_)) {
                    self.error(
                        pat.span(),
                        "the loop variable over arrays must be a name or `_`",
                    );
                    return None;
                }
                let stmts = &fl.body.stmts;
                let mut nf = fl.clone();
                nf.pat = Box::new(syn::parse_quote!(#i));
                nf.body = syn::parse_quote!({ let #pat = &#ws[#i]; #(#stmts)* });
                over_tree = nf;
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
            if let Some(a) = fl.attrs.iter().find(|a| crate::loop_attr::is_checkpoint(a)) {
                self.error_spanned(
                    a,
                    "binomial checkpointing needs the trip count before the loop starts, which a loop with `break` does not have; loop over the exact range, or checkpoint the body's call with `nabla::checkpoint(step)(..)`",
                );
                return None;
            }
            // `break` sets a flag tested before each iteration, as a
            // `while` condition is.
            self.declare_flag(&brk);
            let ((pat, k, test), body, carried) =
                self.lower_loop(fl.for_token.span(), |p| p.loop_body_with_exit(fl, &brk))?;
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
            return Some(Operand::Tok(quote!(())));
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

    /// A loop body with its `continue`/`break` rewritten (see `jumps`;
    /// `None` inside when it has none) and the name of its break flag;
    /// `None` after reporting an error.
    fn desugar_jumps(
        &mut self,
        body: &syn::Block,
    ) -> Option<(Option<crate::jumps::Desugared>, syn::Ident)> {
        let n = self.id();
        let skip = quote::format_ident!("__nabla_skip{}", n);
        let brk = quote::format_ident!("__nabla_break{}", n);
        match crate::jumps::desugar(body, &skip, &brk) {
            Ok(j) => Some((j, brk)),
            Err(e) => {
                self.push_error(e);
                None
            }
        }
    }

    /// `let mut flag = false;` (a static) in the current scope.
    fn declare_flag(&mut self, flag: &syn::Ident) {
        let stmt: syn::Stmt = syn::parse_quote!(let mut #flag = false;);
        if let syn::Stmt::Local(l) = stmt {
            self.local(&l);
        }
    }

    fn push_error(&mut self, e: syn::Error) {
        match &mut self.errors {
            Some(all) => all.combine(e),
            None => self.errors = Some(e),
        }
    }

    /// `match` on a static (or data-derived) scrutinee, with patterns that
    /// bind nothing: lowered to an `if`/`else if` chain of `matches!` tests,
    /// the last arm being the `else` (rustc checks the primal's match for
    /// exhaustiveness).
    fn lower_match(&mut self, m: &syn::ExprMatch, want_value: bool) -> Option<Operand> {
        let scrut = self.static_expr(&m.expr)?;
        let v = self.materialize("__match", Operand::Tok(scrut));
        let id = self.f.vars[v].ident.clone();
        let Some((last, rest)) = m.arms.split_last() else {
            self.error(m.match_token.span(), "an empty `match` has no value");
            return None;
        };
        // An arm's body; names its pattern binds are static copies taken
        // from the (static) scrutinee first.
        let krate = self.f.krate.clone();
        let bound = quote::format_ident!("__nabla_bound{}", self.id());
        let block = |pat: &Pat, e: &Expr| -> syn::Block {
            let mut names = Vec::new();
            bindings(pat, &mut names);
            if names.is_empty() {
                return syn::parse_quote!({ #e });
            }
            // One extraction of all the names (before any is in scope), then
            // its fields.
            let fields = names.iter().enumerate().map(|(k, n)| {
                let k = syn::Index::from(k);
                quote!(let #n = #bound.#k;)
            });
            syn::parse_quote!({
                let #bound = #krate::__match_bind!(#id, #pat, (#(#names,)*));
                #(#fields)*
                #e
            })
        };
        let mut chain: Expr = Expr::Block(syn::ExprBlock {
            attrs: Vec::new(),
            label: None,
            block: block(&last.pat, &last.body),
        });
        for arm in rest.iter().rev() {
            let pat = &arm.pat;
            let guard = arm.guard.as_ref().map(|(_, g)| quote!(if #g));
            // Without a guard, match a reference (bindings never move out of
            // the scrutinee); a guard sees its bindings by value, as written.
            let cond: Expr = if guard.is_some() {
                syn::parse_quote!(::core::matches!(#id, #pat #guard))
            } else {
                syn::parse_quote!(::core::matches!(&#id, #pat))
            };
            let then_branch = block(&arm.pat, &arm.body);
            chain = Expr::If(syn::ExprIf {
                attrs: Vec::new(),
                if_token: Default::default(),
                cond: Box::new(cond),
                then_branch,
                else_branch: Some((Default::default(), Box::new(chain))),
            });
        }
        match chain {
            Expr::If(ei) => self.lower_if(&ei, want_value),
            Expr::Block(b) => {
                if want_value {
                    match self.block(&b.block, false)? {
                        Tail::Single(o) => Some(o),
                        Tail::Tuple(_) | Tail::List(_) => None,
                    }
                } else {
                    self.branch_block(&b.block, false);
                    Some(Operand::Tok(quote!(())))
                }
            }
            _ => unreachable!("built above"),
        }
    }

    /// `while cond { .. }`: like `for`, with the condition's statements at
    /// the start of each iteration. The condition must be static; it may
    /// read the data (`x.item() > 0.0`), which makes the trip count
    /// data-dependent.
    fn lower_while(&mut self, w: &syn::ExprWhile) -> Option<Operand> {
        if let Some(l) = &w.label {
            self.error(
                l.span(),
                "labelled loops are not supported in differentiable functions",
            );
            return None;
        }
        if let Some(a) = w.attrs.iter().find(|a| crate::loop_attr::is_checkpoint(a)) {
            self.error_spanned(
                a,
                "binomial checkpointing needs the trip count before the loop starts, which a `while` loop does not have; loop over a range (`for i in 0..n`) with the exit test outside, or checkpoint the body's call with `nabla::checkpoint(step)(..)`",
            );
            return None;
        }
        if let Expr::Let(l) = strip(&w.cond) {
            self.error(
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
        let before = self.scopes.clone();
        let outer = std::mem::take(&mut self.f.body);
        // Pass 1: which outer names does the loop rebind?
        lower_body(self);
        let probe = std::mem::replace(&mut self.scopes, before.clone());
        self.f.body = Vec::new();
        if self.errors.is_some() {
            self.f.body = outer;
            return None;
        }
        let find = |scopes: &[HashMap<String, VarId>], n: &str| {
            scopes.iter().rev().find_map(|s| s.get(n).copied())
        };
        let mut names: Vec<String> = before.iter().flat_map(|s| s.keys().cloned()).collect();
        names.sort();
        names.dedup();
        let carried_names: Vec<(String, VarId)> = names
            .into_iter()
            .filter_map(|n| {
                let b = find(&before, &n)?;
                (find(&probe, &n)? != b).then_some((n, b))
            })
            .collect();
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
                self.error(span, format!("`{n}` changes between a differentiable value and a static one inside the loop"));
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
                self.error(
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
                self.error(
                    other.span(),
                    "the loop variable of a differentiable loop must be a name or `_`",
                );
                quote!(_)
            }
        }
    }

    /// Lowers a branch; its value (if wanted) becomes a variable.
    fn branch_block(&mut self, b: &syn::Block, want_value: bool) -> Option<VarId> {
        if !want_value {
            // A statement: the block's own value (if any) is discarded.
            self.scopes.push(HashMap::new());
            for stmt in &b.stmts {
                match stmt {
                    syn::Stmt::Local(local) => self.local(local),
                    syn::Stmt::Expr(e, _) => self.statement_expr(e),
                    syn::Stmt::Item(it) => self.error(
                        it.span(),
                        "items cannot be declared inside a differentiable function",
                    ),
                    syn::Stmt::Macro(m) => self.error(
                        m.span(),
                        "statement macros are not supported in differentiable functions",
                    ),
                }
            }
            self.scopes.pop();
            return None;
        }
        match self.block(b, false)? {
            Tail::Single(op) => Some(self.materialize("__branch", op)),
            Tail::Tuple(_) | Tail::List(_) => None,
        }
    }

    /// The tree variable at the root of a field/index chain.
    fn tree_root(&self, e: &Expr) -> Option<VarId> {
        match strip(e) {
            Expr::Field(f) => self.tree_root(&f.base),
            Expr::Index(i) => self.tree_root(&i.expr),
            Expr::Path(p) => {
                let v = self.lookup(&p.path.get_ident()?.to_string())?;
                (self.kind(v) == Kind::Tree).then_some(v)
            }
            _ => None,
        }
    }

    /// `p.w1`, `p.layers[i]`, `p.0`: one array of a tree parameter.
    fn leaf(&mut self, e: &Expr) -> Option<Operand> {
        let krate = self.f.krate.clone();
        let mut segs = Vec::new();
        let mut cur = strip(e);
        loop {
            match cur {
                Expr::Field(f) => {
                    segs.push(match &f.member {
                        syn::Member::Named(n) => {
                            let s = n.to_string();
                            quote!(#krate::tree::Seg::Field(#s))
                        }
                        syn::Member::Unnamed(i) => {
                            let i = i.index as usize;
                            quote!(#krate::tree::Seg::Index(#i))
                        }
                    });
                    cur = strip(&f.base);
                }
                Expr::Index(ix) => {
                    let i = self.static_expr(&ix.index)?;
                    segs.push(quote!(#krate::tree::Seg::Index((#i) as usize)));
                    cur = strip(&ix.expr);
                }
                _ => break,
            }
        }
        segs.reverse();
        let tree = self.tree_root(e).expect("checked by the caller");
        let param = self
            .f
            .param_of(tree)
            .expect("tree variables are parameters")
            .ident
            .clone();
        let index = self.fresh("__leaf_index", Kind::Static);
        self.f.body.push(Stmt::Static {
            out: index,
            expr: quote!(#param.index(&[#(#segs),*])),
        });
        let out = self.fresh("__leaf", Kind::Value);
        self.f.body.push(Stmt::Leaf { out, tree, index });
        Some(Operand::Var(out))
    }

    /// Lowers an expression that must be static.
    fn static_expr(&mut self, e: &Expr) -> Option<TokenStream> {
        let op = self.expr(e)?;
        if self.is_value(&op) {
            self.error(
                e.span(),
                "a differentiable value cannot be used here; this position needs a static value",
            );
            return None;
        }
        Some(self.tok(&op))
    }

    /// Renames identifiers of static variables inside macro tokens.
    fn rename_tokens(&mut self, ts: TokenStream) -> TokenStream {
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
                                self.error(
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

    fn arith(&mut self, op: Arith, l: Operand, r: Operand, span: Span) -> Option<Operand> {
        let (lv, rv) = (self.value_var(&l), self.value_var(&r));
        let name = op.rule();
        match (lv, rv) {
            (Some(a), Some(b)) => Some(self.prim(optable::op(name), vec![a, b], vec![], span)),
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
                let c = self.tok(&l);
                let cf = quote_spanned!(span=> (#c) as f64);
                match op {
                    Arith::Add => {
                        Some(self.prim(optable::op("add_scalar"), vec![b], vec![cf], span))
                    }
                    Arith::Mul => {
                        Some(self.prim(optable::op("mul_scalar"), vec![b], vec![cf], span))
                    }
                    Arith::Sub => {
                        let n = self.prim(optable::op("neg"), vec![b], vec![], span);
                        let n = self.value_var(&n).expect("value");
                        Some(self.prim(optable::op("add_scalar"), vec![n], vec![cf], span))
                    }
                    Arith::Div => {
                        let inv = self.prim(optable::op("recip"), vec![b], vec![], span);
                        let inv = self.value_var(&inv).expect("value");
                        Some(self.prim(optable::op("mul_scalar"), vec![inv], vec![cf], span))
                    }
                }
            }
            (None, None) => {
                let (lt, rt, sym) = (self.tok(&l), self.tok(&r), op.symbol());
                Some(Operand::Tok(quote!((#lt) #sym (#rt))))
            }
        }
    }

    fn method(&mut self, m: &syn::ExprMethodCall) -> Option<Operand> {
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
        let vt = self.f.vars[v].ident.clone();
        if name == "clone" && m.args.is_empty() {
            return Some(recv);
        }
        if optable::static_query(&name) {
            let q = match name.as_str() {
                "shape" | "shape_vec" => quote!(#krate::Value::shape_vec(&#vt)),
                "ndim" => quote!(#krate::Value::ndim(&#vt)),
                _ => quote!(#krate::Value::shape_vec(&#vt).iter().product::<usize>()),
            };
            return Some(Operand::Tok(q));
        }
        if optable::constant_method(&name) {
            let e = match name.as_str() {
                "stop_gradient" | "detach" => quote!(#krate::Value::stop_gradient(&#vt)),
                "full_like" => {
                    let [a] = m.args.iter().collect::<Vec<_>>()[..] else {
                        self.error(m.span(), "full_like takes one argument, the fill value");
                        return None;
                    };
                    let a = self.static_expr(a)?;
                    quote!(#krate::Value::full_like(&#vt, (#a) as f64))
                }
                "zeros_like" => quote!(#krate::Value::zeros_like(&#vt)),
                _ => quote!(#krate::Value::ones_like(&#vt)),
            };
            return Some(self.constant(e));
        }
        if optable::composite_method(&name) {
            let path: syn::Path = match syn::parse2(quote!(#krate::#ident)) {
                Ok(p) => p,
                Err(e) => {
                    self.error(span, e);
                    return None;
                }
            };
            let mut lowered = vec![Operand::Var(v)];
            for a in &m.args {
                lowered.push(Operand::Tok(self.static_expr(a)?));
            }
            let outs = self.emit_call(&path, lowered, 1, m.span());
            return Some(Operand::Var(outs[0]));
        }
        if name == "item" && m.args.is_empty() {
            // A static f64 read from the data (no derivative): usable in
            // conditions; the branch taken is recorded for the reverse sweep.
            return Some(Operand::Tok(quote!(#krate::Value::item_f64(&#vt))));
        }
        let Some(op) = optable::lookup(&name) else {
            self.error(
                span,
                format!(
                    "`{name}` is not an operation Nabla can differentiate; known operations: {}; or call a #[differentiable] function",
                    optable::known_names()
                ),
            );
            return None;
        };
        let args: Vec<&Expr> = m.args.iter().collect();
        self.apply_op(op, Some(v), &args, m.span(), &name)
    }

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
            self.error(span, format!("`{name}` takes {} value argument(s) and {} static parameter(s), found {got} argument(s) in all", op.values, op.params));
            return None;
        }
        let mut params = Vec::new();
        for a in args {
            if inputs.len() < op.values {
                let o = self.expr(a)?;
                match self.value_var(&o) {
                    Some(v) => inputs.push(v),
                    None => {
                        self.error(a.span(), format!("`{name}` needs a differentiable value here (an Array or float that depends on the inputs); found a static value"));
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
            self.error(span, format!("`{name}` in a differentiable function takes the values as an array literal, e.g. `{name}(&[a, b], axis)`"));
            return None;
        };
        let mut inputs = Vec::new();
        for e in &list.elems {
            let o = self.expr(e)?;
            match self.value_var(&o) {
                Some(v) => inputs.push(v),
                None => {
                    self.error(
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

    fn is_nabla_path(&self, path: &syn::Path) -> bool {
        let first = path.segments.first().map(|s| s.ident.to_string());
        path.segments.len() >= 2
            && (first.as_deref() == Some("nabla")
                || (self.f.krate.to_string() == "crate" && first.as_deref() == Some("crate")))
    }

    fn call(&mut self, c: &syn::ExprCall) -> Option<Operand> {
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
                self.error(inner.span(), "checkpoint takes the name of a #[differentiable] function: `nabla::checkpoint(f)(args..)`");
                return None;
            };
            let mut lowered = Vec::new();
            for a in &c.args {
                lowered.push(self.expr(a)?);
            }
            self.checkpoint_next = true;
            let outs = self.emit_call(&fp.path, lowered, 1, c.span());
            return Some(Operand::Var(outs[0]));
        }
        let Expr::Path(fp) = strip(&c.func) else {
            self.error(
                c.func.span(),
                "only calls of named functions are supported in differentiable functions",
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
                    self.error(c.span(), "stop_gradient takes one argument");
                    return None;
                };
                let o = self.expr(a)?;
                return match self.value_var(&o) {
                    Some(v) => {
                        let (krate, vt) = (self.f.krate.clone(), self.f.vars[v].ident.clone());
                        Some(self.constant(quote!(#krate::Value::stop_gradient(&#vt))))
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
            let outs = self.emit_call(path, lowered, 1, c.span());
            return Some(Operand::Var(outs[0]));
        }
        let args: Vec<TokenStream> = lowered.iter().map(|o| self.tok(o)).collect();
        Some(Operand::Tok(quote!(#fp(#(#args),*))))
    }

    /// A call of a differentiable function with `n` outputs, if `c` is one.
    fn diff_call(&mut self, c: &syn::ExprCall, n: usize) -> Option<Vec<VarId>> {
        let Expr::Path(fp) = strip(&c.func) else {
            return None;
        };
        if self.is_nabla_path(&fp.path) {
            return None;
        }
        let mut lowered = Vec::new();
        for a in &c.args {
            lowered.push(self.expr(a)?);
        }
        if !lowered.iter().any(|o| self.is_value(o)) {
            self.error(
                c.span(),
                "destructuring a static call: bind the tuple first, then its fields",
            );
            return None;
        }
        Some(self.emit_call(&fp.path, lowered, n, c.span()))
    }

    fn emit_call(
        &mut self,
        path: &syn::Path,
        args: Vec<Operand>,
        n: usize,
        span: Span,
    ) -> Vec<VarId> {
        if path.get_ident().is_some_and(|i| *i == self.f.ident) {
            self.error(
                span,
                "a differentiable function cannot call itself (its generated variants would nest without end); write the recursion as a loop with carried values (`for`/`while`, with `break` if needed)",
            );
        }
        let args = args
            .into_iter()
            .map(|o| match o {
                Operand::Var(v) if self.kind(v) != Kind::Static => CallArg::Value(v),
                o => CallArg::Static(self.tok(&o)),
            })
            .collect();
        let base = path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_else(|| "call".into());
        let outs: Vec<VarId> = (0..n)
            .map(|_| self.fresh(&format!("__{base}"), Kind::Value))
            .collect();
        let id = self.id();
        let checkpoint = std::mem::take(&mut self.checkpoint_next);
        self.f.body.push(Stmt::Call {
            checkpoint,
            outs: outs.clone(),
            path: path.clone(),
            args,
            span,
            id,
        });
        outs
    }

    // ----- outputs ---------------------------------------------------------

    fn outputs(&mut self, tail: Tail) {
        let ret_ty = self.f.ret_ty.clone();
        match tail {
            Tail::Tuple(items) => {
                let Type::Tuple(tt) = &ret_ty else {
                    self.error(
                        ret_ty.span(),
                        "the function returns a tuple, so its return type must be a tuple type",
                    );
                    return;
                };
                if tt.elems.len() != items.len() {
                    self.error(
                        ret_ty.span(),
                        format!(
                            "the return type has {} elements but the function returns {}",
                            tt.elems.len(),
                            items.len()
                        ),
                    );
                    return;
                }
                self.f.tuple_output = true;
                for (op, ty) in items.into_iter().zip(tt.elems.iter()) {
                    self.output_item(op, ty);
                }
            }
            Tail::List(items) => {
                if !is_vec_of_arrays(&ret_ty) {
                    self.error(
                        ret_ty.span(),
                        "the function returns `vec![..]`, so its return type must be `Vec<Array>`",
                    );
                    return;
                }
                if items.is_empty() {
                    self.error(
                        ret_ty.span(),
                        "the returned `vec![]` is empty; return at least one array",
                    );
                    return;
                }
                self.f.tuple_output = true;
                self.f.list_output = true;
                for op in items {
                    match self.value_var(&op) {
                        Some(v) => self.f.outputs.push(Output::Value(v)),
                        None => {
                            self.error(
                                ret_ty.span(),
                                "every element of the returned `vec![..]` must be an array computed from the differentiable inputs",
                            );
                            return;
                        }
                    }
                }
            }
            Tail::Single(op) => self.output_item(op, &ret_ty),
        }
    }

    fn output_item(&mut self, op: Operand, ty: &Type) {
        match self.value_var(&op) {
            Some(v) => self.f.outputs.push(Output::Value(v)),
            None if mentions_array(ty)
                && !matches!(ty, Type::Path(p) if p.path.is_ident("Array")) =>
            {
                self.error(
                    ty.span(),
                    "a differentiable function returns an Array, f32/f64, a tuple of them, or a `Vec<Array>` written as `vec![a, b, ..]` at the end of the body (one element per output); build the list there, or return a tuple such as `(Array, Array)`",
                );
            }
            None => {
                let t = self.tok(&op);
                self.f.outputs.push(Output::Static(t, Box::new(ty.clone())));
            }
        }
    }
}

/// The four arithmetic operators.
#[derive(Clone, Copy)]
enum Arith {
    Add,
    Sub,
    Mul,
    Div,
}

impl Arith {
    fn rule(self) -> &'static str {
        match self {
            Arith::Add => "add",
            Arith::Sub => "sub",
            Arith::Mul => "mul",
            Arith::Div => "div",
        }
    }
    fn symbol(self) -> TokenStream {
        match self {
            Arith::Add => quote!(+),
            Arith::Sub => quote!(-),
            Arith::Mul => quote!(*),
            Arith::Div => quote!(/),
        }
    }
}

fn arith_op(op: &BinOp) -> Option<Arith> {
    match op {
        BinOp::Add(_) => Some(Arith::Add),
        BinOp::Sub(_) => Some(Arith::Sub),
        BinOp::Mul(_) => Some(Arith::Mul),
        BinOp::Div(_) => Some(Arith::Div),
        _ => None,
    }
}

fn is_comparison(op: &BinOp) -> bool {
    matches!(
        op,
        BinOp::Lt(_) | BinOp::Le(_) | BinOp::Gt(_) | BinOp::Ge(_) | BinOp::Eq(_) | BinOp::Ne(_)
    )
}

fn compound(op: &BinOp) -> Option<Arith> {
    match op {
        BinOp::AddAssign(_) => Some(Arith::Add),
        BinOp::SubAssign(_) => Some(Arith::Sub),
        BinOp::MulAssign(_) => Some(Arith::Mul),
        BinOp::DivAssign(_) => Some(Arith::Div),
        _ => None,
    }
}

/// The span of a variable binding in a pattern, if any.
/// The names a pattern binds (in an or-pattern, those of its first case).
fn bindings(p: &Pat, out: &mut Vec<syn::Ident>) {
    match p {
        Pat::Ident(pi) => {
            out.push(pi.ident.clone());
            if let Some((_, sub)) = &pi.subpat {
                bindings(sub, out);
            }
        }
        Pat::Or(o) => {
            if let Some(first) = o.cases.first() {
                bindings(first, out);
            }
        }
        Pat::Paren(pp) => bindings(&pp.pat, out),
        Pat::Reference(r) => bindings(&r.pat, out),
        Pat::Tuple(t) => t.elems.iter().for_each(|e| bindings(e, out)),
        Pat::TupleStruct(t) => t.elems.iter().for_each(|e| bindings(e, out)),
        Pat::Struct(st) => st.fields.iter().for_each(|f| bindings(&f.pat, out)),
        Pat::Slice(sl) => sl.elems.iter().for_each(|e| bindings(e, out)),
        Pat::Type(t) => bindings(&t.pat, out),
        _ => {}
    }
}

fn strip(e: &Expr) -> &Expr {
    match e {
        Expr::Paren(p) => strip(&p.expr),
        Expr::Group(g) => strip(&g.expr),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn expand_tree_access() {
        let item: syn::ItemFn = syn::parse_quote! {
            fn weighted(ws: &Vec<Array>, xs: &[Array], k: usize) -> Array {
                let a = &ws[0] * &xs[k];
                nabla::sum(&a)
            }
        };
        let opts = super::Options {
            krate: quote::quote!(::nabla),
        };
        let f = super::lower(&item, &opts).unwrap_or_else(|e| panic!("{e}"));
        let kinds: Vec<_> = f
            .vars
            .iter()
            .map(|v| (v.ident.to_string(), v.kind))
            .collect();
        assert!(
            kinds
                .iter()
                .any(|(n, k)| n.starts_with("ws_leaves") && *k == crate::ir::Kind::Tree),
            "{kinds:?}"
        );
        assert!(
            f.body
                .iter()
                .any(|s| matches!(s, crate::ir::Stmt::Leaf { .. })),
            "no leaf access lowered: {kinds:?}"
        );
    }
}
