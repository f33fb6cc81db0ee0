//! The [`CustomOp`] trait: a user-defined primitive's forward computation
//! and derivative rules (applied by `custom.rs`).

use crate::Array;
use crate::vocab::arity::FixedArity;
use crate::vocab::value::ArrayValue;

/// A primitive defined outside the library, of arity `A`. The value of the
/// op carries its static parameters (e.g. a spring constant), so rules and
/// the forward can read them.
///
/// ```
/// use nabla::{compose::A1, custom::{self, CustomOp}, Array, ArrayValue, Value};
///
/// /// `k · x`, with the spring constant `k` as the op's static parameter.
/// #[derive(Clone)]
/// struct Scale(f64);
///
/// impl CustomOp<A1> for Scale {
///     const NAME: &'static str = "scale";
///     fn forward(&self, x: &(Array,)) -> Array {
///         x.0.mul_scalar(self.0)
///     }
///     fn jvp<V: ArrayValue>(&self, _: &(V,), y: &V, dx: &(Option<V>,)) -> V {
///         dx.0.as_ref().map_or_else(|| y.zeros_like(), |d| d.mul_scalar(self.0))
///     }
///     fn vjp<V: ArrayValue>(&self, _: &(V,), _: &V, ct: &V) -> (V,) {
///         (ct.mul_scalar(self.0),)
///     }
/// }
///
/// let x = Array::from_vec(vec![1.0f64, 2.0], &[2]).requires_grad();
/// let y = custom::call(&Scale(3.0), &(x.clone(),));
/// assert_eq!(y.to_vec::<f64>(), vec![3.0, 6.0]);
/// y.sum().backward(); // through the op's VJP rule
/// assert_eq!(x.grad().to_vec::<f64>(), vec![3.0, 3.0]);
/// ```
pub trait CustomOp<A: FixedArity>: Clone + Send + Sync + 'static {
    /// Its name, for error messages and the tape.
    const NAME: &'static str;
    /// Its sharding rule for distributed arrays (`nabla::dist`): `Some(k)`
    /// when the op treats the leading axes (all but the last `k` of its
    /// first operand) as a batch, so each rank may compute its block of
    /// them: every operand and the output share those axes, the rest must
    /// be whole. `None` (the default): every operand and the output whole
    /// on every rank. `#[custom_op(shard = last(k))]` sets it.
    ///
    /// ```
    /// use nabla::{compose::A1, custom::CustomOp, Array, ArrayValue, Value};
    ///
    /// #[nabla::custom_op(jvp = j, shard = last(1))]
    /// fn row_max(x: &Array) -> Array {
    ///     x.max_axes(&[-1], true).broadcast_to(x.shape())
    /// }
    ///
    /// fn j<V: ArrayValue>(_: &V, y: &V, _: Option<&V>) -> V {
    ///     y.zeros_like()
    /// }
    ///
    /// fn main() {
    ///     // Rows may be split over ranks; each row's last axis stays whole.
    ///     assert_eq!(<row_max::Op as CustomOp<A1>>::WHOLE_LAST, Some(1));
    /// }
    /// ```
    const WHOLE_LAST: Option<usize> = None;
    /// The forward computation on arrays.
    ///
    /// ```
    /// # use nabla::{compose::A1, custom::CustomOp, Array, ArrayValue, Value};
    /// # #[derive(Clone)]
    /// # struct Scale(f64);
    /// # impl CustomOp<A1> for Scale {
    /// #     const NAME: &'static str = "scale";
    /// #     fn forward(&self, x: &(Array,)) -> Array { x.0.mul_scalar(self.0) }
    /// #     fn jvp<V: ArrayValue>(&self, _: &(V,), y: &V, dx: &(Option<V>,)) -> V {
    /// #         dx.0.as_ref().map_or_else(|| y.zeros_like(), |d| d.mul_scalar(self.0))
    /// #     }
    /// #     fn vjp<V: ArrayValue>(&self, _: &(V,), _: &V, ct: &V) -> (V,) { (ct.mul_scalar(self.0),) }
    /// # }
    /// let y = Scale(3.0).forward(&(Array::from_vec(vec![1.0f64, 2.0], &[2]),));
    /// assert_eq!(y.to_vec::<f64>(), vec![3.0, 6.0]);
    /// ```
    fn forward(&self, x: &A::Args<Array>) -> Array;
    /// The JVP rule: the output tangent from the inputs, the output and the
    /// input tangents (`None` = zero).
    ///
    /// ```
    /// # use nabla::{compose::A1, custom::CustomOp, Array, ArrayValue, Value};
    /// # #[derive(Clone)]
    /// # struct Scale(f64);
    /// # impl CustomOp<A1> for Scale {
    /// #     const NAME: &'static str = "scale";
    /// #     fn forward(&self, x: &(Array,)) -> Array { x.0.mul_scalar(self.0) }
    /// #     fn jvp<V: ArrayValue>(&self, _: &(V,), y: &V, dx: &(Option<V>,)) -> V {
    /// #         dx.0.as_ref().map_or_else(|| y.zeros_like(), |d| d.mul_scalar(self.0))
    /// #     }
    /// #     fn vjp<V: ArrayValue>(&self, _: &(V,), _: &V, ct: &V) -> (V,) { (ct.mul_scalar(self.0),) }
    /// # }
    /// use nabla::Dual;
    /// // A `Dual` input applies the op to the primal and the JVP rule to the tangent.
    /// let x = Dual::new(Array::scalar(2.0f64), Some(Array::scalar(1.0f64)));
    /// let y = Dual::apply_custom::<Scale, A1>(&Scale(3.0), &(x,));
    /// assert_eq!((y.primal.item(), y.tangent_or_zero().item()), (6.0, 3.0));
    /// ```
    fn jvp<V: ArrayValue>(&self, x: &A::Args<V>, y: &V, dx: &A::Args<Option<V>>) -> V;
    /// The VJP rule: one cotangent per input.
    ///
    /// ```
    /// # use nabla::{compose::A1, custom::CustomOp, Array, ArrayValue, Value};
    /// # #[derive(Clone)]
    /// # struct Scale(f64);
    /// # impl CustomOp<A1> for Scale {
    /// #     const NAME: &'static str = "scale";
    /// #     fn forward(&self, x: &(Array,)) -> Array { x.0.mul_scalar(self.0) }
    /// #     fn jvp<V: ArrayValue>(&self, _: &(V,), y: &V, dx: &(Option<V>,)) -> V {
    /// #         dx.0.as_ref().map_or_else(|| y.zeros_like(), |d| d.mul_scalar(self.0))
    /// #     }
    /// #     fn vjp<V: ArrayValue>(&self, _: &(V,), _: &V, ct: &V) -> (V,) { (ct.mul_scalar(self.0),) }
    /// # }
    /// let x = Array::scalar(2.0f64);
    /// let (g,) = Scale(3.0).vjp::<Array>(&(x.clone(),), &x, &Array::scalar(0.5f64));
    /// assert_eq!(g.item(), 1.5);
    /// ```
    fn vjp<V: ArrayValue>(&self, x: &A::Args<V>, y: &V, ct: &V) -> A::Args<V>;
    /// The batching rule: `x[i]` carries the batch axis first when
    /// `batched[i]` (at least one does); returns the output with the batch
    /// axis first. `None` (the default) runs the op once per batch entry.
    ///
    /// ```
    /// # use nabla::{compose::A1, custom::CustomOp, Array, ArrayValue, Value};
    /// # #[derive(Clone)]
    /// # struct Scale(f64);
    /// # impl CustomOp<A1> for Scale {
    /// #     const NAME: &'static str = "scale";
    /// #     fn forward(&self, x: &(Array,)) -> Array { x.0.mul_scalar(self.0) }
    /// #     fn jvp<V: ArrayValue>(&self, _: &(V,), y: &V, dx: &(Option<V>,)) -> V {
    /// #         dx.0.as_ref().map_or_else(|| y.zeros_like(), |d| d.mul_scalar(self.0))
    /// #     }
    /// #     fn vjp<V: ArrayValue>(&self, _: &(V,), _: &V, ct: &V) -> (V,) { (ct.mul_scalar(self.0),) }
    /// # }
    /// use nabla::{Batched, DType};
    /// // `Scale` has no batching rule (the default `None`): the op runs once per
    /// // batch entry and the results are stacked.
    /// let x = Array::from_vec(vec![1.0f64, 2.0, 3.0], &[3]);
    /// assert!(Scale(2.0).batch::<Array>(&(x.clone(),), &[true]).is_none());
    /// let y = Batched::apply_custom::<Scale, A1>(&Scale(2.0), &(Batched::new(x, Some(0)),));
    /// assert_eq!(y.value.to_vec::<f64>(), vec![2.0, 4.0, 6.0]);
    /// ```
    fn batch<V: ArrayValue>(&self, x: &A::Args<V>, batched: &[bool]) -> Option<V> {
        let _ = (x, batched);
        None
    }
}

/// The signature of [`ArrayValue::apply_custom`], written once: the
/// trait's declaration (`apply_custom!(decl)`) and each value type's
/// implementation (`apply_custom!(|op, x| body)`).
///
/// [`ArrayValue::apply_custom`]: crate::ArrayValue::apply_custom
macro_rules! apply_custom {
    (decl) => {
        /// Applies a user-defined primitive (see [`crate::custom`]).
        fn apply_custom<
            Op: $crate::vocab::custom_op::CustomOp<A>,
            A: $crate::vocab::arity::FixedArity,
        >(
            op: &Op,
            x: &A::Args<Self>,
        ) -> Self;
    };
    (|$op:ident, $x:ident| $body:expr) => {
        #[track_caller]
        fn apply_custom<
            Op: $crate::vocab::custom_op::CustomOp<A>,
            A: $crate::vocab::arity::FixedArity,
        >(
            $op: &Op,
            $x: &A::Args<Self>,
        ) -> Self {
            $body
        }
    };
}
pub(crate) use apply_custom;
