//! Elementwise kernels: unary maps, broadcasting binary maps, comparisons
//! and `where`.

use crate::parallel::chunks_mut;
use crate::{Float, PARALLEL_THRESHOLD};
use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn, Zip};
use std::mem::MaybeUninit;

/// Chunk length for parallel elementwise loops.
pub(crate) const CHUNK: usize = 1 << 13;

pub use crate::ops::{BinaryOp, UnaryOp, binary, unary};

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

#[inline(always)]
fn update1<T: Float, F: Fn(T, T) -> T>(x: &mut [T], a: &[T], f: &F) {
    for (x, &a) in x.iter_mut().zip(a) {
        *x = f(*x, a);
    }
}

#[inline(always)]
fn update2<T: Float, F: Fn(T, T, T) -> T>(x: &mut [T], a: &[T], b: &[T], f: &F) {
    for ((x, &a), &b) in x.iter_mut().zip(a).zip(b) {
        *x = f(*x, a, b);
    }
}

/// `update1` compiled for AVX2 + FMA.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn update1_avx2<T: Float, F: Fn(T, T) -> T>(x: &mut [T], a: &[T], f: &F) {
    update1(x, a, f)
}

/// `update2` compiled for AVX2 + FMA.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn update2_avx2<T: Float, F: Fn(T, T, T) -> T>(x: &mut [T], a: &[T], b: &[T], f: &F) {
    update2(x, a, b, f)
}

fn update1_best<T: Float, F: Fn(T, T) -> T>(x: &mut [T], a: &[T], f: &F) {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the features were detected just above.
        return unsafe { update1_avx2(x, a, f) };
    }
    update1(x, a, f)
}

fn update2_best<T: Float, F: Fn(T, T, T) -> T>(x: &mut [T], a: &[T], b: &[T], f: &F) {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the features were detected just above.
        return unsafe { update2_avx2(x, a, b, f) };
    }
    update2(x, a, b, f)
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

/// NumPy broadcast of two shapes. Panics if they are incompatible.
///
/// ```
/// assert_eq!(nabla_kernels::elementwise::broadcast_shape(&[2, 1], &[3])[..], [2, 3]);
/// ```
pub fn broadcast_shape(a: &[usize], b: &[usize]) -> crate::Shape {
    try_broadcast_shape(a, b).unwrap_or_else(|| panic!("shapes {a:?} and {b:?} do not broadcast"))
}

/// True when `from` broadcasts to exactly `to` (NumPy rules).
///
/// ```
/// use nabla_kernels::elementwise::broadcasts_to;
/// assert!(broadcasts_to(&[3], &[2, 3]) && broadcasts_to(&[], &[2]));
/// assert!(!broadcasts_to(&[2, 3], &[3]) && !broadcasts_to(&[2], &[3]));
/// ```
pub fn broadcasts_to(from: &[usize], to: &[usize]) -> bool {
    try_broadcast_shape(from, to).is_some_and(|s| s[..] == *to)
}

/// NumPy broadcast of two shapes, or `None` if they are incompatible.
///
/// ```
/// assert_eq!(nabla_kernels::elementwise::try_broadcast_shape(&[2], &[3]), None);
/// ```
pub fn try_broadcast_shape(a: &[usize], b: &[usize]) -> Option<crate::Shape> {
    if a == b {
        return Some(crate::Shape::from_slice(a));
    }
    // The longer shape, with the shorter one matched against its trailing axes.
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let mut out = crate::Shape::from_slice(long);
    let lead = long.len() - short.len();
    for (o, &s) in out[lead..].iter_mut().zip(short) {
        if *o != s {
            if *o == 1 {
                *o = s;
            } else if s != 1 {
                return None;
            }
        }
    }
    Some(out)
}

/// Maps `f` over `x`, with a contiguous (vectorising, parallel) fast path.
pub fn map<T: Float, F: Fn(T) -> T + Sync + Send>(x: ArrayViewD<'_, T>, f: F) -> ArrayD<T> {
    if let Some(s) = x.as_slice() {
        let out = map_slice(s, &f);
        return ArrayD::from_shape_vec(x.raw_dim(), out).expect("shape matches length");
    }
    if x.len() >= PARALLEL_THRESHOLD {
        par_outer(x.shape(), |i, d| {
            for (d, &v) in d.iter_mut().zip(x.index_axis(Axis(0), i).iter()) {
                d.write(f(v));
            }
        })
    } else if let Some(out) = by_rows1(&x, &f) {
        out
    } else if x.len() <= SMALL {
        // Small and strided: gather, then the contiguous loop.
        let c = contiguous(&x);
        let out = map_slice(c.as_slice().expect("contiguous"), &f);
        ArrayD::from_shape_vec(c.raw_dim(), out).expect("shape matches length")
    } else {
        x.mapv(f)
    }
}

