//! Compile-time fusion: maximal groups of elementwise operations in one
//! block become one region, called like another differentiable function
//! (`Stmt::Call` on the region's type) whose programs the runtime runs as
//! one pass per sweep on CPU arrays (`nabla::fused`).
//!
//! A region grows from a root (an elementwise operation whose result is
//! used more than once, by something that is not elementwise, or leaves
//! the block) through the producers of its inputs that are elementwise,
//! in the same block, and whose results only the region reads (so a
//! region is a DAG with one output). It also takes in
//!
//! * `slice_axis` of its inputs (`x.slice_axis(0, 1..n)`), read in place
//!   by the fused pass; the slice's axis and range are evaluated where the
//!   region is called;
//! * a `sum` or `mean` of its whole result, which the fused pass
//!   accumulates instead of writing the elementwise result (a map-reduce;
//!   a mean scales the sum and its cotangent by `1/n`).
//!
//! Elementwise operations must have literal static parameters (`* 100.0`,
//! `.powi(2)`), so the region's programs are closed. Each region is also
//! lowered at the float tier, where its programs run on blocks of
//! elements.

use crate::ir::{CallArg, Callee, Function, Kind, Output, Param, ScalarTy, Stmt, Tier, Var, VarId};
use crate::optable::is_elementwise;
use proc_macro2::{TokenStream, TokenTree};
use quote::{format_ident, quote};
use std::collections::HashMap;

