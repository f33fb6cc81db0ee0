//! The op registry (`nabla-ops`) expanded into the runtime.
//!
//! Each macro here, and `value_decls!` (`vocab/value.rs`) and
//! `lane_methods!` (`fused/lanes.rs`) beside their users, is a callback
//! for `nabla_ops::unary_ops!` or `nabla_ops::binary_ops!`; the file that
//! holds the generated items invokes it (`nabla_ops::unary_ops!(value_methods dual)` inside `impl
//! Value`, and so on). From the one declaration of an elementwise op they
//! make:
//!
//! | callback | where | what |
//! |---|---|---|
//! | `value_decls decl` | `vocab/value.rs` | the [`Value`](crate::Value) method |
//! | `value_decls scalar` | `vocab/value.rs` | its `f32`/`f64` implementation (the kernel's scalar formula) |
//! | `value_methods array` | `primitives/array_value.rs` | `Value for Array` (calls the `Array` method) |
//! | `value_methods dual` | `interp/dual.rs` | `Value for Dual<V>` (the op's JVP rule) |
//! | `value_methods batched` | `interp/batched.rs` | `Value for Batched<V>` (elementwise batching) |
//! | `dyn_methods dyn` | `dynamic/value.rs` (macro in `dynamic/methods.rs`) | `Value for Dyn` (the op at the innermost transform) |
//! | `dyn_methods rev` | `dynamic/rev_value.rs` | `Value for Rev` (records the op's VJP rule) |
//! | `dyn_methods staged` | `dynamic/staged_value.rs` | `Value for Staged` (appends the op to a recorded program) |
//! | `lane_methods lanes` | `fused/lanes.rs` | `Value for Lanes<T>` (a block of elements) |
//! | `sym_methods` | `interp/gpu_sym.rs` | `Value for Sym` (CUDA C of the op) |
//! | `unary_modules`, `binary_modules` | `primitives/{unary,binary}.rs` | the rule module: forward, derivative, JVP, VJP |
//! | `unary_modules`, `binary_modules` | `primitives/{unary,binary}.rs` | the `Array` method (forward + tape) |
//! | `free_fns` | `functions.rs` | `nabla::<jax name>` |
//! | `entries` | `entry.rs` | the entry points generated code calls |
//! | `tail_entries` | `entry/tail.rs` | output-only-tail entries of the ops whose derivative never reads `y` |
//!
//! An op whose `rule` is `(custom)` gets the `Value` methods and the free
//! function; its rule module, `Array` method, entry points and tail entry
//! are hand-written beside the generated ones, with the same signatures.

