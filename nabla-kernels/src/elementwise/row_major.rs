//! Copies of strided views in row-major order: into a standard-layout
//! array ([`contiguous`], [`contiguous_as`]), into a `Vec`
//! ([`row_major`]), and permuted on the way ([`permuted_as`]).

use super::strided::{Extent, MAX_ROW_AXES, each_row2, merged_axes};
use ndarray::{ArrayD, ArrayViewD, IxDyn};

/// `x` copied into a new row-major (standard layout) array: whole rows by
/// `memcpy` when the last axis is contiguous, otherwise element by element,
/// the rows found by the allocation-free odometer (ndarray's generic
/// iterator costs more than the copy on the small, permuted arrays that
/// batching produces).
///
/// ```
/// use nabla_kernels::elementwise::contiguous;
/// let x = ndarray::arr2(&[[1, 2, 3], [4, 5, 6]]).into_dyn();
/// let t = contiguous(&x.t());
/// assert_eq!(t.as_slice().unwrap(), &[1, 4, 2, 5, 3, 6]);
/// ```
pub fn contiguous<T: Copy>(x: &ArrayViewD<'_, T>) -> ArrayD<T> {
    if x.is_standard_layout() || x.ndim() == 0 || x.ndim() > MAX_ROW_AXES {
        return x.as_standard_layout().into_owned();
    }
    if let Some(t) = transposed_matrix(x) {
        return super::transpose::serial(t).into_dyn();
    }
    crate::owned(x.raw_dim(), row_major_vec(x, x.len()))
}

/// [`contiguous`] with the result given the shape `shape` (same number of
/// elements, row-major order): a copying reshape in one step.
///
/// ```
/// use nabla_kernels::elementwise::contiguous_as;
/// let x = ndarray::arr2(&[[1, 2, 3], [4, 5, 6]]).into_dyn();
/// let t = contiguous_as(&x.t(), &[6]);
/// assert_eq!(t.as_slice().unwrap(), &[1, 4, 2, 5, 3, 6]);
/// ```
pub fn contiguous_as<T: Copy>(x: &ArrayViewD<'_, T>, shape: &[usize]) -> ArrayD<T> {
    let n = x.len();
    assert_eq!(
        n,
        shape.iter().product::<usize>(),
        "contiguous_as: {:?} into {shape:?}",
        x.shape()
    );
    crate::owned(IxDyn(shape), row_major(x))
}

/// The elements of `x` in row-major (logical) order, whatever its strides:
/// a copy of the slice when contiguous, else one strided pass per row
/// (ndarray's element iterator on a strided `IxDyn` view builds an index per
/// element, which allocates from 5 axes on).
///
/// ```
/// use nabla_kernels::elementwise::row_major;
/// let x = ndarray::arr2(&[[1, 2, 3], [4, 5, 6]]).into_dyn();
/// assert_eq!(row_major(&x.t()), vec![1, 4, 2, 5, 3, 6]);
/// ```
pub fn row_major<T: Copy>(x: &ArrayViewD<'_, T>) -> Vec<T> {
    if let Some(s) = x.as_slice() {
        s.to_vec()
    } else if let Some(t) = transposed_matrix(x) {
        super::transpose::serial(t).into_raw_vec_and_offset().0
    } else if x.ndim() == 0 || x.ndim() > MAX_ROW_AXES {
        x.iter().copied().collect()
    } else {
        row_major_vec(x, x.len())
    }
}

/// `x` as a matrix when it is one whose first axis is the contiguous one
/// (a transposed matrix): its row-major copy goes tile by tile
/// ([`super::transposed_copy`]), 4-5× faster than row by row at 512 × 512.
fn transposed_matrix<'a, T>(x: &ArrayViewD<'a, T>) -> Option<ndarray::ArrayView2<'a, T>> {
    let s = x.strides();
    (x.ndim() == 2 && s[0] == 1 && s[1] != 1)
        .then(|| x.clone().into_dimensionality().expect("two axes"))
}

/// The `n` elements of `x` (1 to `MAX_ROW_AXES` axes) in row-major order.
fn row_major_vec<T: Copy>(x: &ArrayViewD<'_, T>, n: usize) -> Vec<T> {
    // SAFETY: a view's pointer, shape and strides address its elements.
    unsafe { gather(x.as_ptr(), x.shape(), x.strides(), n, Extent::of_view(x)) }
}

