//! Unary elementwise primitives.
//!
//! Each primitive is a module holding, side by side: `forward` (the
//! kernel), `derivative` (dy/dx elementwise, written with [`Value`] ops so it
//! is differentiable again), and the `jvp` and `vjp` rules built from it.
//! The modules and `Array` methods of the ops declared with a formula in the
//! op registry (`nabla-ops`) are generated here by
//! `unary_modules` (`registry.rs`); `neg` and `square`, whose rules skip
//! the general product, and the internal `affine` and `rdiv` are written
//! out below with the same interface. Batching rule (all of them):
//! elementwise, so the batch axis passes through unchanged.
//!
//! The `jvp` rules are `#[inline(always)]`: a fused forward-mode pass runs
//! them on blocks of lanes, where they must melt into the block's vector
//! code (docs/design.md, "Forward mode").

use crate::registry::unary_modules;
use crate::storage::{float_map, float_slice_map};
use crate::{Array, Value};
use nabla_kernels::elementwise::{CompareOp, UnaryOp};
use nabla_kernels::ops::OpKernels;

/// Runs a unary kernel on a float array.
#[track_caller]
pub(crate) fn unary_forward(x: &Array, op: UnaryOp, name: &str) -> Array {
    if !x.dtype().is_float() {
        not_float(name, x)
    }
    crate::array::on_gpu!(&*x.data, |g| nabla_kernels::cuda::unary(g, op));
    if let Some(y) = float_slice_map!(&*x.data, |s| OpKernels::unary_slice(s, op)) {
        return Array::from_data(y);
    }
    Array::from_data(float_map!(
        &*x.data,
        |a| OpKernels::unary_view(a.view(), op),
        not_float(name, x)
    ))
}

/// `x²`. Written out (not through `unary_primitives!`) so that its
/// derivative `2x` multiplies into the tangent or cotangent in one fused
/// pass ([`crate::primitives::binary::mul_scaled`]) instead of two.
pub mod square {
    use super::*;
    /// Forward: the elementwise kernel.
    ///
    /// ```
    /// use nabla::{primitives::unary::square, Array};
    /// let y = square::forward(&Array::from_vec(vec![-3.0f64, 2.0], &[2]));
    /// assert_eq!(y.to_vec::<f64>(), vec![9.0, 4.0]);
    /// ```
    #[track_caller]
    pub fn forward(x: &Array) -> Array {
        unary_forward(x, UnaryOp::Square(), "square")
    }
    /// dy/dx = 2x.
    ///
    /// ```
    /// use nabla::primitives::unary::square;
    /// assert_eq!(square::derivative(&3.0f64, &9.0), 6.0);
    /// ```
    pub fn derivative<V: Value>(x: &V, _y: &V) -> V {
        x.mul_scalar(2.0)
    }
    /// JVP rule: `ẏ = 2 x ẋ`, one pass.
    ///
    /// ```
    /// use nabla::primitives::unary::square;
    /// assert_eq!(square::jvp(&3.0f64, &9.0, &0.5), 3.0);
    /// ```
    #[inline(always)]
    pub fn jvp<V: Value>(x: &V, _y: &V, dx: &V) -> V {
        dx.mul_scaled(x, 2.0)
    }
    /// VJP rule: `x̄ = 2 x ȳ`, one pass.
    ///
    /// ```
    /// use nabla::{primitives::unary::square, Array};
    /// let x = Array::from_vec(vec![1.0f64, -2.0], &[2]);
    /// let g = square::vjp(&x, &x.square(), &Array::from_vec(vec![1.0f64, 10.0], &[2]));
    /// assert_eq!(g.to_vec::<f64>(), vec![2.0, -40.0]);
    /// ```
    pub fn vjp<V: Value>(x: &V, _y: &V, ct: &V) -> V {
        ct.mul_scaled(x, 2.0)
    }
}

impl Array {
    /// `x²`.
    ///
    /// ```
    /// # use nabla::Array;
    /// assert_eq!(Array::scalar(3.0f64).square().item(), 9.0);
    /// ```
    #[track_caller]
    pub fn square(&self) -> Array {
        apply(self, "square", square::forward, square::vjp::<Array>)
    }

    /// The natural logarithm, `ln x`: the same operation as [`Array::ln`]
    /// (and `nabla::log`), under the name NumPy, JAX and PyTorch use.
    ///
    /// ```
    /// # use nabla::Array;
    /// let x = Array::from_vec(vec![1.0f64, std::f64::consts::E], &[2]);
    /// assert_eq!(x.log().to_vec::<f64>(), x.ln().to_vec::<f64>());
    /// ```
    #[track_caller]
    pub fn log(&self) -> Array {
        self.ln()
    }
}