/// A large strided result computed in parallel, one piece per index of
/// the first axis; `fill(i, piece)` writes entry `i` in logical order.
pub(crate) fn par_outer<T: Float>(
    shape: &[usize],
    fill: impl Fn(usize, &mut [MaybeUninit<T>]) + Sync,
) -> ArrayD<T> {
    let n: usize = shape.iter().product();
    let inner = n / shape[0].max(1);
    let mut out: Vec<T> = Vec::with_capacity(n);
    chunks_mut(&mut out.spare_capacity_mut()[..n], inner, fill);
    // SAFETY: the pieces cover all `n` slots and `fill` wrote each one.
    unsafe { out.set_len(n) };
    ArrayD::from_shape_vec(IxDyn(shape), out).expect("shape matches length")
}

/// The shortest rows worth a per-row loop (below, the generic iterator).
const MIN_ROW: usize = 8;

/// Whether a view of `ndim ≥ 2` axes is worth a per-row loop: a contiguous
/// last axis of at least [`MIN_ROW`] elements and few enough axes for
/// [`each_row2`].
fn row_eligible<T>(v: &ArrayViewD<'_, T>) -> bool {
    let nd = v.ndim();
    (2..=MAX_ROW_AXES).contains(&nd) && v.shape()[nd - 1] >= MIN_ROW && v.strides()[nd - 1] == 1
}

/// `f` over `x` row by row, when its last axis is contiguous (a slice or a
/// transpose of the outer axes, e.g. `x[:, 1:]`): one vectorised loop per
/// row instead of ndarray's element-by-element iterator.
fn by_rows1<T: Float, F: Fn(T) -> T>(x: &ArrayViewD<'_, T>, f: &F) -> Option<ArrayD<T>> {
    if !row_eligible(x) {
        return None;
    }
    let nd = x.ndim();
    let (n, w) = (x.len(), x.shape()[nd - 1]);
    let mut out: Vec<T> = Vec::with_capacity(n);
    {
        let mut rows = out.spare_capacity_mut()[..n].chunks_mut(w);
        let (p, st) = (x.as_ptr(), &x.strides()[..nd - 1]);
        each_row2(&x.shape()[..nd - 1], st, st, |o, _| {
            // SAFETY: `o` is the offset of a row of `x`, whose `w` elements
            // are contiguous (last stride 1) and inside the view.
            let row = unsafe { std::slice::from_raw_parts(p.offset(o), w) };
            fill1_best(rows.next().expect("one chunk per row"), row, f);
        });
    }
    // SAFETY: `each_row2` visited every row, so all `n` slots were written.
    unsafe { out.set_len(n) };
    Some(ArrayD::from_shape_vec(x.raw_dim(), out).expect("shape matches length"))
}

/// The most elements a strided unary map gathers into a contiguous copy
/// first; larger ones go through ndarray's `mapv`.
const SMALL: usize = 4096;

/// The most axes [`each_row2`] handles (more fall back to ndarray).
pub(crate) const MAX_ROW_AXES: usize = 16;

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
    ArrayD::from_shape_vec(x.raw_dim(), row_major_vec(x, x.len())).expect("shape matches length")
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
    ArrayD::from_shape_vec(IxDyn(shape), row_major(x)).expect("shape matches length")
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
    } else if x.ndim() == 0 || x.ndim() > MAX_ROW_AXES {
        x.iter().copied().collect()
    } else {
        row_major_vec(x, x.len())
    }
}

/// The `n` elements of `x` (1 to `MAX_ROW_AXES` axes) in row-major order.
fn row_major_vec<T: Copy>(x: &ArrayViewD<'_, T>, n: usize) -> Vec<T> {
    // SAFETY: a view's pointer, shape and strides address its elements.
    unsafe { gather(x.as_ptr(), x.shape(), x.strides(), n) }
}

/// The `n` elements at `p` with logical `shape` and element `strides` (1 to
/// `MAX_ROW_AXES` axes), in row-major order.
///
/// # Safety
/// Every offset `Σ iₖ·strides[k]` with `iₖ < shape[k]` must address a
/// readable `T` relative to `p`, and `n` must be the product of `shape`.
unsafe fn gather<T: Copy>(p: *const T, shape: &[usize], strides: &[isize], n: usize) -> Vec<T> {
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
    let v = unsafe { gather(x.as_ptr(), &ps[..k], &pt[..k], n) };
    ArrayD::from_shape_vec(IxDyn(shape), v).expect("shape matches length")
}

