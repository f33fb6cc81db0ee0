//! The element trait implemented by `f32` and `f64`.

use std::fmt::{Debug, Display};
use std::iter::Sum;
use std::ops::{Add, AddAssign, Div, Mul, MulAssign, Neg, Sub};

/// A floating-point element type the kernels work on (`f32` or `f64`).
///
/// ```
/// use nabla_kernels::Float;
/// assert_eq!(<f32 as Float>::from_f64(0.5), 0.5f32);
/// ```
pub trait Float:
    Copy
    + Send
    + Sync
    + Debug
    + Display
    + PartialOrd
    + Default
    + Sum
    + 'static
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + AddAssign
    + MulAssign
{
    /// Zero.
    const ZERO: Self;
    /// One.
    const ONE: Self;
    /// Negative infinity (identity of `max`).
    const NEG_INFINITY: Self;
    /// Positive infinity (identity of `min`).
    const INFINITY: Self;
    /// Converts from `f64` (rounding for `f32`).
    fn from_f64(v: f64) -> Self;
    /// Converts to `f64` exactly.
    fn to_f64(self) -> f64;
    /// e^x.
    fn exp(self) -> Self;
    /// Natural logarithm.
    fn ln(self) -> Self;
    /// Sine.
    fn sin(self) -> Self;
    /// Cosine.
    fn cos(self) -> Self;
    /// Tangent.
    fn tan(self) -> Self;
    /// Hyperbolic tangent.
    fn tanh(self) -> Self;
    /// Square root.
    fn sqrt(self) -> Self;
    /// Absolute value.
    fn abs(self) -> Self;
    /// ln(1 + x).
    fn ln_1p(self) -> Self;
    /// e^x - 1.
    fn exp_m1(self) -> Self;
    /// Error function.
    fn erf(self) -> Self;
    /// Integer power.
    fn powi(self, n: i32) -> Self;
    /// Float power.
    fn powf(self, p: Self) -> Self;
    /// Four-quadrant arctangent of `self / other`.
    fn atan2(self, other: Self) -> Self;
    /// Round towards negative infinity.
    fn floor(self) -> Self;
    /// Round towards positive infinity.
    fn ceil(self) -> Self;
    /// Round half away from zero.
    fn round(self) -> Self;
    /// NaN test.
    fn is_nan(self) -> bool;
    /// Computes `f` in `f64` and rounds back: the default of the less
    /// frequent functions below (exact for `f64`, correctly rounded input
    /// and at least as accurate as a native `f32` version for `f32`).
    #[inline(always)]
    fn via_f64(self, f: impl Fn(f64) -> f64) -> Self {
        Self::from_f64(f(self.to_f64()))
    }
    /// Inverse sine.
    fn asin(self) -> Self {
        self.via_f64(f64::asin)
    }
    /// Inverse cosine.
    fn acos(self) -> Self {
        self.via_f64(f64::acos)
    }
    /// Inverse tangent.
    fn atan(self) -> Self {
        self.via_f64(f64::atan)
    }
    /// Hyperbolic sine.
    fn sinh(self) -> Self {
        self.via_f64(f64::sinh)
    }
    /// Hyperbolic cosine.
    fn cosh(self) -> Self {
        self.via_f64(f64::cosh)
    }
    /// Inverse hyperbolic sine.
    fn asinh(self) -> Self {
        self.via_f64(f64::asinh)
    }
    /// Inverse hyperbolic cosine.
    fn acosh(self) -> Self {
        self.via_f64(f64::acosh)
    }
    /// Inverse hyperbolic tangent.
    fn atanh(self) -> Self {
        self.via_f64(f64::atanh)
    }
    /// Base-2 logarithm.
    fn log2(self) -> Self {
        self.via_f64(f64::log2)
    }
    /// Base-10 logarithm.
    fn log10(self) -> Self {
        self.via_f64(f64::log10)
    }
    /// `2^x`.
    fn exp2(self) -> Self {
        self.via_f64(f64::exp2)
    }
    /// Cube root.
    fn cbrt(self) -> Self {
        self.via_f64(f64::cbrt)
    }
    /// Complementary error function.
    fn erfc(self) -> Self {
        self.via_f64(libm::erfc)
    }
    /// `ln |Γ(x)|`.
    fn lgamma(self) -> Self {
        self.via_f64(libm::lgamma)
    }
    /// Digamma (see [`crate::special::digamma`]).
    fn digamma(self) -> Self {
        self.via_f64(crate::special::digamma)
    }
    /// Polygamma of order `n` (see [`crate::special::polygamma`]).
    fn polygamma(self, n: i32) -> Self {
        self.via_f64(|x| crate::special::polygamma(n, x))
    }
    /// `sqrt(self² + other²)` without overflow.
    fn hypot(self, other: Self) -> Self {
        Self::from_f64(self.to_f64().hypot(other.to_f64()))
    }
    /// `|self|` with the sign of `other`.
    fn copysign(self, other: Self) -> Self {
        Self::from_f64(self.to_f64().copysign(other.to_f64()))
    }
    /// `e^x`, vectorisable where the type allows (see [`crate::fastmath`]:
    /// the `*_v` methods of `f32` and `f64` are its functions, within 1 ulp
    /// of the correctly rounded value; those of other types fall back to
    /// the plain methods).
    fn exp_v(self) -> Self {
        self.exp()
    }
    /// `tanh x`, vectorisable where the type allows.
    fn tanh_v(self) -> Self {
        self.tanh()
    }
    /// Sine, vectorisable where the type allows (for `f32`,
    /// [`crate::fastmath::sin_f32`]: within 1 ulp for `|x| < 4.2e8`; for
    /// `f64`, [`crate::fastmath::sin_f64`]: within 1 ulp for `|x| < 2^26`,
    /// the sine of an argument within an ulp of `x` up to `2^51`, NaN
    /// beyond).
    fn sin_v(self) -> Self {
        self.sin()
    }
    /// Cosine, vectorisable where the type allows (for `f32`,
    /// [`crate::fastmath::cos_f32`]: within 1 ulp for `|x| < 4.2e8`; for
    /// `f64`, [`crate::fastmath::cos_f64`], with the ranges of `sin_v`).
    fn cos_v(self) -> Self {
        self.cos()
    }
    /// Natural logarithm, vectorisable where the type allows.
    fn ln_v(self) -> Self {
        self.ln()
    }
    /// `ln(1 + x)`, vectorisable where the type allows.
    fn ln_1p_v(self) -> Self {
        self.ln_1p()
    }
    /// `e^x − 1`, vectorisable where the type allows (for `f64`,
    /// [`crate::fastmath::exp_m1_f64`]).
    fn exp_m1_v(self) -> Self {
        self.exp_m1()
    }
    /// The error function, vectorisable where the type allows.
    fn erf_v(self) -> Self {
        self.erf()
    }
    /// Logistic sigmoid, vectorisable where the type allows.
    fn sigmoid_v(self) -> Self {
        if self >= Self::ZERO {
            Self::ONE / (Self::ONE + (-self).exp())
        } else {
            let e = self.exp();
            e / (Self::ONE + e)
        }
    }
}

