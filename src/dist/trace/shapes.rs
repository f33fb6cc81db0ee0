//! The shape checks of the recorded ops, panicking as the `Array` ops do
//! (the op, the shapes, the fix) where the runtime's own checks are not
//! public; the others (`reshape`, `permute`, `broadcast_to`, `matmul`)
//! call the runtime's `out_shape`.

use super::super::rules::broadcast_shapes;
use super::Traced;
use ndarray::Slice;

/// Whether `a` and `b` broadcast (NumPy's rule).
fn broadcasts(a: &[usize], b: &[usize]) -> bool {
    a.iter()
        .rev()
        .zip(b.iter().rev())
        .all(|(&x, &y)| x == y || x == 1 || y == 1)
}

/// The broadcast shape of two operands of `op`.
#[track_caller]
pub(super) fn broadcast(op: &str, a: &[usize], b: &[usize]) -> Vec<usize> {
    if !broadcasts(a, b) {
        panic!(
            "{op}: shapes {a:?} and {b:?} do not broadcast; trailing dimensions must be equal or 1 \
             (reshape or expand_dims one operand)"
        );
    }
    broadcast_shapes(a, b)
}

/// Both operands of `op` have one dtype (Nabla never promotes).
#[track_caller]
pub(super) fn same_dtype(op: &str, a: &Traced, b: &Traced) {
    if a.dtype != b.dtype {
        panic!(
            "{op}: dtype mismatch, {} {:?} and {} {:?}; Nabla never promotes implicitly: convert one side with \
             .cast(DType::{})",
            a.dtype,
            a.shape,
            b.dtype,
            b.shape,
            if a.dtype == crate::DType::F64 {
                "F64"
            } else {
                "F32"
            }
        );
    }
}

/// `axes` (normalised by the caller) are axes of `shape`.
#[track_caller]
pub(super) fn axes(op: &str, shape: &[usize], axes: &[usize]) {
    if let Some(a) = axes.iter().find(|&&a| a >= shape.len()) {
        panic!(
            "{op}: axis {a} is out of range for an array with shape {shape:?}; axes must be < {}",
            shape.len()
        );
    }
}

/// `x` sums to `shape` (`shape` broadcasts to `x`).
#[track_caller]
pub(super) fn sum_to(x: &[usize], shape: &[usize]) {
    if shape.len() > x.len() || !broadcasts(x, shape) || broadcast_shapes(x, shape) != x {
        panic!(
            "sum_to_shape: {x:?} does not sum to {shape:?}; the target must broadcast to the array \
             (each trailing dimension equal or 1, at most the array's rank)"
        );
    }
}

/// The shape of `x` sliced by `slices` (one per axis), with ndarray's
/// `Slice` semantics: negative ends count from the end, an end before the
/// start gives an empty axis, a step of `s` keeps `⌈len / |s|⌉` elements.
#[track_caller]
pub(super) fn slice(op: &str, x: &[usize], slices: &[Slice]) -> Vec<usize> {
    if slices.len() != x.len() {
        panic!(
            "{op}: {} slices given for an array with shape {x:?}; give one per axis",
            slices.len()
        );
    }
    x.iter()
        .zip(slices)
        .enumerate()
        .map(|(axis, (&d, s))| {
            let abs = |i: isize| -> usize {
                let k = if i < 0 { d as isize + i } else { i };
                if k < 0 || k as usize > d {
                    panic!(
                        "{op}: index {i} is past the ends of axis {axis} of length {d} (shape {x:?}); \
                         slice within -{d}..={d}"
                    );
                }
                k as usize
            };
            let start = abs(s.start);
            let end = abs(s.end.unwrap_or(d as isize)).max(start);
            if s.step == 0 {
                panic!("{op}: axis {axis} has a step of 0 (shape {x:?}); steps are nonzero");
            }
            (end - start).div_ceil(s.step.unsigned_abs())
        })
        .collect()
}

/// `index_select`'s output shape, the indices in bounds.
#[track_caller]
pub(super) fn index_select(x: &[usize], axis: usize, idx: &[usize]) -> Vec<usize> {
    axes("index_select", x, &[axis]);
    crate::primitives::index::check_index_select(x, axis, idx);
    let mut out = x.to_vec();
    out[axis] = idx.len();
    out
}

/// `index_add`'s source fits `shape` along `axis`, the indices in bounds.
#[track_caller]
pub(super) fn index_add(src: &[usize], shape: &[usize], axis: usize, idx: &[usize]) {
    crate::primitives::index::check_index_add(src, shape, axis, idx);
}

/// `concat`'s parts share the dtype and every axis but `axis`.
#[track_caller]
pub(super) fn concat(parts: &[Traced], axis: usize) {
    let Some(first) = parts.first() else {
        panic!("concat: needs at least one array");
    };
    let fits = |p: &Traced| {
        p.dtype == first.dtype
            && p.shape.len() == first.shape.len()
            && axis < p.shape.len()
            && p.shape
                .iter()
                .zip(&first.shape)
                .enumerate()
                .all(|(i, (a, b))| i == axis || a == b)
    };
    if !parts.iter().all(fits) {
        let shapes: Vec<_> = parts
            .iter()
            .map(|p| format!("{} {:?}", p.dtype, p.shape))
            .collect();
        panic!(
            "concat: arrays [{}] cannot be joined along axis {axis}; all must share the dtype and every \
             dimension except axis {axis}",
            shapes.join(", ")
        );
    }
}

/// `select`'s mask is a bool array that broadcasts against `a` and `b`
/// without widening their broadcast shape `out`.
#[track_caller]
pub(super) fn select(mask: &crate::Array, a: &[usize], b: &[usize]) -> Vec<usize> {
    if mask.dtype() != crate::DType::Bool {
        panic!(
            "where: the mask must be a bool array, got {} {:?}; build it with a comparison such as x.gt(&y)",
            mask.dtype(),
            mask.shape()
        );
    }
    let m = mask.shape();
    if !broadcasts(a, b) || !broadcasts(&broadcast_shapes(a, b), m) {
        panic!(
            "where: mask {m:?}, a {a:?} and b {b:?} do not broadcast to one shape; make trailing dimensions \
             equal or 1"
        );
    }
    let out = broadcast_shapes(a, b);
    if broadcast_shapes(&out, m) != out {
        panic!(
            "where: mask {m:?} is larger than a {a:?} and b {b:?} together; the planner records select over \
             the operands' shape: broadcast a or b to the mask's shape first"
        );
    }
    out
}
