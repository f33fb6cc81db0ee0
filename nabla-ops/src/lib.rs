//! Nabla's op registry: every primitive is declared here once.
//!
//! This crate has no dependencies and no code of its own: it holds
//! declarative lists of primitives, each a macro that hands its list to a
//! callback macro (`unary_ops!(callback)`, or `unary_ops!(callback
//! tokens..)` to put `tokens..` before the entries). Every crate that
//! needs to know about the primitives expands a list with a callback of
//! its own:
//!
//! * `nabla-kernels` builds the CPU kernels (`UnaryOp`/`BinaryOp` and one
//!   generic scalar function per op, from `kernel`) and the CUDA source
//!   (from `cuda`);
//! * `nabla-runtime` builds the `Value` trait methods and their `f32`,
//!   `f64`, `Array`, `Dual` and `Batched` implementations, the `Array`
//!   methods with their tape recording, the rule modules (from `rule`), the
//!   free functions, and the entry points generated code calls;
//! * `nabla-macros` builds its op table and its facts about what each
//!   reverse step reads (from `reads` and, for the other ops, `tail`).
//!
//! # The entry formats
//!
//! [`unary_ops!`] entries (elementwise ops of one array, optional static
//! parameters):
//!
//! ```text
//! /// doc
//! name Kernel(param: type, ..) {
//!     method: rust_method_name, func: jax_function_name,
//!     kernel: |v| scalar expression over `v: T: Float` (and the params),
//!     cuda: "CUDA C expression over `v` (params: `p`, `q`; `zero`, `one`)",
//!     rule: (|x, y| dy/dx over `V: Value` [, scale c]) | (custom),
//!     reads: x | y | xy | none,
//!     example: (x [, params]) => expected,
//! }
//! ```
//!
//! `rule` is the derivative `dy/dx` written with `Value` methods (so it is
//! differentiable again); JVP and VJP are `t · dy/dx`, fused into one pass
//! on arrays. `scale c` multiplies it in the same pass. `(custom)` means the
//! runtime has a hand-written rule module of the same interface
//! (`nabla-runtime/src/primitives/unary.rs`). `reads` says which of `x` and
//! `y` the derivative reads: generated code keeps only those for the
//! reverse step (`rules::<op>::vjp_0` takes exactly them), and ops that
//! read only `x` (or nothing) can sit in an output-only tail, where `y` is
//! never computed.
//!
//! [`binary_ops!`] entries (broadcasting elementwise ops of two arrays):
//!
//! ```text
//! name Kernel {
//!     method: .., func: ..,
//!     kernel: |a, b| scalar expression,
//!     cuda: "CUDA C expression over `a`, `b`",
//!     rule: (|a, b, y| (∂y/∂a, ∂y/∂b)) | (custom),
//!     reads: shapes | cross | inputs | all,
//!     example: (a, b) => expected,
//! }
//! ```
//!
//! `reads` says what the reverse step for each operand reads: `shapes`,
//! only that operand's shape (`a + b`); `cross`, its own shape and the
//! other operand (`a * b`); `inputs`, both operands; `all`, both and the
//! output.
//!
//! [`other_ops!`] lists the remaining primitives (reductions, shape ops,
//! indexing, matmul, scalar arithmetic) with what the macro needs: their
//! names, how many value inputs and static parameters they take, and how
//! their reverse step reads each input when it sits in an output-only tail
//! (`[S]`: only its shape; `[V]`: its value; `no`: never in a tail), and
//! what each input's reverse step reads of the inputs and the output. Their
//! kernels and rules are hand-written in the runtime's `primitives`
//! modules.
//!
//! ```
//! // A callback that counts the unary ops.
//! macro_rules! count {
//!     ($($(#[$doc:meta])* $name:ident $k:ident ($($p:ident: $t:ty),*) { $($body:tt)* })*) => {
//!         [$(stringify!($name)),*].len()
//!     };
//! }
//! assert!(nabla_ops::unary_ops!(count) > 40);
//! ```

#![no_std]

mod binary;
mod other;
mod unary;
