//! Scaled products `a · b · c` of broadcast operands in one pass: as a new
//! array ([`mul_scaled`]) and accumulated in place
//! ([`add_mul_scaled_into`]).

use super::broadcast::{broadcasts_to, is_row_of};
use super::simd::{update1_best, update2_best};
use super::zip::zip_map;
use crate::Float;
use ndarray::{ArrayD, ArrayViewD, Zip};

/// `a · b · c` (broadcast) in one pass: the VJP and JVP of `square` and of
/// constant-scaled products without a second sweep over the data.
///
/// ```
/// use nabla_kernels::elementwise::mul_scaled;
/// let a = ndarray::arr1(&[1.0f64, 2.0]).into_dyn();
/// let b = ndarray::arr1(&[3.0f64, 4.0]).into_dyn();
/// assert_eq!(mul_scaled(a.view(), b.view(), 2.0).as_slice().unwrap(), &[6.0, 16.0]);
/// ```
pub fn mul_scaled<T: Float>(a: ArrayViewD<'_, T>, b: ArrayViewD<'_, T>, c: f64) -> ArrayD<T> {
    let c = T::from_f64(c);
    zip_map(a, b, move |x, y| x * y * c)
}

/// `x += c · a · b` in place, `a` and `b` broadcast to `x`'s shape, in one
/// pass (the accumulation of `square`'s and `mul_scaled`'s rules). A
/// contiguous `x` takes operands that are each contiguous with `x`'s shape,
/// a contiguous row repeated along the leading axes, or one element, in
/// vectorised loops; any `x` takes operands of exactly its shape (ndarray's
/// `Zip`). Returns false (nothing written) for anything else, and the
/// caller composes.
///
/// ```
/// use nabla_kernels::elementwise::add_mul_scaled_into;
/// let mut x = ndarray::arr2(&[[1.0f64, 1.0], [1.0, 1.0]]).into_dyn();
/// let a = ndarray::arr2(&[[1.0f64, 2.0], [3.0, 4.0]]).into_dyn();
/// let b = ndarray::arr1(&[10.0f64, 100.0]).into_dyn();
/// assert!(add_mul_scaled_into(&mut x.view_mut(), a.view(), b.view(), 0.5));
/// assert_eq!(x.as_slice().unwrap(), &[6.0, 101.0, 16.0, 201.0]);
/// ```
pub fn add_mul_scaled_into<T: Float>(
    x: &mut ndarray::ArrayViewMutD<'_, T>,
    a: ArrayViewD<'_, T>,
    b: ArrayViewD<'_, T>,
    c: f64,
) -> bool {
    #[derive(Clone, Copy)]
    enum Part<'s, T> {
        Full(&'s [T]),
        Row(&'s [T]),
        One(T),
    }
    fn part<'s, T: Float>(v: &'s ArrayViewD<'_, T>, shape: &[usize]) -> Option<Part<'s, T>> {
        if !broadcasts_to(v.shape(), shape) {
            return None;
        }
        if v.len() == 1 {
            return v.iter().next().map(|&e| Part::One(e));
        }
        let s = v.as_slice()?;
        if v.shape() == shape {
            Some(Part::Full(s))
        } else if is_row_of(v.shape(), shape) {
            Some(Part::Row(s))
        } else {
            None
        }
    }
    let shape = x.shape().to_vec();
    let c = T::from_f64(c);
    let (pa, pb) = match (part(&a, &shape), part(&b, &shape)) {
        (Some(pa), Some(pb)) if x.is_standard_layout() => (pa, pb),
        _ if a.shape() == shape.as_slice() && b.shape() == shape.as_slice() => {
            Zip::from(x)
                .and(&a)
                .and(&b)
                .for_each(|x, &a, &b| *x += a * b * c);
            return true;
        }
        _ => return false,
    };
    let xs = x.as_slice_mut().expect("standard layout");
    match (pa, pb) {
        (Part::Full(a), Part::Full(b)) => update2_best(xs, a, b, &|x, a, b| x + a * b * c),
        (Part::Full(f), Part::One(e)) | (Part::One(e), Part::Full(f)) => {
            let k = e * c;
            update1_best(xs, f, &|x, a| x + a * k)
        }
        (Part::Full(f), Part::Row(r)) | (Part::Row(r), Part::Full(f)) => {
            for (xr, fr) in xs.chunks_mut(r.len()).zip(f.chunks(r.len())) {
                update2_best(xr, fr, r, &|x, a, b| x + a * b * c);
            }
        }
        (Part::Row(r), Part::One(e)) | (Part::One(e), Part::Row(r)) => {
            let k = e * c;
            for xr in xs.chunks_mut(r.len()) {
                update1_best(xr, r, &|x, a| x + a * k);
            }
        }
        (Part::Row(r), Part::Row(q)) if r.len() == q.len() => {
            for xr in xs.chunks_mut(r.len()) {
                update2_best(xr, r, q, &|x, a, b| x + a * b * c);
            }
        }
        (Part::One(e), Part::One(f)) => {
            let k = e * f * c;
            xs.iter_mut().for_each(|x| *x += k);
        }
        _ => return false,
    }
    true
}