/// The `Value` methods of every op, in one of three forms: `array`,
/// `dual`, `batched` (`dynamic/methods.rs` has the forms of the run-time
/// transforms' values; the trait's declarations and the `f32`/`f64` forms
/// are `value_decls!`, the blocks' `lane_methods!`).
macro_rules! value_methods {
    ($form:ident $($entries:tt)*) => {
        $crate::vocab::value::each_method!(value_methods $form $($entries)*);
    };
    // Unary ops carry a (possibly empty) parameter list; binary ops none.
    (@array $(#[$doc:meta])* $name:ident $kind:ident [$($p:ident: $pt:ty),*] $method:ident, ($($q:ident),*)) => {
        #[track_caller]
        fn $method(&self $(, $p: $pt)*) -> Self {
            Array::$method(self $(, $p)*)
        }
    };
    (@array $(#[$doc:meta])* $name:ident $kind:ident [] $method:ident,) => {
        #[track_caller]
        fn $method(&self, o: &Self) -> Self {
            Array::$method(self, o)
        }
    };
    (@dual $(#[$doc:meta])* $name:ident $kind:ident [$($p:ident: $pt:ty),*] $method:ident, ($($q:ident),*)) => {
        #[inline]
        fn $method(&self $(, $p: $pt)*) -> Self {
            self.unary(self.primal.$method($($p),*), |x, y, dx| {
                $crate::primitives::unary::$name::jvp(x, y $(, $p)*, dx)
            })
        }
    };
    (@dual $(#[$doc:meta])* $name:ident $kind:ident [] $method:ident,) => {
        #[inline]
        fn $method(&self, o: &Self) -> Self {
            self.binary(o, self.primal.$method(&o.primal), $crate::primitives::binary::$name::jvp)
        }
    };
    (@batched $(#[$doc:meta])* $name:ident $kind:ident [$($p:ident: $pt:ty),*] $method:ident, ($($q:ident),*)) => {
        fn $method(&self $(, $p: $pt)*) -> Self {
            self.map(|v| v.$method($($p),*))
        }
    };
    (@batched $(#[$doc:meta])* $name:ident $kind:ident [] $method:ident,) => {
        fn $method(&self, o: &Self) -> Self {
            self.binary(o, |a, b| a.$method(b))
        }
    };
}
pub(crate) use value_methods;

/// A runnable doc example of a unary op: `Array::scalar(x).method(params)`
/// or `nabla::func(&x, params)` is `out`.
macro_rules! unary_example {
    (method $method:ident ($x:literal $(, $a:literal)*) => $out:expr) => {
        concat!(
            "\n```\n# use nabla::Array;\nlet y = Array::scalar(",
            stringify!($x), "f64).", stringify!($method), "(", $(stringify!($a), ", ",)* ");\n",
            "assert!((y.item() - (", stringify!($out), ")).abs() < 1e-12);\n```"
        )
    };
    (func $func:ident ($x:literal $(, $a:literal)*) => $out:expr) => {
        concat!(
            "\n```\nlet y = nabla::functions::", stringify!($func), "(&", stringify!($x),
            "f64", $(", ", stringify!($a),)* ");\n",
            "assert!((y - (", stringify!($out), ")).abs() < 1e-12);\n```"
        )
    };
    (method2 $method:ident ($a:literal, $b:literal) => $out:expr) => {
        concat!(
            "\n```\n# use nabla::Array;\nlet y = Array::scalar(", stringify!($a), "f64).",
            stringify!($method), "(&Array::scalar(", stringify!($b), "f64));\n",
            "assert!((y.item() - (", stringify!($out), ")).abs() < 1e-12);\n```"
        )
    };
    (func2 $func:ident ($a:literal, $b:literal) => $out:expr) => {
        concat!(
            "\n```\nlet y = nabla::functions::", stringify!($func), "(&", stringify!($a),
            "f64, &", stringify!($b), "f64);\n",
            "assert!((y - (", stringify!($out), ")).abs() < 1e-12);\n```"
        )
    };
}
pub(crate) use unary_example;

/// Runnable doc examples of the items of a unary op's rule module
/// (`primitives::unary::<name>`), at the op's registry example `x` (and
/// parameters `a`): the forward gives the example's output, the
/// derivative matches the tape's gradient of the `Array` method, and the
/// rules are the derivative times the tangent or cotangent.
macro_rules! rule_example {
    (forward $name:ident $method:ident (($x:literal $(, $a:literal)*) => $out:expr)) => {
        concat!(
            "\n```\nuse nabla::{primitives::unary::", stringify!($name), " as op, Array};\n",
            "let y = op::forward(&Array::scalar(", stringify!($x), "f64)", $(", ", stringify!($a),)* ");\n",
            "assert!((y.item() - (", stringify!($out), ")).abs() < 1e-12);\n```"
        )
    };
    (derivative $name:ident $method:ident (($x:literal $(, $a:literal)*) => $out:expr)) => {
        concat!(
            "\n```\nuse nabla::{primitives::unary::", stringify!($name), " as op, Array};\n",
            "let x = Array::scalar(", stringify!($x), "f64).requires_grad();\n",
            "let y = x.", stringify!($method), "(", $(stringify!($a), ", ",)* ");\n",
            "y.backward(); // through the tape's VJP rule\n",
            "let d = op::derivative(&x.detach(), &y.detach()", $(", ", stringify!($a),)* ");\n",
            "assert_eq!(d.item(), x.grad().item());\n```"
        )
    };
    (chain $name:ident $method:ident (($x:literal $(, $a:literal)*) => $out:expr)) => {
        concat!(
            "\n```\nuse nabla::{primitives::unary::", stringify!($name), " as op, ElementwiseRule, Value};\n",
            "let x = ", stringify!($x), "f64;\n",
            "let y = Value::", stringify!($method), "(&x", $(", ", stringify!($a),)* ");\n",
            "assert_eq!(op::Chain::eval(&x, &y, &2.0), 2.0 * op::derivative(&x, &y));\n```"
        )
    };
    (vjp_from_x $name:ident $method:ident (($x:literal $(, $a:literal)*) => $out:expr)) => {
        concat!(
            "\n```\nuse nabla::{primitives::unary::", stringify!($name), " as op, Value};\n",
            "let x = ", stringify!($x), "f64;\n",
            "let y = Value::", stringify!($method), "(&x", $(", ", stringify!($a),)* ");\n",
            "assert_eq!(op::vjp_from_x(&x, ", $(stringify!($a), ", ",)* "&2.0), op::vjp(&x, &y, ",
            $(stringify!($a), ", ",)* "&2.0));\n```"
        )
    };
    ($rule:ident $name:ident $method:ident (($x:literal $(, $a:literal)*) => $out:expr)) => {
        concat!(
            "\n```\nuse nabla::{primitives::unary::", stringify!($name), " as op, Value};\n",
            "let x = ", stringify!($x), "f64;\n",
            "let y = Value::", stringify!($method), "(&x", $(", ", stringify!($a),)* ");\n",
            "let d = op::derivative(&x, &y", $(", ", stringify!($a),)* ");\n",
            "assert_eq!(op::", stringify!($rule), "(&x, &y, ", $(stringify!($a), ", ",)* "&2.0), 2.0 * d);\n```"
        )
    };
}
pub(crate) use rule_example;

/// The free function of every op, with its JAX/NumPy name.
macro_rules! free_fns {
    (unary $(
        $(#[$doc:meta])*
        $name:ident $kind:ident ($($p:ident: $pt:ty),*) {
            method: $method:ident, func: $func:ident,
            kernel: |$v:ident| $kernel:expr,
            cuda: $cuda:literal,
            rule: $rule:tt, reads: $reads:ident,
            example: $ex:tt => $out:expr,
        }
    )*) => {
        $(
            $(#[$doc])*
            #[doc = $crate::registry::unary_example!(func $func $ex => $out)]
            #[track_caller]
            #[inline]
            pub fn $func<V: Value>(x: &V $(, $p: $pt)*) -> V {
                x.$method($($p),*)
            }
        )*
    };
    (binary $(
        $(#[$doc:meta])*
        $name:ident $kind:ident {
            method: $method:ident, func: $func:ident,
            kernel: |$a:ident, $b:ident| $kernel:expr,
            cuda: $cuda:literal,
            rule: $rule:tt, reads: $reads:ident,
            example: $ex:tt => $out:expr,
        }
    )*) => {
        $(
            $(#[$doc])*
            #[doc = $crate::registry::unary_example!(func2 $func $ex => $out)]
            #[track_caller]
            #[inline]
            pub fn $func<V: Value>(a: &V, b: &V) -> V {
                a.$method(b)
            }
        )*
    };
}
pub(crate) use free_fns;

/// The rule module and the `Array` method of every unary op with a
/// formula (`(custom)` ones are hand-written in `primitives/unary.rs`).
macro_rules! unary_modules {
    ($(
        $(#[$doc:meta])*
        $name:ident $kind:ident ($($p:ident: $pt:ty),*) {
            method: $method:ident, func: $func:ident,
            kernel: |$v:ident| $kernel:expr,
            cuda: $cuda:literal,
            rule: ($($rule:tt)*), reads: $reads:ident,
            example: $ex:tt => $out:expr,
        }
    )*) => {
        $(
            $crate::registry::unary_modules!(@module [$(#[$doc])*] $name $kind [$($p: $pt),*]
                ($($rule)*) $reads $method ($ex => $out));
            $crate::registry::unary_modules!(@method [$(#[$doc])*] $name $method [$($p: $pt),*]
                ($($rule)*) ($ex => $out));
        )*
    };
    (@module [$($doc:tt)*] $name:ident $kind:ident [$($p:ident: $pt:ty),*] (custom) $reads:ident
        $method:ident $eg:tt) => {};
    (@module [$($doc:tt)*] $name:ident $kind:ident [$($p:ident: $pt:ty),*]
        (|$x:ident, $y:ident| $d:expr $(, scale $c:expr)?) $reads:ident $method:ident $eg:tt) => {
        $($doc)*
        pub mod $name {
            use super::*;
            /// Forward: the elementwise kernel.
            #[doc = $crate::registry::rule_example!(forward $name $method $eg)]
            #[track_caller]
            pub fn forward(x: &Array $(, $p: $pt)*) -> Array {
                unary_forward(x, UnaryOp::$kind($($p),*), stringify!($name))
            }
            /// A constant factor of dy/dx, applied in the same pass as the
            /// product with the tangent or cotangent.
            const SCALE: f64 = $crate::registry::unary_modules!(@scale $($c)?);
            /// dy/dx without [`SCALE`].
            #[allow(unused_variables)]
            #[inline(always)]
            fn unscaled<V: Value>($x: &V, $y: &V $(, $p: $pt)*) -> V {
                $d
            }
            /// dy/dx elementwise, from the input `x` and output `y`.
            #[doc = $crate::registry::rule_example!(derivative $name $method $eg)]
            #[inline]
            pub fn derivative<V: Value>(x: &V, y: &V $(, $p: $pt)*) -> V {
                let d = unscaled(x, y $(, $p)*);
                if SCALE == 1.0 { d } else { d.mul_scalar(SCALE) }
            }
            $crate::registry::unary_modules!(@chain [$($p: $pt),*] $name $method $eg);
            $crate::registry::unary_modules!(@from_x $reads [$($p: $pt),*] $name $method $eg);
        }
    };
    (@scale) => {
        1.0
    };
    (@scale $c:expr) => {
        $c
    };
    // Without parameters: `t · dy/dx` is one elementwise rule, fused into
    // one pass on arrays.
    (@chain [] $name:ident $method:ident $eg:tt) => {
        /// `t · dy/dx` from `(x, y, t)`: the JVP and the VJP, one
        /// elementwise rule ([`Value::fused_rule`]).
        #[doc = $crate::registry::rule_example!(chain $name $method $eg)]
        pub struct Chain;
        impl $crate::ElementwiseRule for Chain {
            // Always inlined: a fused pass compiled for wider vectors
            // (`fused::pass::dispatch!`) evaluates it on blocks of lanes.
            #[inline(always)]
            fn eval<V: Value>(x: &V, y: &V, t: &V) -> V {
                let d = unscaled(x, y);
                if SCALE == 1.0 { t.mul(&d) } else { t.mul_scaled(&d, SCALE) }
            }
        }
        /// JVP rule: `ẏ = ẋ · dy/dx`.
        #[doc = $crate::registry::rule_example!(jvp $name $method $eg)]
        #[inline]
        pub fn jvp<V: Value>(x: &V, y: &V, dx: &V) -> V {
            V::fused_rule::<Chain>(x, y, dx)
        }
        /// VJP rule: `x̄ = ȳ · dy/dx`.
        #[doc = $crate::registry::rule_example!(vjp $name $method $eg)]
        #[inline]
        pub fn vjp<V: Value>(x: &V, y: &V, ct: &V) -> V {
            V::fused_rule::<Chain>(x, y, ct)
        }
    };
    (@chain [$($p:ident: $pt:ty),+] $name:ident $method:ident $eg:tt) => {
        /// JVP rule: `ẏ = ẋ · dy/dx`.
        #[doc = $crate::registry::rule_example!(jvp $name $method $eg)]
        #[inline]
        pub fn jvp<V: Value>(x: &V, y: &V $(, $p: $pt)*, dx: &V) -> V {
            dx.mul(&derivative(x, y $(, $p)*))
        }
        /// VJP rule: `x̄ = ȳ · dy/dx`.
        #[doc = $crate::registry::rule_example!(vjp $name $method $eg)]
        #[inline]
        pub fn vjp<V: Value>(x: &V, y: &V $(, $p: $pt)*, ct: &V) -> V {
            ct.mul(&derivative(x, y $(, $p)*))
        }
    };
    (@from_x x [$($p:ident: $pt:ty),*] $name:ident $method:ident $eg:tt) => {
        /// [`vjp`] without the output: this derivative reads only `x`
        /// (`reads: x` in the registry), so an output-only tail can skip
        /// computing `y`.
        #[doc = $crate::registry::rule_example!(vjp_from_x $name $method $eg)]
        #[inline]
        pub fn vjp_from_x<V: Value>(x: &V $(, $p: $pt)*, ct: &V) -> V {
            vjp(x, x $(, $p)*, ct)
        }
    };
    (@from_x $reads:ident [$($p:ident: $pt:ty),*] $name:ident $method:ident $eg:tt) => {};
    (@method [$($doc:tt)*] $name:ident $method:ident [$($p:ident: $pt:ty),*] (custom) $ex:tt) => {};
    // Without parameters the tape node keeps the op's chain rule, so a
    // chain of such ops runs backward as one pass (`autograd::chain`).
    (@method [$($doc:tt)*] $name:ident $method:ident [] ($($rule:tt)*) ($ex:tt => $out:expr)) => {
        impl Array {
            $($doc)*
            #[doc = $crate::registry::unary_example!(method $method $ex => $out)]
            #[track_caller]
            pub fn $method(&self) -> Array {
                apply_linked::<$name::Chain>(
                    self,
                    stringify!($name),
                    $name::forward,
                    $name::vjp::<Array>,
                )
            }
        }
    };
    (@method [$($doc:tt)*] $name:ident $method:ident [$($p:ident: $pt:ty),*] ($($rule:tt)*)
        ($ex:tt => $out:expr)) => {
        impl Array {
            $($doc)*
            #[doc = $crate::registry::unary_example!(method $method $ex => $out)]
            #[track_caller]
            pub fn $method(&self $(, $p: $pt)*) -> Array {
                apply(
                    self,
                    stringify!($name),
                    |x| $name::forward(x $(, $p)*),
                    move |x, y, ct| $name::vjp(x, y $(, $p)*, ct),
                )
            }
        }
    };
}
pub(crate) use unary_modules;

/// The rule module and the `Array` method of every binary op with a
/// formula (`(custom)` ones are hand-written in `primitives/binary.rs`).
macro_rules! binary_modules {
    ($(
        $(#[$doc:meta])*
        $name:ident $kind:ident {
            method: $method:ident, func: $func:ident,
            kernel: |$ka:ident, $kb:ident| $kernel:expr,
            cuda: $cuda:literal,
            rule: ($($rule:tt)*), reads: $reads:ident,
            example: $ex:tt => $out:expr,
        }
    )*) => {
        $(
            $crate::registry::binary_modules!(@module [$(#[$doc])*] $name $kind ($($rule)*) $reads);
            $crate::registry::binary_modules!(@method [$(#[$doc])*] $name $kind $method ($($rule)*)
                ($ex => $out));
        )*
    };
    (@module [$($doc:tt)*] $name:ident $kind:ident (custom) $reads:ident) => {};
    (@module [$($doc:tt)*] $name:ident $kind:ident (|$a:ident, $b:ident, $y:ident| ($pa:expr, $pb:expr))
        $reads:ident) => {
        $crate::primitives::binary::binary_primitive! {
            $($doc)*
            $name = BinaryOp::$kind, partials |$a, $b, $y| ($pa, $pb) $reads
        }
    };
    (@method [$($doc:tt)*] $name:ident $kind:ident $method:ident (custom) $ex:tt) => {};
    (@method [$($doc:tt)*] $name:ident $kind:ident $method:ident ($($rule:tt)*) ($ex:tt => $out:expr)) => {
        impl Array {
            $($doc)*
            #[doc = $crate::registry::unary_example!(method2 $method $ex => $out)]
            #[track_caller]
            pub fn $method(&self, other: &Array) -> Array {
                apply(
                    self,
                    other,
                    stringify!($name),
                    BinaryOp::$kind,
                    $name::vjp_0::<Array>,
                    $name::vjp_1::<Array>,
                )
            }
        }
    };
}
pub(crate) use binary_modules;

/// The entry points generated code calls (`rules::<op>::forward`,
/// `vjp_<k>`), for every op with a formula. `vjp_<k>` takes what the rule
/// reads (the registry's `reads`), then the static parameters and the
/// cotangent.
macro_rules! entries {
    (unary $(
        $(#[$doc:meta])*
        $name:ident $kind:ident ($($p:ident: $pt:ty),*) {
            method: $method:ident, func: $func:ident,
            kernel: |$v:ident| $kernel:expr,
            cuda: $cuda:literal,
            rule: ($($rule:tt)*), reads: $reads:ident,
            example: $ex:tt => $out:expr,
        }
    )*) => {
        $(
            $crate::registry::entries!(@unary $name $method [$($p: $pt),*] ($($rule)*) $reads);
        )*
    };
    (@unary $name:ident $method:ident [$($p:ident: $pt:ty),*] (custom) $reads:ident) => {};
    (@unary $name:ident $method:ident [$($p:ident: $pt:ty),*] ($($rule:tt)*) $reads:ident) => {
        pub mod $name {
            use super::*;
            #[inline]
            #[track_caller]
            pub fn forward<V: Value>(x: &V $(, $p: $pt)*) -> V {
                x.$method($($p),*)
            }
            $crate::registry::entries!(@unary_vjp $name [$($p: $pt),*] $reads);
        }
    };
    // `vjp_0` takes what the derivative reads (`reads:`): the macro passes
    // exactly that, so the VJP keeps nothing else for this step.
    (@unary_vjp $name:ident [$($p:ident: $pt:ty),*] x) => {
        #[inline]
        pub fn vjp_0<V: Value>(x: &V $(, $p: $pt)*, ct: &V) -> V {
            let _rule = $crate::array::nans::rule_scope(stringify!($name));
            primitives::unary::$name::vjp(x, x $(, $p)*, ct)
        }
    };
    (@unary_vjp $name:ident [$($p:ident: $pt:ty),*] y) => {
        #[inline]
        pub fn vjp_0<V: Value>(y: &V $(, $p: $pt)*, ct: &V) -> V {
            let _rule = $crate::array::nans::rule_scope(stringify!($name));
            primitives::unary::$name::vjp(y, y $(, $p)*, ct)
        }
    };
    (@unary_vjp $name:ident [$($p:ident: $pt:ty),*] xy) => {
        #[inline]
        pub fn vjp_0<V: Value>(x: &V, y: &V $(, $p: $pt)*, ct: &V) -> V {
            let _rule = $crate::array::nans::rule_scope(stringify!($name));
            primitives::unary::$name::vjp(x, y $(, $p)*, ct)
        }
    };
    (@unary_vjp $name:ident [$($p:ident: $pt:ty),*] $reads:ident) => {
        compile_error!(concat!(
            "op `", stringify!($name), "`: a derivative formula reads `x`, `y` or both (`reads: x | y | xy`); ",
            "`reads: ", stringify!($reads), "` needs a `(custom)` rule"
        ));
    };
    (binary $(
        $(#[$doc:meta])*
        $name:ident $kind:ident {
            method: $method:ident, func: $func:ident,
            kernel: |$ka:ident, $kb:ident| $kernel:expr,
            cuda: $cuda:literal,
            rule: ($($rule:tt)*), reads: $reads:ident,
            example: $ex:tt => $out:expr,
        }
    )*) => {
        $(
            $crate::registry::entries!(@binary $name $method ($($rule)*) $reads);
        )*
    };
    (@binary $name:ident $method:ident (custom) $reads:ident) => {};
    (@binary $name:ident $method:ident ($($rule:tt)*) $reads:ident) => {
        pub mod $name {
            use super::*;
            #[inline]
            #[track_caller]
            pub fn forward<V: Value>(a: &V, b: &V) -> V {
                a.$method(b)
            }
            $crate::registry::entries!(@binary_vjp $name $reads);
        }
    };
    (@binary_vjp $name:ident inputs) => {
        #[inline]
        pub fn vjp_0<V: Value>(a: &V, b: &V, ct: &V) -> V {
            let _rule = $crate::array::nans::rule_scope(stringify!($name));
            primitives::binary::$name::vjp_0_from_inputs(a, b, ct)
        }
        #[inline]
        pub fn vjp_1<V: Value>(a: &V, b: &V, ct: &V) -> V {
            let _rule = $crate::array::nans::rule_scope(stringify!($name));
            primitives::binary::$name::vjp_1_from_inputs(a, b, ct)
        }
    };
    (@binary_vjp $name:ident all) => {
        #[inline]
        pub fn vjp_0<V: Value>(a: &V, b: &V, y: &V, ct: &V) -> V {
            let _rule = $crate::array::nans::rule_scope(stringify!($name));
            primitives::binary::$name::vjp_0(a, b, y, ct)
        }
        #[inline]
        pub fn vjp_1<V: Value>(a: &V, b: &V, y: &V, ct: &V) -> V {
            let _rule = $crate::array::nans::rule_scope(stringify!($name));
            primitives::binary::$name::vjp_1(a, b, y, ct)
        }
    };
    (@binary_vjp $name:ident $reads:ident) => {
        compile_error!(concat!(
            "op `", stringify!($name), "`: partials written as a formula read `inputs` or `all`; ",
            "`reads: ", stringify!($reads), "` needs a `(custom)` rule"
        ));
    };
}
pub(crate) use entries;

/// Output-only-tail entries (see `entry/tail.rs`) of the ops with a
/// formula whose derivative reads only the inputs (`reads: x` for unary
/// ops, `reads: inputs` for binary ones).
macro_rules! tail_entries {
    (unary $(
        $(#[$doc:meta])*
        $name:ident $kind:ident ($($p:ident: $pt:ty),*) {
            method: $method:ident, func: $func:ident,
            kernel: |$v:ident| $kernel:expr,
            cuda: $cuda:literal,
            rule: ($($rule:tt)*), reads: $reads:ident,
            example: $ex:tt => $out:expr,
        }
    )*) => {
        $(
            $crate::registry::tail_entries!(@unary $name [$($p: $pt),*] ($($rule)*) $reads);
        )*
    };
    (@unary $name:ident [$($p:ident: $pt:ty),*] (custom) $reads:ident) => {};
    (@unary $name:ident [$($p:ident: $pt:ty),*] ($($rule:tt)*) x) => {
        pub mod $name {
            use super::*;
            pub fn out_shape(x: &[usize] $(, $p: $pt)*) -> Shape {
                $(let _ = $p;)*
                Shape::from_slice(x)
            }
            #[inline]
            pub fn vjp_0<V: Value>(x: &V $(, $p: $pt)*, ct: &V) -> V {
                primitives::unary::$name::vjp_from_x(x $(, $p)*, ct)
            }
        }
    };
    (@unary $name:ident [$($p:ident: $pt:ty),*] ($($rule:tt)*) $reads:ident) => {};
    (binary $(
        $(#[$doc:meta])*
        $name:ident $kind:ident {
            method: $method:ident, func: $func:ident,
            kernel: |$ka:ident, $kb:ident| $kernel:expr,
            cuda: $cuda:literal,
            rule: ($($rule:tt)*), reads: $reads:ident,
            example: $ex:tt => $out:expr,
        }
    )*) => {
        $(
            $crate::registry::tail_entries!(@binary $name ($($rule)*) $reads);
        )*
    };
    (@binary $name:ident (custom) $reads:ident) => {};
    (@binary $name:ident ($($rule:tt)*) inputs) => {
        pub mod $name {
            use super::*;
            #[track_caller]
            pub fn out_shape(a: &[usize], b: &[usize]) -> Shape {
                primitives::binary::broadcast_shapes(stringify!($name), a, b)
            }
            #[inline]
            pub fn vjp_0<V: Value>(a: &V, b: &V, ct: &V) -> V {
                primitives::binary::$name::vjp_0_from_inputs(a, b, ct)
            }
            #[inline]
            pub fn vjp_1<V: Value>(a: &V, b: &V, ct: &V) -> V {
                primitives::binary::$name::vjp_1_from_inputs(a, b, ct)
            }
        }
    };
    (@binary $name:ident ($($rule:tt)*) $reads:ident) => {};
}
pub(crate) use tail_entries;
