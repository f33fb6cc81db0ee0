//! Nabla's procedural macros. The `#[differentiable]` source transformation
//! lands here (see `docs/design.md`); this crate depends on nothing of
//! Nabla's and emits paths under `::nabla`.