/// The axes of a strided walk by `K` operands over a result of `nd` axes
/// (at most `MAX_ROW_AXES`), axis `i` of length `len(i)`: length-1 axes
/// dropped, and neighbouring axes merged wherever every operand steps
/// through them evenly. `stride(o, i)` is operand `o`'s element stride
/// along axis `i` (0 where it broadcasts). Shared by the broadcast maps of
/// two and three operands and the permuting copy.
pub(crate) struct Walk<const K: usize> {
    /// Merged lengths, `len` of them.
    pub(crate) dims: [usize; MAX_ROW_AXES],
    /// Each operand's stride along each merged axis.
    pub(crate) strides: [[isize; MAX_ROW_AXES]; K],
    /// The number of merged axes.
    pub(crate) len: usize,
}

/// See [`Walk`].
pub(crate) fn merged_axes<const K: usize>(
    nd: usize,
    len: impl Fn(usize) -> usize,
    stride: impl Fn(usize, usize) -> isize,
) -> Walk<K> {
    debug_assert!(nd <= MAX_ROW_AXES);
    let mut w = Walk {
        dims: [0; MAX_ROW_AXES],
        strides: [[0; MAX_ROW_AXES]; K],
        len: 0,
    };
    for i in 0..nd {
        let d = len(i);
        if d == 1 {
            continue;
        }
        let s: [isize; K] = std::array::from_fn(|o| stride(o, i));
        let k = w.len;
        if k > 0 && (0..K).all(|o| w.strides[o][k - 1] == s[o] * d as isize) {
            w.dims[k - 1] *= d;
            for (st, &so) in w.strides.iter_mut().zip(&s) {
                st[k - 1] = so;
            }
        } else {
            w.dims[k] = d;
            for (st, &so) in w.strides.iter_mut().zip(&s) {
                st[k] = so;
            }
            w.len += 1;
        }
    }
    w
}

/// `v`'s element stride along axis `i` of an `nd`-axis broadcast result
/// (0 where `v` broadcasts: a missing leading axis or a length-1 axis).
pub(crate) fn stride_along<T>(v: &ArrayViewD<'_, T>, nd: usize, i: usize) -> isize {
    let lead = nd - v.ndim();
    if i < lead || v.shape()[i - lead] == 1 {
        0
    } else {
        v.strides()[i - lead]
    }
}

/// Calls `f(offset_a, offset_b)` with the element offsets of every row of
/// two views of one shape whose outer axes (all but the last) are `outer`
/// with strides `sa` and `sb`, in row-major order, without allocating.
pub(crate) fn each_row2(
    outer: &[usize],
    sa: &[isize],
    sb: &[isize],
    mut f: impl FnMut(isize, isize),
) {
    let nd = outer.len();
    debug_assert!(nd < MAX_ROW_AXES && sa.len() == nd && sb.len() == nd);
    if outer.contains(&0) {
        return;
    }
    let mut idx = [0usize; MAX_ROW_AXES];
    let (mut oa, mut ob) = (0isize, 0isize);
    loop {
        f(oa, ob);
        // Odometer: bump the last outer axis, carrying into earlier ones.
        let mut k = nd;
        loop {
            if k == 0 {
                return;
            }
            k -= 1;
            idx[k] += 1;
            oa += sa[k];
            ob += sb[k];
            if idx[k] < outer[k] {
                break;
            }
            oa -= sa[k] * outer[k] as isize;
            ob -= sb[k] * outer[k] as isize;
            idx[k] = 0;
        }
    }
}

fn map_slice<T: Float, F: Fn(T) -> T + Sync + Send>(s: &[T], f: &F) -> Vec<T> {
    let n = s.len();
    let mut out: Vec<T> = Vec::with_capacity(n);
    {
        let dst = &mut out.spare_capacity_mut()[..n];
        if n >= PARALLEL_THRESHOLD {
            chunks_mut(dst, CHUNK, |c, d| {
                let lo = c * CHUNK;
                fill1_best(d, &s[lo..lo + d.len()], f)
            });
        } else {
            fill1_best(dst, s, f);
        }
    }
    // SAFETY: every one of the first `n` slots was written by `fill1`.
    unsafe { out.set_len(n) };
    out
}

#[inline(always)]
fn fill1<T: Float, F: Fn(T) -> T>(d: &mut [MaybeUninit<T>], s: &[T], f: &F) {
    for (d, &v) in d.iter_mut().zip(s) {
        d.write(f(v));
    }
}

/// True when the CPU has AVX2 and FMA (checked once, then cached).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn has_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

/// `fill1` compiled for AVX2 + FMA.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn fill1_avx2<T: Float, F: Fn(T) -> T>(d: &mut [MaybeUninit<T>], s: &[T], f: &F) {
    fill1(d, s, f)
}

