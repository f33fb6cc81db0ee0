//! Accumulating cotangents into a slot (`acc`, `or_zeros`) and the shape
//! and dtype of an output when only those are wanted ([`OutSpec`]).

use crate::vocab::value::{ArrayValue, Value};

/// The shape and dtype of an output (what `DiffFn::vjp_masked_shapes`
/// returns instead of its value).
///
/// ```
/// use nabla::{compose::OutSpec, Array, DType};
/// let s = OutSpec::of(&Array::zeros(&[2, 3], DType::F32));
/// assert_eq!((&s.shape[..], s.dtype), (&[2, 3][..], DType::F32));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct OutSpec {
    /// The (per-example) shape.
    pub shape: crate::Shape,
    /// The element type.
    pub dtype: crate::DType,
}

impl OutSpec {
    /// The spec of a value.
    ///
    /// ```
    /// use nabla::{compose::OutSpec, Array, Batched, DType};
    /// let y = Batched::new(Array::zeros(&[4, 3], DType::F32), Some(0)); // a batch of 4
    /// let s = OutSpec::of(&y);
    /// assert_eq!((&s.shape[..], s.dtype), (&[3][..], DType::F32)); // per example
    /// ```
    pub fn of<V: ArrayValue>(y: &V) -> OutSpec {
        OutSpec {
            shape: y.shape_vec(),
            dtype: y.dtype(),
        }
    }
}

/// Adds `v` into a cotangent slot (`None` is a symbolic zero).
#[inline]
#[doc(hidden)]
pub fn acc<V: Value>(slot: &mut Option<V>, v: V) {
    *slot = Some(match slot.take() {
        Some(old) => old.add(&v),
        None => v,
    });
}

/// A cotangent, materialising a symbolic zero with the primal's shape.
#[inline]
#[doc(hidden)]
pub fn or_zeros<V: Value>(ct: Option<V>, like: &V) -> V {
    ct.unwrap_or_else(|| like.zeros_like())
}
