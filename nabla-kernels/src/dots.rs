//! Products whose operands both run along the inner dimension
//! (`a · bᵀ` with `a` and `b` row-major): each output is a dot product of
//! two contiguous rows. The `gemm` crate packs both operands into panels
//! first, which dominates when the output is small and the inner dimension
//! long — a convolution's weight gradient, `[O, positions] ·
//! [positions, C·k]` per example, ran at a sixth of this kernel's rate
//! (docs/performance.md). Here a block of `R` rows of `a` meets `C` rows of
//! `b` in `R·C` vector accumulators, reading each row once per block.

use crate::Float;
use crate::elementwise::Isa;

/// `out[i·ldo + j] = Σ_p a[i·lda + p] · b[j·ldb + p]` for `i < m`, `j < n`,
/// `p < k`: rows of `a` and of `b` are contiguous.
///
/// # Safety
/// `a` must hold `m` rows of `k` elements `lda` apart, `b` `n` rows `ldb`
/// apart, and `out` `m` rows of `n` elements `ldo` apart, not overlapping
/// `a` or `b`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn dots<T: Float>(
    m: usize,
    n: usize,
    k: usize,
    a: *const T,
    lda: usize,
    b: *const T,
    ldb: usize,
    out: *mut T,
    ldo: usize,
) {
    // SAFETY: the caller's contract.
    unsafe { dots_on(Isa::widest(), m, n, k, a, lda, b, ldb, out, ldo) }
}

/// [`dots`] with `isa`'s copy of the loops (the tests run each). The
/// vector copies use FMA, the baseline one separate multiplies and adds,
/// and the copies sum different lanes: results agree to rounding, not bit
/// for bit.
///
/// # Safety
/// As [`dots`].
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn dots_on<T: Float>(
    isa: Isa,
    m: usize,
    n: usize,
    k: usize,
    a: *const T,
    lda: usize,
    b: *const T,
    ldb: usize,
    out: *mut T,
    ldo: usize,
) {
    // SAFETY: the pointers are the caller's (the contract of `dots`);
    // `Float` is `f32` or `f64`, told apart by size, so the casts keep the
    // element type; an `Isa` this wide exists only where its features were
    // detected, which the `target_feature` copies need.
    unsafe {
        #[cfg(target_arch = "x86_64")]
        {
            let (avx512, f32s) = (isa.avx512(), size_of::<T>() == 4);
            if isa.avx2() {
                let (a32, b32, o32) = (a as *const f32, b as *const f32, out as *mut f32);
                let (a64, b64, o64) = (a as *const f64, b as *const f64, out as *mut f64);
                return match (avx512, f32s) {
                    (true, true) => avx512_f32(m, n, k, a32, lda, b32, ldb, o32, ldo),
                    (true, false) => avx512_f64(m, n, k, a64, lda, b64, ldb, o64, ldo),
                    (false, true) => avx2_f32(m, n, k, a32, lda, b32, ldb, o32, ldo),
                    (false, false) => avx2_f64(m, n, k, a64, lda, b64, ldb, o64, ldo),
                };
            }
        }
        let _ = isa;
        tiled::<Scalar<T>>(m, n, k, a, lda, b, ldb, out, ldo)
    }
}

