//! Tree parameters: `p.w1`, `p.layers[i]`, `p.0` read one leaf array;
//! `self.attn` passed to a differentiable method is a part of the tree;
//! `*self.eps` and `self.blocks.len()` read static data of its skeleton.

use super::{Lowerer, Operand, strip};
use crate::ir::{CallArg, Kind, Stmt, VarId};
use proc_macro2::TokenStream;
use quote::quote;
use syn::Expr;

impl Lowerer<'_> {
    /// The tree variable at the root of a field/index chain.
    pub(super) fn tree_root(&self, e: &Expr) -> Option<VarId> {
        match strip(e) {
            Expr::Field(f) => self.tree_root(&f.base),
            Expr::Index(i) => self.tree_root(&i.expr),
            Expr::Path(p) => {
                if let Some(alias) = self.tree_alias(e) {
                    return self.tree_root(&alias);
                }
                let v = self.lookup(&p.path.get_ident()?.to_string())?;
                (self.kind(v) == Kind::Tree).then_some(v)
            }
            _ => None,
        }
    }

    /// What `e` stands for when it names the contents of an optional part
    /// (`b` in `if let Some(b) = &self.bias`).
    pub(super) fn tree_alias(&self, e: &Expr) -> Option<Expr> {
        let Expr::Path(p) = strip(e) else { return None };
        let name = p.path.get_ident()?.to_string();
        // The alias binds its name to its tree's variable; a `let` of the
        // same name in the branch shadows it.
        let (_, alias, root) = self.tree_aliases.iter().rev().find(|(n, ..)| *n == name)?;
        (self.lookup(&name) == Some(*root)).then(|| alias.clone())
    }

    /// `p.w1`, `p.layers[i]`, `p.0`: one array of a tree parameter.
    pub(super) fn leaf(&mut self, e: &Expr) -> Option<Operand> {
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
        let (_, _, segs) = self.tree_path(e)?;
        let tree = self.tree_root(e).expect("checked by the caller");
        let param = self
            .f
            .param_of(tree)
            .expect("tree variables are parameters")
            .ident
            .clone();
        // The leaves' type: arrays, or the floats of a function of floats.
        let leaf = self.f.concrete();
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

impl Lowerer<'_> {
    /// A tree path (`self.attn`, `p.blocks[i]`, `p`): its root tree
    /// variable, its value in the skeleton (`(*p.skeleton).blocks[i]`) and
    /// its path as `Seg`s, with index expressions lowered as statics. A
    /// name bound by `if let Some(b) = &self.bias` continues into the
    /// option's contents (an `Option` adds no `Seg`: its leaves are its
    /// contents').
    pub(super) fn tree_path(&mut self, e: &Expr) -> Option<(VarId, TokenStream, Vec<TokenStream>)> {
        enum Step {
            Field(syn::Member),
            Index(TokenStream),
            Unwrap,
        }
        let krate = self.f.krate.clone();
        let root = self.tree_root(e)?;
        let mut steps = Vec::new();
        let mut cur = strip(e).clone();
        loop {
            match cur {
                Expr::Field(f) => {
                    steps.push(Step::Field(f.member.clone()));
                    cur = strip(&f.base).clone();
                }
                Expr::Index(ix) => {
                    steps.push(Step::Index(self.static_expr(&ix.index)?));
                    cur = strip(&ix.expr).clone();
                }
                ref p @ Expr::Path(_) => match self.tree_alias(p) {
                    Some(alias) => {
                        steps.push(Step::Unwrap);
                        cur = strip(&alias).clone();
                    }
                    None => break,
                },
                _ => break,
            }
        }
        let param = &self
            .f
            .param_of(root)
            .expect("tree variables are parameters")
            .ident;
        let mut skel = quote!((*#param.skeleton));
        let mut segs = Vec::new();
        for step in steps.into_iter().rev() {
            match step {
                Step::Field(m) => {
                    segs.push(match &m {
                        syn::Member::Named(n) => {
                            let s = n.to_string();
                            quote!(#krate::tree::Seg::Field(#s))
                        }
                        syn::Member::Unnamed(i) => {
                            let i = i.index as usize;
                            quote!(#krate::tree::Seg::Index(#i))
                        }
                    });
                    skel = quote!(#skel.#m);
                }
                Step::Index(i) => {
                    segs.push(quote!(#krate::tree::Seg::Index((#i) as usize)));
                    skel = quote!(#skel[(#i) as usize]);
                }
                Step::Unwrap => {
                    skel = quote!((*::core::option::Option::unwrap(::core::option::Option::as_ref(&#skel))))
                }
            }
        }
        Some((root, skel, segs))
    }

    /// A part of a tree (`self.attn`, `p.blocks[i]`, or the whole tree)
    /// passed to a differentiable method: its skeleton value and the
    /// static range of its leaves.
    pub(super) fn part(&mut self, e: &Expr) -> Option<CallArg> {
        let (tree, skel, segs) = self.tree_path(e)?;
        let krate = self.f.krate.clone();
        let leaf = self.f.concrete();
        let param = self
            .f
            .param_of(tree)
            .expect("tree variables are parameters")
            .ident
            .clone();
        let range = self.fresh("__part_range", Kind::Static);
        self.f.body.push(Stmt::Static {
            out: range,
            expr: quote!(#krate::tree::part_range::<#leaf, _, _>(#param.skeleton, &[#(#segs),*], &#skel)),
        });
        Some(CallArg::Part { tree, skel, range })
    }

    /// `*self.eps`, `self.blocks.len()`: static data read from a tree's
    /// skeleton (a `Setting`, a length), never differentiated. The value
    /// is bound to a static variable (a clone), so a pullback that reads it
    /// owns it instead of borrowing the skeleton.
    pub(super) fn skeleton_read(
        &mut self,
        e: &Expr,
        read: impl FnOnce(TokenStream) -> TokenStream,
    ) -> Option<Operand> {
        let (_, skel, _) = self.tree_path(e)?;
        let value = read(skel);
        let v = self.materialize("__setting", Operand::Tok(value));
        Some(Operand::Var(v))
    }
}
