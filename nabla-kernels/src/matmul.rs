//! Batched matrix multiplication through the `gemm` crate, and through
//! [`crate::dots`] for small outputs with a long inner dimension.

use crate::elementwise::Isa;
use crate::parallel;
use crate::{Float, PARALLEL_THRESHOLD};
use ndarray::{Array3, ArrayView1, ArrayView3, Axis};
use std::mem::MaybeUninit;

/// `out[b] = a[b] · b[b]` for every batch index `b`.
///
/// `a` is `[B, M, K]`, `b` is `[B, K, N]`; either may be any strided view
/// (including a broadcast batch axis of stride 0 or a transposed matrix):
/// strides are handed to the GEMM, nothing is copied. The result is a
/// row-major `[B, M, N]` array.
///
/// ```
/// use nabla_kernels::matmul::matmul;
/// let a = ndarray::arr3(&[[[1.0f64, 2.0], [3.0, 4.0]]]);
/// let b = ndarray::arr3(&[[[5.0f64, 6.0], [7.0, 8.0]]]);
/// let c = matmul(a.view(), b.view());
/// assert_eq!(c.as_slice().unwrap(), &[19.0, 22.0, 43.0, 50.0]);
/// ```
pub fn matmul<T: Float>(a: ArrayView3<'_, T>, b: ArrayView3<'_, T>) -> Array3<T> {
    let (batch, m, k) = a.dim();
    let (batch_b, k2, n) = b.dim();
    assert_eq!(batch, batch_b, "matmul kernel: batch sizes differ");
    assert_eq!(k, k2, "matmul kernel: inner dimensions differ");
    if m == 0 || n == 0 || k == 0 || batch == 0 {
        return Array3::<T>::from_elem((batch, m, n), T::ZERO);
    }
    if k == 1 {
        return outer_products(a, b);
    }
    // The GEMM overwrites every element (`read_dst = false`), so the output
    // starts uninitialised instead of being zero-filled first.
    let mut out = Array3::<T>::uninit((batch, m, n));
    let work = m * n * k;
    if rows_meet_rows(&a, &b) {
        let dst = out.as_slice_mut().expect("a fresh array is contiguous");
        dot_products(a, b, dst);
        // SAFETY: every product's m×n block was written.
        return unsafe { out.assume_init() };
    }
    let threads = rayon::current_num_threads();
    if batch > 1 && work < (1 << 18) && batch * work >= PARALLEL_THRESHOLD {
        // Many small products: one thread per product.
        let dst = out.as_slice_mut().expect("a fresh array is contiguous");
        parallel::chunks_mut(dst, m * n, |i, o| {
            let (ai, bi) = (a.index_axis(Axis(0), i), b.index_axis(Axis(0), i));
            let o_ptr = o.as_mut_ptr() as *mut T;
            // SAFETY: shapes checked above; strides come from live views.
            unsafe {
                gemm_one(
                    m,
                    n,
                    k,
                    o_ptr,
                    n as isize,
                    ai.as_ptr(),
                    ai.strides(),
                    bi.as_ptr(),
                    bi.strides(),
                    1,
                )
            };
        });
        // SAFETY: every product wrote its whole m×n block.
        return unsafe { out.assume_init() };
    }
    let par = if work >= (1 << 18) { threads } else { 1 };
    for i in 0..batch {
        let (ai, bi) = (a.index_axis(Axis(0), i), b.index_axis(Axis(0), i));
        // A `b` whose columns are contiguous (a transposed matrix, as in
        // the backward pass of `x @ w`) is copied row-major first where
        // the inner dimension is long: the GEMM crate packs that layout
        // slowly. Two threads, f32: 256×512 by 512×512 1.11 ms -> 0.71-0.75
        // ms with the copy, 64×512 by 512×512 0.67 -> 0.25-0.30 ms; no gain
        // for inner dimensions up to 128 (docs/performance.md).
        let copied = (m >= 8 && k >= 256 && work >= (1 << 18) && column_major(&bi))
            .then(|| crate::elementwise::transposed_copy(bi));
        let bi = copied.as_ref().map_or(bi, |c| c.view());
        let mut o = out.index_axis_mut(Axis(0), i);
        let o_ptr = o.as_mut_ptr() as *mut T;
        let (sa, sb) = (ai.strides(), bi.strides());
        let (a_ptr, b_ptr) = (ai.as_ptr(), bi.as_ptr());
        if par > 1 && rayon::current_thread_index().is_none() {
            // A product called from outside the pool: one row (or column)
            // block per thread, run by the caller and idle pool threads
            // (`parallel::for_each`) instead of handing the GEMM to the
            // crate's own threading and sleeping. That threading forks and
            // joins once per packed depth block; between the short kernels
            // of a training step the pool's threads are often asleep by
            // then, and a GPT step's GEMMs ran at one thread's speed. Each
            // block packs its own copy of `b`, which costs the 1024³ GEMM
            // nothing measurable (docs/performance.md).
            let by_rows = m >= 32 || n < 64;
            let len = if by_rows { m } else { n };
            let step = len.div_ceil(threads).next_multiple_of(16);
            let (o_addr, a_addr, b_addr) = (o_ptr as usize, a_ptr as usize, b_ptr as usize);
            parallel::for_each(len.div_ceil(step), |p| {
                let lo = p * step;
                let hi = (lo + step).min(len);
                let (o, a, b) = (o_addr as *mut T, a_addr as *const T, b_addr as *const T);
                // SAFETY: block `p` covers rows (or columns) `lo..hi` of the
                // output and the matching rows of `a` (columns of `b`);
                // blocks are disjoint, pointers stay in bounds.
                unsafe {
                    if by_rows {
                        let (o, a) = (
                            o.offset(lo as isize * n as isize),
                            a.offset(lo as isize * sa[0]),
                        );
                        gemm_one(hi - lo, n, k, o, n as isize, a, sa, b, sb, 1)
                    } else {
                        let (o, b) = (o.add(lo), b.offset(lo as isize * sb[1]));
                        gemm_one(m, hi - lo, k, o, n as isize, a, sa, b, sb, 1)
                    }
                }
            });
            continue;
        }
        // SAFETY: `ai` (m × k), `bi` (k × n) are live views whose pointers
        // and strides `gemm_one` reads as given, and `o_ptr` is product
        // `i`'s m × n row-major block of `out` (row stride n).
        unsafe { gemm_one(m, n, k, o_ptr, n as isize, a_ptr, sa, b_ptr, sb, par) };
    }
    // SAFETY: every batch entry's m×n block was written by the GEMM.
    unsafe { out.assume_init() }
}

