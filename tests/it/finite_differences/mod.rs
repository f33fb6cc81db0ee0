//! Tests against central finite differences in f64: first-order rules at
//! points and shapes the JAX fixtures do not cover, and second-order
//! (VJP of VJP) rules.

mod ops;
mod registry_op;
mod second_order;
