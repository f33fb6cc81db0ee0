//! Compile-time fusion: maximal trees of elementwise operations in one
//! block become one region, called like another differentiable function
//! (`Stmt::Call` on the region's type) whose programs the runtime runs as
//! one pass per sweep on CPU arrays (`nabla::fused`).
//!
//! A region grows from a root (an elementwise operation whose result is
//! used more than once, by something that is not elementwise, or leaves
//! the block) through the producers of its inputs that are elementwise,
//! in the same block, and used only there. Its static parameters must be
//! literals (`* 100.0`, `.powi(2)`), so the region's programs are closed.
//! Each region is also lowered at the float tier, where its programs run
//! per element.

use crate::ir::{CallArg, Callee, Function, Kind, Output, Param, ScalarTy, Stmt, Tier, Var, VarId};
use crate::optable::is_elementwise;
use proc_macro2::{TokenStream, TokenTree};
use quote::format_ident;
use std::collections::HashMap;

/// A fused region: its type's name, its programs at the array tier (op by
/// op) and at the float tier (per element), and its number of inputs.
pub struct Region {
    pub ty: syn::Ident,
    pub array: Function,
    pub scalar: Function,
    pub inputs: usize,
}

/// Replaces every region of two or more elementwise operations in `f`
/// by a call of the region; returns the regions.
pub fn fuse(f: &mut Function) -> Vec<Region> {
    if f.tier != Tier::Array {
        return Vec::new();
    }
    let uses = use_counts(f);
    let mut body = std::mem::take(&mut f.body);
    let mut regions = Vec::new();
    let mut next_id = 1_000_000;
    fuse_block(f, &mut body, &uses, &mut regions, &mut next_id);
    f.body = body;
    regions
}

/// How many times each variable is read, anywhere in the function.
fn use_counts(f: &Function) -> Vec<usize> {
    let mut uses = vec![0usize; f.vars.len()];
    let by_name: HashMap<String, VarId> = f
        .vars
        .iter()
        .enumerate()
        .map(|(i, v)| (v.ident.to_string(), i))
        .collect();
    let mut tokens = |t: &TokenStream, uses: &mut Vec<usize>| {
        for id in idents(t) {
            if let Some(&v) = by_name.get(&id) {
                uses[v] += 1;
            }
        }
    };
    fn walk(
        body: &[Stmt],
        uses: &mut Vec<usize>,
        tokens: &mut dyn FnMut(&TokenStream, &mut Vec<usize>),
    ) {
        for s in body {
            match s {
                Stmt::Prim { inputs, params, .. } => {
                    inputs.iter().for_each(|&v| uses[v] += 1);
                    params.iter().for_each(|p| tokens(p, uses));
                }
                Stmt::Call { args, .. } => {
                    for a in args {
                        match a {
                            CallArg::Value(v) => uses[*v] += 1,
                            CallArg::Static(t) => tokens(t, uses),
                        }
                    }
                }
                Stmt::If {
                    cond,
                    then_body,
                    else_body,
                    merges,
                    ..
                } => {
                    tokens(cond, uses);
                    walk(then_body, uses, tokens);
                    walk(else_body, uses, tokens);
                    for m in merges {
                        uses[m.then_v] += 1;
                        uses[m.else_v] += 1;
                    }
                }
                Stmt::For {
                    iter,
                    body,
                    carried,
                    cond,
                    ..
                } => {
                    tokens(iter, uses);
                    if let Some((_, c)) = cond {
                        tokens(c, uses);
                    }
                    walk(body, uses, tokens);
                    for c in carried {
                        uses[c.init] += 1;
                        uses[c.next] += 1;
                    }
                }
                Stmt::Static { expr, .. } | Stmt::Constant { expr, .. } => tokens(expr, uses),
                Stmt::Leaf { tree, index, .. } => {
                    uses[*tree] += 1;
                    uses[*index] += 1;
                }
            }
        }
    }
    walk(&f.body, &mut uses, &mut tokens);
    for o in &f.outputs {
        match o {
            Output::Value(v) => uses[*v] += 1,
            Output::Static(t, _) => tokens(t, &mut uses),
        }
    }
    uses
}

/// Every identifier in a token stream.
fn idents(t: &TokenStream) -> Vec<String> {
    let mut out = Vec::new();
    for tt in t.clone() {
        match tt {
            TokenTree::Ident(i) => out.push(i.to_string()),
            TokenTree::Group(g) => out.extend(idents(&g.stream())),
            _ => {}
        }
    }
    out
}

/// Whether a static parameter is a literal expression (`(100.0) as f64`,
/// `2`, `-1.5`), which a region can hold.
fn is_literal(t: &TokenStream) -> bool {
    fn lit(e: &syn::Expr) -> bool {
        match e {
            syn::Expr::Lit(_) => true,
            syn::Expr::Paren(p) => lit(&p.expr),
            syn::Expr::Group(g) => lit(&g.expr),
            syn::Expr::Unary(u) => matches!(u.op, syn::UnOp::Neg(_)) && lit(&u.expr),
            syn::Expr::Cast(c) => lit(&c.expr),
            _ => false,
        }
    }
    syn::parse2::<syn::Expr>(t.clone()).is_ok_and(|e| lit(&e))
}

/// The operations a region holds: arithmetic, which the per-element pass
/// runs in a few instructions. Transcendental functions (`exp`, `tanh`,
/// `sin`, ..) stay passes of their own, where the kernels evaluate them
/// vectorised over whole buffers: per element in a fused loop they are
/// scalar calls, slower than the memory they save (measured in
/// docs/performance.md); the arithmetic around them still fuses.
const ARITHMETIC: &[&str] = &[
    "add",
    "sub",
    "mul",
    "div",
    "neg",
    "square",
    "abs",
    "add_scalar",
    "mul_scalar",
];