macro_rules! impl_float {
    ($t:ty, $erf:path, fast64) => {
        impl_float!(@impl $t, $erf,
            #[inline(always)]
            fn exp_v(self) -> Self {
                crate::fastmath::exp_f64(self)
            }
            #[inline(always)]
            fn exp_m1_v(self) -> Self {
                crate::fastmath::exp_m1_f64(self)
            }
            #[inline(always)]
            fn tanh_v(self) -> Self {
                crate::fastmath::tanh_f64(self)
            }
            #[inline(always)]
            fn sigmoid_v(self) -> Self {
                crate::fastmath::sigmoid_f64(self)
            }
            #[inline(always)]
            fn sin_v(self) -> Self {
                crate::fastmath::sin_f64(self)
            }
            #[inline(always)]
            fn cos_v(self) -> Self {
                crate::fastmath::cos_f64(self)
            }
            #[inline(always)]
            fn ln_v(self) -> Self {
                crate::fastmath::ln_f64(self)
            }
            #[inline(always)]
            fn ln_1p_v(self) -> Self {
                crate::fastmath::ln_1p_f64(self)
            }
        );
    };
    ($t:ty, $erf:path, fast) => {
        impl_float!(@impl $t, $erf,
            #[inline(always)]
            fn exp_v(self) -> Self {
                crate::fastmath::exp_f32(self)
            }
            #[inline(always)]
            fn tanh_v(self) -> Self {
                crate::fastmath::tanh_f32(self)
            }
            #[inline(always)]
            fn sigmoid_v(self) -> Self {
                crate::fastmath::sigmoid_f32(self)
            }
            #[inline(always)]
            fn sin_v(self) -> Self {
                crate::fastmath::sin_f32(self)
            }
            #[inline(always)]
            fn cos_v(self) -> Self {
                crate::fastmath::cos_f32(self)
            }
            #[inline(always)]
            fn ln_v(self) -> Self {
                crate::fastmath::ln_f32(self)
            }
            #[inline(always)]
            fn ln_1p_v(self) -> Self {
                crate::fastmath::ln_1p_f32(self)
            }
            #[inline(always)]
            fn erf_v(self) -> Self {
                crate::fastmath::erf_f32(self)
            }
        );
    };
    (@impl $t:ty, $erf:path, $($extra:item)*) => {
        impl Float for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const NEG_INFINITY: Self = <$t>::NEG_INFINITY;
            const INFINITY: Self = <$t>::INFINITY;
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn exp(self) -> Self {
                <$t>::exp(self)
            }
            #[inline(always)]
            fn ln(self) -> Self {
                <$t>::ln(self)
            }
            #[inline(always)]
            fn sin(self) -> Self {
                <$t>::sin(self)
            }
            #[inline(always)]
            fn cos(self) -> Self {
                <$t>::cos(self)
            }
            #[inline(always)]
            fn tan(self) -> Self {
                <$t>::tan(self)
            }
            #[inline(always)]
            fn tanh(self) -> Self {
                <$t>::tanh(self)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline(always)]
            fn ln_1p(self) -> Self {
                <$t>::ln_1p(self)
            }
            #[inline(always)]
            fn exp_m1(self) -> Self {
                <$t>::exp_m1(self)
            }
            #[inline(always)]
            fn erf(self) -> Self {
                $erf(self)
            }
            #[inline(always)]
            fn powi(self, n: i32) -> Self {
                <$t>::powi(self, n)
            }
            #[inline(always)]
            fn powf(self, p: Self) -> Self {
                <$t>::powf(self, p)
            }
            #[inline(always)]
            fn atan2(self, other: Self) -> Self {
                <$t>::atan2(self, other)
            }
            #[inline(always)]
            fn floor(self) -> Self {
                <$t>::floor(self)
            }
            #[inline(always)]
            fn ceil(self) -> Self {
                <$t>::ceil(self)
            }
            #[inline(always)]
            fn round(self) -> Self {
                <$t>::round(self)
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
            $($extra)*
        }
    };
}

impl_float!(f32, libm::erff, fast);
impl_float!(f64, libm::erf, fast64);