/// `fill2` compiled for AVX2 + FMA.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn fill2_avx2<T: Float, F: Fn(T, T) -> T + ?Sized>(
    d: &mut [MaybeUninit<T>],
    a: &[T],
    b: &[T],
    f: &F,
) {
    fill2(d, a, b, f)
}

/// The widest available version of `fill1` (the binary itself targets
/// baseline x86-64, so wider vectors are chosen at run time).
#[inline(always)]
fn fill1_best<T: Float, F: Fn(T) -> T>(d: &mut [MaybeUninit<T>], s: &[T], f: &F) {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the features were detected just above.
        return unsafe { fill1_avx2(d, s, f) };
    }
    fill1(d, s, f)
}

/// The widest available version of `fill2`.
#[inline(always)]
fn fill2_best<T: Float, F: Fn(T, T) -> T + ?Sized>(
    d: &mut [MaybeUninit<T>],
    a: &[T],
    b: &[T],
    f: &F,
) {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the features were detected just above.
        return unsafe { fill2_avx2(d, a, b, f) };
    }
    fill2(d, a, b, f)
}

#[inline(always)]
fn fill2<T: Float, F: Fn(T, T) -> T + ?Sized>(d: &mut [MaybeUninit<T>], a: &[T], b: &[T], f: &F) {
    for ((d, &x), &y) in d.iter_mut().zip(a).zip(b) {
        d.write(f(x, y));
    }
}

/// Maps `f` over `a` and `b` broadcast together.
///
/// Fast paths: equal contiguous shapes; one operand a single element; one
/// contiguous operand whose shape is a suffix of the other's (a bias row).
pub fn zip_map<T: Float, F: Fn(T, T) -> T + Sync + Send>(
    a: ArrayViewD<'_, T>,
    b: ArrayViewD<'_, T>,
    f: F,
) -> ArrayD<T> {
    let same = a.shape() == b.shape();
    if same && let (Some(sa), Some(sb)) = (a.as_slice(), b.as_slice()) {
        // Equal contiguous shapes (the common case): no broadcast shape to build.
        let n = sa.len();
        let mut out: Vec<T> = Vec::with_capacity(n);
        {
            let dst = &mut out.spare_capacity_mut()[..n];
            if n >= PARALLEL_THRESHOLD {
                chunks_mut(dst, CHUNK, |c, d| {
                    let r = c * CHUNK..c * CHUNK + d.len();
                    fill2_best(d, &sa[r.clone()], &sb[r], &f)
                });
            } else {
                fill2_best(dst, sa, sb, &f);
            }
        }
        // SAFETY: all `n` slots were written above.
        unsafe { out.set_len(n) };
        return ArrayD::from_shape_vec(a.raw_dim(), out).expect("shape matches length");
    }
    let shape = broadcast_shape(a.shape(), b.shape());
    if !same && let (Some(sa), Some(sb)) = (a.as_slice(), b.as_slice()) {
        if a.shape() == shape.as_slice() && is_row_of(b.shape(), &shape) {
            return rows(sa, sb, &shape, &f);
        }
        if b.shape() == shape.as_slice() && is_row_of(a.shape(), &shape) {
            return rows(sb, sa, &shape, &|x, y| f(y, x));
        }
    }
    if shape.iter().product::<usize>() < PARALLEL_THRESHOLD
        && let Some(out) = zip_strided(&a, &b, &shape, &f)
    {
        return out;
    }
    if b.len() == 1 && a.shape() == shape.as_slice() {
        let y = *b.iter().next().expect("one element");
        return map(a, move |x| f(x, y));
    }
    if a.len() == 1 && b.shape() == shape.as_slice() {
        let x = *a.iter().next().expect("one element");
        return map(b, move |y| f(x, y));
    }
    let d = IxDyn(&shape);
    let av = a.broadcast(d.clone()).expect("shapes broadcast");
    let bv = b.broadcast(d).expect("shapes broadcast");
    if av.len() >= PARALLEL_THRESHOLD {
        par_outer(&shape, |i, d| {
            let (ai, bi) = (av.index_axis(Axis(0), i), bv.index_axis(Axis(0), i));
            for (d, (&x, &y)) in d.iter_mut().zip(ai.iter().zip(bi.iter())) {
                d.write(f(x, y));
            }
        })
    } else {
        // More axes than the odometer takes.
        Zip::from(&av).and(&bv).map_collect(|&x, &y| f(x, y))
    }
}

