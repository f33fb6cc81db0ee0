//! Linear algebra with derivatives (`jax.numpy.linalg`, `torch.linalg`):
//! [`solve`], [`triangular_solve`], [`inv`], [`det`], [`slogdet`],
//! [`cholesky`], [`eigh`], [`eigvalsh`], [`qr`], [`trace`], [`diagonal`]
//! and [`norm`](crate::norm), over `[.., m, n]` arrays whose leading axes
//! are a batch, in f32 and f64.
//!
//! Each factorisation is a primitive (a library-internal
//! [`custom_op`](nabla_macros::custom_op): `faer` on the CPU through
//! `nabla_kernels::linalg`) whose JVP and VJP rules are written with value
//! operations, among them the other primitives here — so `hessian`,
//! `jacfwd ∘ jacrev` and the rest differentiate the rules again, and every
//! op batches under `vmap`. Multi-output factorisations (`eigh`, `qr`) are
//! one primitive with a packed output, sliced by a `#[differentiable]`
//! wrapper.
//!
//! Conventions follow JAX: `cholesky` and `eigh` read the symmetric part
//! `(a + aᵀ) / 2` (so their gradients are symmetric), `triangular_solve`
//! reads one triangle. Failures are values, not panics: a singular matrix
//! solves and inverts to non-finite values, `det` is 0 and `slogdet`'s
//! sign 0 with log `-inf`; a matrix that is not positive definite has an
//! all-NaN Cholesky factor; eigenvector derivatives are infinite where
//! eigenvalues repeat (they are not defined there), eigenvalue derivatives
//! ([`eigvalsh`]) stay finite. Arrays on a GPU are
//! factorised on the host (one copy each way).
//!
//! ```
//! use nabla::{Array, linalg};
//! let a = Array::from_vec(vec![4.0f64, 1.0, 1.0, 3.0], &[2, 2]);
//! let b = Array::from_vec(vec![1.0f64, 2.0], &[2]);
//! let x = linalg::solve(&a, &b);
//! assert!((a.matmul(&x) - &b).abs().max().item() < 1e-12);
//! assert!((linalg::det(&a).item() - 11.0).abs() < 1e-12);
//! ```

mod diag;
mod eigen;
mod lu;
mod orthogonal;
mod triangular;

pub use crate::composite::norms::norm;
pub use diag::{diagonal, trace};
pub use eigen::{eigh, eigh_packed, eigvalsh};
pub use lu::{det, det_sign, inv, logabsdet, slogdet, solve, solve_square};
pub use orthogonal::{qr, qr_packed};
pub use triangular::{cholesky, triangular_solve};

use crate::{Array, ArrayValue, Device};

/// `xᵀ` over the last two axes.
fn mt<V: ArrayValue>(x: &V) -> V {
    let nd = x.ndim();
    let mut perm: Vec<usize> = (0..nd).collect();
    perm.swap(nd - 2, nd - 1);
    x.permute(&perm)
}

/// `(x + xᵀ) / 2` over the last two axes.
fn sym<V: ArrayValue>(x: &V) -> V {
    x.add(&mt(x)).mul_scalar(0.5)
}

/// A constant `[n, n]` matrix with entries `f(i, j)`, in `like`'s dtype
/// and on its device (broadcasts against `[.., n, n]`).
fn pattern<V: ArrayValue>(like: &V, n: usize, f: impl Fn(usize, usize) -> f64) -> V {
    let v: Vec<f64> = (0..n * n).map(|p| f(p / n, p % n)).collect();
    let m = Array::from_vec(v, &[n, n])
        .cast(like.dtype())
        .to_device(like.device());
    like.lift(&m)
}

/// Rows `lo..hi` of the last-but-one axis.
fn rows<V: ArrayValue>(x: &V, lo: usize, hi: usize) -> V {
    let nd = x.ndim();
    let s: Vec<ndarray::Slice> = (0..nd)
        .map(|a| {
            if a == nd - 2 {
                ndarray::Slice::from(lo..hi)
            } else {
                ndarray::Slice::from(..)
            }
        })
        .collect();
    x.slice(&s)
}

/// Columns `lo..hi` of the last axis.
fn cols<V: ArrayValue>(x: &V, lo: usize, hi: usize) -> V {
    let nd = x.ndim();
    let s: Vec<ndarray::Slice> = (0..nd)
        .map(|a| {
            if a == nd - 1 {
                ndarray::Slice::from(lo..hi)
            } else {
                ndarray::Slice::from(..)
            }
        })
        .collect();
    x.slice(&s)
}

/// The sum over the last two axes.
fn sum2<V: ArrayValue>(x: &V) -> V {
    let nd = x.ndim();
    x.sum_axes(&[nd - 2, nd - 1], false)
}

/// `x` with two length-1 axes appended (a per-matrix scalar that
/// broadcasts against `[.., n, n]`).
fn per_matrix<V: ArrayValue>(x: &V) -> V {
    let mut s = x.shape_vec().to_vec();
    s.extend([1, 1]);
    x.reshape(&s)
}

/// A batch rule for two-operand ops: the unbatched operand gains the batch
/// axis by broadcasting, then the op runs once on the stacked operands.
fn both_batched<V: ArrayValue>(a: &V, b: &V, batched: [bool; 2]) -> (V, V) {
    let n = if batched[0] {
        a.shape_vec()[0]
    } else {
        b.shape_vec()[0]
    };
    let lift = |x: &V, is: bool| {
        if is {
            x.clone()
        } else {
            let mut s = vec![n];
            s.extend(x.shape_vec().iter().copied());
            x.broadcast_to(&s)
        }
    };
    (lift(a, batched[0]), lift(b, batched[1]))
}

/// Panics unless `a` is a float `[.., n, n]` array.
#[track_caller]
fn check_square(op: &str, a: &Array) {
    let s = a.shape();
    assert!(
        s.len() >= 2 && s[s.len() - 1] == s[s.len() - 2],
        "linalg::{op}: a must be square matrices [.., n, n], got shape {s:?}; pass a with two equal last axes"
    );
    if !a.dtype().is_float() {
        crate::primitives::unary::not_float(op, a);
    }
}

/// Panics unless `b` `[.., n, k]` fits `a` `[.., n, n]` with equal batch
/// axes and dtype.
#[track_caller]
fn check_rhs(op: &str, a: &Array, b: &Array) {
    check_square(op, a);
    let (sa, sb) = (a.shape(), b.shape());
    assert!(
        sb.len() == sa.len()
            && sb[..sb.len() - 2] == sa[..sa.len() - 2]
            && sb[sb.len() - 2] == sa[sa.len() - 1],
        "linalg::{op}: b {sb:?} must be [.., n, k] with a's batch axes for a {sa:?} \
         (linalg::solve broadcasts batch axes and takes vectors; this primitive does not)"
    );
    crate::primitives::binary::check_dtypes(op, a, b);
}

/// Runs `f` on host copies of `xs` when any is on a GPU (the result goes
/// back to the first operand's device), on `xs` themselves otherwise.
fn on_host(xs: &[&Array], f: impl FnOnce(&[Array]) -> Array) -> Array {
    let dev = xs[0].device();
    if xs.iter().all(|x| x.device() == Device::Cpu) {
        let v: Vec<Array> = xs.iter().map(|x| (*x).clone()).collect();
        return f(&v);
    }
    let v: Vec<Array> = xs.iter().map(|x| x.to_device(Device::Cpu)).collect();
    f(&v).to_device(dev)
}
