//! The innermost elementwise loops over slices (`fill*` into uninitialised
//! output, `update*` in place), each with an AVX2 + FMA copy (and `fill1`
//! an AVX-512 one) chosen at run time when the CPU has those features.
//! [`Isa`] names the copy; the `*_on` functions take it explicitly, so
//! the tests run every copy the machine has on the same inputs.

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

/// The instruction set a kernel's vector loop runs with: a token that
/// exists only where the CPU has its features ([`Isa::widest`],
/// [`Isa::each`]), so holding an `Isa` is what makes calling the copy
/// compiled for it sound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Isa(Level);

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Level {
    /// Baseline x86-64 (SSE2), or any other architecture.
    Baseline,
    /// AVX2 + FMA ([`has_avx2`]).
    Avx2,
    /// AVX-512 F, VL, DQ with AVX2 + FMA ([`has_avx512`]).
    Avx512,
}

impl Isa {
    /// The plain loops, which every CPU runs.
    pub(crate) const BASELINE: Isa = Isa(Level::Baseline);

    /// The widest instruction set this CPU has.
    #[inline(always)]
    pub(crate) fn widest() -> Isa {
        #[cfg(target_arch = "x86_64")]
        {
            if has_avx512() {
                return Isa(Level::Avx512);
            }
            if has_avx2() {
                return Isa(Level::Avx2);
            }
        }
        Isa::BASELINE
    }

    /// Every instruction set this CPU has, baseline first; prints a note
    /// for each one it lacks (tests skip those copies, they cannot fake
    /// them).
    #[cfg(test)]
    pub(crate) fn each() -> Vec<Isa> {
        let widest = Isa::widest();
        let all = [Level::Baseline, Level::Avx2, Level::Avx512];
        for l in all.iter().filter(|&&l| l > widest.0) {
            eprintln!("note: this CPU lacks {l:?}; its copies of the loops are not tested here");
        }
        all.into_iter()
            .filter(|&l| l <= widest.0)
            .map(Isa)
            .collect()
    }

    /// Whether the AVX-512 copies may run.
    #[inline(always)]
    pub(crate) fn avx512(self) -> bool {
        self.0 >= Level::Avx512
    }

    /// Whether the AVX2 + FMA copies may run.
    #[inline(always)]
    pub(crate) fn avx2(self) -> bool {
        self.0 >= Level::Avx2
    }
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
    fill1_best_on(Isa::widest(), d, s, f)
}

/// [`fill1_best`] with the instruction set given.
#[inline(always)]
pub(crate) fn fill1_best_on<T: Float, F: Fn(T) -> T>(
    isa: Isa,
    d: &mut [MaybeUninit<T>],
    s: &[T],
    f: &F,
) {
    let k = misaligned_head(d.as_ptr(), d.len());
    if k > 0 {
        let (d0, d1) = d.split_at_mut(k);
        let (s0, s1) = s.split_at(k.min(s.len()));
        fill1(d0, s0, f);
        return fill1_on(isa, d1, s1, f);
    }
    fill1_on(isa, d, s, f)
}

/// `fill1`'s copy for `isa`.
#[inline(always)]
pub(crate) fn fill1_on<T: Float, F: Fn(T) -> T>(
    isa: Isa,
    d: &mut [MaybeUninit<T>],
    s: &[T],
    f: &F,
) {
    #[cfg(target_arch = "x86_64")]
    if isa.avx512() {
        // SAFETY: an `Isa` this wide exists only where `has_avx512` held.
        return unsafe { fill1_avx512(d, s, f) };
    }
    #[cfg(target_arch = "x86_64")]
    if isa.avx2() {
        // SAFETY: an `Isa` this wide exists only where `has_avx2` held.
        return unsafe { fill1_avx2(d, s, f) };
    }
    let _ = isa;
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
    fill2_best_on(Isa::widest(), d, a, b, f)
}

/// [`fill2_best`] with the instruction set given.
#[inline(always)]
pub(crate) fn fill2_best_on<T: Float, F: Fn(T, T) -> T + ?Sized>(
    isa: Isa,
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
        return fill2_on(isa, d1, a1, b1, f);
    }
    fill2_on(isa, d, a, b, f)
}

/// `fill2`'s copy for `isa` (the AVX2 one on AVX-512 CPUs too).
#[inline(always)]
fn fill2_on<T: Float, F: Fn(T, T) -> T + ?Sized>(
    isa: Isa,
    d: &mut [MaybeUninit<T>],
    a: &[T],
    b: &[T],
    f: &F,
) {
    #[cfg(target_arch = "x86_64")]
    if isa.avx2() {
        // SAFETY: an `Isa` this wide exists only where `has_avx2` held.
        return unsafe { fill2_avx2(d, a, b, f) };
    }
    let _ = isa;
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
    update1_best_on(Isa::widest(), x, a, f)
}

/// [`update1_best`] with the instruction set given.
pub(crate) fn update1_best_on<T: Float, F: Fn(T, T) -> T>(isa: Isa, x: &mut [T], a: &[T], f: &F) {
    let k = misaligned_head(x.as_ptr(), x.len());
    if k > 0 {
        let (x0, x1) = x.split_at_mut(k);
        let (a0, a1) = a.split_at(k.min(a.len()));
        update1(x0, a0, f);
        return update1_on(isa, x1, a1, f);
    }
    update1_on(isa, x, a, f)
}

/// `update1`'s copy for `isa` (the AVX2 one on AVX-512 CPUs too).
#[inline(always)]
fn update1_on<T: Float, F: Fn(T, T) -> T>(isa: Isa, x: &mut [T], a: &[T], f: &F) {
    #[cfg(target_arch = "x86_64")]
    if isa.avx2() {
        // SAFETY: an `Isa` this wide exists only where `has_avx2` held.
        return unsafe { update1_avx2(x, a, f) };
    }
    let _ = isa;
    update1(x, a, f)
}

/// The widest available version of `update2`, its stores aligned to
/// cache lines.
pub(super) fn update2_best<T: Float, F: Fn(T, T, T) -> T>(x: &mut [T], a: &[T], b: &[T], f: &F) {
    update2_best_on(Isa::widest(), x, a, b, f)
}

/// [`update2_best`] with the instruction set given.
pub(crate) fn update2_best_on<T: Float, F: Fn(T, T, T) -> T>(
    isa: Isa,
    x: &mut [T],
    a: &[T],
    b: &[T],
    f: &F,
) {
    let k = misaligned_head(x.as_ptr(), x.len());
    if k > 0 {
        let (x0, x1) = x.split_at_mut(k);
        let (a0, a1) = a.split_at(k.min(a.len()));
        let (b0, b1) = b.split_at(k.min(b.len()));
        update2(x0, a0, b0, f);
        return update2_on(isa, x1, a1, b1, f);
    }
    update2_on(isa, x, a, b, f)
}

/// `update2`'s copy for `isa` (the AVX2 one on AVX-512 CPUs too).
#[inline(always)]
fn update2_on<T: Float, F: Fn(T, T, T) -> T>(isa: Isa, x: &mut [T], a: &[T], b: &[T], f: &F) {
    #[cfg(target_arch = "x86_64")]
    if isa.avx2() {
        // SAFETY: an `Isa` this wide exists only where `has_avx2` held.
        return unsafe { update2_avx2(x, a, b, f) };
    }
    let _ = isa;
    update2(x, a, b, f)
}
