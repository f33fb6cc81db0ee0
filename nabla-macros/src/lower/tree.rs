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
        let root = self.tree_root(e).expect("checked by the caller");
        if let Some(index) = self.fixed_index(root, e) {
            let out = self.fresh("__leaf", Kind::Value);
            self.f.body.push(Stmt::Leaf {
                out,
                tree: root,
                index,
            });
            return Some(Operand::Var(out));
        }
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

    /// `p[i]` / `p[i][j]` reading one float of a fixed-size array
    /// parameter (`[f64; N]`, `[[f64; N]; M]`): its leaf index computed
    /// from the array's lengths (row-major, as the tree flattens it), not
    /// by walking a path at run time. `None` for other reads.
    fn fixed_index(&mut self, tree: VarId, e: &Expr) -> Option<VarId> {
        let param = self.f.param_of(tree)?;
        let mut ty = param.tree.clone()?;
        // The lengths, outermost first.
        let mut lens = Vec::new();
        while let syn::Type::Array(a) = ty {
            lens.push(a.len.clone());
            ty = (*a.elem).clone();
        }
        if lens.is_empty()
            || !matches!(&ty, syn::Type::Path(p) if p.path.is_ident("f64") || p.path.is_ident("f32"))
        {
            return None;
        }
        // The indices, outermost first; exactly one per axis.
        let mut idx = Vec::new();
        let mut cur = strip(e);
        while let Expr::Index(ix) = cur {
            idx.push(&*ix.index);
            cur = strip(&ix.expr);
        }
        if idx.len() != lens.len() || !matches!(cur, Expr::Path(_)) {
            return None;
        }
        idx.reverse();
        let mut is = Vec::new();
        for i in idx {
            is.push(self.static_expr(i)?);
        }
        let krate = self.f.krate.clone();
        let index = self.fresh("__leaf_index", Kind::Static);
        self.f.body.push(Stmt::Static {
            out: index,
            expr: quote!(#krate::tree::fixed_index([#((#is) as usize),*], [#(#lens),*])),
        });
        Some(index)
    }
}