/// Whether [`dots`] runs vectorised here (AVX2 + FMA or AVX-512); without,
/// it is a plain loop, slower than the `gemm` crate.
pub(crate) fn vectorised() -> bool {
    #[cfg(target_arch = "x86_64")]
    return crate::elementwise::has_avx2();
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// A vector of `N` lanes of `E` and the operations the blocks use.
trait Lanes: Copy {
    type E: Float;
    const N: usize;
    /// # Safety
    /// The CPU must support the vector's instructions (as for all below).
    unsafe fn zero() -> Self;
    /// # Safety
    /// `p` must point at `N` readable elements.
    unsafe fn load(p: *const Self::E) -> Self;
    /// `self + x · y`.
    ///
    /// # Safety
    /// As [`Lanes::zero`].
    unsafe fn fma(self, x: Self, y: Self) -> Self;
    /// The sum of the lanes.
    ///
    /// # Safety
    /// As [`Lanes::zero`].
    unsafe fn sum(self) -> Self::E;
}

/// One lane, for CPUs without the vector features.
#[derive(Clone, Copy)]
struct Scalar<T>(T);

impl<T: Float> Lanes for Scalar<T> {
    type E = T;
    const N: usize = 1;
    unsafe fn zero() -> Self {
        Scalar(T::ZERO)
    }
    unsafe fn load(p: *const T) -> Self {
        // SAFETY: the caller's contract: `p` points at one readable element.
        Scalar(unsafe { *p })
    }
    unsafe fn fma(self, x: Self, y: Self) -> Self {
        Scalar(self.0 + x.0 * y.0)
    }
    unsafe fn sum(self) -> T {
        self.0
    }
}

/// `Lanes` for one `std::arch` vector type and the intrinsics it takes.
#[cfg(target_arch = "x86_64")]
macro_rules! lanes {
    ($v:ty, $e:ty, $n:expr, $zero:ident, $load:ident, $fma:ident, $sum:expr) => {
        impl Lanes for $v {
            type E = $e;
            const N: usize = $n;
            #[inline(always)]
            unsafe fn zero() -> Self {
                // SAFETY: the caller guarantees the vector's CPU features,
                // all the intrinsic needs.
                unsafe { std::arch::x86_64::$zero() }
            }
            #[inline(always)]
            unsafe fn load(p: *const $e) -> Self {
                // SAFETY: the features as above; `p` points at `N`
                // readable elements (the caller's contract), and the load
                // is unaligned.
                unsafe { std::arch::x86_64::$load(p) }
            }
            #[inline(always)]
            unsafe fn fma(self, x: Self, y: Self) -> Self {
                // SAFETY: the features as above (the intrinsic touches no
                // memory).
                unsafe { std::arch::x86_64::$fma(x, y, self) }
            }
            #[inline(always)]
            unsafe fn sum(self) -> $e {
                // SAFETY: the vector types are plain `N` lanes of `E` (same
                // size, every bit pattern valid), lane 0 first.
                let lanes: [$e; $n] = unsafe { std::mem::transmute(self) };
                let f: fn([$e; $n]) -> $e = $sum;
                f(lanes)
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::Lanes;
    use std::arch::x86_64::{__m256, __m256d, __m512, __m512d};
    lanes!(
        __m512,
        f32,
        16,
        _mm512_setzero_ps,
        _mm512_loadu_ps,
        _mm512_fmadd_ps,
        |l| l.iter().sum()
    );
    lanes!(
        __m512d,
        f64,
        8,
        _mm512_setzero_pd,
        _mm512_loadu_pd,
        _mm512_fmadd_pd,
        |l| l.iter().sum()
    );
    lanes!(
        __m256,
        f32,
        8,
        _mm256_setzero_ps,
        _mm256_loadu_ps,
        _mm256_fmadd_ps,
        |l| l.iter().sum()
    );
    lanes!(
        __m256d,
        f64,
        4,
        _mm256_setzero_pd,
        _mm256_loadu_pd,
        _mm256_fmadd_pd,
        |l| l.iter().sum()
    );
}

/// [`tiled`] compiled for one vector type under its target features.
#[cfg(target_arch = "x86_64")]
macro_rules! variant {
    ($name:ident, $v:ty, $e:ty, $features:literal) => {
        /// # Safety
        /// As [`dots`]; the CPU must have the named features.
        #[target_feature(enable = $features)]
        #[allow(clippy::too_many_arguments)]
        unsafe fn $name(
            m: usize,
            n: usize,
            k: usize,
            a: *const $e,
            lda: usize,
            b: *const $e,
            ldb: usize,
            out: *mut $e,
            ldo: usize,
        ) {
            // SAFETY: the pointers are the caller's (as `dots`), and
            // this function's own contract gives the features `$v` needs.
            unsafe { tiled::<$v>(m, n, k, a, lda, b, ldb, out, ldo) }
        }
    };
}

#[cfg(target_arch = "x86_64")]
variant!(
    avx512_f32,
    std::arch::x86_64::__m512,
    f32,
    "avx512f,avx2,fma"
);
#[cfg(target_arch = "x86_64")]
variant!(
    avx512_f64,
    std::arch::x86_64::__m512d,
    f64,
    "avx512f,avx2,fma"
);
#[cfg(target_arch = "x86_64")]
variant!(avx2_f32, std::arch::x86_64::__m256, f32, "avx2,fma");
#[cfg(target_arch = "x86_64")]
variant!(avx2_f64, std::arch::x86_64::__m256d, f64, "avx2,fma");

/// The output in `4 × 4` blocks of 16 vector accumulators, edges one
/// column or one row at a time.
///
/// # Safety
/// As [`dots`], and the CPU supports `V`'s instructions.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn tiled<V: Lanes>(
    m: usize,
    n: usize,
    k: usize,
    a: *const V::E,
    lda: usize,
    b: *const V::E,
    ldb: usize,
    out: *mut V::E,
    ldo: usize,
) {
    // SAFETY: for the whole body: rows `i < m` of `a` and `j < n` of `b` hold `k`
    // elements each (the caller's contract), as `block` needs; every store
    // is at `(i, j)` with `i < m`, `j < n`, inside `out`'s rows.
    unsafe {
        let (m4, n4) = (m - m % 4, n - n % 4);
        let ra = |i: usize| a.add(i * lda);
        let rb = |j: usize| b.add(j * ldb);
        for i in (0..m4).step_by(4) {
            let rows = [ra(i), ra(i + 1), ra(i + 2), ra(i + 3)];
            for j in (0..n4).step_by(4) {
                let v = block::<V, 4, 4>(rows, [rb(j), rb(j + 1), rb(j + 2), rb(j + 3)], k);
                for (r, row) in v.iter().enumerate() {
                    for (c, &x) in row.iter().enumerate() {
                        *out.add((i + r) * ldo + j + c) = x;
                    }
                }
            }
            for j in n4..n {
                let v = block::<V, 4, 1>(rows, [rb(j)], k);
                for (r, row) in v.iter().enumerate() {
                    *out.add((i + r) * ldo + j) = row[0];
                }
            }
        }
        for i in m4..m {
            for j in 0..n {
                *out.add(i * ldo + j) = block::<V, 1, 1>([ra(i)], [rb(j)], k)[0][0];
            }
        }
    }
}

/// The `R × C` dot products of the `k`-element rows `ra[r]` and `rb[c]`.
///
/// # Safety
/// Every row holds `k` readable elements; the CPU supports `V`.
#[inline(always)]
unsafe fn block<V: Lanes, const R: usize, const C: usize>(
    ra: [*const V::E; R],
    rb: [*const V::E; C],
    k: usize,
) -> [[V::E; C]; R] {
    // SAFETY: for the whole body: every load reads row elements `p..p + N` with
    // `p + N <= body <= k`, or one element `q < k`; the caller vouches for
    // `k` elements per row and the vector features.
    unsafe {
        let mut acc = [[V::zero(); C]; R];
        let body = k - k % V::N;
        let mut p = 0;
        while p < body {
            let mut xb = [V::zero(); C];
            for c in 0..C {
                xb[c] = V::load(rb[c].add(p));
            }
            for r in 0..R {
                let xa = V::load(ra[r].add(p));
                for c in 0..C {
                    acc[r][c] = acc[r][c].fma(xa, xb[c]);
                }
            }
            p += V::N;
        }
        let mut out = [[V::E::ZERO; C]; R];
        for r in 0..R {
            for c in 0..C {
                let mut s = acc[r][c].sum();
                for q in body..k {
                    s += *ra[r].add(q) * *rb[c].add(q);
                }
                out[r][c] = s;
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dots_match_a_plain_loop_for_every_edge() {
        for (m, n, k) in [(1, 1, 1), (4, 4, 16), (5, 7, 37), (9, 3, 100), (8, 6, 15)] {
            let a: Vec<f64> = (0..m * k).map(|i| ((i * 7) % 13) as f64 - 6.0).collect();
            let b: Vec<f64> = (0..n * k).map(|i| ((i * 5) % 11) as f64 - 5.0).collect();
            let af: Vec<f32> = a.iter().map(|&v| v as f32).collect();
            let bf: Vec<f32> = b.iter().map(|&v| v as f32).collect();
            let mut o = vec![0.0f64; m * n];
            let mut of = vec![0.0f32; m * n];
            // SAFETY: the buffers have exactly the sizes passed.
            unsafe {
                dots(m, n, k, a.as_ptr(), k, b.as_ptr(), k, o.as_mut_ptr(), n);
                dots(m, n, k, af.as_ptr(), k, bf.as_ptr(), k, of.as_mut_ptr(), n);
            }
            for i in 0..m {
                for j in 0..n {
                    let want: f64 = (0..k).map(|p| a[i * k + p] * b[j * k + p]).sum();
                    assert_eq!(o[i * n + j], want, "f64 ({m}, {n}, {k}) at ({i}, {j})");
                    assert_eq!(
                        of[i * n + j] as f64,
                        want,
                        "f32 ({m}, {n}, {k}) at ({i}, {j})"
                    );
                }
            }
        }
    }
}
