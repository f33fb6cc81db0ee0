//! Elementwise maps over three broadcast operands: the kernel behind fused
//! derivative rules, where a rule such as `ẋ · (1 − y²)` runs as one pass
//! over `x`, `y` and `ẋ` instead of one pass (and one new array) per op.

use crate::elementwise::{
    CHUNK, MAX_ROW_AXES, merged_axes, par_outer, stride_along, try_broadcast_shape,
};
use crate::parallel::chunks_mut;
use crate::{Float, PARALLEL_THRESHOLD};
use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn};
use std::mem::MaybeUninit;

/// `f(a, b, c)` elementwise, the three operands broadcast together NumPy
/// style.
///
/// Paths: equal contiguous shapes run as one loop over slices (split
/// across threads when large); other small results go by strides, with
/// broadcast axes at stride 0 and neighbouring axes merged; large
/// broadcasts run in parallel along the first axis.
///
/// ```
/// use nabla_kernels::ternary::zip3_map;
/// let x = ndarray::arr1(&[1.0f64, 2.0, 3.0]).into_dyn();
/// let y = ndarray::arr2(&[[10.0f64], [20.0]]).into_dyn();
/// let z = ndarray::arr0(0.5f64).into_dyn();
/// let r = zip3_map(x.view(), y.view(), z.view(), |a, b, c| a + b * c);
/// assert_eq!(r.shape(), &[2, 3]);
/// assert_eq!(r.as_slice().unwrap(), &[6.0, 7.0, 8.0, 11.0, 12.0, 13.0]);
/// ```
///
/// # Panics
/// When the shapes do not broadcast together.
pub fn zip3_map<T: Float, F: Fn(T, T, T) -> T + Sync + Send>(
    a: ArrayViewD<'_, T>,
    b: ArrayViewD<'_, T>,
    c: ArrayViewD<'_, T>,
    f: F,
) -> ArrayD<T> {
    if a.shape() == b.shape()
        && b.shape() == c.shape()
        && let (Some(sa), Some(sb), Some(sc)) = (a.as_slice(), b.as_slice(), c.as_slice())
    {
        let n = sa.len();
        let mut out: Vec<T> = Vec::with_capacity(n);
        {
            let dst = &mut out.spare_capacity_mut()[..n];
            if n >= PARALLEL_THRESHOLD {
                chunks_mut(dst, CHUNK, |i, d| {
                    let r = i * CHUNK..i * CHUNK + d.len();
                    fill3(d, &sa[r.clone()], &sb[r.clone()], &sc[r], &f)
                });
            } else {
                fill3(dst, sa, sb, sc, &f);
            }
        }
        // SAFETY: all `n` slots were written above.
        unsafe { out.set_len(n) };
        return crate::owned(a.raw_dim(), out);
    }
    let shape = try_broadcast_shape(a.shape(), b.shape())
        .and_then(|s| try_broadcast_shape(&s, c.shape()))
        .unwrap_or_else(|| {
            panic!(
                "zip3_map: shapes {:?}, {:?} and {:?} do not broadcast",
                a.shape(),
                b.shape(),
                c.shape()
            )
        });
    let n: usize = shape.iter().product();
    if n < PARALLEL_THRESHOLD && shape.len() <= MAX_ROW_AXES {
        return strided3([&a, &b, &c], &shape, &f);
    }
    let d = IxDyn(&shape);
    let (av, bv, cv) = (
        a.broadcast(d.clone()).expect("shapes broadcast"),
        b.broadcast(d.clone()).expect("shapes broadcast"),
        c.broadcast(d).expect("shapes broadcast"),
    );
    par_outer(&shape, |i, d| {
        let (ai, bi, ci) = (
            av.index_axis(Axis(0), i),
            bv.index_axis(Axis(0), i),
            cv.index_axis(Axis(0), i),
        );
        for (d, ((&x, &y), &z)) in d.iter_mut().zip(ai.iter().zip(bi.iter()).zip(ci.iter())) {
            d.write(f(x, y, z));
        }
    })
}

/// One loop over three equal-length slices (vectorised by LLVM).
fn fill3<T: Float, F: Fn(T, T, T) -> T + ?Sized>(
    d: &mut [MaybeUninit<T>],
    a: &[T],
    b: &[T],
    c: &[T],
    f: &F,
) {
    for (d, ((&x, &y), &z)) in d.iter_mut().zip(a.iter().zip(b).zip(c)) {
        d.write(f(x, y, z));
    }
}

