//! Outputs: the body's final value as one output, a tuple of outputs or
//! a list (`vec![..]` returned as `Vec<Array>`), checked against the
//! declared return type.

use super::signature::{is_vec_of_arrays, mentions_array};
use super::{BlockValue, Lowerer, Operand};
use crate::ir::Output;
use syn::Type;
use syn::spanned::Spanned;

impl Lowerer<'_> {
    /// Records the body's value as the function's outputs.
    pub(super) fn outputs(&mut self, value: BlockValue) {
        let ret_ty = self.f.ret_ty.clone();
        match value {
            BlockValue::Tuple(items) => {
                let Type::Tuple(tt) = &ret_ty else {
                    self.cx.error(
                        ret_ty.span(),
                        "the function returns a tuple, so its return type must be a tuple type",
                    );
                    return;
                };
                if tt.elems.len() != items.len() {
                    self.cx.error(
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
            BlockValue::List(items) => {
                if !is_vec_of_arrays(&ret_ty) {
                    self.cx.error(
                        ret_ty.span(),
                        "the function returns `vec![..]`, so its return type must be `Vec<Array>`",
                    );
                    return;
                }
                if items.is_empty() {
                    self.cx.error(
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
                            self.cx.error(
                                ret_ty.span(),
                                "every element of the returned `vec![..]` must be an array computed from the differentiable inputs",
                            );
                            return;
                        }
                    }
                }
            }
            BlockValue::Fixed(items) => self.fixed_outputs(items, &ret_ty),
            BlockValue::Single(op) => self.output_item(op, &ret_ty),
        }
    }

    /// `[a, b, ..]` returned as `[f64; M]` from a function of floats: one
    /// output per element (static elements become constants).
    fn fixed_outputs(&mut self, items: Vec<Operand>, ret_ty: &Type) {
        let Type::Array(at) = ret_ty else {
            return;
        };
        let float =
            matches!(&*at.elem, Type::Path(p) if p.path.is_ident("f64") || p.path.is_ident("f32"));
        if !float || self.f.tier == crate::ir::Tier::Array {
            self.cx.error(
                ret_ty.span(),
                "a differentiable function of floats may return `[f64; M]` (or `[f32; M]`) written as `[a, b, ..]`; a function of arrays returns an Array, a tuple or `vec![..]`",
            );
            return;
        }
        if let syn::Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(n),
            ..
        }) = &at.len
            && n.base10_parse::<usize>().ok() != Some(items.len())
        {
            self.cx.error(
                ret_ty.span(),
                format!(
                    "the return type has {} elements but the function returns {}",
                    n,
                    items.len()
                ),
            );
            return;
        }
        self.f.tuple_output = true;
        self.f.array_output = true;
        for op in items {
            let v = match self.value_var(&op) {
                Some(v) => v,
                None => {
                    let s = self.materialize("__element", op);
                    let mut body = std::mem::take(&mut self.f.body);
                    let v = self.promote_into(&mut body, s);
                    self.f.body = body;
                    match v {
                        Some(v) => v,
                        None => return,
                    }
                }
            };
            self.f.outputs.push(Output::Value(v));
        }
    }

    /// One output of declared type `ty`: a value, or static tokens.
    fn output_item(&mut self, op: Operand, ty: &Type) {
        match self.value_var(&op) {
            Some(v) => self.f.outputs.push(Output::Value(v)),
            None if mentions_array(ty)
                && !matches!(ty, Type::Path(p) if p.path.is_ident("Array")) =>
            {
                self.cx.error(
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
