//! Fused elementwise rules on arrays: [`Value::fused_rule`] for [`Array`].
//!
//! A derivative rule such as `ẋ · (1 − y²)` costs one kernel pass and one
//! new array per op when run op by op. On CPU arrays of one float dtype
//! whose shapes broadcast together, the rule instead runs as a single pass
//! over row-major operands, evaluated a block of lanes at a time: the same
//! generic code, instantiated at `Lanes` and at `f32` or `f64` for the
//! tail. Anything else runs the rule op by op, which records the tape and
//! reports errors as usual: a GPU array, mixed dtypes, shapes that do not
//! broadcast, an operand recording on the autograd tape, or a first or
//! second operand smaller than the result (the derivative `f'(x)` would
//! be evaluated once per tangent instead of once per element of `x`).
//!
//! Batching rule: operands move their batch axis first and pad their
//! per-example rank, as for any broadcasting binary op (see `batched.rs`);
//! `Dual` values run the rule op by op, so their tangents follow from the
//! ops' own JVP rules.

use crate::autograd::needs_grad;
use crate::storage::Data;
use crate::vocab::value::ElementwiseRule;
use crate::{Array, Device};
use nabla_kernels::elementwise::try_broadcast_shape;
use std::borrow::Cow;

/// `R::eval(a, b, c)` in one pass where it can be (see the module doc).
pub(crate) fn rule<R: ElementwiseRule>(a: &Array, b: &Array, c: &Array) -> Array {
    let Some(shape) = fusable(a, b, c) else {
        return R::eval(a, b, c);
    };
    if crate::array::nans::debug_nans_enabled() {
        return R::eval(a, b, c); // op by op, each checked
    }
    let data = match (&*a.data, &*b.data, &*c.data) {
        (Data::F32(x), Data::F32(y), Data::F32(z)) => {
            Data::F32(in_lanes::<R, f32>(x.view(), y.view(), z.view(), &shape).into())
        }
        (Data::F64(x), Data::F64(y), Data::F64(z)) => {
            Data::F64(in_lanes::<R, f64>(x.view(), y.view(), z.view(), &shape).into())
        }
        _ => return R::eval(a, b, c),
    };
    Array::from_data(data)
}

/// `R::eval` over three arrays broadcast to `shape`, a block of
/// `fused::LANES` elements at a time (the vectorisable forms of `exp`,
/// `tanh`, `erf`, ..: `fused::simd::chain_rule`), in parallel chunks above
/// the kernels' threshold. Operands that are not already contiguous at
/// `shape` (a broadcast cotangent, a transposed input) are copied into
/// row-major order first, by code that is generic over the element type
/// only, so each rule compiles to one lane loop per dtype.
fn in_lanes<R: ElementwiseRule, T: crate::fused::region::Kernel>(
    x: ndarray::ArrayViewD<'_, T>,
    y: ndarray::ArrayViewD<'_, T>,
    z: ndarray::ArrayViewD<'_, T>,
    shape: &[usize],
) -> ndarray::ArrayD<T> {
    let (xs, ys) = (row_major(x, shape), row_major(y, shape));
    let (xs, ys) = (&xs[..], &ys[..]);
    let mut out = row_major(z, shape).into_owned();
    const CHUNK: usize = 1 << 14;
    if out.len() >= nabla_kernels::PARALLEL_THRESHOLD {
        nabla_kernels::parallel::chunks_mut(&mut out, CHUNK, |i, t| {
            let r = i * CHUNK..i * CHUNK + t.len();
            crate::fused::simd::chain_rule::<R, T>(&xs[r.clone()], &ys[r], t)
        });
    } else {
        crate::fused::simd::chain_rule::<R, T>(xs, ys, &mut out);
    }
    ndarray::ArrayD::from_shape_vec(shape, out).expect("one element per index")
}

/// The elements of `v` broadcast to `shape`, in row-major order:
/// borrowed where they already are, copied otherwise.
fn row_major<'a, T: Copy>(v: ndarray::ArrayViewD<'a, T>, shape: &[usize]) -> Cow<'a, [T]> {
    if v.shape() == shape
        && let Some(s) = v.to_slice()
    {
        return Cow::Borrowed(s);
    }
    let b = v.broadcast(shape).expect("shapes broadcast");
    Cow::Owned(nabla_kernels::elementwise::row_major(&b))
}

/// The result's shape where the fused kernel applies: one float dtype,
/// all on the CPU, shapes that broadcast together, and nothing to record
/// on the tape.
fn fusable(a: &Array, b: &Array, c: &Array) -> Option<Vec<usize>> {
    let d = a.dtype();
    if !d.is_float() || b.dtype() != d || c.dtype() != d {
        return None;
    }
    if [a, b, c].iter().any(|x| x.device() != Device::Cpu) || needs_grad(&[a, b, c]) {
        return None;
    }
    let (sa, sb, sc) = (a.shape(), b.shape(), c.shape());
    if sa == sb && sb == sc {
        return Some(sa.to_vec());
    }
    // `a` and `b` (a unary op's input and output) must already have the
    // result's size: where `c` (a batch of tangents, say) is larger, one
    // pass per op evaluates the derivative once per element of `a` instead
    // of once per element of the result.
    try_broadcast_shape(sa, sb)
        .and_then(|s| try_broadcast_shape(&s, sc))
        .filter(|s| {
            let n: usize = s.iter().product();
            a.numel() == n && b.numel() == n
        })
        .map(|s| s.to_vec())
}

