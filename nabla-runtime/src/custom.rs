//! User-defined primitives: a forward computation on arrays (which may call
//! custom kernels, see [`cpu_kernel`] and, with feature `cuda`,
//! `CudaKernel`) plus a JVP rule and a VJP rule written with the generic
//! value operations, an optional batching rule, and optional static
//! (non-differentiable) parameters. A custom op is called from
//! `#[differentiable]` code, from imperative code (`backward()`), and under
//! `vmap`, `jacfwd`, `jacrev`, `hessian` exactly like a built-in primitive:
//! the runtime trusts the rules (it never re-derives them).
//!
//! Declare one with `#[nabla::custom_op(jvp = .., vjp = .., batch = ..)]` on
//! the forward function (see the `nabla` crate), or implement [`CustomOp`]
//! by hand.
//!
//! How each value type applies an op ([`ArrayValue::apply_custom`]):
//! `Array` runs `forward` and records the VJP rule on the tape; `Dual<V>`
//! applies the op to the primals and the JVP rule to the tangents;
//! `Batched<V>` calls the op's batching rule when it has one, and otherwise
//! runs the op once per batch entry and stacks the results (the default
//! batching rule: correct for any op, slower than a vectorised one).

use crate::vocab::arity::FixedArity;
use crate::{Array, ArrayValue, Batched, Dual};

mod kernels;
#[cfg(feature = "cuda")]
pub use kernels::{CudaKernel, CudaLaunch};
pub use kernels::{Strided, cpu_kernel};

pub use crate::vocab::custom_op::CustomOp;

/// `Dual<V>`: the op on the primals, the JVP rule on the tangents.
pub(crate) fn apply_dual<Op: CustomOp<A>, A: FixedArity, V: ArrayValue>(
    op: &Op,
    x: &A::Args<Dual<V>>,
) -> Dual<V> {
    let primals = A::map(x, |_, d: &Dual<V>| d.primal.clone());
    let y = V::apply_custom::<Op, A>(op, &primals);
    if (0..A::N).all(|i| A::get(x, i).tangent.is_none()) {
        return Dual::constant(y);
    }
    let tangents = A::map(x, |_, d: &Dual<V>| d.tangent.clone());
    let t = op.jvp::<V>(&primals, &y, &tangents);
    Dual::new(y, Some(t))
}

/// `Batched<V>`: the op's batching rule, or once per batch entry, stacked
/// along axis 0.
pub(crate) fn apply_batched<Op: CustomOp<A>, A: FixedArity, V: ArrayValue>(
    op: &Op,
    x: &A::Args<Batched<V>>,
) -> Batched<V> {
    let Some(n) = (0..A::N).find_map(|i| A::get(x, i).batch_size()) else {
        return Batched::unbatched(V::apply_custom::<Op, A>(
            op,
            &A::map(x, |_, b: &Batched<V>| b.value.clone()),
        ));
    };
    let batched: Vec<bool> = (0..A::N).map(|i| A::get(x, i).bdim.is_some()).collect();
    let fronts = A::map(x, |_, b: &Batched<V>| match b.bdim {
        Some(_) => b.front(),
        None => b.value.clone(),
    });
    if let Some(y) = op.batch::<V>(&fronts, &batched) {
        return Batched::new(y, Some(0));
    }
    let rows: Vec<V> = (0..n)
        .map(|k| {
            let args = A::map(&fronts, |i, f: &V| {
                if batched[i] {
                    let s = f.shape_vec();
                    f.index_select(0, &[k]).reshape(&s[1..])
                } else {
                    f.clone()
                }
            });
            let y = V::apply_custom::<Op, A>(op, &args);
            let mut s = vec![1];
            s.extend(y.shape_vec());
            y.reshape(&s)
        })
        .collect();
    Batched::new(V::concat(&rows, 0), Some(0))
}

