//! Activity analysis: which value variables depend on a differentiable
//! parameter. Only active variables get cotangents in the reverse sweep;
//! constants (`zeros_like`, `stop_gradient`, values computed from static
//! data) cost nothing there.

use crate::ir::{Function, Stmt};

/// `active[v]` is true when variable `v` depends on a differentiable input.
pub fn active(f: &Function) -> Vec<bool> {
    let mut active = vec![false; f.vars.len()];
    for p in &f.params {
        if let Some(v) = p.var {
            active[v] = true;
        }
    }
    for stmt in &f.body {
        let on = match stmt {
            Stmt::Prim { .. } | Stmt::Call { .. } => {
                Function::value_inputs(stmt).iter().any(|&v| active[v])
            }
            Stmt::Static { .. } | Stmt::Constant { .. } => false,
        };
        for out in Function::outputs_of(stmt) {
            active[out] = on;
        }
    }
    active
}