/// A fused region: its type's name, its programs at the array tier (op by
/// op) and at the float tier (per block), its operands and where each
/// comes from, and whether it ends in a sum.
pub struct Region {
    pub ty: syn::Ident,
    pub array: Function,
    pub scalar: Function,
    /// The number of operands (the programs' parameters).
    pub inputs: usize,
    /// Per operand: the index of the call argument it is (or is a slice
    /// of), and whether it is a slice (whose axis and range follow the
    /// argument values in the call, in operand order).
    pub operands: Vec<(usize, bool)>,
    /// The number of array arguments of the call.
    pub args: usize,
    /// Whether the region's result is the sum (or the mean) of its
    /// elementwise result.
    pub reduce: bool,
    /// Whether that reduction is the mean.
    pub mean: bool,
    /// The output-only tail of the array-tier program, if it has one (the
    /// region then has a shape-only VJP and can be in its caller's tail).
    pub tail: Option<crate::analysis::residuals::Tail>,
    /// Whether that sum is the function's result (read nowhere else).
    pub result: bool,
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
                            CallArg::Part { tree, range, skel } => {
                                uses[*tree] += 1;
                                uses[*range] += 1;
                                tokens(skel, uses);
                            }
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

/// Whether statement `s` is an elementwise operation a region may hold.
fn fusable(s: &Stmt) -> bool {
    matches!(s, Stmt::Prim { op, params, .. } if is_elementwise(op) && params.iter().all(is_literal))
}

/// Whether statement `s` is a slice a region may read in place.
fn is_view(s: &Stmt) -> bool {
    matches!(s, Stmt::Prim { op, params, .. } if op.rule == "slice_axis" && params.len() == 2)
}

/// Whether statement `s` is a sum or a mean of all elements.
fn is_sum(s: &Stmt) -> bool {
    matches!(s, Stmt::Prim { op, params, inputs, .. }
        if (op.rule == "sum" || op.rule == "mean") && params.is_empty() && inputs.len() == 1)
}

/// Whether statement `s` is a mean.
fn is_mean(s: &Stmt) -> bool {
    matches!(s, Stmt::Prim { op, .. } if op.rule == "mean")
}

/// A region found in a block: its statements in program order (the
/// elementwise root last), and the `sum` statement that ends it, if any.
struct Found {
    members: Vec<usize>,
    sum: Option<usize>,
}

impl Found {
    /// Where the region's call goes: the sum's place, or the root's.
    fn call_at(&self) -> usize {
        self.sum
            .unwrap_or_else(|| *self.members.last().expect("a root"))
    }
}

/// The variable a statement defines, if it is a primitive.
fn out_of(s: &Stmt) -> Option<VarId> {
    match s {
        Stmt::Prim { out, .. } => Some(*out),
        _ => None,
    }
}

/// The values a primitive reads.
fn inputs_of(s: &Stmt) -> &[VarId] {
    match s {
        Stmt::Prim { inputs, .. } => inputs,
        _ => &[],
    }
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
        .filter_map(|(i, s)| Some((out_of(s)?, i)))
        .collect();
    let mut taken = vec![false; body.len()];
    let mut found: Vec<Found> = Vec::new();
    for at in (0..body.len()).rev() {
        if taken[at] {
            continue;
        }
        // A sum of a result only it reads ends the region there.
        let (root, sum) =
            match producer.get(&inputs_of(&body[at]).first().copied().unwrap_or(usize::MAX)) {
                Some(&p)
                    if is_sum(&body[at])
                        && !taken[p]
                        && fusable(&body[p])
                        && uses[inputs_of(&body[at])[0]] == 1 =>
                {
                    (p, Some(at))
                }
                _ if fusable(&body[at]) => (at, None),
                _ => continue,
            };
        let members = grow(f, body, &producer, &taken, uses, root, sum.unwrap_or(root));
        let computing = members.iter().filter(|&&m| fusable(&body[m])).count();
        if computing + usize::from(sum.is_some()) < 2 {
            continue;
        }
        members.iter().chain(&sum).for_each(|&m| taken[m] = true);
        found.push(Found { members, sum });
    }
    if found.is_empty() {
        return;
    }
    // Rebuild the block: each region's statements leave, its call takes
    // the place of its last one.
    let mut calls: HashMap<usize, Stmt> = HashMap::new();
    for r in &found {
        let (mut region, args) = region(f, body, r, regions.len());
        region.result = r.sum.and_then(|at| out_of(&body[at])).is_some_and(|v| {
            uses[v] == 1
                && f.outputs
                    .iter()
                    .any(|o| matches!(o, Output::Value(w) if *w == v))
        });
        let at = r.call_at();
        let span = match &body[at] {
            Stmt::Prim { span, .. } => *span,
            _ => unreachable!("a region ends in a primitive"),
        };
        let region_tail = region.tail.is_some();
        calls.insert(
            at,
            Stmt::Call {
                outs: vec![out_of(&body[at]).expect("a primitive")],
                callee: Callee::Region({
                    let ty = &region.ty;
                    syn::parse_quote!(#ty)
                }),
                args,
                arg_spans: Vec::new(),
                span,
                id: *next_id,
                checkpoint: false,
                region_tail,
            },
        );
        *next_id += 1;
        regions.push(region);
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

/// The statements of the region rooted at `root` whose call goes at
/// `call_at`, in program order: the root and, until nothing changes, every
/// producer (in this block, not in another region) of a member's input
/// that is elementwise or a slice and whose result only members read.
fn grow(
    f: &Function,
    body: &[Stmt],
    producer: &HashMap<VarId, usize>,
    taken: &[bool],
    uses: &[usize],
    root: usize,
    call_at: usize,
) -> Vec<usize> {
    let mut members = vec![root];
    loop {
        let mut added = false;
        let mut reads: HashMap<VarId, usize> = HashMap::new();
        for &m in &members {
            for &v in inputs_of(&body[m]) {
                *reads.entry(v).or_default() += 1;
            }
        }
        let mut candidates: Vec<(VarId, usize)> = reads.into_iter().collect();
        candidates.sort_unstable();
        for (v, n) in candidates {
            let Some(&p) = producer.get(&v) else {
                continue;
            };
            if taken[p] || members.contains(&p) || uses[v] != n {
                continue;
            }
            let ok =
                fusable(&body[p]) || (is_view(&body[p]) && view_ok(f, body, producer, p, call_at));
            if ok {
                members.push(p);
                added = true;
            }
        }
        if !added {
            break;
        }
    }
    members.sort_unstable();
    members
}

/// Whether the slice at `p` may be read in place by a region called at
/// `call_at`: its input comes from outside every region (not from an
/// elementwise operation of this block), and its axis and range mean the
/// same at the call (nothing between redefines a name they read).
fn view_ok(
    f: &Function,
    body: &[Stmt],
    producer: &HashMap<VarId, usize>,
    p: usize,
    call_at: usize,
) -> bool {
    let Stmt::Prim { inputs, params, .. } = &body[p] else {
        return false;
    };
    if producer
        .get(&inputs[0])
        .is_some_and(|&q| fusable(&body[q]) || is_view(&body[q]))
    {
        return false;
    }
    let read: Vec<String> = params.iter().flat_map(idents).collect();
    body[p + 1..call_at].iter().all(|s| {
        let defined = match s {
            Stmt::Prim { out, .. }
            | Stmt::Static { out, .. }
            | Stmt::Constant { out, .. }
            | Stmt::Leaf { out, .. } => {
                vec![*out]
            }
            Stmt::Call { outs, .. } => outs.clone(),
            _ => Vec::new(),
        };
        defined
            .iter()
            .all(|&v| !read.contains(&f.vars[v].ident.to_string()))
    })
}

/// The region of `r`: its functions, and the arguments of its call (the
/// arrays its operands are or are sliced from, then each slice's axis and
/// range).
fn region(f: &Function, body: &[Stmt], r: &Found, k: usize) -> (Region, Vec<CallArg>) {
    let members = &r.members;
    let computing: Vec<usize> = members
        .iter()
        .copied()
        .filter(|&m| fusable(&body[m]))
        .collect();
    let outs: Vec<VarId> = computing.iter().filter_map(|&m| out_of(&body[m])).collect();
    // The operands: what the elementwise members read from outside them.
    let mut operands: Vec<VarId> = Vec::new();
    for &m in &computing {
        for v in inputs_of(&body[m]) {
            if !outs.contains(v) && !operands.contains(v) {
                operands.push(*v);
            }
        }
    }
    // Each operand's argument, and the slice it is of.
    let view_of = |v: VarId| {
        members.iter().find_map(|&m| match &body[m] {
            Stmt::Prim {
                out,
                inputs,
                params,
                ..
            } if *out == v && is_view(&body[m]) => Some((inputs[0], params)),
            _ => None,
        })
    };
    let mut args: Vec<VarId> = Vec::new();
    let mut statics: Vec<CallArg> = Vec::new();
    let mut specs = Vec::new();
    for &v in &operands {
        let (base, slice) = match view_of(v) {
            Some((base, params)) => (base, Some(params)),
            None => (v, None),
        };
        let j = args.iter().position(|&a| a == base).unwrap_or_else(|| {
            args.push(base);
            args.len() - 1
        });
        if let Some(params) = slice {
            for t in params {
                statics.push(CallArg::Static(quote!(::core::clone::Clone::clone(&(#t)))));
            }
        }
        specs.push((j, slice.is_some()));
    }
    let name = format_ident!("{}_fused{}", f.ident, k);
    let build = |tier: Tier| {
        // Variables renumbered: operands first, then the members' results.
        let mut map: HashMap<VarId, VarId> = HashMap::new();
        let mut vars = Vec::new();
        for &v in operands.iter().chain(&outs) {
            map.insert(v, vars.len());
            vars.push(Var {
                ident: f.vars[v].ident.clone(),
                kind: Kind::Value,
            });
        }
        let params = operands
            .iter()
            .map(|&v| Param {
                ident: f.vars[v].ident.clone(),
                ty: syn::parse_quote!(&Array),
                var: Some(map[&v]),
                by_ref: true,
                tree: None,
            })
            .collect();
        let stmts = computing
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
            method: false,
            promoted: false,
        }
    };
    let array = build(Tier::Array);
    let region = Region {
        ty: format_ident!("__nabla_{}", name),
        tail: crate::analysis::residuals::tail(&array),
        array,
        scalar: build(Tier::Scalar(ScalarTy::F64)),
        inputs: operands.len(),
        operands: specs,
        args: args.len(),
        reduce: r.sum.is_some(),
        mean: r.sum.is_some_and(|at| is_mean(&body[at])),
        result: false,
    };
    let call_args = args
        .into_iter()
        .map(CallArg::Value)
        .chain(statics)
        .collect();
    (region, call_args)
}