/// `f` over `a` and `b` broadcast to `shape`, by strides (every serial
/// case the contiguous fast paths leave): each operand gets a stride per
/// output axis (0 where it broadcasts), length-1 axes are dropped and
/// neighbouring axes merged wherever both operands step through them
/// evenly. Short merged rows (below `MIN_ROW`) over at most four merged
/// axes run as four plain nested loops ([`nested4`]); otherwise the
/// innermost axis is one loop per row of the odometer over the rest,
/// vectorised when both rows are contiguous and long enough. This skips
/// ndarray's broadcast views and iterators, whose set-up costs more than
/// the arithmetic on the few dozen elements nested transforms produce. `None` (nothing done) for more than `MAX_ROW_AXES`
/// axes.
fn zip_strided<T: Float, F: Fn(T, T) -> T + ?Sized>(
    a: &ArrayViewD<'_, T>,
    b: &ArrayViewD<'_, T>,
    shape: &[usize],
    f: &F,
) -> Option<ArrayD<T>> {
    let nd = shape.len();
    if nd > MAX_ROW_AXES {
        return None;
    }
    let ab = [a, b];
    let w = merged_axes::<2>(nd, |i| shape[i], |o, i| stride_along(ab[o], nd, i));
    let (dims, sa, sb, k) = (&w.dims, &w.strides[0], &w.strides[1], w.len);
    let n: usize = shape.iter().product();
    let mut out: Vec<T> = Vec::with_capacity(n);
    if n > 0 {
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        if k == 0 {
            // SAFETY: every axis has length 1: one element each.
            out.push(unsafe { f(*pa, *pb) });
        } else if dims[k - 1] < MIN_ROW && k <= NEST {
            // Short rows: four plain nested loops (length-1 axes in front
            // pad to four), no per-row odometer step or dispatch.
            let pad = NEST - k;
            let (mut d4, mut sa4, mut sb4) = ([1usize; NEST], [0isize; NEST], [0isize; NEST]);
            d4[pad..].copy_from_slice(&dims[..k]);
            sa4[pad..].copy_from_slice(&sa[..k]);
            sb4[pad..].copy_from_slice(&sb[..k]);
            nested4(&mut out.spare_capacity_mut()[..n], pa, pb, d4, sa4, sb4, f);
            // SAFETY: `nested4` wrote all `n` = product of `d4` elements.
            unsafe { out.set_len(n) };
        } else {
            let (w, la, lb) = (dims[k - 1], sa[k - 1], sb[k - 1]);
            let mut rows = out.spare_capacity_mut()[..n].chunks_exact_mut(w);
            each_row2(&dims[..k - 1], &sa[..k - 1], &sb[..k - 1], |oa, ob| {
                let dst = rows.next().expect("one chunk per row");
                // SAFETY: `oa`/`ob` are the offsets of one output row in `a`
                // and `b`; its `w` elements are `la`/`lb` apart (0 where the
                // operand broadcasts), all inside the views.
                unsafe {
                    match (la, lb) {
                        (1, 1) => {
                            let (x, y) = (
                                std::slice::from_raw_parts(pa.offset(oa), w),
                                std::slice::from_raw_parts(pb.offset(ob), w),
                            );
                            if w >= MIN_ROW {
                                fill2_best(dst, x, y, f)
                            } else {
                                fill2(dst, x, y, f)
                            }
                        }
                        (1, 0) => {
                            let (x, y) =
                                (std::slice::from_raw_parts(pa.offset(oa), w), *pb.offset(ob));
                            for (d, &x) in dst.iter_mut().zip(x) {
                                d.write(f(x, y));
                            }
                        }
                        (0, 1) => {
                            let (x, y) =
                                (*pa.offset(oa), std::slice::from_raw_parts(pb.offset(ob), w));
                            for (d, &y) in dst.iter_mut().zip(y) {
                                d.write(f(x, y));
                            }
                        }
                        _ => {
                            for (j, d) in dst.iter_mut().enumerate() {
                                let j = j as isize;
                                d.write(f(*pa.offset(oa + j * la), *pb.offset(ob + j * lb)));
                            }
                        }
                    }
                }
            });
            // SAFETY: the odometer visited each of the `n / w` rows once and
            // every element of each was written above.
            unsafe { out.set_len(n) };
        }
    }
    Some(ArrayD::from_shape_vec(IxDyn(shape), out).expect("shape matches length"))
}

/// Axes of [`nested4`].
const NEST: usize = 4;

