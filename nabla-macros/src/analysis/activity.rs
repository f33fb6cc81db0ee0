//! Activity analysis: which value variables depend on a differentiable
//! parameter. Only active variables get cotangents in the reverse sweep;
//! constants (`zeros_like`, `stop_gradient`, values computed from static
//! data) cost nothing there.

use crate::ir::{CallArg, Function, Stmt};

/// `active[v]` is true when variable `v` depends on a differentiable input.
pub fn active(f: &Function) -> Vec<bool> {
    let mut active = vec![false; f.vars.len()];
    for p in &f.params {
        if let Some(v) = p.var {
            active[v] = true;
        }
    }
    mark(&f.body, &mut active);
    active
}

fn mark(body: &[Stmt], active: &mut [bool]) {
    for stmt in body {
        match stmt {
            Stmt::Prim { out, inputs, .. } => active[*out] = inputs.iter().any(|&v| active[v]),
            Stmt::Call { outs, args, .. } => {
                let on = args.iter().any(|a| match a {
                    CallArg::Value(v) | CallArg::Part { tree: v, .. } => active[*v],
                    CallArg::Static(_) => false,
                });
                for &o in outs {
                    active[o] = on;
                }
            }
            Stmt::Static { out, .. } | Stmt::Constant { out, .. } => active[*out] = false,
            Stmt::Leaf { out, tree, .. } => active[*out] = active[*tree],
            Stmt::For { body, carried, .. } => {
                // A carried value is active if it starts active or becomes
                // active in any iteration: iterate to a fixed point.
                for c in carried {
                    active[c.phi] = active[c.init];
                }
                loop {
                    mark(body, active);
                    let mut changed = false;
                    for c in carried {
                        if active[c.next] && !active[c.phi] {
                            active[c.phi] = true;
                            changed = true;
                        }
                    }
                    if !changed {
                        break;
                    }
                }
                for c in carried {
                    active[c.out] = active[c.phi] || active[c.next];
                }
            }
            Stmt::If {
                then_body,
                else_body,
                merges,
                ..
            } => {
                mark(then_body, active);
                mark(else_body, active);
                for m in merges {
                    active[m.out] = active[m.then_v] || active[m.else_v];
                }
            }
        }
    }
}
