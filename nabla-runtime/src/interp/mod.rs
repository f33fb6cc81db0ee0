//! L4 interpreters: every value type that runs the generic programs
//! (rules, generated code, fused regions) another way — [`dual`]
//! (`Dual<V>`, forward mode), [`batched`] (`Batched<V>`, `vmap`), fused
//! regions at `Dual<Array>` ([`fused_dual`]) and `Batched<Array>`
//! ([`fused_batched`]), and, with feature `cuda`, the GPU symbol `Sym`
//! that writes a region as CUDA C ([`gpu_sym`]). `Array` itself runs them
//! in `primitives/array_value.rs` (L3); custom ops at `Dual` and `Batched` are
//! applied in `custom.rs`.

pub(crate) mod batched;
pub(crate) mod dual;
pub(crate) mod fused_batched;
pub(crate) mod fused_dual;
#[cfg(feature = "cuda")]
pub(crate) mod gpu_sym;
