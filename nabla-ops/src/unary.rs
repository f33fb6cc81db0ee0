//! The unary elementwise primitives ([`unary_ops!`](crate::unary_ops)).

/// Every unary elementwise primitive, in kernel-code order (see the crate
/// docs for the entry format).
///
/// ```
/// macro_rules! names {
///     ($($(#[$doc:meta])* $name:ident $k:ident ($($p:ident: $t:ty),*) { $($body:tt)* })*) => {
///         [$(stringify!($name)),*]
///     };
/// }
/// assert!(nabla_ops::unary_ops!(names).contains(&"digamma"));
/// ```
#[macro_export]
macro_rules! unary_ops {
    ($callback:ident $($args:tt)*) => {
        $callback! {
            $($args)*
            /// `-x` (`nabla::negative`).
            neg Neg() {
                method: neg, func: negative,
                kernel: |v| -v,
                cuda: "-v",
                rule: (custom), reads: none,
                example: (2.0) => -2.0,
            }
            /// `e^x`.
            exp Exp() {
                method: exp, func: exp,
                kernel: |v| v.exp_v(),
                cuda: "exp(v)",
                rule: (|x, y| y.clone()), reads: y,
                example: (0.0) => 1.0,
            }
            /// Natural logarithm (`nabla::log`).
            log Ln() {
                method: ln, func: log,
                kernel: |v| v.ln_v(),
                cuda: "log(v)",
                rule: (|x, y| x.recip()), reads: x,
                example: (1.0) => 0.0,
            }
            /// Sine.
            sin Sin() {
                method: sin, func: sin,
                kernel: |v| v.sin_v(),
                cuda: "sin(v)",
                rule: (|x, y| x.cos()), reads: x,
                example: (0.0) => 0.0,
            }
            /// Cosine.
            cos Cos() {
                method: cos, func: cos,
                kernel: |v| v.cos_v(),
                cuda: "cos(v)",
                rule: (|x, y| x.sin(), scale -1.0), reads: x,
                example: (0.0) => 1.0,
            }
            /// Tangent.
            tan Tan() {
                method: tan, func: tan,
                kernel: |v| v.tan(),
                cuda: "tan(v)",
                rule: (|x, y| y.square().add_scalar(1.0)), reads: y,
                example: (0.0) => 0.0,
            }
            /// Hyperbolic tangent.
            tanh Tanh() {
                method: tanh, func: tanh,
                kernel: |v| v.tanh_v(),
                cuda: "tanh(v)",
                rule: (|x, y| y.square().neg().add_scalar(1.0)), reads: y,
                example: (0.0) => 0.0,
            }
            /// Logistic sigmoid `1 / (1 + e^-x)`.
            sigmoid Sigmoid() {
                method: sigmoid, func: sigmoid,
                kernel: |v| v.sigmoid_v(),
                cuda: "one / (one + exp(-v))",
                rule: (|x, y| y.mul(&y.neg().add_scalar(1.0))), reads: y,
                example: (0.0) => 0.5,
            }
            /// `max(x, 0)`; the derivative at 0 is 0 (as in JAX).
            relu Relu() {
                method: relu, func: relu,
                kernel: |v| if v > T::ZERO { v } else { T::ZERO },
                cuda: "v > zero ? v : zero",
                rule: (|x, y| x.cmp_mask(&x.zeros_like(), CompareOp::Gt)), reads: x,
                example: (-1.0) => 0.0,
            }
            /// Square root.
            sqrt Sqrt() {
                method: sqrt, func: sqrt,
                kernel: |v| v.sqrt(),
                cuda: "sqrt(v)",
                rule: (|x, y| y.recip(), scale 0.5), reads: y,
                example: (4.0) => 2.0,
            }
            /// `1 / sqrt(x)`.
            rsqrt Rsqrt() {
                method: rsqrt, func: rsqrt,
                kernel: |v| T::ONE / v.sqrt(),
                cuda: "rsqrt(v)",
                rule: (|x, y| y.div(x), scale -0.5), reads: xy,
                example: (4.0) => 0.5,
            }
            /// Absolute value; the derivative at 0 is 0.
            abs Abs() {
                method: abs, func: abs,
                kernel: |v| v.abs(),
                cuda: "fabs(v)",
                rule: (|x, y| x.signum()), reads: x,
                example: (-2.0) => 2.0,
            }
            /// `x²`.
            square Square() {
                method: square, func: square,
                kernel: |v| v * v,
                cuda: "v * v",
                rule: (custom), reads: x,
                example: (3.0) => 9.0,
            }
            /// `1 / x` (`nabla::reciprocal`).
            reciprocal Recip() {
                method: recip, func: reciprocal,
                kernel: |v| T::ONE / v,
                cuda: "one / v",
                rule: (|x, y| y.square().neg()), reads: y,
                example: (4.0) => 0.25,
            }
            /// `ln(1 + x)` (`nabla::log1p`).
            log1p Ln1p() {
                method: ln_1p, func: log1p,
                kernel: |v| v.ln_1p_v(),
                cuda: "log1p(v)",
                rule: (|x, y| x.add_scalar(1.0).recip()), reads: x,
                example: (0.0) => 0.0,
            }
            /// `e^x - 1` (`nabla::expm1`).
            expm1 ExpM1() {
                method: exp_m1, func: expm1,
                kernel: |v| v.exp_m1_v(),
                cuda: "expm1(v)",
                rule: (|x, y| y.add_scalar(1.0)), reads: y,
                example: (0.0) => 0.0,
            }
            /// Error function.
            erf Erf() {
                method: erf, func: erf,
                kernel: |v| v.erf_v(),
                cuda: "erf(v)",
                rule: (|x, y| x.square().neg().exp(), scale core::f64::consts::FRAC_2_SQRT_PI),
                reads: x,
                example: (0.0) => 0.0,
            }
            /// Sign: -1, 0 or 1 (`nabla::sign`); zero derivative.
            sign Sign() {
                method: signum, func: sign,
                kernel: |v| if v == T::ZERO || v.is_nan() { v } else { T::ONE.copysign(v) },
                cuda: "v > zero ? one : (v < zero ? -one : v)",
                rule: (|x, y| x.zeros_like()), reads: x,
                example: (-3.0) => -1.0,
            }
            /// Round down; zero derivative.
            floor Floor() {
                method: floor, func: floor,
                kernel: |v| v.floor(),
                cuda: "floor(v)",
                rule: (|x, y| x.zeros_like()), reads: x,
                example: (1.5) => 1.0,
            }
            /// Round up; zero derivative.
            ceil Ceil() {
                method: ceil, func: ceil,
                kernel: |v| v.ceil(),
                cuda: "ceil(v)",
                rule: (|x, y| x.zeros_like()), reads: x,
                example: (1.5) => 2.0,
            }
            /// Round half away from zero; zero derivative.
            round Round() {
                method: round, func: round,
                kernel: |v| v.round(),
                cuda: "round(v)",
                rule: (|x, y| x.zeros_like()), reads: x,
                example: (2.5) => 3.0,
            }
            /// `x^n` for an integer exponent `n`.
            powi Powi(n: i32) {
                method: powi, func: powi,
                kernel: |v| match n { 0 => T::ONE, 1 => v, 2 => v * v, 3 => v * v * v, _ => v.powi(n) },
                cuda: "(int)p == 2 ? v * v : ((int)p == 3 ? v * v * v : pow(v, (T)(int)p))",
                rule: (|x, y| if n == 0 { x.zeros_like() } else { x.powi(n - 1).mul_scalar(n as f64) }),
                reads: x,
                example: (2.0, 3) => 8.0,
            }
            /// `x^p` for a float exponent `p`.
            powf Powf(p: f64) {
                method: powf, func: powf,
                kernel: |v| v.powf(T::from_f64(p)),
                cuda: "pow(v, (T)p)",
                rule: (|x, y| if p == 0.0 { x.zeros_like() } else { x.powf(p - 1.0).mul_scalar(p) }),
                reads: x,
                example: (4.0, 0.5) => 2.0,
            }
            /// Clamps into `[lo, hi]`; the derivative is 1 strictly inside, 0 outside.
            clip Clip(lo: f64, hi: f64) {
                method: clip, func: clip,
                kernel: |v| {
                    // Two selects on `v` (not nested branches), so blocks vectorise.
                    let (lo, hi) = (T::from_f64(lo), T::from_f64(hi));
                    let upper = if v > hi { hi } else { v };
                    if v < lo { lo } else { upper }
                },
                cuda: "v < (T)p ? (T)p : (v > (T)q ? (T)q : v)",
                rule: (|x, y| x.cmp_mask(&x.full_like(lo), CompareOp::Gt).mul(&x.cmp_mask(&x.full_like(hi), CompareOp::Lt))),
                reads: x,
                example: (3.0, -1.0, 1.0) => 1.0,
            }
            /// Inverse sine (`nabla::arcsin`).
            arcsin Asin() {
                method: asin, func: arcsin,
                kernel: |v| v.asin(),
                cuda: "asin(v)",
                rule: (|x, y| x.square().neg().add_scalar(1.0).rsqrt()), reads: x,
                example: (0.0) => 0.0,
            }
            /// Inverse cosine (`nabla::arccos`).
            arccos Acos() {
                method: acos, func: arccos,
                kernel: |v| v.acos(),
                cuda: "acos(v)",
                rule: (|x, y| x.square().neg().add_scalar(1.0).rsqrt(), scale -1.0), reads: x,
                example: (1.0) => 0.0,
            }
            /// Inverse tangent (`nabla::arctan`).
            arctan Atan() {
                method: atan, func: arctan,
                kernel: |v| v.atan(),
                cuda: "atan(v)",
                rule: (|x, y| x.square().add_scalar(1.0).recip()), reads: x,
                example: (0.0) => 0.0,
            }
            /// Hyperbolic sine.
            sinh Sinh() {
                method: sinh, func: sinh,
                kernel: |v| v.sinh(),
                cuda: "sinh(v)",
                rule: (|x, y| x.cosh()), reads: x,
                example: (0.0) => 0.0,
            }
            /// Hyperbolic cosine.
            cosh Cosh() {
                method: cosh, func: cosh,
                kernel: |v| v.cosh(),
                cuda: "cosh(v)",
                rule: (|x, y| x.sinh()), reads: x,
                example: (0.0) => 1.0,
            }
            /// Inverse hyperbolic sine (`nabla::arcsinh`).
            arcsinh Asinh() {
                method: asinh, func: arcsinh,
                kernel: |v| v.asinh(),
                cuda: "asinh(v)",
                rule: (|x, y| x.square().add_scalar(1.0).rsqrt()), reads: x,
                example: (0.0) => 0.0,
            }
            /// Inverse hyperbolic cosine (`nabla::arccosh`), for `x ≥ 1`.
            arccosh Acosh() {
                method: acosh, func: arccosh,
                kernel: |v| v.acosh(),
                cuda: "acosh(v)",
                rule: (|x, y| x.square().add_scalar(-1.0).rsqrt()), reads: x,
                example: (1.0) => 0.0,
            }
            /// Inverse hyperbolic tangent (`nabla::arctanh`).
            arctanh Atanh() {
                method: atanh, func: arctanh,
                kernel: |v| v.atanh(),
                cuda: "atanh(v)",
                rule: (|x, y| x.square().neg().add_scalar(1.0).recip()), reads: x,
                example: (0.0) => 0.0,
            }
            /// Base-2 logarithm.
            log2 Log2() {
                method: log2, func: log2,
                kernel: |v| v.log2(),
                cuda: "log2(v)",
                rule: (|x, y| x.recip(), scale core::f64::consts::LOG2_E), reads: x,
                example: (8.0) => 3.0,
            }
            /// Base-10 logarithm.
            log10 Log10() {
                method: log10, func: log10,
                kernel: |v| v.log10(),
                cuda: "log10(v)",
                rule: (|x, y| x.recip(), scale core::f64::consts::LOG10_E), reads: x,
                example: (100.0) => 2.0,
            }
            /// `2^x`.
            exp2 Exp2() {
                method: exp2, func: exp2,
                kernel: |v| v.exp2(),
                cuda: "exp2(v)",
                rule: (|x, y| y.clone(), scale core::f64::consts::LN_2), reads: y,
                example: (3.0) => 8.0,
            }
            /// Cube root (defined for negative `x` too).
            cbrt Cbrt() {
                method: cbrt, func: cbrt,
                kernel: |v| v.cbrt(),
                cuda: "cbrt(v)",
                rule: (|x, y| y.square().recip(), scale 1.0 / 3.0), reads: y,
                example: (27.0) => 3.0,
            }
            /// Complementary error function `1 - erf(x)`, accurate for large `x`.
            erfc Erfc() {
                method: erfc, func: erfc,
                kernel: |v| v.erfc(),
                cuda: "erfc(v)",
                rule: (|x, y| x.square().neg().exp(), scale -core::f64::consts::FRAC_2_SQRT_PI),
                reads: x,
                example: (0.0) => 1.0,
            }
            /// `ln |Γ(x)|`.
            lgamma Lgamma() {
                method: lgamma, func: lgamma,
                kernel: |v| v.lgamma(),
                cuda: "lgamma(v)",
                rule: (|x, y| x.digamma()), reads: x,
                example: (1.0) => 0.0,
            }
            /// The digamma function `ψ(x) = d/dx ln Γ(x)`.
            digamma Digamma() {
                method: digamma, func: digamma,
                kernel: |v| v.digamma(),
                cuda: "nabla_digamma(v)",
                rule: (|x, y| x.polygamma(1)), reads: x,
                example: (1.0) => -0.5772156649015329,
            }
            /// The polygamma function `ψ⁽ⁿ⁾(x)`, the `n`-th derivative of
            /// digamma, for `n ≥ 1` (`nabla::polygamma(&x, n)`; JAX writes
            /// `polygamma(n, x)`).
            polygamma Polygamma(n: i32) {
                method: polygamma, func: polygamma,
                kernel: |v| v.polygamma(n),
                cuda: "nabla_polygamma((int)p, v)",
                rule: (|x, y| x.polygamma(n.saturating_add(1))), reads: x,
                example: (1.0, 1) => 1.6449340668482264,
            }
            /// `ln(sigmoid(x)) = -softplus(-x)`, stable for large `|x|`.
            log_sigmoid LogSigmoid() {
                method: log_sigmoid, func: log_sigmoid,
                kernel: |v| (if v < T::ZERO { v } else { T::ZERO }) - (-v.abs()).exp_v().ln_1p_v(),
                cuda: "(v < zero ? v : zero) - log1p(exp(-fabs(v)))",
                rule: (|x, y| x.neg().sigmoid()), reads: x,
                example: (0.0) => -core::f64::consts::LN_2,
            }
            /// Mish, `x · tanh(softplus(x))`.
            mish Mish() {
                method: mish, func: mish,
                kernel: |v| v * ((if v > T::ZERO { v } else { T::ZERO }) + (-v.abs()).exp_v().ln_1p_v()).tanh_v(),
                cuda: "v * tanh((v > zero ? v : zero) + log1p(exp(-fabs(v))))",
                rule: (|x, y| {
                    // tanh(sp) + x · sigmoid(x) · (1 - tanh²(sp)), sp = softplus(x).
                    let t = x.neg().log_sigmoid().neg().tanh();
                    t.add(&x.mul(&x.sigmoid()).mul(&t.square().neg().add_scalar(1.0)))
                }),
                reads: x,
                example: (0.0) => 0.0,
            }
            /// ELU with `alpha = 1`: `x` for `x > 0`, `e^x - 1` otherwise.
            elu Elu() {
                method: elu, func: elu,
                kernel: |v| if v > T::ZERO { v } else { v.exp_m1_v() },
                cuda: "v > zero ? v : expm1(v)",
                rule: (|x, y| x.minimum(&x.zeros_like()).exp()), reads: x,
                example: (2.0) => 2.0,
            }
            /// `x` for `x ≥ 0`, `slope · x` otherwise (`nabla::leaky_relu(&x, 0.01)`).
            leaky_relu LeakyRelu(slope: f64) {
                method: leaky_relu, func: leaky_relu,
                kernel: |v| if v >= T::ZERO { v } else { T::from_f64(slope) * v },
                cuda: "v >= zero ? v : (T)p * v",
                rule: (|x, y| x.cmp_mask(&x.zeros_like(), CompareOp::Ge).mul_scalar(1.0 - slope).add_scalar(slope)),
                reads: x,
                example: (-2.0, 0.1) => -0.2,
            }
            /// Clamps into `[-1, 1]`; the derivative is 1 strictly inside, 0 outside.
            hard_tanh HardTanh() {
                method: hard_tanh, func: hard_tanh,
                kernel: |v| {
                    let upper = if v > T::ONE { T::ONE } else { v };
                    if v < -T::ONE { -T::ONE } else { upper }
                },
                cuda: "v < -one ? -one : (v > one ? one : v)",
                rule: (|x, y| x.cmp_mask(&x.full_like(-1.0), CompareOp::Gt).mul(&x.cmp_mask(&x.full_like(1.0), CompareOp::Lt))),
                reads: x,
                example: (3.0) => 1.0,
            }
            /// Normalised sinc, `sin(πx) / (πx)`, 1 at 0. Its derivative is 0
            /// at exactly 0; so is the second derivative there (a masked
            /// formula), where the true value is `-π²/3`.
            sinc Sinc() {
                method: sinc, func: sinc,
                kernel: |v| if v == T::ZERO { T::ONE } else {
                    let t = T::from_f64(core::f64::consts::PI) * v;
                    t.sin_v() / t
                },
                cuda: "v == zero ? one : sin((T)3.141592653589793 * v) / ((T)3.141592653589793 * v)",
                rule: (|x, y| {
                    // (cos(πx) - sinc(x)) / x, at x + [x = 0] and masked to 0 there.
                    let zero = x.cmp_mask(&x.zeros_like(), CompareOp::Eq);
                    let safe = x.add(&zero);
                    let pix = safe.mul_scalar(core::f64::consts::PI);
                    pix.cos().sub(&pix.sin().div(&pix)).div(&safe).mul(&zero.neg().add_scalar(1.0))
                }),
                reads: x,
                example: (0.0) => 1.0,
            }
            /// Softsign, `x / (1 + |x|)` (`jax.nn.soft_sign`).
            soft_sign SoftSign() {
                method: soft_sign, func: soft_sign,
                kernel: |v| v / (T::ONE + v.abs()),
                cuda: "v / (one + fabs(v))",
                rule: (|x, y| x.abs().add_scalar(1.0).square().recip()), reads: x,
                example: (1.0) => 0.5,
            }
        }
    };
}
