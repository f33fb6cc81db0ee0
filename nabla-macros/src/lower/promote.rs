//! Promotion of statics to values: a number that a loop or a branch turns
//! into a differentiable value (`let mut v = 0.0; for .. { v = v + dt * a }`,
//! or `let mut y = 0.0; if c { y = x * 2.0 }`) is a value from the start,
//! a constant with no derivative. The constant takes its value type (dtype,
//! device, batch, tangent structure) from the first differentiable
//! parameter, or the first float of a fixed-size array when there is no other
//! (`transforms::private::promote`: `full_like` of it for a
//! number, `lift` for an `Array`, so `let mut acc = Array::zeros(..)` then
//! `acc = &acc + x` in a loop works too).

use super::Lowerer;
use crate::ir::{Kind, Stmt, VarId};
use proc_macro2::TokenStream;
use quote::quote;

impl Lowerer<'_> {
    /// The expression of static `s` as a constant value, or `None` when
    /// the function has no array or float parameter to take the value type
    /// from.
    fn promoted_expr(&self, s: VarId) -> Option<TokenStream> {
        let krate = &self.f.krate;
        let c = self.f.name(s);
        let template = self
            .f
            .params
            .iter()
            .filter(|p| p.tree.is_none())
            .find_map(|p| p.var.filter(|&v| self.kind(v) == Kind::Value));
        let t = match template {
            Some(v) => self.f.val(v),
            // Only fixed-size arrays (`p: &[f64; 3]`): the first float.
            None => {
                let tree = self
                    .f
                    .params
                    .iter()
                    .find_map(|p| p.var.filter(|_| p.fixed_len().is_some()))?;
                let leaves = self.f.name(tree);
                quote!(&#leaves[0])
            }
        };
        Some(quote!(#krate::transforms::private::promote(#t, &#c)))
    }

    /// Appends to `body` the promotion of static `s` to a value; the new
    /// variable, or `None` (nothing appended) when there is no parameter
    /// to take the value type from.
    pub(super) fn promote_into(&mut self, body: &mut Vec<Stmt>, s: VarId) -> Option<VarId> {
        let expr = self.promoted_expr(s)?;
        let hint = self.f.name(s).to_string();
        let out = self.fresh(&hint, Kind::Value);
        body.push(Stmt::Constant { out, expr });
        self.f.promoted = true;
        Some(out)
    }
}
