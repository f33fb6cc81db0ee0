//! The binary elementwise primitives ([`binary_ops!`](crate::binary_ops)).

/// Every broadcasting binary elementwise primitive, in kernel-code order
/// (see the crate docs for the entry format).
///
/// ```
/// macro_rules! names {
///     ($($(#[$doc:meta])* $name:ident $k:ident { $($body:tt)* })*) => {
///         [$(stringify!($name)),*]
///     };
/// }
/// assert!(nabla_ops::binary_ops!(names).contains(&"hypot"));
/// ```
#[macro_export]
macro_rules! binary_ops {
    ($callback:ident $($args:tt)*) => {
        $callback! {
            $($args)*
            /// `a + b` (the `+` operator).
            add Add {
                method: add, func: add,
                kernel: |a, b| a + b,
                cuda: "a + b",
                rule: (custom), reads: shapes,
                example: (2.0, 3.0) => 5.0,
            }
            /// `a - b` (the `-` operator; `nabla::subtract`).
            sub Sub {
                method: sub, func: subtract,
                kernel: |a, b| a - b,
                cuda: "a - b",
                rule: (custom), reads: shapes,
                example: (2.0, 3.0) => -1.0,
            }
            /// `a * b` (the `*` operator; `nabla::multiply`).
            mul Mul {
                method: mul, func: multiply,
                kernel: |a, b| a * b,
                cuda: "a * b",
                rule: (custom), reads: cross,
                example: (2.0, 3.0) => 6.0,
            }
            /// `a / b` (the `/` operator; `nabla::divide`).
            div Div {
                method: div, func: divide,
                kernel: |a, b| a / b,
                cuda: "a / b",
                rule: (|a, b, y| (b.recip(), y.div(b).neg())), reads: all,
                example: (3.0, 2.0) => 1.5,
            }
            /// `a ^ b`; the `b` partial is `y · ln a`, so it needs `a > 0`.
            pow Pow {
                method: pow, func: pow,
                kernel: |a, b| a.powf(b),
                cuda: "pow(a, b)",
                rule: (|a, b, y| (b.mul(&a.pow(&b.add_scalar(-1.0))), y.mul(&a.ln()))), reads: all,
                example: (2.0, 3.0) => 8.0,
            }
            /// Elementwise maximum (NaN propagates); ties split the derivative
            /// evenly between the operands, as in JAX.
            maximum Maximum {
                method: maximum, func: maximum,
                kernel: |a, b| if a > b || a.is_nan() { a } else { b },
                cuda: "(a != a || a > b) ? a : b",
                rule: (|a, b, y| (
                    a.cmp_mask(b, CompareOp::Gt).add(&a.cmp_mask(b, CompareOp::Eq).mul_scalar(0.5)),
                    a.cmp_mask(b, CompareOp::Lt).add(&a.cmp_mask(b, CompareOp::Eq).mul_scalar(0.5))
                )),
                reads: inputs,
                example: (2.0, 3.0) => 3.0,
            }
            /// Elementwise minimum (NaN propagates); ties split the derivative evenly.
            minimum Minimum {
                method: minimum, func: minimum,
                kernel: |a, b| if a < b || a.is_nan() { a } else { b },
                cuda: "(a != a || a < b) ? a : b",
                rule: (|a, b, y| (
                    a.cmp_mask(b, CompareOp::Lt).add(&a.cmp_mask(b, CompareOp::Eq).mul_scalar(0.5)),
                    a.cmp_mask(b, CompareOp::Gt).add(&a.cmp_mask(b, CompareOp::Eq).mul_scalar(0.5))
                )),
                reads: inputs,
                example: (2.0, 3.0) => 2.0,
            }
            /// Four-quadrant arctangent of `a / b`.
            atan2 Atan2 {
                method: atan2, func: atan2,
                kernel: |a, b| a.atan2(b),
                cuda: "atan2(a, b)",
                rule: (|a, b, y| (
                    b.div(&a.square().add(&b.square())),
                    a.neg().div(&a.square().add(&b.square()))
                )),
                reads: inputs,
                example: (0.0, 1.0) => 0.0,
            }
            /// `ln(e^a + e^b)`, without overflow.
            logaddexp LogAddExp {
                method: logaddexp, func: logaddexp,
                kernel: |a, b| {
                    let m = if a > b { a } else { b };
                    if m == T::NEG_INFINITY { m } else { m + (-(a - b).abs()).exp_v().ln_1p_v() }
                },
                cuda: "nabla_logaddexp(a, b)",
                rule: (|a, b, y| (a.sub(y).exp(), b.sub(y).exp())), reads: all,
                example: (0.0, 0.0) => core::f64::consts::LN_2,
            }
            /// `sqrt(a² + b²)`, without overflow.
            hypot Hypot {
                method: hypot, func: hypot,
                kernel: |a, b| a.hypot(b),
                cuda: "hypot(a, b)",
                rule: (|a, b, y| (a.div(y), b.div(y))), reads: all,
                example: (3.0, 4.0) => 5.0,
            }
            /// `a - b · floor(a / b)`: the remainder with the sign of `b`, as
            /// NumPy's `remainder` and Python's `%`.
            remainder Remainder {
                method: remainder, func: remainder,
                kernel: |a, b| {
                    let r = a - b * (a / b).floor();
                    if r != T::ZERO && ((r < T::ZERO) != (b < T::ZERO)) { r + b } else { r }
                },
                cuda: "nabla_remainder(a, b)",
                rule: (|a, b, y| (a.ones_like(), a.div(b).floor().neg())), reads: inputs,
                example: (-1.0, 3.0) => 2.0,
            }
            /// `|a|` with the sign of `b`; no derivative with respect to `b`.
            copysign Copysign {
                method: copysign, func: copysign,
                kernel: |a, b| a.copysign(b),
                cuda: "copysign(a, b)",
                rule: (|a, b, y| (a.signum().mul(&a.ones_like().copysign(b)), b.zeros_like())),
                reads: inputs,
                example: (2.0, -1.0) => -2.0,
            }
        }
    };
}