/// Whether `x`'s first axis is its contiguous one and its second is not.
fn column_major<T>(x: &ndarray::ArrayView2<'_, T>) -> bool {
    let s = x.strides();
    s[0] == 1 && s[1] != 1 && x.dim().1 > 1
}

/// Whether every product is better computed as dot products of rows
/// ([`crate::dots`]): `a`'s rows and `b`'s columns contiguous, at most
/// 64 × 64 outputs and an inner dimension of 256 or more. Measured on 32
/// products (AMD EPYC, AVX-512): 32×27 by 1024 0.39 ms against the `gemm`
/// crate's 2.39, 64×64 by 256 0.52 against 0.79, but 64×64 by 128 0.36
/// against 0.31.
fn rows_meet_rows<T>(a: &ArrayView3<'_, T>, b: &ArrayView3<'_, T>) -> bool {
    let ((_, m, k), n) = (a.dim(), b.dim().2);
    let (sa, sb) = (a.strides(), b.strides());
    let shape = sa[2] == 1 && sb[1] == 1 && sa[1] >= 0 && sb[2] >= 0;
    shape && m * n <= 64 * 64 && k >= 256 && crate::dots::vectorised()
}

/// `out[b] = a[b] · b[b]` by [`crate::dots`], in blocks of 16 rows of each
/// product spread over the threads.
fn dot_products<T: Float>(a: ArrayView3<'_, T>, b: ArrayView3<'_, T>, dst: &mut [MaybeUninit<T>]) {
    let ((batch, m, k), n) = (a.dim(), b.dim().2);
    let (lda, ldb) = (a.strides()[1] as usize, b.strides()[2] as usize);
    let blocks = m.div_ceil(16);
    let base = dst.as_mut_ptr() as usize;
    let run = |item: usize| {
        let (i, lo) = (item / blocks, item % blocks * 16);
        let rows = (m - lo).min(16);
        let (ai, bi) = (a.index_axis(Axis(0), i), b.index_axis(Axis(0), i));
        // SAFETY: item `item` owns rows `lo..lo + rows` of product `i`,
        // disjoint from every other item's and inside `dst`; it reads live
        // views whose inner strides were checked to be 1.
        unsafe {
            let o = (base as *mut T).add(i * m * n + lo * n);
            crate::dots::dots(
                rows,
                n,
                k,
                ai.as_ptr().add(lo * lda),
                lda,
                bi.as_ptr(),
                ldb,
                o,
                n,
            )
        }
    };
    if batch * m * n * k >= PARALLEL_THRESHOLD {
        parallel::for_each(batch * blocks, run);
    } else {
        (0..batch * blocks).for_each(run);
    }
}

