//! The innermost elementwise loops over slices (`fill*` into uninitialised
//! output, `update*` in place), each with an AVX2 + FMA copy chosen at run
//! time when the CPU has those features.

use crate::Float;
use std::mem::MaybeUninit;

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

/// True when the CPU has the AVX-512 subsets the 512-bit copies use
/// (F, VL, DQ) besides AVX2 and FMA (checked once, then cached).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn has_avx512() -> bool {
    has_avx2()
        && std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512vl")
        && std::arch::is_x86_feature_detected!("avx512dq")
}

/// `fill1` compiled for AVX-512.
///
/// # Safety
/// The CPU must support the features of [`has_avx512`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vl,avx512dq,avx2,fma")]
unsafe fn fill1_avx512<T: Float, F: Fn(T) -> T>(d: &mut [MaybeUninit<T>], s: &[T], f: &F) {
    fill1(d, s, f)
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

/// The elements before the first 64-byte boundary of the slice at `p`, of
/// `n` elements, when it is long enough to be worth splitting there (0
/// otherwise). The vector loops' stores then never straddle two cache
/// lines: heap buffers start 16 bytes past a line, and with 256- or
/// 512-bit stores every store (or every other one) would cross one, which
/// measured twice the time of aligned stores on buffers of ~80 KB.
#[inline(always)]
fn misaligned_head<T>(p: *const T, n: usize) -> usize {
    const LINE: usize = 64;
    if n < 4 * LINE / std::mem::size_of::<T>().max(1) {
        return 0;
    }
    let k = p.align_offset(LINE);
    if k < n { k } else { 0 }
}

/// The widest available version of `fill1` (the binary itself targets
/// baseline x86-64, so wider vectors are chosen at run time), its stores
/// aligned to cache lines.
#[inline(always)]
pub(super) fn fill1_best<T: Float, F: Fn(T) -> T>(d: &mut [MaybeUninit<T>], s: &[T], f: &F) {
    let k = misaligned_head(d.as_ptr(), d.len());
    if k > 0 {
        let (d0, d1) = d.split_at_mut(k);
        let (s0, s1) = s.split_at(k.min(s.len()));
        fill1(d0, s0, f);
        return fill1_widest(d1, s1, f);
    }
    fill1_widest(d, s, f)
}

#[inline(always)]
fn fill1_widest<T: Float, F: Fn(T) -> T>(d: &mut [MaybeUninit<T>], s: &[T], f: &F) {
    #[cfg(target_arch = "x86_64")]
    if has_avx512() {
        // SAFETY: the features were detected just above.
        return unsafe { fill1_avx512(d, s, f) };
    }
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the features were detected just above.
        return unsafe { fill1_avx2(d, s, f) };
    }
    fill1(d, s, f)
}

/// The widest available version of `fill2`, its stores aligned to cache
/// lines.
#[inline(always)]
pub(super) fn fill2_best<T: Float, F: Fn(T, T) -> T + ?Sized>(
    d: &mut [MaybeUninit<T>],
    a: &[T],
    b: &[T],
    f: &F,
) {
    let k = misaligned_head(d.as_ptr(), d.len());
    if k > 0 {
        let (d0, d1) = d.split_at_mut(k);
        let (a0, a1) = a.split_at(k.min(a.len()));
        let (b0, b1) = b.split_at(k.min(b.len()));
        fill2(d0, a0, b0, f);
        return fill2_widest(d1, a1, b1, f);
    }
    fill2_widest(d, a, b, f)
}

#[inline(always)]
fn fill2_widest<T: Float, F: Fn(T, T) -> T + ?Sized>(
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
pub(super) fn fill2<T: Float, F: Fn(T, T) -> T + ?Sized>(
    d: &mut [MaybeUninit<T>],
    a: &[T],
    b: &[T],
    f: &F,
) {
    for ((d, &x), &y) in d.iter_mut().zip(a).zip(b) {
        d.write(f(x, y));
    }
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

/// The widest available version of `update1`, its stores aligned to
/// cache lines.
pub(super) fn update1_best<T: Float, F: Fn(T, T) -> T>(x: &mut [T], a: &[T], f: &F) {
    let k = misaligned_head(x.as_ptr(), x.len());
    if k > 0 {
        let (x0, x1) = x.split_at_mut(k);
        let (a0, a1) = a.split_at(k.min(a.len()));
        update1(x0, a0, f);
        return update1_widest(x1, a1, f);
    }
    update1_widest(x, a, f)
}

#[inline(always)]
fn update1_widest<T: Float, F: Fn(T, T) -> T>(x: &mut [T], a: &[T], f: &F) {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the features were detected just above.
        return unsafe { update1_avx2(x, a, f) };
    }
    update1(x, a, f)
}

/// The widest available version of `update2`, its stores aligned to
/// cache lines.
pub(super) fn update2_best<T: Float, F: Fn(T, T, T) -> T>(x: &mut [T], a: &[T], b: &[T], f: &F) {
    let k = misaligned_head(x.as_ptr(), x.len());
    if k > 0 {
        let (x0, x1) = x.split_at_mut(k);
        let (a0, a1) = a.split_at(k.min(a.len()));
        let (b0, b1) = b.split_at(k.min(b.len()));
        update2(x0, a0, b0, f);
        return update2_widest(x1, a1, b1, f);
    }
    update2_widest(x, a, b, f)
}

#[inline(always)]
fn update2_widest<T: Float, F: Fn(T, T, T) -> T>(x: &mut [T], a: &[T], b: &[T], f: &F) {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the features were detected just above.
        return unsafe { update2_avx2(x, a, b, f) };
    }
    update2(x, a, b, f)
}
