//! Optimizer updates in place: one pass per parameter over the parameter,
//! its gradient and the optimizer's buffers, each element updated with the
//! arithmetic of torch.optim's single-tensor CPU path, in the same order
//! (so results agree with PyTorch's to the last bit or two in `f32`).
//! Loops are compiled a second time for AVX2 + FMA (chosen at run time;
//! no contraction into FMA, so both copies round identically) and split
//! across threads above [`PARALLEL_THRESHOLD`].
//!
//! ```
//! use nabla_kernels::optim::{sgd, SgdStep};
//! let (mut p, g) = (vec![1.0f32, 2.0], vec![10.0f32, -10.0]);
//! let step = SgdStep { lr: 0.1, momentum: 0.0, dampening: 0.0, weight_decay: 0.0, nesterov: false, first: true };
//! sgd(&mut p, &g, None, &step);
//! assert_eq!(p, vec![0.0, 3.0]);
//! ```

use crate::elementwise::Isa;
use crate::parallel::for_each;
use crate::{Float, PARALLEL_THRESHOLD};
use std::ops::Range;

/// One SGD step's settings (torch.optim.SGD's, `maximize` aside).
#[derive(Clone, Copy, Debug)]
pub struct SgdStep<T> {
    /// Learning rate.
    pub lr: T,
    /// Momentum factor (0: none, and no buffer is read).
    pub momentum: T,
    /// Dampening of the gradient's share of the momentum.
    pub dampening: T,
    /// L2 penalty added to the gradient.
    pub weight_decay: T,
    /// Nesterov momentum.
    pub nesterov: bool,
    /// The first step: the momentum buffer starts as the gradient.
    pub first: bool,
}

/// One Adam or AdamW step's settings, with the bias corrections of this
/// step already computed (as torch does, in `f64`, then rounded to `T`).
#[derive(Clone, Copy, Debug)]
pub struct AdamStep<T> {
    /// `1 − lr·weight_decay` for AdamW's decoupled decay (1: none).
    pub decay: T,
    /// Adam's L2 penalty added to the gradient (0 for AdamW).
    pub l2: T,
    /// `1 − β₁`: the first moment moves this far toward the gradient.
    pub one_minus_beta1: T,
    /// `β₂`.
    pub beta2: T,
    /// `1 − β₂`.
    pub one_minus_beta2: T,
    /// `lr / (1 − β₁ᵗ)`.
    pub step_size: T,
    /// `√(1 − β₂ᵗ)`.
    pub bias_correction2_sqrt: T,
    /// Added to the denominator.
    pub eps: T,
}

/// Elements per piece handed to a thread.
const PIECE: usize = 1 << 14;

/// A pointer that may cross threads: the pieces written through it are
/// disjoint.
#[derive(Clone, Copy)]
struct Ptr<T>(*mut T);
// SAFETY: a `Ptr` only hands out pieces of one `&mut [T]` that `split`
// keeps disjoint (each range goes to one thread), so sharing it is sending
// those pieces' `&mut` to other threads: sound for `T: Send`.
unsafe impl<T: Send> Send for Ptr<T> {}
// SAFETY: as for `Send`.
unsafe impl<T: Send> Sync for Ptr<T> {}

impl<T> Ptr<T> {
    /// # Safety
    /// `r` lies inside the buffer, and no other live slice overlaps it.
    #[allow(clippy::mut_from_ref)]
    unsafe fn piece(&self, r: &Range<usize>) -> &mut [T] {
        debug_assert!(r.start <= r.end);
        // SAFETY: the caller's contract: `r` is inside the buffer the
        // pointer came from, and no other live slice overlaps it.
        unsafe { std::slice::from_raw_parts_mut(self.0.add(r.start), r.len()) }
    }
}

/// Runs `body` over `0..n`, in pieces on several threads when `n` is large.
fn split(n: usize, body: impl Fn(Range<usize>) + Sync) {
    if n < PARALLEL_THRESHOLD {
        body(0..n)
    } else {
        for_each(n.div_ceil(PIECE), |i| {
            body(i * PIECE..((i + 1) * PIECE).min(n))
        })
    }
}

#[track_caller]
fn check_lens(what: &str, n: usize, lens: &[usize]) {
    if lens.iter().any(|&l| l != n) {
        panic!(
            "optim::{what}: the parameter has {n} elements but the gradient or a buffer has {lens:?}"
        )
    }
}

/// Compiles `$plain` (an `#[inline(always)]` loop) a second time for AVX2 +
/// FMA and calls the copy `$isa` allows.
macro_rules! best {
    ($isa:expr, $avx2:ident, $plain:ident, ($($a:ident: $t:ty),*)) => {{
        /// # Safety
        /// The CPU must support AVX2 and FMA.
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2,fma")]
        unsafe fn $avx2<T: Float>($($a: $t),*) {
            $plain($($a),*)
        }
        #[cfg(target_arch = "x86_64")]
        if $isa.avx2() {
            // SAFETY: an `Isa` this wide exists only where `has_avx2` held.
            unsafe { $avx2($($a),*) }
            return;
        }
        $plain($($a),*)
    }};
}