#[track_caller]
pub(crate) fn not_float(op: &str, x: &Array) -> ! {
    panic!(
        "{op}: expected an f32 or f64 array, got {} with shape {:?}; convert it with .cast(DType::F32) or .cast(DType::F64)",
        x.dtype(),
        x.shape()
    )
}

/// Forward plus tape recording, shared by every unary primitive.
#[track_caller]
pub(crate) fn apply(
    x: &Array,
    name: &'static str,
    forward: impl FnOnce(&Array) -> Array,
    vjp: impl FnOnce(&Array, &Array, &Array) -> Array + Send + 'static,
) -> Array {
    apply_with(x, name, forward, vjp, |_, _| None)
}

/// [`apply`] for an op whose VJP is the elementwise chain rule `R`: the
/// tape node keeps `R` with the saved input and output, so that a chain
/// of such ops runs backward as one pass (`autograd::chain`).
#[track_caller]
pub(crate) fn apply_linked<R: crate::ElementwiseRule + 'static>(
    x: &Array,
    name: &'static str,
    forward: impl FnOnce(&Array) -> Array,
    vjp: impl FnOnce(&Array, &Array, &Array) -> Array + Send + 'static,
) -> Array {
    apply_with(x, name, forward, vjp, |x, y| {
        Some(crate::autograd::chain::Link {
            x: x.detach(),
            y: y.detach(),
            f32: crate::fused::simd::chain_rule::<R, f32>,
            f64: crate::fused::simd::chain_rule::<R, f64>,
        })
    })
}

#[track_caller]
fn apply_with(
    x: &Array,
    name: &'static str,
    forward: impl FnOnce(&Array) -> Array,
    vjp: impl FnOnce(&Array, &Array, &Array) -> Array + Send + 'static,
    link: impl FnOnce(&Array, &Array) -> Option<crate::autograd::chain::Link>,
) -> Array {
    let y = forward(x);
    // Checked here, not in the kernel: `forward` is called through a
    // closure, which would hide the caller's line.
    crate::array::nans::check(name, &[x], &y);
    crate::autograd::unary_with(
        y,
        name,
        x,
        |y| {
            let (xr, yr) = (x.detach(), y.detach());
            move |ct| vjp(&xr, &yr, ct)
        },
        link,
    )
}

nabla_ops::unary_ops!(unary_modules);

/// `-x`. Linear: its rules negate the tangent or cotangent directly (no
/// constant `-1` array is built).
pub mod neg {
    use super::*;
    /// Forward: the elementwise kernel.
    ///
    /// ```
    /// use nabla::{primitives::unary::neg, Array};
    /// let y = neg::forward(&Array::from_vec(vec![1.0f64, -2.0], &[2]));
    /// assert_eq!(y.to_vec::<f64>(), vec![-1.0, 2.0]);
    /// ```
    #[track_caller]
    pub fn forward(x: &Array) -> Array {
        unary_forward(x, UnaryOp::Neg(), "neg")
    }
    /// dy/dx = -1.
    ///
    /// ```
    /// use nabla::{primitives::unary::neg, Array, DType};
    /// let x = Array::zeros(&[2], DType::F32);
    /// assert_eq!(neg::derivative(&x, &x).to_vec::<f32>(), vec![-1.0, -1.0]);
    /// ```
    pub fn derivative<V: Value>(x: &V, _y: &V) -> V {
        x.full_like(-1.0)
    }
    /// JVP rule: `ẏ = -ẋ`.
    ///
    /// ```
    /// use nabla::primitives::unary::neg;
    /// assert_eq!(neg::jvp(&1.0f64, &-1.0, &0.5), -0.5);
    /// ```
    #[inline(always)]
    pub fn jvp<V: Value>(_x: &V, _y: &V, dx: &V) -> V {
        dx.neg()
    }
    /// VJP rule: `x̄ = -ȳ`.
    ///
    /// ```
    /// use nabla::primitives::unary::neg;
    /// assert_eq!(neg::vjp(&1.0f64, &-1.0, &2.0), -2.0);
    /// ```
    pub fn vjp<V: Value>(_x: &V, _y: &V, ct: &V) -> V {
        ct.neg()
    }
}

