//! The signature: each parameter's kind (value, tree or static), the
//! value tier (arrays or one float type), and the checks on what a
//! differentiable function may be.

use super::Lowerer;
use crate::desugar::returns;
use crate::ir::{Kind, Param, ScalarTy, Tier};
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{Expr, FnArg, ItemFn, Pat, ReturnType, Type};

impl Lowerer<'_> {
    /// Lowers the signature: each parameter becomes a value, tree or
    /// static variable bound to its name, and the value tier is set.
    pub(super) fn signature(&mut self, item: &ItemFn) {
        let sig = &item.sig;
        self.check_header(sig);
        let mut seen = Seen::default();
        for arg in &sig.inputs {
            match arg {
                FnArg::Receiver(r) => self.receiver(r, &mut seen),
                FnArg::Typed(pt) => self.param(pt, &mut seen),
            }
        }
        match (seen.array, seen.float) {
            (Some(_), Some((_, span))) => self.cx.error(
                span,
                "a differentiable function cannot mix Array and float parameters yet; pass the float as a 0-d array (Array::scalar) or mark it #[nondiff]",
            ),
            (None, Some((ty, _))) => self.f.tier = Tier::Scalar(ty),
            (None, None) if self.cx.is_empty() => self.cx.error(
                sig.ident.span(),
                "this function has no differentiable parameter; take at least one Array, f32 or f64 (integers, bools and #[nondiff] parameters are static)",
            ),
            _ => {}
        }
    }

    /// `&self` of a method: a tree parameter (the layer's arrays), named
    /// `__nabla_self` in the generated variants and `self` in the body.
    fn receiver(&mut self, r: &syn::Receiver, seen: &mut Seen) {
        if r.reference.is_none() || r.mutability.is_some() || r.colon_token.is_some() {
            self.cx.error(
                r.span(),
                "a differentiable method takes `&self` (a tree of arrays, e.g. a `#[derive(Tree)]` layer); return new values instead of taking `self` or `&mut self`",
            );
            return;
        }
        seen.array.get_or_insert(r.span());
        let v = self.fresh("self_leaves", Kind::Tree);
        self.bind("self", v);
        self.f.method = true;
        self.f.params.push(Param {
            ident: quote::format_ident!("__nabla_self"),
            ty: syn::parse_quote!(&Self),
            var: Some(v),
            by_ref: true,
            tree: Some(syn::parse_quote!(Self)),
        });
    }

    /// What a differentiable function may not be: generic, `async`,
    /// `unsafe`, `const`, or without a result.
    fn check_header(&mut self, sig: &syn::Signature) {
        if !sig.generics.params.is_empty() {
            self.cx.error(
                sig.generics.span(),
                "#[differentiable] functions cannot have generic parameters: the macro makes the function generic over its value type itself; use concrete `Array`, `f32` or `f64` types",
            );
        }
        if let Some(a) = &sig.asyncness {
            self.cx.error(a.span(), "async functions cannot be differentiable; differentiate a synchronous function and call it from async code");
        }
        if let Some(u) = &sig.unsafety {
            self.cx.error(u.span(), "unsafe functions cannot be differentiable; move the unsafe part into an ordinary function with static arguments");
        }
        if let Some(c) = &sig.constness {
            self.cx.error(
                c.span(),
                "const functions cannot be differentiable; remove `const`",
            );
        }
        if matches!(sig.output, ReturnType::Default) {
            self.cx.error(
                sig.ident.span(),
                "a differentiable function must return a value (an Array, f32, f64 or a tuple)",
            );
        }
    }

    /// One parameter: its variable (bound to its name) and its [`Param`].
    fn param(&mut self, pt: &syn::PatType, seen: &mut Seen) {
        let ident = match &*pt.pat {
            Pat::Ident(pi) if pi.by_ref.is_none() && pi.subpat.is_none() => pi.ident.clone(),
            other => {
                self.cx.error(other.span(), "parameters of differentiable functions must be plain names (destructure inside the body with `let`)");
                return;
            }
        };
        let nondiff = pt.attrs.iter().any(|a| a.path().is_ident("nondiff"));
        let class = if nondiff {
            TypeClass::Static
        } else {
            classify(&pt.ty)
        };
        let (var, by_ref, tree) = match class {
            TypeClass::Array { by_ref } => {
                seen.array.get_or_insert(pt.ty.span());
                (
                    Some(self.fresh(&ident.to_string(), Kind::Value)),
                    by_ref,
                    None,
                )
            }
            TypeClass::Float { ty, by_ref } => {
                match seen.float {
                    Some((t, _)) if t != ty => self.cx.error(pt.ty.span(), "all float parameters of a differentiable function must have the same type (all f32 or all f64)"),
                    _ => seen.float = Some((ty, pt.ty.span())),
                }
                (
                    Some(self.fresh(&ident.to_string(), Kind::Value)),
                    by_ref,
                    None,
                )
            }
            TypeClass::Tree { by_ref } | TypeClass::FloatTree { by_ref, .. } => {
                if let TypeClass::FloatTree { ty, .. } = class {
                    match seen.float {
                        Some((t, _)) if t != ty => self.cx.error(pt.ty.span(), "all float parameters of a differentiable function must have the same type (all f32 or all f64)"),
                        _ => seen.float = Some((ty, pt.ty.span())),
                    }
                } else {
                    seen.array.get_or_insert(pt.ty.span());
                }
                let v = self.fresh(&format!("{ident}_leaves"), Kind::Tree);
                let tree = match &*pt.ty {
                    Type::Reference(r) => (*r.elem).clone(),
                    t => t.clone(),
                };
                (Some(v), by_ref, Some(tree))
            }
            TypeClass::Static => {
                // A static parameter keeps its own name.
                let v = self.fresh(&ident.to_string(), Kind::Static);
                self.f.vars[v].ident = ident.clone();
                if is_number_type(&pt.ty) {
                    self.numeric.insert(v);
                }
                self.bind(&ident.to_string(), v);
                self.f.params.push(Param {
                    ident,
                    ty: (*pt.ty).clone(),
                    var: None,
                    by_ref: false,
                    tree: None,
                });
                return;
            }
            TypeClass::Unsupported(msg) => {
                self.cx.error(pt.ty.span(), msg);
                return;
            }
        };
        let v = var.expect("value or tree parameter");
        if self.f.vars[v].ident == ident {
            // The parameter's own token (its span, hence its hygiene: the
            // generated code names the caller's reference).
            self.f.vars[v].ident = ident.clone();
        }
        self.bind(&ident.to_string(), v);
        self.f.params.push(Param {
            ident,
            ty: (*pt.ty).clone(),
            var: Some(v),
            by_ref,
            tree,
        });
    }

    /// The body with early `return`s rewritten (see [`returns`]), or `None`
    /// after reporting why it cannot be.
    pub(super) fn early_return_body(&mut self, item: &ItemFn) -> Option<syn::Block> {
        if matches!(self.f.ret_ty, Type::Tuple(_)) {
            self.cx.error(
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
            self.cx.error(
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
        self.cx.ok(returns::desugar(&item.block, &init))
    }
}

/// The value types the parameters have shown so far (the first array or
/// tree parameter's span, the first float parameter's type and span).
#[derive(Default)]
struct Seen {
    array: Option<Span>,
    float: Option<(ScalarTy, Span)>,
}

/// How a parameter or output type is treated.
enum TypeClass {
    Array {
        by_ref: bool,
    },
    Tree {
        by_ref: bool,
    },
    /// A fixed-size array of floats (`[f64; 3]`, `[[f64; 3]; 2]`): a tree
    /// whose leaves are floats, in a function of floats.
    FloatTree {
        ty: ScalarTy,
        by_ref: bool,
    },
    Float {
        ty: ScalarTy,
        by_ref: bool,
    },
    Static,
    Unsupported(&'static str),
}

/// Whether `ty` is a primitive number type (or a reference to one).
pub(super) fn is_number_type(ty: &Type) -> bool {
    let ty = match ty {
        Type::Reference(r) => &*r.elem,
        t => t,
    };
    matches!(
        last_ident(ty).as_deref(),
        Some(
            "f64"
                | "f32"
                | "i64"
                | "i32"
                | "i16"
                | "i8"
                | "u64"
                | "u32"
                | "u16"
                | "u8"
                | "usize"
                | "isize"
        )
    )
}

/// The last segment of a path type's name.
fn last_ident(ty: &Type) -> Option<String> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}

/// How a parameter of type `ty` (without `#[nondiff]`) is treated.
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
            // `Option<f64>`, `Option<usize>`, ..: a static setting. Only an
            // optional array or tree (`Option<Array>`, `Option<Linear>`) is
            // a tree of arrays.
            Some("Option")
                if first_arg(inner).is_some_and(|a| {
                    !matches!(
                        classify(a),
                        TypeClass::Array { .. } | TypeClass::Tree { .. }
                    )
                }) =>
            {
                TypeClass::Static
            }
            Some("f64") => TypeClass::Float {
                ty: ScalarTy::F64,
                by_ref,
            },
            Some("f32") => TypeClass::Float {
                ty: ScalarTy::F32,
                by_ref,
            },
            Some(id)
                if mentions_array(inner)
                    || !STATIC_TYPES.contains(&id)
                    || (id == "Vec"
                        && first_arg(inner)
                            .is_some_and(|a| !matches!(classify(a), TypeClass::Static))) =>
            {
                TypeClass::Tree { by_ref }
            }
            _ => TypeClass::Static,
        },
        Type::Array(_) if float_elem(inner).is_some() => TypeClass::FloatTree {
            ty: float_elem(inner).expect("checked"),
            by_ref,
        },
        Type::Slice(_) | Type::Array(_) | Type::Tuple(_) if mentions_array(inner) => {
            TypeClass::Tree { by_ref }
        }
        _ => TypeClass::Static,
    }
}

