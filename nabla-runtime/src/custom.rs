//! User-defined primitives: a forward computation on arrays (which may call
//! custom kernels) plus a JVP rule and a VJP rule written with the generic
//! value operations. A custom op is called from `#[differentiable]` code,
//! from imperative code (`backward()`), and under `vmap`, `jacfwd`,
//! `jacrev`, `hessian` exactly like a built-in primitive: the runtime
//! trusts the rules (it never re-derives them).
//!
//! Declare one with `#[nabla::custom_op(jvp = .., vjp = ..)]` on the forward
//! function (see the `nabla` crate), or implement [`CustomOp`] by hand.
//!
//! How each value type applies an op ([`ArrayValue::apply_custom`]):
//! `Array` runs `forward` and records the VJP rule on the tape; `Dual<V>`
//! applies the op to the primals and the JVP rule to the tangents;
//! `Batched<V>` runs the op once per batch entry and stacks the results (the
//! default batching rule: correct for any op, slower than a vectorised one).

use crate::compose::Arity;
use crate::{Array, ArrayValue, Batched, Dual};

/// A primitive defined outside the library, of arity `A`.
pub trait CustomOp<A: Arity>: Copy + 'static {
    /// Its name, for error messages and the tape.
    const NAME: &'static str;
    /// The forward computation on arrays.
    fn forward(x: &A::Args<Array>) -> Array;
    /// The JVP rule: the output tangent from the inputs, the output and the
    /// input tangents (`None` = zero).
    fn jvp<V: ArrayValue>(x: &A::Args<V>, y: &V, dx: &A::Args<Option<V>>) -> V;
    /// The VJP rule: one cotangent per input.
    fn vjp<V: ArrayValue>(x: &A::Args<V>, y: &V, ct: &V) -> A::Args<V>;
}

/// `Array`: run the forward, and record the VJP rule if an input is tracked.
pub(crate) fn apply_array<Op: CustomOp<A>, A: Arity>(x: &A::Args<Array>) -> Array {
    let y = crate::no_grad(|| Op::forward(x));
    let inputs: Vec<&Array> = (0..A::N).map(|i| A::get(x, i)).collect();
    if !crate::autograd::needs_grad(&inputs) {
        return y.detach();
    }
    let xr: Vec<Array> = inputs.iter().map(|a| a.detach()).collect();
    let yr = y.detach();
    let want: Vec<bool> = inputs.iter().map(|a| a.is_tracked()).collect();
    crate::autograd::record(
        y.detach(),
        Op::NAME,
        &inputs,
        Box::new(move |ct: &Array| {
            let args = A::from_fn(|i| xr[i].clone());
            let cts = Op::vjp::<Array>(&args, &yr, ct);
            (0..A::N)
                .map(|i| want[i].then(|| A::get(&cts, i).clone()))
                .collect()
        }),
    )
}

/// `Dual<V>`: the op on the primals, the JVP rule on the tangents.
pub(crate) fn apply_dual<Op: CustomOp<A>, A: Arity, V: ArrayValue>(
    x: &A::Args<Dual<V>>,
) -> Dual<V> {
    let primals = A::map(x, |_, d: &Dual<V>| d.primal.clone());
    let y = V::apply_custom::<Op, A>(&primals);
    if (0..A::N).all(|i| A::get(x, i).tangent.is_none()) {
        return Dual::constant(y);
    }
    let tangents = A::map(x, |_, d: &Dual<V>| d.tangent.clone());
    let t = Op::jvp::<V>(&primals, &y, &tangents);
    Dual::new(y, Some(t))
}

/// `Batched<V>`: once per batch entry, then stacked along axis 0.
pub(crate) fn apply_batched<Op: CustomOp<A>, A: Arity, V: ArrayValue>(
    x: &A::Args<Batched<V>>,
) -> Batched<V> {
    let Some(n) = (0..A::N).find_map(|i| A::get(x, i).batch_size()) else {
        return Batched::unbatched(V::apply_custom::<Op, A>(&A::map(x, |_, b: &Batched<V>| {
            b.value.clone()
        })));
    };
    let fronts = A::map(x, |_, b: &Batched<V>| b.bdim.map(|_| b.front()));
    let rows: Vec<V> = (0..n)
        .map(|k| {
            let args = A::map(x, |i, b: &Batched<V>| match A::get(&fronts, i) {
                Some(f) => {
                    let s = f.shape_vec();
                    f.index_select(0, &[k]).reshape(&s[1..])
                }
                None => b.value.clone(),
            });
            let y = V::apply_custom::<Op, A>(&args);
            let mut s = vec![1];
            s.extend(y.shape_vec());
            y.reshape(&s)
        })
        .collect();
    Batched::new(V::concat(&rows, 0), Some(0))
}

/// Calls a custom op on arrays (what a declared op's plain call runs).
pub fn call<Op: CustomOp<A>, A: Arity>(x: &A::Args<Array>) -> Array {
    apply_array::<Op, A>(x)
}