/// Whether statement `s` may be in a region.
fn fusable(s: &Stmt) -> bool {
    matches!(s, Stmt::Prim { op, params, .. }
        if is_elementwise(op) && ARITHMETIC.contains(&op.rule) && params.iter().all(is_literal))
}

/// Fuses the regions of one block (and of the blocks inside it).
fn fuse_block(
    f: &Function,
    body: &mut Vec<Stmt>,
    uses: &[usize],
    regions: &mut Vec<Region>,
    next_id: &mut usize,
) {
    for s in body.iter_mut() {
        match s {
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                fuse_block(f, then_body, uses, regions, next_id);
                fuse_block(f, else_body, uses, regions, next_id);
            }
            Stmt::For { body, .. } => fuse_block(f, body, uses, regions, next_id),
            _ => {}
        }
    }
    // The statement producing each variable in this block.
    let producer: HashMap<VarId, usize> = body
        .iter()
        .enumerate()
        .filter_map(|(i, s)| match s {
            Stmt::Prim { out, .. } => Some((*out, i)),
            _ => None,
        })
        .collect();
    let mut taken = vec![false; body.len()];
    // Regions as (root, members in program order).
    let mut found: Vec<(usize, Vec<usize>)> = Vec::new();
    for root in (0..body.len()).rev() {
        if taken[root] || !fusable(&body[root]) {
            continue;
        }
        let mut members = vec![root];
        let mut stack = vec![root];
        while let Some(m) = stack.pop() {
            let Stmt::Prim { inputs, .. } = &body[m] else {
                continue;
            };
            for v in inputs {
                if let Some(&p) = producer.get(v)
                    && !taken[p]
                    && !members.contains(&p)
                    && uses[*v] == 1
                    && fusable(&body[p])
                {
                    members.push(p);
                    stack.push(p);
                }
            }
        }
        if members.len() < 2 {
            continue;
        }
        members.iter().for_each(|&m| taken[m] = true);
        members.sort_unstable();
        found.push((root, members));
    }
    if found.is_empty() {
        return;
    }
    // Rebuild the block: each region's members leave, its call takes the
    // root's place.
    let mut calls: HashMap<usize, Stmt> = HashMap::new();
    for (root, members) in &found {
        let region = region(f, body, members, regions.len());
        let Stmt::Prim { out, span, .. } = &body[*root] else {
            unreachable!("a root is a primitive")
        };
        let (ty, inputs) = (region.0.ty.clone(), region.1);
        calls.insert(
            *root,
            Stmt::Call {
                outs: vec![*out],
                callee: Callee::Fn(syn::parse_quote!(#ty)),
                args: inputs.into_iter().map(CallArg::Value).collect(),
                span: *span,
                id: *next_id,
                checkpoint: false,
            },
        );
        *next_id += 1;
        regions.push(region.0);
    }
    let old = std::mem::take(body);
    for (i, s) in old.into_iter().enumerate() {
        if let Some(call) = calls.remove(&i) {
            body.push(call);
        } else if !taken[i] {
            body.push(s);
        }
    }
}

/// The region of `members` (statement indices of `body`, in order, the
/// root last): its functions and its inputs in the outer function.
fn region(f: &Function, body: &[Stmt], members: &[usize], k: usize) -> (Region, Vec<VarId>) {
    let outs: Vec<VarId> = members
        .iter()
        .filter_map(|&m| match &body[m] {
            Stmt::Prim { out, .. } => Some(*out),
            _ => None,
        })
        .collect();
    let mut inputs: Vec<VarId> = Vec::new();
    for &m in members {
        if let Stmt::Prim { inputs: ins, .. } = &body[m] {
            for v in ins {
                if !outs.contains(v) && !inputs.contains(v) {
                    inputs.push(*v);
                }
            }
        }
    }
    let name = format_ident!("{}_fused{}", f.ident, k);
    let build = |tier: Tier| {
        // Variables renumbered: inputs first, then the members' results.
        let mut map: HashMap<VarId, VarId> = HashMap::new();
        let mut vars = Vec::new();
        for &v in inputs.iter().chain(&outs) {
            map.insert(v, vars.len());
            vars.push(Var {
                ident: f.vars[v].ident.clone(),
                kind: Kind::Value,
            });
        }
        let params = inputs
            .iter()
            .map(|&v| Param {
                ident: f.vars[v].ident.clone(),
                ty: syn::parse_quote!(&Array),
                var: Some(map[&v]),
                by_ref: true,
                tree: None,
            })
            .collect();
        let stmts = members
            .iter()
            .map(|&m| match &body[m] {
                Stmt::Prim {
                    out,
                    op,
                    inputs,
                    params,
                    span,
                } => Stmt::Prim {
                    out: map[out],
                    op,
                    inputs: inputs.iter().map(|v| map[v]).collect(),
                    params: params.clone(),
                    span: *span,
                },
                _ => unreachable!("members are primitives"),
            })
            .collect();
        let root = *outs.last().expect("a root");
        Function {
            vis: syn::Visibility::Inherited,
            ident: if tier == Tier::Array {
                name.clone()
            } else {
                format_ident!("{}_scalar", name)
            },
            tier,
            params,
            vars,
            body: stmts,
            outputs: vec![Output::Value(map[&root])],
            tuple_output: false,
            list_output: false,
            array_output: false,
            ret_ty: syn::parse_quote!(Array),
            krate: f.krate.clone(),
            user_idents: f.user_idents.clone(),
        }
    };
    let region = Region {
        ty: format_ident!("__nabla_{}", name),
        array: build(Tier::Array),
        scalar: build(Tier::Scalar(ScalarTy::F64)),
        inputs: inputs.len(),
    };
    (region, inputs)
}
