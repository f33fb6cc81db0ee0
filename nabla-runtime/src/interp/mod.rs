//! The value types derivative rules and generated code are generic over,
//! and the interpretation types that give the transforms: [`value`] (the
//! `Value` and `ArrayValue` traits, with `f32`/`f64`), [`dual`] (`Dual<V>`,
//! forward mode) and [`batched`] (`Batched<V>`, `vmap`). `Array`'s own
//! implementation is in `array/value_impl.rs`.

pub(crate) mod batched;
pub(crate) mod dual;