/// Writes `f(a, b)` over a 4-axis index space (`dims`, row-major) into
/// `dst`, reading `a` and `b` at element strides `sa` and `sb` from `pa`
/// and `pb`: the loop for small broadcasts whose merged rows are short.
fn nested4<T: Copy, F: Fn(T, T) -> T + ?Sized>(
    dst: &mut [MaybeUninit<T>],
    pa: *const T,
    pb: *const T,
    dims: [usize; NEST],
    sa: [isize; NEST],
    sb: [isize; NEST],
    f: &F,
) {
    assert_eq!(
        dst.len(),
        dims.iter().product::<usize>(),
        "nested4: output length"
    );
    let mut out = dst.iter_mut();
    // Pointers move with `wrapping_offset` (a step past the last index may
    // leave the view) and are read only at visited indices, which the
    // caller's views contain.
    let (mut a0, mut b0) = (pa, pb);
    for _ in 0..dims[0] {
        let (mut a1, mut b1) = (a0, b0);
        for _ in 0..dims[1] {
            let (mut a2, mut b2) = (a1, b1);
            for _ in 0..dims[2] {
                let (mut a3, mut b3) = (a2, b2);
                for _ in 0..dims[3] {
                    // SAFETY: an index inside `dims`, so inside both views.
                    let v = unsafe { f(*a3, *b3) };
                    out.next().expect("one slot per index").write(v);
                    (a3, b3) = (a3.wrapping_offset(sa[3]), b3.wrapping_offset(sb[3]));
                }
                (a2, b2) = (a2.wrapping_offset(sa[2]), b2.wrapping_offset(sb[2]));
            }
            (a1, b1) = (a1.wrapping_offset(sa[1]), b1.wrapping_offset(sb[1]));
        }
        (a0, b0) = (a0.wrapping_offset(sa[0]), b0.wrapping_offset(sb[0]));
    }
}

/// True when `small` (ignoring leading 1s) equals a non-empty suffix of
/// `full`, i.e. `small` repeats once per leading index of `full`.
fn is_row_of(small: &[usize], full: &[usize]) -> bool {
    let s: &[usize] = {
        let k = small.iter().take_while(|&&d| d == 1).count();
        &small[k..]
    };
    !s.is_empty() && s.len() <= full.len() && full[full.len() - s.len()..] == *s
}

fn rows<T: Float, F: Fn(T, T) -> T + Sync + Send + ?Sized>(
    big: &[T],
    row: &[T],
    shape: &[usize],
    f: &F,
) -> ArrayD<T> {
    let n = big.len();
    let w = row.len();
    let mut out: Vec<T> = Vec::with_capacity(n);
    {
        let dst = &mut out.spare_capacity_mut()[..n];
        let per = (CHUNK / w).max(1) * w;
        let run = |d: &mut [MaybeUninit<T>], s: &[T]| {
            for (d, s) in d.chunks_mut(w).zip(s.chunks(w)) {
                fill2_best(d, s, row, f);
            }
        };
        if n >= PARALLEL_THRESHOLD {
            chunks_mut(dst, per, |c, d| run(d, &big[c * per..c * per + d.len()]));
        } else {
            run(dst, big);
        }
    }
    // SAFETY: every row of `w` elements was written above.
    unsafe { out.set_len(n) };
    ArrayD::from_shape_vec(IxDyn(shape), out).expect("shape matches length")
}

/// Random operands for the broadcast tests of the strided kernels.
#[cfg(test)]
pub(crate) mod testing {
    use ndarray::{ArrayD, Axis, IxDyn};

    /// A xorshift generator.
    pub(crate) struct Rng(pub(crate) u64);