/// The first type argument of a path type (`T` of `Vec<T>`).
fn first_arg(ty: &Type) -> Option<&Type> {
    let Type::Path(p) = ty else { return None };
    let syn::PathArguments::AngleBracketed(args) = &p.path.segments.last()?.arguments else {
        return None;
    };
    match args.args.first()? {
        syn::GenericArgument::Type(t) => Some(t),
        _ => None,
    }
}

/// The float type of `[f64; N]`, `[[f32; N]; M]`, ..
fn float_elem(ty: &Type) -> Option<ScalarTy> {
    match ty {
        Type::Array(a) => float_elem(&a.elem),
        Type::Paren(p) => float_elem(&p.elem),
        t => match last_ident(t).as_deref() {
            Some("f64") => Some(ScalarTy::F64),
            Some("f32") => Some(ScalarTy::F32),
            _ => None,
        },
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
pub(super) fn is_vec_of_arrays(ty: &Type) -> bool {
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

/// Whether `ty` mentions `Array`, `f64` or `f32` anywhere.
pub(super) fn mentions_array(ty: &Type) -> bool {
    fn walk(ts: TokenStream) -> bool {
        ts.into_iter().any(|t| match t {
            TokenTree::Ident(i) => i == "Array" || i == "f64" || i == "f32",
            TokenTree::Group(g) => walk(g.stream()),
            _ => false,
        })
    }
    walk(ty.to_token_stream())
}