/// The `k = 1` case: every product is an outer product,
/// `out[b, i, j] = a[b, i, 0] · b[b, 0, j]`, written as row-scaling loops.
/// A GEMM call per product spends most of its time in set-up here (this is
/// the shape of per-example weight gradients under `vmap`).
fn outer_products<T: Float>(a: ArrayView3<'_, T>, b: ArrayView3<'_, T>) -> Array3<T> {
    let (batch, m, _) = a.dim();
    let n = b.dim().2;
    let mut out = Array3::<T>::uninit((batch, m, n));
    let isa = Isa::widest();
    // Product `i` fills the contiguous `m × n` block `o`.
    let one = |i: usize, o: &mut [MaybeUninit<T>]| {
        let brow = b.slice(ndarray::s![i, 0, ..]);
        let scales = a.slice(ndarray::s![i, .., 0]);
        match brow.as_slice() {
            Some(row) => scale_rows_on(isa, o, scales, row),
            None => {
                for (orow, &s) in o.chunks_mut(n).zip(scales) {
                    for (d, &v) in orow.iter_mut().zip(brow.iter()) {
                        d.write(s * v);
                    }
                }
            }
        }
    };
    let dst = out.as_slice_mut().expect("a fresh array is contiguous");
    if batch > 1 && batch * m * n >= PARALLEL_THRESHOLD {
        parallel::chunks_mut(dst, m * n, one);
    } else {
        for (i, o) in dst.chunks_mut(m * n).enumerate() {
            one(i, o);
        }
    }
    // SAFETY: every row of every product was written above.
    unsafe { out.assume_init() }
}

/// `o[r, :] = scales[r] · row` for every row `r` of the block `o`.
#[inline(always)]
fn scale_rows<T: Float>(o: &mut [MaybeUninit<T>], scales: ArrayView1<'_, T>, row: &[T]) {
    for (orow, &s) in o.chunks_mut(row.len()).zip(scales) {
        for (d, &v) in orow.iter_mut().zip(row) {
            d.write(s * v);
        }
    }
}

/// `scale_rows` compiled for AVX2 (the baseline build stores 16 bytes at a
/// time; the outer products are store-bound, 1.4–1.6× faster with 32).
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn scale_rows_avx2<T: Float>(
    o: &mut [MaybeUninit<T>],
    scales: ArrayView1<'_, T>,
    row: &[T],
) {
    scale_rows(o, scales, row)
}

/// `scale_rows` with `isa`'s copy of the loop.
pub(crate) fn scale_rows_on<T: Float>(
    isa: Isa,
    o: &mut [MaybeUninit<T>],
    scales: ArrayView1<'_, T>,
    row: &[T],
) {
    #[cfg(target_arch = "x86_64")]
    if isa.avx2() {
        // SAFETY: an `Isa` this wide exists only where `has_avx2` held.
        return unsafe { scale_rows_avx2(o, scales, row) };
    }
    let _ = isa;
    scale_rows(o, scales, row)
}

