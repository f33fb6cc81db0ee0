//! Typed access to an array's host elements ([`Typed`]), and the count of
//! one-pass kernels a thread has run ([`passes`]).

use super::Array;
use crate::storage::{Data, Element, Host};
use std::cell::Cell;

/// The typed host buffer of an array of this element type (`None` for
/// another dtype or a device array). Public only so that the hidden
/// `fused::Kernel` trait can require it.
pub trait Typed: Element {
    /// The host elements of `x` when it holds this element type.
    fn typed(x: &Array) -> Option<&Host<Self>>;
}

impl Typed for f64 {
    fn typed(x: &Array) -> Option<&Host<f64>> {
        match &*x.data {
            Data::F64(a) => Some(a),
            _ => None,
        }
    }
}

impl Typed for f32 {
    fn typed(x: &Array) -> Option<&Host<f32>> {
        match &*x.data {
            Data::F32(a) => Some(a),
            _ => None,
        }
    }
}

thread_local! {
    static PASSES: Cell<usize> = const { Cell::new(0) };
}

/// How many fused passes (forward or pullback, of a region or of a chain
/// of unary ops on the tape) this thread has run: what tests read to tell
/// a fused program from an op-by-op one.
///
/// ```
/// use nabla::Array;
///
/// #[nabla::differentiable]
/// fn f(x: &Array) -> Array {
///     (x.sin() * x + 1.0).sum()
/// }
///
/// fn main() {
///     let before = nabla::fused::passes();
///     f(&Array::ones(&[4], nabla::DType::F64));
///     assert_eq!(nabla::fused::passes(), before + 1);
/// }
/// ```
pub fn passes() -> usize {
    PASSES.with(|p| p.get())
}

/// Counts one fused pass.
pub(crate) fn count_pass() {
    PASSES.with(|p| p.set(p.get() + 1));
}
