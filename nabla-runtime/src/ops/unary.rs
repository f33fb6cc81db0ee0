//! Unary elementwise primitives.
//!
//! Each primitive is a module holding, side by side: `forward` (the CPU
//! kernel), `derivative` (dy/dx elementwise, written with [`Value`] ops so it
//! is differentiable again), and the `jvp` and `vjp` rules built from it.
//! Batching rule (all of them): elementwise, so the batch axis passes
//! through unchanged.

use crate::autograd::unary_node;
use crate::dtype::float_map;
use crate::{Array, Value};
use nabla_kernels::elementwise::{CompareOp, UnaryOp, unary as kernel};

/// Runs a unary kernel on a float array.
#[track_caller]
pub(crate) fn unary_forward(x: &Array, op: UnaryOp, name: &str) -> Array {
    if !x.dtype().is_float() {
        not_float(name, x)
    }
    crate::dtype::on_gpu!(&*x.data, |g| nabla_kernels::cuda::unary(g, op));
    Array::from_data(float_map!(
        &*x.data,
        |a| kernel(a.view(), op),
        not_float(name, x)
    ))
}

/// `x²`. Written out (not through `unary_primitives!`) so that its
/// derivative `2x` multiplies into the tangent or cotangent in one fused
/// pass ([`crate::ops::binary::mul_scaled`]) instead of two.
pub mod square {
    use super::*;
    /// Forward: the elementwise kernel.
    #[track_caller]
    pub fn forward(x: &Array) -> Array {
        unary_forward(x, UnaryOp::Square, "square")
    }
    /// dy/dx = 2x.
    pub fn derivative<V: Value>(x: &V, _y: &V) -> V {
        x.mul_scalar(2.0)
    }
    /// JVP rule: `ẏ = 2 x ẋ`, one pass.
    pub fn jvp<V: Value>(x: &V, _y: &V, dx: &V) -> V {
        dx.mul_scaled(x, 2.0)
    }
    /// VJP rule: `x̄ = 2 x ȳ`, one pass.
    pub fn vjp<V: Value>(x: &V, _y: &V, ct: &V) -> V {
        ct.mul_scaled(x, 2.0)
    }
}