/// One `m×k · k×n` product into a row-major destination with row stride `ldo`.
///
/// # Safety
/// `a` with strides `sa` and `b` with `sb` must address `m × k` and
/// `k × n` readable elements, and `dst` with row stride `ldo` `m × n`
/// writable ones (initialised or not) that overlap neither.
#[allow(clippy::too_many_arguments)]
unsafe fn gemm_one<T: Float>(
    m: usize,
    n: usize,
    k: usize,
    dst: *mut T,
    ldo: isize,
    a: *const T,
    sa: &[isize],
    b: *const T,
    sb: &[isize],
    threads: usize,
) {
    let parallelism = if threads > 1 {
        gemm::Parallelism::Rayon(threads)
    } else {
        gemm::Parallelism::None
    };
    // SAFETY: the caller's contract (`dst`, `a` and `b` with their strides
    // describe m × n, m × k and k × n matrices in live memory, `dst` not
    // overlapping the others); `read_dst = false`, so `dst` may be
    // uninitialised: the GEMM only writes it.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            dst,
            1,
            ldo,
            false,
            a,
            sa[1],
            sa[0],
            b,
            sb[1],
            sb[0],
            T::ZERO,
            T::ONE,
            false,
            false,
            false,
            parallelism,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strided_and_batched() {
        let a =
            ndarray::Array::from_shape_fn((3, 4, 5), |(i, j, l)| (i + 2 * j + 3 * l) as f64 * 0.25);
        let b = ndarray::Array::from_shape_fn((3, 6, 5), |(i, j, l)| (i * j) as f64 - l as f64);
        let bt = b.view().permuted_axes([0, 2, 1]);
        let c = matmul(a.view(), bt);
        for i in 0..3 {
            let want = a.index_axis(Axis(0), i).dot(&bt.index_axis(Axis(0), i));
            assert_eq!(c.index_axis(Axis(0), i), want);
        }
        let big =
            ndarray::Array::from_shape_fn((1, 300, 300), |(_, j, l)| ((j * 7 + l) % 11) as f32);
        let c = matmul(big.view(), big.view());
        let want = big.index_axis(Axis(0), 0).dot(&big.index_axis(Axis(0), 0));
        assert_eq!(c.index_axis(Axis(0), 0), want);
    }

    #[test]
    fn products_split_into_blocks_match_ndarray() {
        // From the test thread (outside the pool) products of 2^18 or more
        // multiply-adds run as row blocks (m ≥ 32) or column blocks, one
        // per thread; `b` is given transposed (strided).
        for (m, k, n) in [
            (200, 300, 150),
            (16, 2000, 200),
            (37, 100, 90),
            (300, 700, 260),
        ] {
            let a = ndarray::Array::from_shape_fn((1, m, k), |(_, i, l)| {
                ((i * 3 + l * 7) % 13) as f64 - 6.0
            });
            let bt = ndarray::Array::from_shape_fn((1, n, k), |(_, j, l)| {
                ((j * 5 + l) % 11) as f64 * 0.5
            });
            let b = bt.view().permuted_axes([0, 2, 1]);
            let c = matmul(a.view(), b);
            let want = a.index_axis(Axis(0), 0).dot(&b.index_axis(Axis(0), 0));
            assert_eq!(c.index_axis(Axis(0), 0), want, "{m}x{k}x{n}");
        }
    }

    #[test]
    fn dot_product_path_matches_ndarray() {
        // Small outputs with a long inner dimension and both operands
        // running along it take `crate::dots`: odd sizes, a broadcast
        // batch of `a`, f32 and f64, serial and parallel.
        for (batch, m, n, k) in [(1, 5, 7, 300), (3, 32, 27, 1024), (40, 17, 3, 257)] {
            let a = ndarray::Array::from_shape_fn((1, m, k), |(_, i, l)| {
                ((i * 3 + l * 7) % 13) as f64 - 6.0
            });
            let bt = ndarray::Array::from_shape_fn((batch, n, k), |(x, j, l)| {
                ((x + j * 5 + l) % 11) as f64 * 0.5
            });
            let ab = a.broadcast((batch, m, k)).unwrap();
            let b = bt.view().permuted_axes([0, 2, 1]);
            assert!(rows_meet_rows(&ab, &b));
            let c = matmul(ab, b);
            let (af, bf) = (a.mapv(|v| v as f32), bt.mapv(|v| v as f32));
            let cf = matmul(
                af.broadcast((batch, m, k)).unwrap(),
                bf.view().permuted_axes([0, 2, 1]),
            );
            for i in 0..batch {
                let want = a.index_axis(Axis(0), 0).dot(&b.index_axis(Axis(0), i));
                assert_eq!(c.index_axis(Axis(0), i), want, "{batch}x{m}x{n}x{k}");
                assert_eq!(
                    cf.index_axis(Axis(0), i).mapv(|v| v as f64),
                    want,
                    "f32 {batch}x{m}x{n}x{k}"
                );
            }
        }
    }

    #[test]
    fn rank_one_products() {
        // Small (serial) and large (parallel) batches; `b` contiguous, a
        // transposed view (strided rows) and a broadcast batch axis.
        for (batch, m, n) in [(3, 4, 5), (64, 40, 33)] {
            let a = ndarray::Array::from_shape_fn((batch, m, 1), |(i, j, _)| {
                (i as f64 - 1.5) * 0.5 + j as f64
            });
            let b = ndarray::Array::from_shape_fn((batch, 1, n), |(i, _, l)| {
                (i * l) as f64 * 0.25 - 1.0
            });
            let bt_storage = ndarray::Array::from_shape_fn((batch, n, 1), |(i, l, _)| {
                (i * l) as f64 * 0.25 - 1.0
            });
            let bt = bt_storage.view().permuted_axes([0, 2, 1]);
            let shared = b.slice(ndarray::s![0..1, .., ..]);
            let shared = shared.broadcast((batch, 1, n)).unwrap();
            for bv in [b.view(), bt, shared] {
                let c = matmul(a.view(), bv);
                for i in 0..batch {
                    let want = a.index_axis(Axis(0), i).dot(&bv.index_axis(Axis(0), i));
                    assert_eq!(c.index_axis(Axis(0), i), want);
                }
            }
        }
    }
}
