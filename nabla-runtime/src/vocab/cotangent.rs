//! [`Cotangent`]: the types a gradient may have.

use crate::Array;

/// Types that can be a gradient: arrays and floats (trees have their own
/// gradient type, the tree itself).
///
/// ```
/// use nabla::{transforms::Cotangent, Array};
/// fn as_gradient<C: Cotangent>(c: C) -> C {
///     c
/// }
/// assert_eq!(as_gradient(2.5f64), 2.5);
/// let (a, b) = as_gradient((1.0f32, vec![Array::scalar(2.0f64)])); // tuples, Vec, [T; N]
/// assert_eq!((a, b[0].item()), (1.0, 2.0));
/// ```
#[diagnostic::on_unimplemented(
    message = "`argnums` selects an argument of type `{Self}`, which has no gradient",
    note = "integers, bools, strings and #[nondiff] arguments are static; select a differentiable argument (Array, f32, f64)"
)]
pub trait Cotangent {}
impl Cotangent for Array {}
impl Cotangent for f32 {}
impl Cotangent for f64 {}