impl Array {
    /// `x²`.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::scalar(3.0f64).square().item(), 9.0);
    /// ```
    #[track_caller]
    pub fn square(&self) -> Array {
        apply(self, "square", square::forward, square::vjp::<Array>)
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
    let y = forward(x);
    unary_node(y, name, x, |y| {
        let (xr, yr) = (x.detach(), y.detach());
        move |ct| vjp(&xr, &yr, ct)
    })
}

/// A unary rule's constant factor: 1 unless given.
macro_rules! scale {
    () => {
        1.0
    };
    ($c:expr) => {
        $c
    };
}

macro_rules! unary_primitives {
    ($(
        $(#[$doc:meta])*
        $name:ident = $kernel:expr, method $method:ident, d/dx |$x:ident, $y:ident| $d:expr $(, scaled $c:expr)? $(=> $from_x:ident)?;
    )*) => {
        $(
            $(#[$doc])*
            pub mod $name {
                use super::*;
                /// Forward: the elementwise kernel.
                #[track_caller]
                pub fn forward(x: &Array) -> Array {
                    unary_forward(x, $kernel, stringify!($name))
                }
                /// A constant factor of dy/dx, applied in the same pass as
                /// the product with the tangent or cotangent (`cos`: −1).
                const SCALE: f64 = scale!($($c)?);
                /// dy/dx without [`SCALE`].
                #[allow(unused_variables)]
                fn unscaled<V: Value>($x: &V, $y: &V) -> V {
                    $d
                }
                /// dy/dx elementwise, from the input `x` and output `y`.
                pub fn derivative<V: Value>(x: &V, y: &V) -> V {
                    let d = unscaled(x, y);
                    if SCALE == 1.0 { d } else { d.mul_scalar(SCALE) }
                }
                /// `t · dy/dx` from `(x, y, t)`: the JVP and the VJP, one
                /// elementwise rule, fused into one pass on arrays
                /// ([`Value::fused_rule`]).
                pub struct Chain;
                impl crate::ElementwiseRule for Chain {
                    fn eval<V: Value>(x: &V, y: &V, t: &V) -> V {
                        let d = unscaled(x, y);
                        if SCALE == 1.0 { t.mul(&d) } else { t.mul_scaled(&d, SCALE) }
                    }
                }
                /// JVP rule: `ẏ = ẋ · dy/dx`.
                pub fn jvp<V: Value>(x: &V, y: &V, dx: &V) -> V {
                    V::fused_rule::<Chain>(x, y, dx)
                }
                /// VJP rule: `x̄ = ȳ · dy/dx`.
                pub fn vjp<V: Value>(x: &V, y: &V, ct: &V) -> V {
                    V::fused_rule::<Chain>(x, y, ct)
                }
                $(
                    /// [`vjp`] without the output: this derivative reads
                    /// only `x` (marked `=> from_x` beside its formula), so
                    /// an output-only tail can skip computing `y`.
                    pub fn vjp_from_x<V: Value>(x: &V, ct: &V) -> V {
                        let _ = stringify!($from_x);
                        V::fused_rule::<Chain>(x, x, ct)
                    }
                )?
            }
        )*

        impl Array {
            $(
                $(#[$doc])*
                #[track_caller]
                pub fn $method(&self) -> Array {
                    apply(self, stringify!($name), $name::forward, $name::vjp::<Array>)
                }
            )*
        }
    };
}

unary_primitives! {
    /// `e^x`.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::scalar(0.0f64).exp().item(), 1.0);
    /// ```
    exp = UnaryOp::Exp, method exp, d/dx |x, y| y.clone();
    /// Natural logarithm (`nabla::log`).
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::scalar(1.0f64).ln().item(), 0.0);
    /// ```
    log = UnaryOp::Ln, method ln, d/dx |x, y| x.recip() => from_x;
    /// Sine.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::scalar(0.0f64).sin().item(), 0.0);
    /// ```
    sin = UnaryOp::Sin, method sin, d/dx |x, y| x.cos() => from_x;
    /// Cosine.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::scalar(0.0f64).cos().item(), 1.0);
    /// ```
    cos = UnaryOp::Cos, method cos, d/dx |x, y| x.sin(), scaled -1.0 => from_x;
    /// Tangent.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::scalar(0.0f64).tan().item(), 0.0);
    /// ```
    tan = UnaryOp::Tan, method tan, d/dx |x, y| y.square().add_scalar(1.0);
    /// Hyperbolic tangent.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::scalar(0.0f64).tanh().item(), 0.0);
    /// ```
    tanh = UnaryOp::Tanh, method tanh, d/dx |x, y| y.square().neg().add_scalar(1.0);
    /// Logistic sigmoid `1 / (1 + e^-x)`.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::scalar(0.0f64).sigmoid().item(), 0.5);
    /// ```
    sigmoid = UnaryOp::Sigmoid, method sigmoid, d/dx |x, y| y.mul(&y.neg().add_scalar(1.0));
    /// `max(x, 0)`; the derivative at 0 is 0 (as in JAX).
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::scalar(-1.0f64).relu().item(), 0.0);
    /// ```
    relu = UnaryOp::Relu, method relu, d/dx |x, y| x.cmp_mask(&x.zeros_like(), CompareOp::Gt) => from_x;
    /// Square root.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::scalar(4.0f64).sqrt().item(), 2.0);
    /// ```
    sqrt = UnaryOp::Sqrt, method sqrt, d/dx |x, y| y.recip().mul_scalar(0.5);
    /// `1 / sqrt(x)`.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::scalar(4.0f64).rsqrt().item(), 0.5);
    /// ```
    rsqrt = UnaryOp::Rsqrt, method rsqrt, d/dx |x, y| y.div(x).mul_scalar(-0.5);
    /// Absolute value; the derivative at 0 is 0.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::scalar(-2.0f64).abs().item(), 2.0);
    /// ```
    abs = UnaryOp::Abs, method abs, d/dx |x, y| x.signum() => from_x;
    /// `1 / x` (`nabla::reciprocal`).
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::scalar(4.0f64).recip().item(), 0.25);
    /// ```
    reciprocal = UnaryOp::Recip, method recip, d/dx |x, y| y.square().neg();
    /// `ln(1 + x)` (`nabla::log1p`).
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::scalar(0.0f64).ln_1p().item(), 0.0);
    /// ```
    log1p = UnaryOp::Ln1p, method ln_1p, d/dx |x, y| x.add_scalar(1.0).recip() => from_x;
    /// `e^x - 1` (`nabla::expm1`).
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::scalar(0.0f64).exp_m1().item(), 0.0);
    /// ```
    expm1 = UnaryOp::ExpM1, method exp_m1, d/dx |x, y| y.add_scalar(1.0);
    /// Error function.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::scalar(0.0f64).erf().item(), 0.0);
    /// ```
    erf = UnaryOp::Erf, method erf, d/dx |x, y| x.square().neg().exp().mul_scalar(std::f64::consts::FRAC_2_SQRT_PI) => from_x;
    /// Sign: -1, 0 or 1 (`nabla::sign`); zero derivative.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::scalar(-3.0f64).signum().item(), -1.0);
    /// ```
    sign = UnaryOp::Sign, method signum, d/dx |x, y| x.zeros_like();
    /// Round down; zero derivative.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::scalar(1.5f64).floor().item(), 1.0);
    /// ```
    floor = UnaryOp::Floor, method floor, d/dx |x, y| x.zeros_like();
    /// Round up; zero derivative.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::scalar(1.5f64).ceil().item(), 2.0);
    /// ```
    ceil = UnaryOp::Ceil, method ceil, d/dx |x, y| x.zeros_like();
    /// Round half away from zero; zero derivative.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::scalar(2.5f64).round().item(), 3.0);
    /// ```
    round = UnaryOp::Round, method round, d/dx |x, y| x.zeros_like();
}

