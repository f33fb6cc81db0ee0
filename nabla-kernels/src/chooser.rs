//! The derivative passes of `max`/`min` over the trailing axes of a
//! contiguous array, each in one pass over the rows.
//!
//! `x` holds `rows` rows of `inner` elements and `y[r]` is row `r`'s
//! extreme. A row's weights are `hit / count`, where `hit` is 1 where
//! `x == y[r]` and 0 elsewhere and `count` is the number of hits: tied
//! extremes share the derivative equally (JAX's rule). The formulas are the
//! composite ones (`cmp_mask`, `sum`, `div`, `mul`) element by element, so a
//! row without ties gives the same bits, and a NaN extreme (no hits) gives
//! NaN weights as the composite does.
//!
//! ```
//! use nabla_kernels::chooser::{chooser_jvp, chooser_vjp};
//! let x = [1.0f64, 4.0, 3.0, 3.0]; // rows [1, 4] and [3, 3]
//! let y = [4.0, 3.0]; // their maxima
//! assert_eq!(chooser_vjp(&x, &y, &[1.0, 2.0], 2), [0.0, 1.0, 1.0, 1.0]);
//! assert_eq!(chooser_jvp(&x, &y, &[10.0, 20.0, 30.0, 50.0], 2), [20.0, 40.0]);
//! ```

use crate::float::Float;
use crate::parallel::filled;

/// Elements per parallel piece (whole rows, at least one).
const PIECE: usize = 1 << 15;

fn weight<T: Float>(xr: &[T], m: T) -> T {
    let count = xr.iter().filter(|&&v| v == m).count();
    T::from_f64(1.0) / T::from_f64(count as f64)
}

/// `out[r, i] = ct[r] · (hit / count)`: the cotangent of each row's
/// extreme sent to the positions that attain it.
///
/// ```
/// let out = nabla_kernels::chooser::chooser_vjp(&[2.0f32, 1.0, 1.0], &[1.0], &[6.0], 3);
/// assert_eq!(out, [0.0, 3.0, 3.0]);
/// ```
pub fn chooser_vjp<T: Float>(x: &[T], y: &[T], ct: &[T], inner: usize) -> Vec<T> {
    assert!(inner > 0 && x.len() == y.len() * inner && y.len() == ct.len());
    let rows_per = (PIECE / inner).max(1);
    filled(x.len(), rows_per * inner, |p, piece| {
        for (j, orow) in piece.chunks_mut(inner).enumerate() {
            let r = p * rows_per + j;
            let xr = &x[r * inner..(r + 1) * inner];
            let (m, w) = (y[r], weight(xr, y[r]));
            for (o, &v) in orow.iter_mut().zip(xr) {
                let hit = if v == m {
                    T::from_f64(1.0)
                } else {
                    T::default()
                };
                o.write(ct[r] * (hit * w));
            }
        }
    })
}

/// `out[r] = Σᵢ dx[r, i] · (hit / count)`: the tangent of each row's
/// extreme, averaged over the positions that attain it.
///
/// ```
/// let out = nabla_kernels::chooser::chooser_jvp(&[2.0f64, 1.0, 1.0], &[1.0], &[5.0, 2.0, 4.0], 3);
/// assert_eq!(out, [3.0]);
/// ```
pub fn chooser_jvp<T: Float>(x: &[T], y: &[T], dx: &[T], inner: usize) -> Vec<T> {
    assert!(inner > 0 && x.len() == dx.len() && x.len() == y.len() * inner);
    let rows_per = (PIECE / inner).max(1);
    filled(y.len(), rows_per, |p, piece| {
        for (j, o) in piece.iter_mut().enumerate() {
            let r = p * rows_per + j;
            let (xr, dr) = (
                &x[r * inner..(r + 1) * inner],
                &dx[r * inner..(r + 1) * inner],
            );
            let (m, w) = (y[r], weight(xr, y[r]));
            let mut acc = T::default();
            for (&v, &d) in xr.iter().zip(dr) {
                let hit = if v == m {
                    T::from_f64(1.0)
                } else {
                    T::default()
                };
                acc += d * (hit * w);
            }
            o.write(acc);
        }
    })
}