/// One SGD step in place: `p` (and the momentum buffer `buf` when
/// `momentum ≠ 0`) from the gradient `g`.
///
/// ```
/// use nabla_kernels::optim::{sgd, SgdStep};
/// let (mut p, g, mut buf) = (vec![1.0f64], vec![1.0f64], vec![0.5f64]);
/// let s = SgdStep { lr: 0.5, momentum: 0.9, dampening: 0.0, weight_decay: 0.0, nesterov: false, first: false };
/// sgd(&mut p, &g, Some(&mut buf), &s);
/// assert_eq!((p[0], buf[0]), (1.0 - 0.5 * 1.45, 1.45));
/// ```
#[track_caller]
pub fn sgd<T: Float>(p: &mut [T], g: &[T], buf: Option<&mut [T]>, s: &SgdStep<T>) {
    let n = p.len();
    let buf = buf.filter(|_| s.momentum != T::ZERO);
    check_lens("sgd", n, &[g.len(), buf.as_ref().map_or(n, |b| b.len())]);
    let (pp, bp) = (Ptr(p.as_mut_ptr()), buf.map(|b| Ptr(b.as_mut_ptr())));
    let isa = Isa::widest();
    split(n, |r| {
        // SAFETY: `split` hands out disjoint ranges inside `0..n`, and `p`
        // has `n` elements.
        let p = unsafe { pp.piece(&r) };
        // SAFETY: as for `p`: `buf` has `n` elements (`check_lens`).
        let b = bp.as_ref().map(|b| unsafe { b.piece(&r) });
        sgd_on(isa, p, &g[r], b, s)
    })
}

/// One piece of [`sgd`] with `isa`'s copy of the loop.
pub(crate) fn sgd_on<T: Float>(
    isa: Isa,
    p: &mut [T],
    g: &[T],
    b: Option<&mut [T]>,
    s: &SgdStep<T>,
) {
    match b {
        None => best!(isa, plain_avx2, sgd_plain, (p: &mut [T], g: &[T], s: &SgdStep<T>)),
        Some(b) => {
            best!(isa, momentum_avx2, sgd_momentum, (p: &mut [T], g: &[T], b: &mut [T], s: &SgdStep<T>))
        }
    }
}

#[inline(always)]
fn sgd_plain<T: Float>(p: &mut [T], g: &[T], s: &SgdStep<T>) {
    let (lr, wd) = (-s.lr, s.weight_decay);
    if wd == T::ZERO {
        p.iter_mut().zip(g).for_each(|(p, &g)| *p += lr * g);
    } else {
        p.iter_mut()
            .zip(g)
            .for_each(|(p, &g)| *p = *p + lr * (g + wd * *p));
    }
}

#[inline(always)]
fn sgd_momentum<T: Float>(p: &mut [T], g: &[T], b: &mut [T], s: &SgdStep<T>) {
    let (lr, wd, m) = (-s.lr, s.weight_decay, s.momentum);
    let keep = T::ONE - s.dampening;
    for ((p, &g), b) in p.iter_mut().zip(g).zip(b.iter_mut()) {
        let d = if wd == T::ZERO { g } else { g + wd * *p };
        *b = if s.first { d } else { *b * m + keep * d };
        let d = if s.nesterov { d + m * *b } else { *b };
        *p += lr * d;
    }
}

/// One Adam/AdamW step in place: `p` and the moments `m`, `v` from the
/// gradient `g` (torch's order: decay, `m.lerp(g, 1 − β₁)`,
/// `v·β₂ + (1 − β₂)·g²`, `p − step_size · m / (√v / √(1 − β₂ᵗ) + ε)`).
///
/// ```
/// use nabla_kernels::optim::{adam, AdamStep};
/// let (mut p, g, mut m, mut v) = (vec![1.0f64], vec![2.0f64], vec![0.0f64], vec![0.0f64]);
/// let s = AdamStep { decay: 1.0, l2: 0.0, one_minus_beta1: 0.1, beta2: 0.999, one_minus_beta2: 0.001,
///     step_size: 0.1 / 0.1, bias_correction2_sqrt: 0.001f64.sqrt(), eps: 0.0 };
/// adam(&mut p, &g, &mut m, &mut v, &s);
/// assert!((p[0] - (1.0 - 0.1)).abs() < 1e-12); // the first step moves by lr
/// ```
#[track_caller]
pub fn adam<T: Float>(p: &mut [T], g: &[T], m: &mut [T], v: &mut [T], s: &AdamStep<T>) {
    let n = p.len();
    check_lens("adam", n, &[g.len(), m.len(), v.len()]);
    let (pp, mp, vp) = (
        Ptr(p.as_mut_ptr()),
        Ptr(m.as_mut_ptr()),
        Ptr(v.as_mut_ptr()),
    );
    let isa = Isa::widest();
    split(n, |r| {
        // SAFETY: `split` hands out disjoint ranges inside `0..n`, and `p`,
        // `m` and `v` have `n` elements each (`check_lens`).
        let (p, m, v) = unsafe { (pp.piece(&r), mp.piece(&r), vp.piece(&r)) };
        adam_on(isa, p, &g[r], m, v, s)
    })
}

/// One piece of [`adam`] with `isa`'s copy of the loop.
pub(crate) fn adam_on<T: Float>(
    isa: Isa,
    p: &mut [T],
    g: &[T],
    m: &mut [T],
    v: &mut [T],
    s: &AdamStep<T>,
) {
    best!(isa, adam_avx2, adam_plain, (p: &mut [T], g: &[T], m: &mut [T], v: &mut [T], s: &AdamStep<T>))
}

#[inline(always)]
fn adam_plain<T: Float>(p: &mut [T], g: &[T], m: &mut [T], v: &mut [T], s: &AdamStep<T>) {
    let neg = -s.step_size;
    for (((p, &g), m), v) in p.iter_mut().zip(g).zip(m.iter_mut()).zip(v.iter_mut()) {
        let mut x = *p;
        if s.decay != T::ONE {
            x *= s.decay;
        }
        let g = if s.l2 == T::ZERO { g } else { g + s.l2 * x };
        *m = *m + s.one_minus_beta1 * (g - *m);
        *v = *v * s.beta2 + s.one_minus_beta2 * g * g;
        let denom = v.sqrt() / s.bias_correction2_sqrt + s.eps;
        *p = x + neg * (*m / denom);
    }
}