/// `-x`. Linear: its rules negate the tangent or cotangent directly (no
/// constant `-1` array is built).
pub mod neg {
    use super::*;
    /// Forward: the elementwise kernel.
    #[track_caller]
    pub fn forward(x: &Array) -> Array {
        unary_forward(x, UnaryOp::Neg, "neg")
    }
    /// dy/dx = -1.
    pub fn derivative<V: Value>(x: &V, _y: &V) -> V {
        x.full_like(-1.0)
    }
    /// JVP rule: `ẏ = -ẋ`.
    pub fn jvp<V: Value>(_x: &V, _y: &V, dx: &V) -> V {
        dx.neg()
    }
    /// VJP rule: `x̄ = -ȳ`.
    pub fn vjp<V: Value>(_x: &V, _y: &V, ct: &V) -> V {
        ct.neg()
    }
}

impl Array {
    /// `-x`.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::scalar(2.0f64).neg().item(), -2.0);
    /// ```
    #[track_caller]
    pub fn neg(&self) -> Array {
        apply(self, "neg", neg::forward, neg::vjp::<Array>)
    }
}

/// `x^n` for an integer `n`.
pub mod powi {
    use super::*;
    /// Forward.
    #[track_caller]
    pub fn forward(x: &Array, n: i32) -> Array {
        unary_forward(x, UnaryOp::Powi(n), "powi")
    }
    /// `n · x^(n-1)`.
    pub fn derivative<V: Value>(x: &V, n: i32) -> V {
        if n == 0 {
            x.zeros_like()
        } else {
            x.powi(n - 1).mul_scalar(n as f64)
        }
    }
    /// JVP rule.
    pub fn jvp<V: Value>(x: &V, n: i32, dx: &V) -> V {
        dx.mul(&derivative(x, n))
    }
    /// VJP rule.
    pub fn vjp<V: Value>(x: &V, n: i32, ct: &V) -> V {
        ct.mul(&derivative(x, n))
    }
}

/// `x^p` for a float exponent `p`.
pub mod powf {
    use super::*;
    /// Forward.
    #[track_caller]
    pub fn forward(x: &Array, p: f64) -> Array {
        unary_forward(x, UnaryOp::Powf(p), "powf")
    }
    /// `p · x^(p-1)`.
    pub fn derivative<V: Value>(x: &V, p: f64) -> V {
        if p == 0.0 {
            x.zeros_like()
        } else {
            x.powf(p - 1.0).mul_scalar(p)
        }
    }
    /// JVP rule.
    pub fn jvp<V: Value>(x: &V, p: f64, dx: &V) -> V {
        dx.mul(&derivative(x, p))
    }
    /// VJP rule.
    pub fn vjp<V: Value>(x: &V, p: f64, ct: &V) -> V {
        ct.mul(&derivative(x, p))
    }
}

