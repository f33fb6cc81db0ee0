//! The language `#[differentiable]` accepts: `for` and `while` loops,
//! `break`/`continue`/early `return`, static and data-dependent branches,
//! tree, `Vec` and slice arguments, and list functions. The oracles are the
//! imperative tape, central finite differences, forward mode against
//! reverse mode, loops of single-example calls against `vmap`, and JAX
//! where a fixture program exists; `newcomer_forms`: forms a new user
//! writes first (full-path calls, number accumulators, `.log()`).

mod calls;
mod data_branches;
mod jumps;
mod list_functions;
mod loops;
mod methods;
mod newcomer_forms;
mod smoke;
mod static_branches;
mod trees;