impl Array {
    /// `-x`.
    ///
    /// ```
    /// # use nabla::Array;
    /// assert_eq!(Array::scalar(2.0f64).neg().item(), -2.0);
    /// ```
    #[track_caller]
    pub fn neg(&self) -> Array {
        apply(self, "neg", neg::forward, neg::vjp::<Array>)
    }
}

/// `a·x + b` with constants `a`, `b` (scalar arithmetic: `2.0 * x + 1.0`).
pub mod affine {
    use super::*;
    /// Forward.
    ///
    /// ```
    /// use nabla::{primitives::unary::affine, Array};
    /// let y = affine::forward(&Array::from_vec(vec![0.0f64, 1.0], &[2]), 2.0, 1.0);
    /// assert_eq!(y.to_vec::<f64>(), vec![1.0, 3.0]);
    /// ```
    #[track_caller]
    pub fn forward(x: &Array, a: f64, b: f64) -> Array {
        unary_forward(x, UnaryOp::Affine(a, b), "affine")
    }
    /// JVP rule: `a · ẋ`.
    ///
    /// ```
    /// use nabla::primitives::unary::affine;
    /// assert_eq!(affine::jvp(2.0, &0.5f64), 1.0);
    /// ```
    #[inline(always)]
    pub fn jvp<V: Value>(a: f64, dx: &V) -> V {
        dx.mul_scalar(a)
    }
    /// VJP rule: `a · ȳ`.
    ///
    /// ```
    /// use nabla::primitives::unary::affine;
    /// assert_eq!(affine::vjp(2.0, &3.0f64), 6.0);
    /// ```
    pub fn vjp<V: Value>(a: f64, ct: &V) -> V {
        ct.mul_scalar(a)
    }
}

/// `c / x` for a constant `c`.
pub mod rdiv {
    use super::*;
    /// Forward.
    ///
    /// ```
    /// use nabla::{primitives::unary::rdiv, Array};
    /// let y = rdiv::forward(&Array::from_vec(vec![2.0f64, 4.0], &[2]), 1.0);
    /// assert_eq!(y.to_vec::<f64>(), vec![0.5, 0.25]);
    /// ```
    #[track_caller]
    pub fn forward(x: &Array, c: f64) -> Array {
        unary_forward(x, UnaryOp::RDiv(c), "rdiv")
    }
    /// `-c / x²`.
    ///
    /// ```
    /// use nabla::primitives::unary::rdiv;
    /// assert_eq!(rdiv::derivative(&2.0f64, 8.0), -2.0);
    /// ```
    pub fn derivative<V: Value>(x: &V, c: f64) -> V {
        x.square().recip().mul_scalar(-c)
    }
    /// JVP rule.
    ///
    /// ```
    /// use nabla::primitives::unary::rdiv;
    /// assert_eq!(rdiv::jvp(&2.0f64, 8.0, &0.5), -1.0);
    /// ```
    #[inline(always)]
    pub fn jvp<V: Value>(x: &V, c: f64, dx: &V) -> V {
        dx.mul(&derivative(x, c))
    }
    /// VJP rule.
    ///
    /// ```
    /// use nabla::primitives::unary::rdiv;
    /// assert_eq!(rdiv::vjp(&2.0f64, 8.0, &3.0), -6.0);
    /// ```
    pub fn vjp<V: Value>(x: &V, c: f64, ct: &V) -> V {
        ct.mul(&derivative(x, c))
    }
}

impl Array {
    /// `a·x + b` in one pass (what `a * x + b` with scalar `a`, `b` computes).
    ///
    /// ```
    /// # use nabla::Array;
    /// assert_eq!(Array::scalar(2.0f64).affine(3.0, 1.0).item(), 7.0);
    /// ```
    #[track_caller]
    pub fn affine(&self, a: f64, b: f64) -> Array {
        apply(
            self,
            "affine",
            |x| affine::forward(x, a, b),
            move |_x, _y, ct| affine::vjp(a, ct),
        )
    }

    /// `c / x` for a constant `c`.
    ///
    /// ```
    /// # use nabla::Array;
    /// assert_eq!(Array::scalar(4.0f64).rdiv(2.0).item(), 0.5);
    /// ```
    #[track_caller]
    pub fn rdiv(&self, c: f64) -> Array {
        apply(
            self,
            "rdiv",
            |x| rdiv::forward(x, c),
            move |x, _y, ct| rdiv::vjp(x, c, ct),
        )
    }
}