/// `a·x + b` with constants `a`, `b` (scalar arithmetic: `2.0 * x + 1.0`).
pub mod affine {
    use super::*;
    /// Forward.
    #[track_caller]
    pub fn forward(x: &Array, a: f64, b: f64) -> Array {
        unary_forward(x, UnaryOp::Affine(a, b), "affine")
    }
    /// JVP rule: `a · ẋ`.
    pub fn jvp<V: Value>(a: f64, dx: &V) -> V {
        dx.mul_scalar(a)
    }
    /// VJP rule: `a · ȳ`.
    pub fn vjp<V: Value>(a: f64, ct: &V) -> V {
        ct.mul_scalar(a)
    }
}

/// `c / x` for a constant `c`.
pub mod rdiv {
    use super::*;
    /// Forward.
    #[track_caller]
    pub fn forward(x: &Array, c: f64) -> Array {
        unary_forward(x, UnaryOp::RDiv(c), "rdiv")
    }
    /// `-c / x²`.
    pub fn derivative<V: Value>(x: &V, c: f64) -> V {
        x.square().recip().mul_scalar(-c)
    }
    /// JVP rule.
    pub fn jvp<V: Value>(x: &V, c: f64, dx: &V) -> V {
        dx.mul(&derivative(x, c))
    }
    /// VJP rule.
    pub fn vjp<V: Value>(x: &V, c: f64, ct: &V) -> V {
        ct.mul(&derivative(x, c))
    }
}

/// Clamp into `[lo, hi]`; the derivative is 1 strictly inside, 0 outside.
pub mod clip {
    use super::*;
    /// Forward.
    #[track_caller]
    pub fn forward(x: &Array, lo: f64, hi: f64) -> Array {
        unary_forward(x, UnaryOp::Clip(lo, hi), "clip")
    }
    /// 1 where `lo < x < hi`, else 0.
    pub fn derivative<V: Value>(x: &V, lo: f64, hi: f64) -> V {
        x.cmp_mask(&x.full_like(lo), CompareOp::Gt)
            .mul(&x.cmp_mask(&x.full_like(hi), CompareOp::Lt))
    }
    /// JVP rule.
    pub fn jvp<V: Value>(x: &V, lo: f64, hi: f64, dx: &V) -> V {
        dx.mul(&derivative(x, lo, hi))
    }
    /// VJP rule.
    pub fn vjp<V: Value>(x: &V, lo: f64, hi: f64, ct: &V) -> V {
        ct.mul(&derivative(x, lo, hi))
    }
}

impl Array {
    /// `x^n` for an integer exponent.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::scalar(2.0f64).powi(3).item(), 8.0);
    /// ```
    #[track_caller]
    pub fn powi(&self, n: i32) -> Array {
        apply(
            self,
            "powi",
            |x| powi::forward(x, n),
            move |x, _y, ct| powi::vjp(x, n, ct),
        )
    }

    /// `x^p` for a float exponent.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::scalar(4.0f64).powf(0.5).item(), 2.0);
    /// ```
    #[track_caller]
    pub fn powf(&self, p: f64) -> Array {
        apply(
            self,
            "powf",
            |x| powf::forward(x, p),
            move |x, _y, ct| powf::vjp(x, p, ct),
        )
    }

    /// `a·x + b` in one pass (what `a * x + b` with scalar `a`, `b` computes).
    ///
    /// ```
    /// # use nabla_runtime::Array;
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
    /// # use nabla_runtime::Array;
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

    /// Clamps into `[lo, hi]`.
    ///
    /// ```
    /// # use nabla_runtime::Array;
    /// assert_eq!(Array::from_vec(vec![-2.0f64, 0.5, 3.0], &[3]).clip(-1.0, 1.0).to_vec::<f64>(), vec![-1.0, 0.5, 1.0]);
    /// ```
    #[track_caller]
    pub fn clip(&self, lo: f64, hi: f64) -> Array {
        apply(
            self,
            "clip",
            |x| clip::forward(x, lo, hi),
            move |x, _y, ct| clip::vjp(x, lo, hi, ct),
        )
    }
}