/// The batching rule of an elementwise (shape-preserving, broadcasting)
/// op, what `#[custom_op(batch = elementwise)]` uses: every input is
/// broadcast to the batch size by the common per-example shape, and the op
/// runs once on the stacked arrays.
///
/// ```
/// use nabla::{custom::elementwise_batch, Array, ArrayValue};
/// # use nabla::compose::A2;
/// # #[derive(Clone)] struct Add;
/// # impl nabla::custom::CustomOp<A2> for Add {
/// #     const NAME: &'static str = "add";
/// #     fn forward(&self, x: &(Array, Array)) -> Array { &x.0 + &x.1 }
/// #     fn jvp<V: ArrayValue>(&self, _: &(V, V), y: &V, _: &(Option<V>, Option<V>)) -> V { y.zeros_like() }
/// #     fn vjp<V: ArrayValue>(&self, _: &(V, V), _: &V, ct: &V) -> (V, V) { (ct.clone(), ct.clone()) }
/// # }
/// let a = Array::ones(&[4, 3], nabla::DType::F64); // batch of 4
/// let b = Array::ones(&[3], nabla::DType::F64); // unbatched
/// let y = elementwise_batch(&Add, &(a, b), &[true, false]);
/// assert_eq!(y.shape(), &[4, 3]);
/// ```
pub fn elementwise_batch<Op: CustomOp<A>, A: FixedArity, V: ArrayValue>(
    op: &Op,
    x: &A::Args<V>,
    batched: &[bool],
) -> V {
    let n = (0..A::N)
        .find(|&i| batched[i])
        .map(|i| A::get(x, i).shape_vec()[0])
        .expect("a batching rule runs with at least one batched input");
    let mut per = crate::Shape::new();
    for (i, &b) in batched.iter().enumerate().take(A::N) {
        let s = A::get(x, i).shape_vec();
        let s = if b { &s[1..] } else { &s[..] };
        per = nabla_kernels::elementwise::try_broadcast_shape(&per, s).unwrap_or_else(|| {
            panic!(
                "custom op `{}` (batch = elementwise): per-example input shapes {per:?} and {s:?} do not broadcast",
                Op::NAME
            )
        });
    }
    let mut full = vec![n];
    full.extend(&per);
    let args = A::map(x, |i, v: &V| {
        if batched[i] {
            // Align the per-example axes to the right, behind the batch axis.
            let s = v.shape_vec();
            let mut padded = vec![n];
            padded.extend(std::iter::repeat_n(1, per.len() + 1 - s.len()));
            padded.extend(&s[1..]);
            v.reshape(&padded).broadcast_to(&full)
        } else {
            v.broadcast_to(&full)
        }
    });
    V::apply_custom::<Op, A>(op, &args)
}

/// Calls a custom op on arrays (what a declared op's plain call runs).
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
/// let x = Array::from_vec(vec![1.0f64, -1.0], &[2]);
/// assert_eq!(nabla::custom::call(&Scale(0.5), &(x,)).to_vec::<f64>(), vec![0.5, -0.5]);
/// ```
pub fn call<Op: CustomOp<A>, A: FixedArity>(op: &Op, x: &A::Args<Array>) -> Array {
    <Array as ArrayValue>::apply_custom::<Op, A>(op, x)
}

/// The panic of a rule the op does not have (`#[custom_op]` without `jvp`
/// or without `vjp`): which modes need it and how to add it.
///
/// ```
/// use std::panic::catch_unwind;
/// let r: std::thread::Result<()> = catch_unwind(|| nabla::custom::missing_rule("spring", "jvp"));
/// let msg = r.unwrap_err().downcast::<String>().unwrap();
/// assert!(msg.starts_with("custom op `spring` has no JVP rule"));
/// ```
#[track_caller]
pub fn missing_rule(op: &str, rule: &str) -> ! {
    let modes = if rule == "jvp" {
        "forward mode (jvp, jacfwd, hessian)"
    } else {
        "reverse mode (grad, vjp, jacrev, backward)"
    };
    panic!(
        "custom op `{op}` has no {} rule, so it cannot run in {modes}; add `{rule} = my_{rule}` to its #[custom_op(..)]",
        rule.to_uppercase()
    )
}