    impl Rng {
        /// A draw from `0..n`.
        pub(crate) fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }
    }

    /// An operand that broadcasts to `out`: some leading axes dropped, some
    /// lengths 1, values `i / 4 − salt`, laid out standard, reversed on
    /// axis 0 (a negative stride) or column-major.
    pub(crate) fn operand(rng: &mut Rng, out: &[usize], salt: f64) -> ArrayD<f64> {
        let nd = out.len();
        let drop = rng.below(nd + 1).min(nd);
        let shape: Vec<usize> = out[drop..]
            .iter()
            .map(|&d| if rng.below(3) == 0 { 1 } else { d })
            .collect();
        let n: usize = shape.iter().product();
        let x = ArrayD::from_shape_vec(
            IxDyn(&shape),
            (0..n).map(|i| i as f64 * 0.25 - salt).collect(),
        )
        .expect("shape matches length");
        let mut r = x.clone();
        match rng.below(3) {
            1 if r.ndim() > 0 => r.invert_axis(Axis(0)),
            2 => r = x.t().as_standard_layout().into_owned().reversed_axes(),
            _ => {}
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{arr1, arr2};

    #[test]
    fn broadcast_paths_agree() {
        let a = arr2(&[[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]]).into_dyn();
        let r = arr1(&[10.0f64, 20.0, 30.0]).into_dyn();
        let fast = binary(a.view(), r.view(), BinaryOp::Sub);
        let rev = binary(r.view(), a.view(), BinaryOp::Sub);
        assert_eq!(
            fast.as_slice().unwrap(),
            &[-9.0, -18.0, -27.0, -6.0, -15.0, -24.0]
        );
        assert_eq!(rev.as_slice().unwrap(), &[9.0, 18.0, 27.0, 6.0, 15.0, 24.0]);
        let t = a.t();
        let col = arr2(&[[1.0f64], [2.0], [3.0]]).into_dyn();
        let g = binary(t.view(), col.view(), BinaryOp::Mul);
        assert_eq!(g.shape(), &[3, 2]);
        assert_eq!(g[[2, 1]], 18.0);
    }

    #[test]
    fn row_paths_match_the_generic_iterator() {
        // Sliced (last axis contiguous, rows strided), broadcast rows, and a
        // transpose (not eligible) all agree with element-by-element maths.
        let big =
            ndarray::Array2::from_shape_fn((5, 12), |(i, j)| (i * 12 + j) as f64 * 0.1).into_dyn();
        let a = big.slice(ndarray::s![.., 1..11]).into_dyn();
        let b = big.slice(ndarray::s![.., 0..10]).into_dyn();
        let row = ndarray::Array1::from_shape_fn(10, |j| j as f64).into_dyn();
        let want = |x: f64, y: f64| x * y - 1.0;
        let check = |got: ArrayD<f64>, a: &ArrayViewD<'_, f64>, b: &ArrayViewD<'_, f64>| {
            let d = IxDyn(got.shape());
            let (av, bv) = (a.broadcast(d.clone()).unwrap(), b.broadcast(d).unwrap());
            for ((g, &x), &y) in got.iter().zip(av.iter()).zip(bv.iter()) {
                assert_eq!(*g, want(x, y));
            }
        };
        check(zip_map(a.view(), b.view(), want), &a.view(), &b.view());
        check(zip_map(a.view(), row.view(), want), &a.view(), &row.view());
        let t = a.t();
        let t2 = b.t();
        check(zip_map(t.view(), t2.view(), want), &t.view(), &t2.view());
        let m = map(a.view(), |v| v.sin());
        for (g, &x) in m.iter().zip(a.iter()) {
            assert_eq!(*g, x.sin());
        }
        assert_eq!(m.shape(), &[5, 10]);
        // Three axes, outer ones permuted (rows reached through the odometer).
        let c = ndarray::Array3::from_shape_fn((3, 4, 9), |(i, j, k)| (i * 36 + j * 9 + k) as f64)
            .into_dyn();
        let p = c.view().permuted_axes(vec![1, 0, 2]);
        let q = c.slice(ndarray::s![.., .., ..]).into_dyn();
        let q = q.view().permuted_axes(vec![1, 0, 2]);
        let r = zip_map(p.view(), q.view(), want);
        check(r, &p.view(), &q.view());
        let m3 = map(p.view(), |v| v + 0.5);
        for (g, &x) in m3.iter().zip(p.iter()) {
            assert_eq!(*g, x + 0.5);
        }
        // Short rows with broadcast axes on both sides (the small strided
        // path): [6, 1, 2, 3] against [2, 2, 3], and a transposed operand.
        let u =
            ndarray::Array4::from_shape_fn((6, 1, 2, 3), |(i, _, j, k)| (i * 6 + j * 3 + k) as f64)
                .into_dyn();
        let v =
            ndarray::Array3::from_shape_fn((2, 2, 3), |(i, j, k)| (i * 6 + j * 3 + k) as f64 - 5.5)
                .into_dyn();
        let got = zip_map(u.view(), v.view(), want);
        assert_eq!(got.shape(), &[6, 2, 2, 3]);
        check(got, &u.view(), &v.view());
        let vt = v.view().permuted_axes(vec![0, 2, 1]).to_owned();
        let vt = vt.view().permuted_axes(vec![0, 2, 1]);
        check(zip_map(u.view(), vt.view(), want), &u.view(), &vt.view());
    }

    #[test]
    fn small_strided_broadcasts_match_the_generic_iterator() {
        // Random shapes of up to 5 axes, each operand broadcasting (length-1
        // or missing leading axes), permuted, reversed or sliced; the strided
        // path (`zip_strided`) against ndarray's broadcast iterators.
        let mut rng = testing::Rng(0x2545_f491_4f6c_dd1d);
        for case in 0..400 {
            let nd = rng.below(6);
            let out: Vec<usize> = (0..nd).map(|_| 1 + rng.below(4)).collect();
            let (la, lb) = (
                testing::operand(&mut rng, &out, 3.0),
                testing::operand(&mut rng, &out, -1.0),
            );
            let (va, vb) = (la.view(), lb.view());
            let shape = broadcast_shape(va.shape(), vb.shape());
            let f = |x: f64, y: f64| x * 3.0 - y;
            let got = zip_strided(&va, &vb, &shape, &f).expect("few axes");
            let d = IxDyn(&shape);
            let want = Zip::from(&va.broadcast(d.clone()).unwrap())
                .and(&vb.broadcast(d).unwrap())
                .map_collect(|&x, &y| f(x, y));
            assert_eq!(got, want, "case {case}: {:?} {:?}", va.shape(), vb.shape());
        }
    }

    #[test]
    fn contiguous_copies_match_the_logical_order() {
        let c =
            ndarray::Array3::from_shape_fn((3, 4, 5), |(i, j, k)| (i * 100 + j * 10 + k) as i64)
                .into_dyn();
        let one_row = c.slice(ndarray::s![.., 0..1, ..]).into_dyn();
        let views = [
            c.view().permuted_axes(vec![2, 0, 1]), // last stride 4
            c.view().permuted_axes(vec![1, 0, 2]), // rows contiguous
            c.slice(ndarray::s![.., 1..3, ..;2]).into_dyn(), // stride-2 rows
            c.view(),                              // already standard
            c.slice(ndarray::s![.., 0..0, ..])
                .into_dyn()
                .permuted_axes(vec![2, 0, 1]), // empty
            // a broadcast (stride-0) axis
            one_row
                .broadcast(vec![3, 4, 5])
                .expect("broadcasts")
                .permuted_axes(vec![0, 2, 1]),
        ];
        for v in views {
            let got = contiguous(&v);
            assert!(got.is_standard_layout());
            assert_eq!(got, v.to_owned());
            assert_eq!(
                got.iter().copied().collect::<Vec<_>>(),
                v.iter().copied().collect::<Vec<_>>()
            );
        }
    }

    #[test]
    fn permuted_copies_match_permute_then_copy() {
        // Every permutation of a 4-axis array (standard, sliced with a
        // stride, and with a broadcast axis), copied into a 2-axis shape,
        // against ndarray's permuted view read in logical order.
        let c = ndarray::Array4::from_shape_fn((2, 3, 4, 5), |(i, j, k, l)| {
            (i * 1000 + j * 100 + k * 10 + l) as i64
        })
        .into_dyn();
        let strided = c.slice(ndarray::s![.., .., ..;2, ..]).into_dyn();
        let row = c.slice(ndarray::s![.., 0..1, .., ..]).into_dyn();
        let wide = row.broadcast(vec![2, 3, 4, 5]).expect("broadcasts");
        let mut perms = Vec::new();
        for a in 0..4 {
            for b in 0..4 {
                for d in 0..4 {
                    // The fourth axis is the one left: 0 + 1 + 2 + 3 = 6.
                    let Some(e) = 6usize.checked_sub(a + b + d) else {
                        continue;
                    };
                    if a != b && a != d && b != d && e < 4 && e != a && e != b && e != d {
                        perms.push([a, b, d, e]);
                    }
                }
            }
        }
        assert_eq!(perms.len(), 24);
        for v in [c.view(), strided.view(), wide.view()] {
            for p in &perms {
                let pv = v.clone().permuted_axes(p.to_vec());
                let n = pv.len();
                let shape = [
                    pv.shape()[0] * pv.shape()[1],
                    n / (pv.shape()[0] * pv.shape()[1]),
                ];
                let got = permuted_as(&v, p, &shape);
                assert_eq!(got.shape(), &shape);
                assert_eq!(
                    got.iter().copied().collect::<Vec<_>>(),
                    pv.iter().copied().collect::<Vec<_>>(),
                    "{p:?} of {:?}",
                    v.strides()
                );
            }
        }
    }

    #[test]
    #[should_panic(expected = "permuted_as: [0, 0] is not a permutation of 2 axes")]
    fn permuted_copies_reject_repeated_axes() {
        let x = ndarray::Array2::<f64>::zeros((2, 3)).into_dyn();
        permuted_as(&x.view(), &[0, 0], &[6]);
    }

    #[test]
    fn large_parallel_map() {
        let n = PARALLEL_THRESHOLD * 3 + 7;
        let x = ndarray::Array1::from_iter((0..n).map(|i| i as f32)).into_dyn();
        let y = unary(x.view(), UnaryOp::Affine(2.0, 1.0));
        assert!(
            y.iter()
                .enumerate()
                .all(|(i, &v)| v == 2.0 * i as f32 + 1.0)
        );
    }
}
