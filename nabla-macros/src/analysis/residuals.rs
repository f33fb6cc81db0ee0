//! The output-only tail of a function: the statements whose values the
//! shape-only VJP does not compute, because its reverse sweep reads only
//! their shapes (see [`crate::tail`] for when a primitive qualifies).
//!
//! The analysis is one backward pass over the top-level statements: a
//! primitive whose output is needed as a value is computed and needs its
//! inputs; a tail primitive needs only the inputs its rule reads by value.
//! The second VJP program, which computes the tail's shapes instead of its
//! values, is `codegen::shapes`.

use crate::ir::{CallArg, Function, Output, Stmt, Tier, VarId};
use crate::tail::{Use, uses};
use proc_macro2::{TokenStream, TokenTree};
use std::collections::HashMap;

/// The output-only tail of a function.
pub struct Tail {
    /// `dead[v]`: `v` is a tail primitive's output, not computed.
    pub dead: Vec<bool>,
    /// The function's outputs (at least one in the tail).
    pub outs: Vec<VarId>,
}

/// The tail of `f`, if it has one that contains an output. `f` returns
/// one array, or a list of arrays (`vec![..]`, the seed's form).
pub fn tail(f: &Function) -> Option<Tail> {
    if f.tier != Tier::Array || (f.tuple_output && !f.list_output) {
        return None;
    }
    let outs: Vec<VarId> = f
        .outputs
        .iter()
        .map(|o| match o {
            Output::Value(v) => Some(*v),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let names: HashMap<String, VarId> = (0..f.vars.len())
        .map(|v| (f.name(v).to_string(), v))
        .collect();
    let mut needed = vec![false; f.vars.len()];
    // Anything a statement other than a top-level primitive or fused
    // region mentions is computed as written.
    for s in &f.body {
        if !matches!(s, Stmt::Prim { .. }) && region_call(s).is_none() {
            mentions(s, &names, &mut needed);
        }
    }
    let mut dead = vec![false; f.vars.len()];
    for s in f.body.iter().rev() {
        if let Some((y, args)) = region_call(s) {
            // A fused region with a tail of its own reads its arguments
            // by value (its pullback takes them, not its output).
            if !needed[y] {
                dead[y] = true;
            }
            for a in args {
                match a {
                    CallArg::Value(v) => needed[*v] = true,
                    CallArg::Static(t) => scan(t, &names, &mut needed),
                    CallArg::Part { tree, range, .. } => {
                        needed[*tree] = true;
                        needed[*range] = true;
                    }
                }
            }
            continue;
        }
        let Stmt::Prim {
            out: y,
            op,
            inputs,
            params,
            ..
        } = s
        else {
            continue;
        };
        for p in params {
            scan(p, &names, &mut needed);
        }
        match uses(op.rule) {
            Some(u) if !needed[*y] && !op.variadic && u.len() == inputs.len() => {
                dead[*y] = true;
                for (k, &v) in inputs.iter().enumerate() {
                    if u[k] == Use::Value {
                        needed[v] = true;
                    }
                }
            }
            _ => {
                for &v in inputs {
                    needed[v] = true;
                }
            }
        }
    }
    outs.iter().any(|&o| dead[o]).then_some(Tail { dead, outs })
}

/// Marks every variable `s` reads (its inputs and any name in its tokens,
/// nested bodies included).
/// The output and arguments of a call of a fused region that has an
/// output-only tail of its own (`Stmt::Call::region_tail`).
pub fn region_call(s: &Stmt) -> Option<(VarId, &[CallArg])> {
    match s {
        Stmt::Call {
            outs,
            args,
            region_tail: true,
            checkpoint: false,
            ..
        } if outs.len() == 1 => Some((outs[0], args)),
        _ => None,
    }
}

fn mentions(s: &Stmt, names: &HashMap<String, VarId>, needed: &mut [bool]) {
    match s {
        Stmt::Prim { inputs, params, .. } => {
            for &v in inputs {
                needed[v] = true;
            }
            for p in params {
                scan(p, names, needed);
            }
        }
        Stmt::Call { args, .. } => {
            for a in args {
                match a {
                    CallArg::Value(v) => needed[*v] = true,
                    CallArg::Static(t) => scan(t, names, needed),
                    CallArg::Part { tree, range, skel } => {
                        needed[*tree] = true;
                        needed[*range] = true;
                        scan(skel, names, needed);
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
            scan(cond, names, needed);
            for b in then_body.iter().chain(else_body) {
                mentions(b, names, needed);
            }
            for m in merges {
                needed[m.then_v] = true;
                needed[m.else_v] = true;
            }
        }
        Stmt::Static { expr, .. } | Stmt::Constant { expr, .. } => scan(expr, names, needed),
        Stmt::For {
            iter,
            body,
            carried,
            cond,
            ..
        } => {
            scan(iter, names, needed);
            if let Some((_, c)) = cond {
                scan(c, names, needed);
            }
            for b in body {
                mentions(b, names, needed);
            }
            for c in carried {
                needed[c.init] = true;
                needed[c.next] = true;
            }
        }
        Stmt::Leaf { tree, index, .. } => {
            needed[*tree] = true;
            needed[*index] = true;
        }
    }
}

/// Marks every variable named in `t`.
fn scan(t: &TokenStream, names: &HashMap<String, VarId>, needed: &mut [bool]) {
    for tt in t.clone() {
        match tt {
            TokenTree::Ident(i) => {
                if let Some(&v) = names.get(&i.to_string()) {
                    needed[v] = true;
                }
            }
            TokenTree::Group(g) => scan(&g.stream(), names, needed),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ir::Stmt;

    /// The rules of the tail statements of `item`'s body, in order, or
    /// `None` when it has no tail.
    fn tail_ops(item: syn::ItemFn) -> Option<Vec<&'static str>> {
        let f = crate::lower::lower_ok(&item);
        let t = super::tail(&f)?;
        Some(
            f.body
                .iter()
                .filter_map(|s| match s {
                    Stmt::Prim { out, op, .. } if t.dead[*out] => Some(op.rule),
                    _ => None,
                })
                .collect(),
        )
    }

    #[test]
    fn the_seed_function_is_all_tail() {
        let ops = tail_ops(syn::parse_quote! {
            fn foo(x: &Array) -> Array { nabla::sum(&nabla::sin(x)) }
        });
        assert_eq!(ops, Some(vec!["sin", "sum"]));
        // The same in the seed's list form.
        let ops = tail_ops(syn::parse_quote! {
            fn foo(args: &[Array]) -> Vec<Array> { vec![nabla::sum(&nabla::sin(&args[0]))] }
        });
        assert_eq!(ops, Some(vec!["sin", "sum"]));
    }

    #[test]
    fn the_tail_stops_at_values_a_pullback_reads() {
        // `square`'s pullback reads `d`, so `d` and all before it run;
        // `1 - head` is read by the second `square`.
        let ops = tail_ops(syn::parse_quote! {
            fn rosenbrock(x: &Array) -> Array {
                let n = x.shape()[0];
                let head = x.slice_axis(0, 0..n - 1);
                let tail = x.slice_axis(0, 1..n);
                let d = tail - head.square();
                nabla::sum(&(d.square() * 100.0 + (1.0 - head).square()))
            }
        });
        assert_eq!(
            ops,
            Some(vec!["square", "mul_scalar", "square", "add", "sum"])
        );
        // `mul` reads both factors: `sin` runs, the product does not.
        let ops = tail_ops(syn::parse_quote! {
            fn f(x: &Array) -> Array { let y = x.sin(); (&y * &y).mean() }
        });
        assert_eq!(ops, Some(vec!["mul", "mean"]));
        // A network's last layer: the product runs only in reverse; the
        // hidden layer it reads runs forward.
        let ops = tail_ops(syn::parse_quote! {
            fn net(x: &Array, w1: &Array, w2: &Array) -> Array { x.matmul(w1).tanh().matmul(w2) }
        });
        assert_eq!(ops, Some(vec!["matmul"]));
    }

    #[test]
    fn the_tail_g_test_function_is_all_tail_after_its_inputs() {
        // tests/it/transforms/output_tails.rs `tail_g`: each op under test is in the tail.
        let ops = tail_ops(syn::parse_quote! {
            fn tail_g(x: &Array, w: &Array) -> Array {
                let p = x.square() + 1.0;
                let a = (x * w).relu().sum();
                let b = (x - w).abs().mean_axes(&[0], false).sum();
                let c = p.ln().sum() + nabla::log(&(w.square() + 2.0)).mean();
                let d = (x.square() + 0.5).ln_1p().sum_axes(&[1], false).mean() + nabla::log1p(&w.square()).sum();
                let e = (x.abs().sum_axes(&[1], false) + x.transpose()).mean();
                let f = (nabla::erf(&(x * 0.3)).sum_axes(&[0], false) + w.expand_dims(0)).sum();
                a + b * 2.0 + c + d + e - f
            }
        })
        .expect("a tail");
        for op in ["relu", "abs", "log", "log1p", "erf"] {
            assert!(ops.contains(&op), "{op} not in the tail: {ops:?}");
        }
    }

    #[test]
    fn the_tail_h_test_function_has_its_binary_ops_in_the_tail() {
        // tests/it/transforms/output_tails.rs `tail_h`.
        let ops = tail_ops(syn::parse_quote! {
            fn tail_h(x: &Array, w: &Array) -> Array {
                let a = nabla::maximum(&x.sin(), w).sum();
                let b = w.minimum(&(x * 0.5)).mean();
                let c = nabla::atan2(x, &(w.square() + 1.0)).mean_axes(&[0], false).sum();
                let d = (x.maximum(&x.cos()).sum_axes(&[1], false) + x.transpose()).mean();
                let e = (nabla::minimum(&x.cos(), &x.sin()).sum_axes(&[0], false) + w.atan2(x)).sum();
                a + b * 3.0 + c + d - e
            }
        })
        .expect("a tail");
        let count = |op: &str| ops.iter().filter(|&&o| o == op).count();
        assert_eq!(
            (count("maximum"), count("minimum"), count("atan2")),
            (2, 2, 2),
            "{ops:?}"
        );
    }

    #[test]
    fn unary_ops_that_read_only_their_input_join_the_tail() {
        // `relu`, `abs`, `ln`, `log1p`, `erf` read only `x` in reverse;
        // `tanh` reads its output, so it and what it reads run.
        let ops = tail_ops(syn::parse_quote! {
            fn f(x: &Array) -> Array {
                let p = x.square() + 1.0;
                let a = x.relu() + x.abs() + p.ln() + nabla::log1p(&p);
                (a + x.erf()).sum() + x.tanh().mean()
            }
        });
        assert_eq!(
            ops,
            Some(vec![
                "relu", "abs", "add", "log", "add", "log1p", "add", "erf", "add", "sum", "mean",
                "add"
            ])
        );
    }

    #[test]
    fn loops_run_and_constants_join_the_tail() {
        // The loop is computed (the tail reads `h`'s shape); the `sin` of a
        // constant has no derivative and is in the tail.
        let ops = tail_ops(syn::parse_quote! {
            fn f(x: &Array, w: &Array) -> Array {
                let mut h = x * w;
                for _ in 0..3 {
                    h = h.sin() * w;
                }
                let c = x.stop_gradient().sin();
                (h + c - w).sum_axes(&[0], false).mean()
            }
        });
        assert_eq!(ops, Some(vec!["sin", "add", "sub", "sum_axes", "mean"]));
    }

    #[test]
    fn values_read_by_static_code_or_unlisted_ops_are_kept() {
        // `s` is read by static code (its shape), so it is computed.
        let ops = tail_ops(syn::parse_quote! {
            fn f(x: &Array) -> Array { let s = x.sin(); let k = s.shape()[0]; s.sum_axes(&[0], false) * (k as f64) }
        });
        assert_eq!(ops, Some(vec!["sum_axes", "mul_scalar"]));
        // `tanh`'s pullback reads its output: no tail.
        assert_eq!(
            tail_ops(syn::parse_quote! { fn g(x: &Array) -> Array { x.sum().tanh() } }),
            None
        );
        // A tuple of outputs: not a composable function (a list is).
        assert_eq!(
            tail_ops(
                syn::parse_quote! { fn h(x: &Array) -> (Array, Array) { (x.sum(), x.mean()) } }
            ),
            None
        );
    }
}