/// The small broadcast case of [`zip3_map`] (at most `MAX_ROW_AXES` axes),
/// by strides: length-1 axes dropped, neighbouring axes merged where all
/// three operands step through them evenly, then one loop per merged row
/// (over slices when all three rows are contiguous) with an odometer over
/// the outer axes.
fn strided3<T: Float, F: Fn(T, T, T) -> T + ?Sized>(
    v: [&ArrayViewD<'_, T>; 3],
    shape: &[usize],
    f: &F,
) -> ArrayD<T> {
    let nd = shape.len();
    let w = merged_axes::<3>(nd, |i| shape[i], |o, i| stride_along(v[o], nd, i));
    let (dims, st, k) = (&w.dims, &w.strides, w.len);
    let n: usize = shape.iter().product();
    let mut out: Vec<T> = Vec::with_capacity(n);
    if n > 0 {
        let p = [v[0].as_ptr(), v[1].as_ptr(), v[2].as_ptr()];
        let dst = &mut out.spare_capacity_mut()[..n];
        if k == 0 {
            // SAFETY: every axis has length 1: one element each.
            dst[0].write(unsafe { f(*p[0], *p[1], *p[2]) });
        } else {
            let w = dims[k - 1];
            let l = [st[0][k - 1], st[1][k - 1], st[2][k - 1]];
            let mut idx = [0usize; MAX_ROW_AXES];
            let mut off = [0isize; 3];
            for row in dst.chunks_exact_mut(w) {
                // SAFETY: `off` holds the offsets of this output row's first
                // element in each operand, and its `w` elements lie `l`
                // apart (0 where an operand broadcasts), all inside the
                // views.
                unsafe {
                    if l == [1, 1, 1] {
                        let (x, y, z) = (
                            std::slice::from_raw_parts(p[0].offset(off[0]), w),
                            std::slice::from_raw_parts(p[1].offset(off[1]), w),
                            std::slice::from_raw_parts(p[2].offset(off[2]), w),
                        );
                        fill3(row, x, y, z, f);
                    } else {
                        for (j, d) in row.iter_mut().enumerate() {
                            let j = j as isize;
                            d.write(f(
                                *p[0].offset(off[0] + j * l[0]),
                                *p[1].offset(off[1] + j * l[1]),
                                *p[2].offset(off[2] + j * l[2]),
                            ));
                        }
                    }
                }
                // Odometer over the outer merged axes (wraps to zero after
                // the last row).
                let mut q = k - 1;
                while q > 0 {
                    q -= 1;
                    idx[q] += 1;
                    for o in 0..3 {
                        off[o] += st[o][q];
                    }
                    if idx[q] < dims[q] {
                        break;
                    }
                    for o in 0..3 {
                        off[o] -= st[o][q] * dims[q] as isize;
                    }
                    idx[q] = 0;
                }
            }
        }
        // SAFETY: the rows of `dst` cover all `n` slots (`n` is the product
        // of the merged lengths) and each was written above.
        unsafe { out.set_len(n) };
    }
    crate::owned(IxDyn(shape), out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elementwise::testing::{Rng, operand};
    use ndarray::Zip;

    /// Random shapes of up to 5 axes, each operand broadcasting (length-1
    /// or missing leading axes) and laid out standard, reversed or
    /// transposed: every path against ndarray's broadcast iterators.
    #[test]
    fn broadcasts_match_the_generic_iterator() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for case in 0..600 {
            let nd = rng.below(6);
            // Some cases large enough for the parallel paths.
            let big = case % 50 == 0;
            let out: Vec<usize> = (0..nd)
                .map(|i| if big && i == 0 { 300 } else { 1 + rng.below(4) })
                .collect();
            let (a, b, c) = (
                operand(&mut rng, &out, 1.0),
                operand(&mut rng, &out, 2.5),
                operand(&mut rng, &out, -0.5),
            );
            let f = |x: f64, y: f64, z: f64| x * 3.0 - y * z;
            let got = zip3_map(a.view(), b.view(), c.view(), f);
            let shape = try_broadcast_shape(a.shape(), b.shape())
                .and_then(|s| try_broadcast_shape(&s, c.shape()))
                .unwrap();
            let d = IxDyn(&shape);
            let want = Zip::from(&a.broadcast(d.clone()).unwrap())
                .and(&b.broadcast(d.clone()).unwrap())
                .and(&c.broadcast(d).unwrap())
                .map_collect(|&x, &y, &z| f(x, y, z));
            assert_eq!(
                got,
                want,
                "case {case}: {:?} {:?} {:?}",
                a.shape(),
                b.shape(),
                c.shape()
            );
        }
        // Equal contiguous shapes, large enough to split across threads.
        let n = PARALLEL_THRESHOLD + 5;
        let x = ndarray::Array1::from_iter((0..n).map(|i| i as f32)).into_dyn();
        let r = zip3_map(x.view(), x.view(), x.view(), |a, b, c| a + b - c * 0.5);
        assert!(r.iter().enumerate().all(|(i, &v)| v == i as f32 * 1.5));
    }

    #[test]
    #[should_panic(expected = "zip3_map: shapes [2], [3] and [] do not broadcast")]
    fn shapes_that_do_not_broadcast_panic() {
        let (a, b) = (
            ndarray::Array1::<f32>::zeros(2),
            ndarray::Array1::<f32>::zeros(3),
        );
        let c = ndarray::arr0(1.0f32);
        zip3_map(
            a.into_dyn().view(),
            b.into_dyn().view(),
            c.into_dyn().view(),
            |x, _, _| x,
        );
    }
}
