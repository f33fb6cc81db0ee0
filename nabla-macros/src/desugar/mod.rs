//! Syntax-level rewrites applied during lowering, so the IR only sees the
//! forms it models (`if`s, static flags, loops with an exit test):
//!
//! * [`returns`]: early `return` → a result variable, a flag and guards;
//! * [`jumps`]: `continue`/`break` in loops → flags and guards;
//! * [`loop_attr`]: `#[nabla::checkpoint(snapshots = N)]` on loops (parsed
//!   for lowering, removed from the code emitted as written);
//! * [`matches`](mod@matches): `match` arms → an `if`/`else if` chain of `matches!` tests;
//! * [`for_pat`]: `for (a, b) in ..` and `for w in ws` (a tree) → a loop over
//!   one static item or index whose body binds the names first.

pub mod for_pat;
pub mod jumps;
pub mod loop_attr;
pub mod matches;
pub mod returns;
