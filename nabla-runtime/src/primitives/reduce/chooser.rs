//! `max` and `min` over axes, and their derivative rules: the derivative
//! goes to the positions that attain the extreme (ties share it).
//!
//! The rules call [`ArrayValue::chooser_jvp`] and
//! [`ArrayValue::chooser_vjp`]. Every value type has the composite form
//! (`cmp_mask`, `sum`, `div`, `mul`: four passes over `x`'s shape); host
//! arrays whose reduced axes trail take one pass
//! ([`nabla_kernels::chooser`]), and `Dual` values one pass for the primal
//! and one for the tangent.

use super::{forward, to_keep};
use crate::storage::Data;
use crate::{Array, ArrayValue};
use nabla_kernels::elementwise::CompareOp;
use nabla_kernels::reduce::ReduceOp;

/// Where `x` attains its reduced extreme `y`, normalised so tied positions
/// share the derivative equally (JAX's rule).
fn chooser_weights<V: ArrayValue>(x: &V, y: &V, axes: &[usize], keepdim: bool) -> V {
    let shape = x.shape_vec();
    let hit = x.cmp_mask(&to_keep(y, &shape, axes, keepdim), CompareOp::Eq);
    let count = hit.sum_axes(axes, true);
    hit.div(&count)
}

macro_rules! chooser {
    ($(#[$doc:meta])* $name:ident, $op:expr) => {
        $(#[$doc])*
        pub mod $name {
            use super::*;
            /// Forward.
            ///
            /// ```
            /// use nabla::{primitives::reduce::{max, min}, Array};
            /// let x = Array::from_vec(vec![1.0f64, 4.0, 3.0, 2.0], &[2, 2]);
            /// assert_eq!(max::forward(&x, &[1], false).to_vec::<f64>(), vec![4.0, 3.0]);
            /// assert_eq!(min::forward(&x, &[1], false).to_vec::<f64>(), vec![1.0, 2.0]);
            /// ```
            #[track_caller]
            pub fn forward(x: &Array, axes: &[usize], keepdim: bool) -> Array {
                super::forward(x, axes, keepdim, $op, stringify!($name))
            }
            /// JVP rule: the tangent averaged over the arg-extreme positions.
            ///
            /// ```
            /// use nabla::{primitives::reduce::{max, min}, Array};
            /// let x = Array::from_vec(vec![1.0f64, 4.0, 3.0, 3.0], &[2, 2]); // a tie in row 1
            /// let dx = Array::from_vec(vec![10.0f64, 20.0, 30.0, 50.0], &[2, 2]);
            /// let y = max::forward(&x, &[1], false);
            /// assert_eq!(max::jvp(&x, &y, &[1], false, &dx).to_vec::<f64>(), vec![20.0, 40.0]);
            /// let y = min::forward(&x, &[1], false);
            /// assert_eq!(min::jvp(&x, &y, &[1], false, &dx).to_vec::<f64>(), vec![10.0, 40.0]);
            /// ```
            pub fn jvp<V: ArrayValue>(x: &V, y: &V, axes: &[usize], keepdim: bool, dx: &V) -> V {
                x.chooser_jvp(y, axes, keepdim, dx)
            }
            /// VJP rule: the cotangent sent to the arg-extreme positions.
            ///
            /// ```
            /// use nabla::{primitives::reduce::{max, min}, Array, DType};
            /// let x = Array::from_vec(vec![1.0f64, 4.0, 3.0, 3.0], &[2, 2]); // a tie in row 1
            /// let ct = Array::ones(&[2], DType::F64);
            /// let y = max::forward(&x, &[1], false);
            /// assert_eq!(max::vjp(&x, &y, &[1], false, &ct).to_vec::<f64>(), vec![0.0, 1.0, 0.5, 0.5]);
            /// let y = min::forward(&x, &[1], false);
            /// assert_eq!(min::vjp(&x, &y, &[1], false, &ct).to_vec::<f64>(), vec![1.0, 0.0, 0.5, 0.5]);
            /// ```
            pub fn vjp<V: ArrayValue>(x: &V, y: &V, axes: &[usize], keepdim: bool, ct: &V) -> V {
                x.chooser_vjp(y, axes, keepdim, ct)
            }
        }
    };
}

chooser!(
    /// Maximum over axes.
    max,
    ReduceOp::Max
);
chooser!(
    /// Minimum over axes.
    min,
    ReduceOp::Min
);

/// The JVP as composite ops: `Σ dx · weights` over `axes`.
pub(crate) fn composite_jvp<V: ArrayValue>(
    x: &V,
    y: &V,
    axes: &[usize],
    keepdim: bool,
    dx: &V,
) -> V {
    dx.mul(&chooser_weights(x, y, axes, keepdim))
        .sum_axes(axes, keepdim)
}

/// The VJP as composite ops: `ct` (kept shape) times the weights.
pub(crate) fn composite_vjp<V: ArrayValue>(
    x: &V,
    y: &V,
    axes: &[usize],
    keepdim: bool,
    ct: &V,
) -> V {
    to_keep(ct, &x.shape_vec(), axes, keepdim).mul(&chooser_weights(x, y, axes, keepdim))
}

/// The JVP in one pass, on host arrays whose reduced axes trail and that
/// nothing records on the tape; `None` otherwise.
pub(crate) fn pass_jvp(x: &Array, y: &Array, axes: &[usize], dx: &Array) -> Option<Array> {
    one_pass(x, y, axes, dx, false)
}

/// The VJP in one pass, under the conditions of [`pass_jvp`].
pub(crate) fn pass_vjp(x: &Array, y: &Array, axes: &[usize], ct: &Array) -> Option<Array> {
    one_pass(x, y, axes, ct, true)
}

fn one_pass(x: &Array, y: &Array, axes: &[usize], v: &Array, vjp: bool) -> Option<Array> {
    let (nd, k) = (x.ndim(), axes.len());
    let trailing = k > 0 && axes.iter().enumerate().all(|(i, &a)| a + k == nd + i);
    if !trailing || x.is_tracked() || y.is_tracked() || v.is_tracked() {
        return None;
    }
    let inner: usize = x.shape()[nd - k..].iter().product();
    let outer: usize = x.shape()[..nd - k].iter().product();
    let v_len = if vjp { outer } else { outer * inner };
    if inner == 0 || y.numel() != outer || v.numel() != v_len {
        return None;
    }
    let out_shape = if vjp { x.shape() } else { y.shape() };
    let data = match (&*x.data, &*y.data, &*v.data) {
        (Data::F32(xh), Data::F32(yh), Data::F32(vh)) => {
            Data::F32(typed(xh, yh, vh, inner, vjp, out_shape)?)
        }
        (Data::F64(xh), Data::F64(yh), Data::F64(vh)) => {
            Data::F64(typed(xh, yh, vh, inner, vjp, out_shape)?)
        }
        _ => return None,
    };
    Some(Array::from_data(data))
}

fn typed<T: nabla_kernels::Float>(
    x: &crate::storage::Host<T>,
    y: &crate::storage::Host<T>,
    v: &crate::storage::Host<T>,
    inner: usize,
    vjp: bool,
    out_shape: &[usize],
) -> Option<crate::storage::Host<T>> {
    let xs = x.as_slice()?;
    // `y` and a `ct` are one value per row (small beside `x`): copied to
    // row-major order where they are views (a broadcast seed, say).
    let (yc, vc);
    let ys = match y.as_slice() {
        Some(s) => s,
        None => {
            yc = y.to_owned_standard();
            yc.as_slice()?
        }
    };
    let vs = match v.as_slice() {
        Some(s) => s,
        None if vjp => {
            vc = v.to_owned_standard();
            vc.as_slice()?
        }
        None => return None,
    };
    let out = if vjp {
        nabla_kernels::chooser::chooser_vjp(xs, ys, vs, inner)
    } else {
        nabla_kernels::chooser::chooser_jvp(xs, ys, vs, inner)
    };
    Some(crate::storage::Host::from_vec(out_shape, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows with ties, a NaN row and a row of infinities, in both dtypes.
    fn cases(dtype: crate::DType) -> Vec<(Array, Vec<usize>)> {
        let v: Vec<f64> = (0..60).map(|i| ((i * 7) % 5) as f64).collect();
        let mut w = v.clone();
        w[3] = f64::NAN;
        w[10..15].fill(f64::INFINITY);
        [v, w]
            .into_iter()
            .flat_map(|d| {
                let x = Array::from_vec(d, &[3, 4, 5]).cast(dtype);
                vec![
                    (x.clone(), vec![2]),
                    (x.clone(), vec![1, 2]),
                    (x.clone(), vec![0]),
                    (x, vec![0, 1, 2]),
                ]
            })
            .collect()
    }

    #[test]
    fn one_pass_rules_match_the_composite() {
        for dtype in [crate::DType::F32, crate::DType::F64] {
            for (x, axes) in cases(dtype) {
                for keepdim in [false, true] {
                    for is_max in [false, true] {
                        let op = if is_max { ReduceOp::Max } else { ReduceOp::Min };
                        let y = forward(&x, &axes, keepdim, op, "max");
                        let n = y.numel();
                        let ct =
                            Array::from_vec((0..n).map(|i| i as f64 - 1.5).collect(), y.shape())
                                .cast(dtype);
                        let dx =
                            Array::from_vec((0..60).map(|i| (i as f64).sin()).collect(), x.shape())
                                .cast(dtype);
                        let fast_v = x.chooser_vjp(&y, &axes, keepdim, &ct);
                        let slow_v = composite_vjp(&x, &y, &axes, keepdim, &ct);
                        let fast_t = x.chooser_jvp(&y, &axes, keepdim, &dx);
                        let slow_t = composite_jvp(&x, &y, &axes, keepdim, &dx);
                        let trailing = axes.last() == Some(&2);
                        assert_eq!(pass_vjp(&x, &y, &axes, &ct).is_some(), trailing);
                        assert_eq!(fast_v.shape(), slow_v.shape());
                        assert_eq!(fast_t.shape(), slow_t.shape());
                        let (a, b) = (fast_v.to_vec::<f64>(), slow_v.to_vec::<f64>());
                        for (p, q) in a.iter().zip(&b) {
                            assert!(
                                p.to_bits() == q.to_bits() || (p.is_nan() && q.is_nan()),
                                "vjp {p} vs {q} ({axes:?})"
                            );
                        }
                        let (a, b) = (fast_t.to_vec::<f64>(), slow_t.to_vec::<f64>());
                        for (p, q) in a.iter().zip(&b) {
                            assert!(
                                (p - q).abs() <= 1e-6 * q.abs().max(1.0)
                                    || (p.is_nan() && q.is_nan()),
                                "jvp {p} vs {q} ({axes:?})"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn batched_rules_match_the_composite() {
        use crate::Batched;
        // A batch of 3; the reduction over the per-example axis 1.
        let x = Array::from_vec((0..60).map(|i| ((i * 7) % 5) as f64).collect(), &[4, 3, 5]);
        let ct = Batched::new(
            Array::from_vec((0..12).map(|i| i as f64).collect(), &[3, 4]),
            Some(0),
        );
        let dx = Batched::new(
            Array::from_vec((0..60).map(|i| (i as f64).cos()).collect(), &[4, 3, 5]),
            Some(1),
        );
        // The batch axis inside x (moved first as a view: the composite
        // underneath) and first in a row-major x (the one-pass kernel).
        let first = Array::from_vec(x.permute(&[1, 0, 2]).to_vec::<f64>(), &[3, 4, 5]);
        for bx in [
            Batched::new(x.clone(), Some(1)),
            Batched::new(first, Some(0)),
        ] {
            let y = bx.max_axes(&[1], false);
            let (fast, slow) = (
                bx.chooser_vjp(&y, &[1], false, &ct),
                composite_vjp(&bx, &y, &[1], false, &ct),
            );
            assert_eq!(fast.front().to_vec::<f64>(), slow.front().to_vec::<f64>());
            let (fast, slow) = (
                bx.chooser_jvp(&y, &[1], false, &dx),
                composite_jvp(&bx, &y, &[1], false, &dx),
            );
            let (a, b) = (fast.front().to_vec::<f64>(), slow.front().to_vec::<f64>());
            assert!(
                a.iter().zip(&b).all(|(p, q)| (p - q).abs() < 1e-12),
                "{a:?} vs {b:?}"
            );
        }
        // x shared by the batch: the composite, unchanged.
        let shared = Batched::unbatched(x.slice_axis(1, 0..1).reshape(&[4, 5]));
        let ys = shared.max_axes(&[1], false);
        let tangents = Batched::new(dx.materialize(3, 0), Some(0));
        let t = shared.chooser_jvp(&ys, &[1], false, &tangents);
        let want = composite_jvp(&shared, &ys, &[1], false, &tangents);
        assert_eq!(t.front().to_vec::<f64>(), want.front().to_vec::<f64>());
    }

    #[test]
    fn a_broadcast_cotangent_takes_the_pass() {
        let x = Array::from_vec(vec![1.0f64, 3.0, 3.0, 0.0], &[2, 2]);
        let y = forward(&x, &[1], false, ReduceOp::Max, "max");
        let ct = Array::from_vec(vec![2.0f64], &[]).broadcast_to(&[2]);
        let out = pass_vjp(&x, &y, &[1], &ct).expect("trailing axis, untracked");
        assert_eq!(out.to_vec::<f64>(), vec![0.0, 2.0, 2.0, 0.0]);
    }
}