#[cfg(test)]
mod tests {
    use crate::primitives::unary::*;
    use crate::{Array, ElementwiseRule, Value};

    /// Every unary op's chain rule, fused, against the same rule run op by
    /// op: equal shapes, a cotangent broadcast from one element, and a
    /// batch of tangents larger than `x` (which runs op by op). In f64
    /// both paths round identically, so they must agree exactly.
    #[test]
    fn fused_rules_match_the_op_by_op_rules() {
        fn check<R: ElementwiseRule>(name: &str, f: fn(&Array) -> Array) {
            let x = Array::from_vec(vec![0.3f64, 0.7, 1.9, 0.05, 2.5, 1.1], &[2, 3]);
            let y = f(&x);
            let t = Array::from_vec(vec![1.5f64, -0.5, 2.0, 0.25, -3.0, 0.75], &[2, 3]);
            let one = Array::from_vec(vec![0.6f64], &[]);
            let many = Array::from_vec(
                (0..24).map(|i| f64::from(i) * 0.1 - 1.0).collect(),
                &[4, 2, 3],
            );
            for t in [&t, &one, &many] {
                let fused = Value::fused_rule::<R>(&x, &y, t);
                let by_ops = R::eval(&x, &y, t);
                assert_eq!(fused.shape(), by_ops.shape(), "{name}");
                assert_eq!(
                    fused.to_vec::<f64>(),
                    by_ops.to_vec::<f64>(),
                    "{name} {:?}",
                    t.shape()
                );
            }
            // A transposed input and output (strided views) with a
            // row-major cotangent.
            let (xt, tt) = (x.transpose(), t.reshape(&[3, 2]));
            let yt = f(&xt);
            assert_eq!(
                Value::fused_rule::<R>(&xt, &yt, &tt).to_vec::<f64>(),
                R::eval(&xt, &yt, &tt).to_vec::<f64>(),
                "{name} transposed"
            );
            // The scalar instantiation is the rule itself, element by element.
            let (xs, ys, ts) = (x.to_vec::<f64>(), y.to_vec::<f64>(), t.to_vec::<f64>());
            let fused = Value::fused_rule::<R>(&x, &y, &t).to_vec::<f64>();
            for i in 0..6 {
                assert_eq!(fused[i], R::eval(&xs[i], &ys[i], &ts[i]), "{name} [{i}]");
            }
        }
        check::<exp::Chain>("exp", |x| x.exp());
        check::<log::Chain>("log", |x| x.ln());
        check::<sin::Chain>("sin", |x| x.sin());
        check::<cos::Chain>("cos", |x| x.cos());
        check::<tan::Chain>("tan", |x| x.tan());
        check::<tanh::Chain>("tanh", |x| x.tanh());
        check::<sigmoid::Chain>("sigmoid", |x| x.sigmoid());
        check::<relu::Chain>("relu", |x| x.relu());
        check::<sqrt::Chain>("sqrt", |x| x.sqrt());
        check::<rsqrt::Chain>("rsqrt", |x| x.rsqrt());
        check::<abs::Chain>("abs", |x| x.abs());
        check::<reciprocal::Chain>("reciprocal", |x| x.recip());
        check::<log1p::Chain>("log1p", |x| x.ln_1p());
        check::<expm1::Chain>("expm1", |x| x.exp_m1());
        check::<erf::Chain>("erf", |x| x.erf());
    }

    /// The fused pass is what runs: its result is a new array computed in
    /// one kernel, and on f32 it agrees with the op-by-op rule to rounding.
    #[test]
    fn fused_rules_run_on_f32_and_fall_back_on_the_tape() {
        let x = Array::from_vec(vec![0.3f32, -0.7, 1.9, 0.05], &[4]);
        let y = x.tanh();
        let t = Array::from_vec(vec![1.0f32, 2.0, -1.0, 0.5], &[4]);
        let fused = Value::fused_rule::<tanh::Chain>(&x, &y, &t).to_vec::<f32>();
        let by_ops = tanh::Chain::eval(&x, &y, &t).to_vec::<f32>();
        for (a, b) in fused.iter().zip(&by_ops) {
            assert!((a - b).abs() <= 1e-6 * b.abs().max(1.0), "{a} vs {b}");
        }
        // With a tape the rule runs op by op and records, so gradients of
        // gradients flow through it.
        let w = x.clone().requires_grad();
        let g = Value::fused_rule::<sin::Chain>(&w, &w, &t);
        g.sum().backward();
        let want: Vec<f32> = x
            .to_vec::<f32>()
            .iter()
            .zip(t.to_vec::<f32>())
            .map(|(&x, t)| -x.sin() * t)
            .collect();
        for (a, b) in w.grad().to_vec::<f32>().iter().zip(&want) {
            assert!((a - b).abs() <= 1e-6, "{a} vs {b}");
        }
    }
}
