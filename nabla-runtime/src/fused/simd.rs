//! The building blocks of the fused passes: the SIMD dispatch
//! (`dispatch!`, [`limit_simd`]), a pass's operands as it reads them
//! ([`Operand`], [`Src`]) and its outputs ([`Dest`]), the lane sums
//! ([`accumulate`], [`pairwise`]), and the chain rule of a unary op over a
//! block ([`chain_rule`], what a tape `Link` holds).

use super::lanes::{LANES, Lanes};
use super::region::Kernel;
use crate::Array;
use crate::storage::Host;
use ndarray::IxDyn;

/// Runs a pass body compiled for AVX-512 (F, VL, DQ) or AVX2 + FMA when
/// the CPU has them (the binary targets baseline x86-64), else as
/// compiled. The closures are inlined into the `#[target_feature]`
/// functions, so the body is compiled for those features, not called as
/// baseline code.
macro_rules! dispatch {
    ($body:ident::<$($g:ty),*>($($arg:expr),*)) => {{
        #[cfg(target_arch = "x86_64")]
        {
            /// # Safety
            /// The CPU must have AVX-512 F, VL, DQ, AVX2 and FMA.
            #[target_feature(enable = "avx512f,avx512vl,avx512dq,avx2,fma")]
            unsafe fn wider<F: FnOnce()>(f: F) {
                f()
            }
            /// # Safety
            /// The CPU must have AVX2 and FMA.
            #[target_feature(enable = "avx2,fma")]
            unsafe fn wide<F: FnOnce()>(f: F) {
                f()
            }
            let level = $crate::fused::simd::simd_level();
            if level >= 2 {
                // SAFETY: level 2 means `simd_level` detected all of
                // `wider`'s features on this CPU.
                unsafe { wider(#[inline(always)] || $body::<$($g),*>($($arg),*)) }
            } else if level >= 1 {
                // SAFETY: level 1 or more means `simd_level` detected AVX2
                // and FMA on this CPU.
                unsafe { wide(#[inline(always)] || $body::<$($g),*>($($arg),*)) }
            } else {
                $body::<$($g),*>($($arg),*)
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            $body::<$($g),*>($($arg),*)
        }
    }};
}
pub(crate) use dispatch;

/// The widest instruction set the passes use: the CPU's (2 with the
/// AVX-512 subsets the passes are compiled for, 1 with AVX2 + FMA, 0
/// otherwise), at most the limit set by [`limit_simd`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn simd_level() -> u8 {
    use std::arch::is_x86_feature_detected as has;
    let cpu =
        if has!("avx512f") && has!("avx512vl") && has!("avx512dq") && has!("avx2") && has!("fma") {
            2
        } else if has!("avx2") && has!("fma") {
            1
        } else {
            0
        };
    cpu.min(SIMD_LIMIT.load(std::sync::atomic::Ordering::Relaxed))
}

static SIMD_LIMIT: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(u8::MAX);

/// Caps the instruction set of the fused passes at `level` (0 baseline
/// x86-64, 1 AVX2 + FMA, 2 AVX-512) for the whole process, so that tests
/// can check every compiled copy of a pass on one machine; `u8::MAX`
/// lifts the cap. Results agree at every level bit for bit (nothing is
/// contracted into FMAs; `tests/it/fused/levels.rs`); only speed changes.
///
/// ```
/// #[nabla::differentiable]
/// fn f(x: &nabla::Array) -> nabla::Array {
///     (x.square() * 2.0).sum()
/// }
///
/// fn main() {
///     let x = nabla::Array::from_vec(vec![1.0f64, 2.0, 3.0], &[3]);
///     nabla::fused::limit_simd(0);
///     let baseline = nabla::grad(f)(&x).to_vec::<f64>();
///     nabla::fused::limit_simd(u8::MAX);
///     assert_eq!(baseline, nabla::grad(f)(&x).to_vec::<f64>());
///     assert_eq!(baseline, vec![4.0, 8.0, 12.0]);
/// }
/// ```
#[doc(hidden)]
pub fn limit_simd(level: u8) {
    SIMD_LIMIT.store(level, std::sync::atomic::Ordering::Relaxed);
}

/// Adds the first `len` lanes of `y` into the lane accumulators (a
/// whole block at a constant length, so that it stays in vectors).
#[inline(always)]
pub(crate) fn accumulate<T: Kernel>(acc: &mut [f64; LANES], y: &Lanes<T>, len: usize) {
    if len == LANES {
        for (a, v) in acc.iter_mut().zip(&y.0) {
            *a += nabla_kernels::Float::to_f64(*v);
        }
    } else {
        for (a, v) in acc.iter_mut().zip(&y.0[..len]) {
            *a += nabla_kernels::Float::to_f64(*v);
        }
    }
}

/// The lane accumulators plus a whole block `y` (by value, so that they
/// stay in registers).
#[inline(always)]
pub(crate) fn add_lanes<T: Kernel>(acc: [f64; LANES], y: &Lanes<T>) -> [f64; LANES] {
    std::array::from_fn(|i| acc[i] + nabla_kernels::Float::to_f64(y.0[i]))
}

/// The sum of the lane accumulators, pairwise.
pub(crate) fn pairwise(acc: &[f64]) -> f64 {
    if acc.len() <= 2 {
        return acc.iter().sum();
    }
    let (a, b) = acc.split_at(acc.len() / 2);
    pairwise(a) + pairwise(b)
}

/// Where a pullback pass adds operand `k`'s cotangent: into buffer `buf`
/// from `offset` on. Buffers `0..B` are the arguments' (for operands that
/// are contiguous runs of their argument's elements at the broadcast
/// shape), the others one per remaining operand (`own`), at the broadcast
/// shape.
#[derive(Clone, Copy)]
pub(crate) struct Dest {
    pub buf: usize,
    pub offset: usize,
    pub own: bool,
}

/// One operand of a pass: a contiguous buffer of the broadcast shape (an
/// array's own, or a copy), or one element broadcast everywhere.
pub(crate) enum Operand<T: 'static> {
    Array(Array),
    Copy(Vec<T>),
    Scalar(T),
}

impl<T: Kernel> Operand<T> {
    /// `x` read at the broadcast `shape`: its own buffer when it has that
    /// shape in standard layout, its element when it has one (or is one
    /// element broadcast), else a contiguous broadcast copy.
    pub(crate) fn of(x: &Array, shape: &[usize]) -> Operand<T> {
        let a = T::typed(x).expect("checked dtype");
        if a.len() == 1 || (a.len() > 0 && a.strides().iter().all(|&s| s == 0)) {
            return Operand::Scalar(*a.first().expect("an element"));
        }
        if a.shape() == shape && a.is_standard_layout() {
            return Operand::Array(x.clone());
        }
        if let Some(v) = tiled(a, shape) {
            return Operand::Copy(v);
        }
        let v = a.view();
        let b = v
            .broadcast(IxDyn(shape))
            .expect("shapes broadcast (checked)");
        Operand::Copy(nabla_kernels::elementwise::row_major(&b))
    }

    /// Every operand read at the broadcast `shape` ([`Operand::of`]).
    pub(crate) fn all<const N: usize>(ops: &[Array; N], shape: &[usize]) -> [Operand<T>; N] {
        std::array::from_fn(|k| Operand::of(&ops[k], shape))
    }

    /// The elements of each of `ins` ([`Operand::src`]).
    pub(crate) fn srcs<const N: usize>(ins: &[Operand<T>; N]) -> [Src<'_, T>; N] {
        std::array::from_fn(|k| ins[k].src())
    }

    /// Its elements as a pass reads them.
    pub(crate) fn src(&self) -> Src<'_, T> {
        match self {
            Operand::Array(a) => Src::Slice(
                T::typed(a)
                    .and_then(|h| h.as_slice())
                    .expect("row-major (checked)"),
            ),
            Operand::Copy(v) => Src::Slice(v),
            Operand::Scalar(s) => Src::Scalar(*s),
        }
    }
}

/// `a` broadcast to `shape` when that only repeats its contiguous
/// elements (a bias row over a batch: `a`'s shape, after its leading 1s,
/// is `shape`'s trailing axes), built by whole-row copies.
fn tiled<T: Copy>(a: &Host<T>, shape: &[usize]) -> Option<Vec<T>> {
    let row = a.as_slice()?;
    let own: &[usize] = {
        let lead = a.shape().iter().take_while(|&&d| d == 1).count();
        &a.shape()[lead..]
    };
    if own.len() > shape.len() || own != &shape[shape.len() - own.len()..] || row.is_empty() {
        return None;
    }
    let n: usize = shape.iter().product();
    let mut v = Vec::with_capacity(n);
    for _ in 0..n / row.len() {
        v.extend_from_slice(row);
    }
    Some(v)
}

/// An operand's elements: a buffer of the broadcast shape, or one element.
#[derive(Clone, Copy)]
pub(crate) enum Src<'a, T> {
    Slice(&'a [T]),
    Scalar(T),
}

/// The chain rule `R` of a unary op run over a block, as a tape
/// [`Link`](crate::autograd::chain::Link) keeps it:
/// `t = R::eval(x, y, t)`, [`LANES`] at a time.
pub(crate) fn chain_rule<R: crate::ElementwiseRule, T: Kernel>(x: &[T], y: &[T], t: &mut [T]) {
    dispatch!(chain_body::<R, T>(x, y, t))
}

#[inline(always)]
fn chain_body<R: crate::ElementwiseRule, T: Kernel>(x: &[T], y: &[T], t: &mut [T]) {
    let n = t.len();
    let mut i = 0;
    while i + LANES <= n {
        let xs = Lanes(x[i..i + LANES].try_into().expect("a block"));
        let ys = Lanes(y[i..i + LANES].try_into().expect("a block"));
        let ts = Lanes(t[i..i + LANES].try_into().expect("a block"));
        t[i..i + LANES].copy_from_slice(&R::eval(&xs, &ys, &ts).0);
        i += LANES;
    }
    for j in i..n {
        t[j] = R::eval(&x[j], &y[j], &t[j]);
    }
}
