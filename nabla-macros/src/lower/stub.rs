//! The stand-in for a function that failed to lower: its signature, with
//! every output a value no code ever computes. The macro emits its errors
//! and this stand-in's full expansion (the function value, the variants,
//! the transforms' entry points), so the rest of the crate type-checks
//! against the function as declared: `grad(f)(..)`, calls from other
//! differentiable functions and direct calls report nothing more, and each
//! mistake is one error.

use super::signature::is_vec_of_arrays;
use super::{Lowerer, Options};
use crate::errors::Errors;
use crate::ir::{Function, Kind, Output, Stmt, Tier};
use quote::quote;
use syn::{ItemFn, Type};

/// `item`'s signature with stand-in outputs; `None` when the signature
/// itself has errors (then only the function as written can be emitted).
pub fn stub(item: &ItemFn, opts: &Options) -> Option<Function> {
    // A function mixing arrays and floats is stood in for as the error
    // message suggests writing it: with the floats `#[nondiff]`.
    let mut item = item.clone();
    let typed = || {
        item.sig.inputs.iter().filter_map(|a| match a {
            syn::FnArg::Typed(pt) => Some(&*pt.ty),
            syn::FnArg::Receiver(_) => None,
        })
    };
    let arrays = typed().any(|t| last_ident(t).as_deref() == Some("Array"));
    if arrays {
        for arg in item.sig.inputs.iter_mut() {
            if let syn::FnArg::Typed(pt) = arg
                && matches!(last_ident(&pt.ty).as_deref(), Some("f64" | "f32"))
            {
                pt.attrs.push(syn::parse_quote!(#[nondiff]));
            }
        }
    }
    let item = &item;
    let mut cx = Errors::new();
    let mut l = Lowerer::new(item, opts, &mut cx);
    l.signature(item);
    if !l.cx.is_empty() {
        return None;
    }
    let ret_ty = l.f.ret_ty.clone();
    match &ret_ty {
        Type::Tuple(t) if !t.elems.is_empty() => {
            l.f.tuple_output = true;
            for ty in &t.elems {
                l.stub_output(ty);
            }
        }
        ty if is_vec_of_arrays(ty) => {
            l.f.tuple_output = true;
            l.f.list_output = true;
            l.stub_output(&syn::parse_quote!(Array));
        }
        Type::Array(a) if l.f.tier != Tier::Array => {
            let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(n),
                ..
            }) = &a.len
            else {
                return None;
            };
            l.f.tuple_output = true;
            l.f.array_output = true;
            for _ in 0..n.base10_parse::<usize>().ok()? {
                l.stub_output(&a.elem);
            }
        }
        ty => l.stub_output(ty),
    }
    Some(l.f)
}

impl Lowerer<'_> {
    /// One stand-in output of type `ty`: a value (an array, or a float in a
    /// function of floats) or a static.
    fn stub_output(&mut self, ty: &Type) {
        let krate = self.f.krate.clone();
        let last = last_ident(ty);
        let value = match self.f.tier {
            Tier::Array => last.as_deref() == Some("Array"),
            Tier::Scalar(_) => matches!(last.as_deref(), Some("f64" | "f32")),
        };
        if value {
            let out = self.fresh("__failed", Kind::Value);
            let expr = quote!(#krate::transforms::private::failed::<__V>());
            self.f.body.push(Stmt::Constant { out, expr });
            self.f.outputs.push(Output::Value(out));
        } else {
            let t = quote!(::core::unreachable!());
            self.f.outputs.push(Output::Static(t, Box::new(ty.clone())));
        }
    }
}

/// The last identifier of a path type, through one reference (`&Array`:
/// `Array`).
fn last_ident(ty: &Type) -> Option<String> {
    match ty {
        Type::Reference(r) => last_ident(&r.elem),
        Type::Path(p) => p.path.segments.last().map(|s| s.ident.to_string()),
        _ => None,
    }
}
