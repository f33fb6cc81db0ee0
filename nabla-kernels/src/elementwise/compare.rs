//! Comparisons of two broadcast operands into a boolean mask
//! ([`CompareOp`], [`compare`]) and selection by a mask ([`where_select`]).

use super::broadcast::broadcast_shape;
use crate::Float;
use ndarray::{ArrayD, ArrayViewD, IxDyn, Zip};

/// A comparison producing a boolean mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompareOp {
    /// `a > b`
    Gt,
    /// `a >= b`
    Ge,
    /// `a < b`
    Lt,
    /// `a <= b`
    Le,
    /// `a == b`
    Eq,
    /// `a != b`
    Ne,
}

/// Compares `a` and `b` (broadcast) elementwise.
///
/// ```
/// use nabla_kernels::elementwise::{compare, CompareOp};
/// let a = ndarray::arr1(&[1.0f64, 3.0]).into_dyn();
/// let b = ndarray::arr0(2.0f64).into_dyn();
/// assert_eq!(compare(a.view(), b.view(), CompareOp::Gt).as_slice().unwrap(), &[false, true]);
/// ```
pub fn compare<T: Float>(
    a: ArrayViewD<'_, T>,
    b: ArrayViewD<'_, T>,
    op: CompareOp,
) -> ArrayD<bool> {
    let shape = broadcast_shape(a.shape(), b.shape());
    let av = a
        .broadcast(IxDyn(&shape))
        .expect("compare: shapes do not broadcast");
    let bv = b
        .broadcast(IxDyn(&shape))
        .expect("compare: shapes do not broadcast");
    let zip = Zip::from(&av).and(&bv);
    match op {
        CompareOp::Gt => zip.map_collect(|x, y| x > y),
        CompareOp::Ge => zip.map_collect(|x, y| x >= y),
        CompareOp::Lt => zip.map_collect(|x, y| x < y),
        CompareOp::Le => zip.map_collect(|x, y| x <= y),
        CompareOp::Eq => zip.map_collect(|x, y| x == y),
        CompareOp::Ne => zip.map_collect(|x, y| x != y),
    }
}

/// `mask ? a : b` elementwise, all three broadcast to a common shape.
///
/// ```
/// use nabla_kernels::elementwise::where_select;
/// let m = ndarray::arr1(&[true, false]).into_dyn();
/// let a = ndarray::arr1(&[1.0f32, 2.0]).into_dyn();
/// let b = ndarray::arr0(0.0f32).into_dyn();
/// assert_eq!(where_select(m.view(), a.view(), b.view()).as_slice().unwrap(), &[1.0, 0.0]);
/// ```
pub fn where_select<T: Copy + Send + Sync>(
    mask: ArrayViewD<'_, bool>,
    a: ArrayViewD<'_, T>,
    b: ArrayViewD<'_, T>,
) -> ArrayD<T> {
    let shape = broadcast_shape(&broadcast_shape(mask.shape(), a.shape()), b.shape());
    let d = IxDyn(&shape);
    let m = mask
        .broadcast(d.clone())
        .expect("where: shapes do not broadcast");
    let av = a
        .broadcast(d.clone())
        .expect("where: shapes do not broadcast");
    let bv = b.broadcast(d).expect("where: shapes do not broadcast");
    Zip::from(&m)
        .and(&av)
        .and(&bv)
        .map_collect(|&m, &x, &y| if m { x } else { y })
}
