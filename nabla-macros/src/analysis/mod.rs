//! The analyses of a lowered function. They run once, before code
//! generation, which reads their results:
//!
//! * [`activity`]: which variables depend on a differentiable parameter
//!   (only those get cotangents);
//! * [`residuals`]: the output-only tail, which the shape-only VJP skips.

pub mod activity;
pub mod residuals;

use crate::ir::Function;

/// What code generation needs to know about a function beyond its IR.
pub struct Analysis {
    /// `active[v]`: variable `v` depends on a differentiable parameter.
    pub active: Vec<bool>,
    /// The output-only tail of a function that joins the composable
    /// transforms (one output, or a list of them), if it has one; such a
    /// function then gets a shape-only VJP.
    pub tail: Option<residuals::Tail>,
}

/// Runs every analysis on `f`.
pub fn analyse(f: &Function) -> Analysis {
    let tail = if f.is_composable() || f.is_list_fn() {
        residuals::tail(f)
    } else {
        None
    };
    Analysis {
        active: activity::active(f),
        tail,
    }
}