/// The `n` elements at `p` with logical `shape` and element `strides` (1 to
/// `MAX_ROW_AXES` axes), in row-major order.
///
/// `extent` is that of the view `p` belongs to: debug builds check every
/// row against it.
///
/// # Safety
/// Every offset `Σ iₖ·strides[k]` with `iₖ < shape[k]` must address a
/// readable `T` relative to `p`, and `n` must be the product of `shape`.
unsafe fn gather<T: Copy>(
    p: *const T,
    shape: &[usize],
    strides: &[isize],
    n: usize,
    extent: Extent,
) -> Vec<T> {
    let nd = shape.len();
    let (w, ls) = (shape[nd - 1], strides[nd - 1]);
    let mut out: Vec<T> = Vec::with_capacity(n);
    if n == 0 {
        return out;
    }
    let outer_strides = &strides[..nd - 1];
    {
        let dst = &mut out.spare_capacity_mut()[..n];
        let mut rows = dst.chunks_exact_mut(w.max(1));
        each_row2(&shape[..nd - 1], outer_strides, outer_strides, |o, _| {
            let row = rows.next().expect("one output row per input row");
            debug_assert!(
                extent.holds(o, w, ls),
                "gather: row at {o} of {w}, step {ls}"
            );
            if ls == 1 {
                // SAFETY: `o` is the offset of a row of `w` contiguous
                // elements (the caller's contract).
                let src = unsafe { std::slice::from_raw_parts(p.offset(o), w) };
                for (d, &v) in row.iter_mut().zip(src) {
                    d.write(v);
                }
            } else {
                for (j, d) in row.iter_mut().enumerate() {
                    // SAFETY: element `j` of the row at offset `o`, stride `ls`.
                    d.write(unsafe { *p.offset(o + j as isize * ls) });
                }
            }
        });
    }
    // SAFETY: `n > 0`, so `each_row2` visited every one of the `n / w` rows
    // of `dst` once, and each was written above.
    unsafe { out.set_len(n) };
    out
}

/// `x` with its axes reordered by `perm` (axis `i` of the result is axis
/// `perm[i]` of `x`), copied in row-major order into `shape` (same number
/// of elements): a permute followed by a copying reshape in one pass,
/// without the permuted view in between. Jacobians assembled by `jacfwd`
/// move the basis axis last this way.
///
/// ```
/// use nabla_kernels::elementwise::permuted_as;
/// let x = ndarray::arr2(&[[1, 2, 3], [4, 5, 6]]).into_dyn();
/// let t = permuted_as(&x.view(), &[1, 0], &[6]);
/// assert_eq!(t.as_slice().unwrap(), &[1, 4, 2, 5, 3, 6]);
/// ```
pub fn permuted_as<T: Copy>(x: &ArrayViewD<'_, T>, perm: &[usize], shape: &[usize]) -> ArrayD<T> {
    let nd = x.ndim();
    assert!(
        perm.len() == nd && (0..nd).all(|a| perm.contains(&a)),
        "permuted_as: {perm:?} is not a permutation of {nd} axes"
    );
    let n = x.len();
    assert_eq!(
        n,
        shape.iter().product::<usize>(),
        "permuted_as: {:?} into {shape:?}",
        x.shape()
    );
    if nd == 0 || nd > MAX_ROW_AXES {
        return contiguous_as(&x.view().permuted_axes(IxDyn(perm)), shape);
    }
    // The permuted axes, length-1 ones dropped and neighbours merged where
    // the source steps through them evenly (a permuted Jacobian is often a
    // plain transpose of two merged axes).
    let mut w = merged_axes::<1>(nd, |i| x.shape()[perm[i]], |_, i| x.strides()[perm[i]]);
    if w.len == 0 {
        (w.dims[0], w.strides[0][0], w.len) = (1, 0, 1);
    }
    let (ps, pt, k) = (&w.dims, &w.strides[0], w.len);
    // SAFETY: `ps[..k]` and `pt[..k]` address exactly `x`'s elements (its
    // own axes reordered, with unit axes dropped and even ones merged).
    let v = unsafe { gather(x.as_ptr(), &ps[..k], &pt[..k], n, Extent::of_view(x)) };
    crate::owned(IxDyn(shape), v)
}
