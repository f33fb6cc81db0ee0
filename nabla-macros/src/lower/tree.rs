//! Tree parameters: `p.w1`, `p.layers[i]`, `p.0` read one leaf array.

use super::{Lowerer, Operand, strip};
use crate::ir::{Kind, Stmt, VarId};
use quote::quote;
use syn::Expr;

impl Lowerer<'_> {
    /// The tree variable at the root of a field/index chain.
    pub(super) fn tree_root(&self, e: &Expr) -> Option<VarId> {
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
    pub(super) fn leaf(&mut self, e: &Expr) -> Option<Operand> {
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
        // The leaves' type: arrays, or the floats of a function of floats.
        let leaf = crate::codegen::concrete(&self.f);
        let index = self.fresh("__leaf_index", Kind::Static);
        self.f.body.push(Stmt::Static {
            out: index,
            expr: quote!(#param.index::<#leaf>(&[#(#segs),*])),
        });
        let out = self.fresh("__leaf", Kind::Value);
        self.f.body.push(Stmt::Leaf { out, tree, index });
        Some(Operand::Var(out))
    }
}
