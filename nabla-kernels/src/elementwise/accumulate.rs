//! Accumulating one array into a view of another in place ([`add_into`]),
//! row by row when both have a contiguous last axis (the cotangent of a
//! slice added into its region of the full cotangent).

use super::simd::update1_best;
use super::strided::{Extent, MAX_ROW_AXES, MIN_ROW, each_row2};
use crate::Float;
use ndarray::{ArrayViewD, ArrayViewMutD};

/// `x += c` elementwise, in place, for views of one shape in any layout:
/// one vectorised loop per row when both last axes are contiguous (e.g. `x`
/// the region `[:, 1:]` of a larger array), ndarray's `Zip` otherwise.
///
/// # Panics
/// When the shapes differ.
///
/// ```
/// use nabla_kernels::elementwise::add_into;
/// let mut x = ndarray::Array2::<f64>::zeros((2, 10)).into_dyn();
/// let c = ndarray::Array2::<f64>::ones((2, 9)).into_dyn();
/// add_into(&mut x.slice_mut(ndarray::s![.., 1..]).into_dyn(), c.view());
/// assert_eq!(x.sum(), 18.0);
/// assert_eq!(x[[0, 0]], 0.0);
/// ```
pub fn add_into<T: Float>(x: &mut ArrayViewMutD<'_, T>, c: ArrayViewD<'_, T>) {
    assert_eq!(
        x.shape(),
        c.shape(),
        "add_into: shapes {:?} and {:?} differ",
        x.shape(),
        c.shape()
    );
    let nd = x.ndim();
    let rows = (2..=MAX_ROW_AXES).contains(&nd)
        && x.shape()[nd - 1] >= MIN_ROW
        && x.strides()[nd - 1] == 1
        && c.strides()[nd - 1] == 1;
    if x.strides() == c.strides()
        && let (Some(xs), Some(cs)) = (x.as_slice_memory_order_mut(), c.as_slice_memory_order())
    {
        update1_best(xs, cs, &|x, c| x + c);
    } else if rows {
        let w = x.shape()[nd - 1];
        let (px, pc) = (x.as_mut_ptr(), c.as_ptr());
        let (sx, sc) = (&x.strides()[..nd - 1], &c.strides()[..nd - 1]);
        let (ex, ec) = (Extent::of(x.shape(), x.strides()), Extent::of_view(&c));
        each_row2(&x.shape()[..nd - 1], sx, sc, |ox, oc| {
            debug_assert!(
                ex.holds(ox, w, 1) && ec.holds(oc, w, 1),
                "add_into: rows at {ox}, {oc} of {w}"
            );
            // SAFETY: `ox`/`oc` are the offsets of one row of `x` and `c`,
            // whose `w` elements are contiguous (last stride 1) and inside
            // the views; `x` is borrowed mutably, so nothing else reads
            // or writes its rows, and distinct rows of a view never overlap
            // (a mutable view has no broadcast axes).
            let (xr, cr) = unsafe {
                (
                    std::slice::from_raw_parts_mut(px.offset(ox), w),
                    std::slice::from_raw_parts(pc.offset(oc), w),
                )
            };
            update1_best(xr, cr, &|x, c| x + c);
        });
    } else {
        x.zip_mut_with(&c, |x, &c| *x += c);
    }
}
