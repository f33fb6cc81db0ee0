//! The registry's elementwise primitives as kernels, expanded from
//! `nabla_ops::unary_ops!` and `nabla_ops::binary_ops!`: the operation
//! enums [`UnaryOp`] and [`BinaryOp`], one generic scalar function per op
//! ([`scalar`], which the CPU loops and the runtime's `f32`/`f64` values
//! share), the CPU kernels [`unary`] and [`binary`], and each op's CUDA C
//! expression in code order ([`UNARY_CUDA`], [`BINARY_CUDA`]), from which
//! the CUDA source's `switch` is written.

use crate::Float;
use crate::elementwise::{Fill, Isa, MapSource, ZipSource, filler_on};
use ndarray::{ArrayD, ArrayViewD};

macro_rules! unary_kernels {
    ($(
        $(#[$doc:meta])*
        $name:ident $kind:ident ($($p:ident: $pt:ty),*) {
            method: $method:ident, func: $func:ident,
            kernel: |$v:ident| $kernel:expr,
            cuda: $cuda:literal,
            rule: $rule:tt, reads: $reads:ident,
            example: $ex:tt => $out:expr,
        }
    )*) => {
        /// A unary elementwise operation: the registry's ops, with their
        /// static parameters, and the internal `Affine`, `RDiv`, `ExpBase`.
        ///
        /// ```
        /// use nabla_kernels::elementwise::{unary, UnaryOp};
        /// let x = ndarray::arr1(&[4.0f32]).into_dyn();
        /// assert_eq!(unary(x.view(), UnaryOp::Sqrt())[[0]], 2.0);
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub enum UnaryOp {
            $($(#[$doc])* $kind($($pt),*),)*
            /// `a * x + b`
            Affine(f64, f64),
            /// `c / x`
            RDiv(f64),
            /// `c^x` (`c > 0`)
            ExpBase(f64),
        }

        /// The operation codes shared with the CUDA source.
        #[repr(i32)]
        enum UnaryCode {
            $($kind,)*
            Affine,
            RDiv,
            ExpBase,
        }

        /// One generic function per unary op: the element formula that
        /// the CPU kernels map and the `f32`/`f64` values call.
        pub mod scalar {
            #![allow(clippy::neg_multiply, unused_imports)]
            use crate::Float;
            $(
                $(#[$doc])*
                #[inline(always)]
                pub fn $name<T: Float>($v: T $(, $p: $pt)*) -> T {
                    $kernel
                }
            )*
        }

        impl UnaryOp {
            /// The CUDA operation code and up to two parameters (`p`, `q`).
            pub fn code(self) -> (i32, f64, f64) {
                match self {
                    $(UnaryOp::$kind($($p),*) => {
                        let ps: &[f64] = &[$(f64::from($p)),*];
                        let at = |i: usize| ps.get(i).copied().unwrap_or(0.0);
                        (UnaryCode::$kind as i32, at(0), at(1))
                    })*
                    UnaryOp::Affine(a, b) => (UnaryCode::Affine as i32, a, b),
                    UnaryOp::RDiv(c) => (UnaryCode::RDiv as i32, c, 0.0),
                    UnaryOp::ExpBase(c) => (UnaryCode::ExpBase as i32, c, 0.0),
                }
            }
        }

        /// Applies `op` to every element of `x`.
        ///
        /// ```
        /// use nabla_kernels::elementwise::{unary, UnaryOp};
        /// let x = ndarray::arr1(&[-1.0f64, 2.0]).into_dyn();
        /// assert_eq!(unary(x.view(), UnaryOp::Relu()).as_slice().unwrap(), &[0.0, 2.0]);
        /// ```
        pub fn unary<T: Float, S: MapSource<T>>(x: S, op: UnaryOp) -> S::Out {
            let (mut x, mut out) = (Some(x), None);
            with_fill::<T>(op, Isa::widest(), &mut |fill| {
                out = Some(x.take().expect("one fill per op").map_fill(fill));
            });
            out.expect("one fill per op")
        }

        /// [`unary`] of a row-major run written into `out` (of the same
        /// length, initialised or not), for callers that reuse buffers.
        ///
        /// ```
        /// use nabla_kernels::ops::{unary_into, UnaryOp};
        /// use std::mem::MaybeUninit;
        /// let mut out = [MaybeUninit::<f64>::uninit(); 2];
        /// unary_into(&[4.0, 9.0], &mut out, UnaryOp::Sqrt());
        /// assert_eq!(out.map(|v| unsafe { v.assume_init() }), [2.0, 3.0]);
        /// ```
        ///
        /// # Panics
        /// When the lengths differ.
        pub fn unary_into<T: Float>(x: &[T], out: &mut [std::mem::MaybeUninit<T>], op: UnaryOp) {
            assert_eq!(x.len(), out.len(), "unary_into: the output's length differs from the input's");
            with_fill::<T>(op, Isa::widest(), &mut |fill| fill(&mut *out, x));
        }

        /// [`unary_into`] running `isa`'s copy of the op's loop.
        #[cfg(test)]
        pub(crate) fn unary_into_on<T: Float>(isa: Isa, x: &[T], out: &mut [std::mem::MaybeUninit<T>], op: UnaryOp) {
            assert_eq!(x.len(), out.len());
            with_fill::<T>(op, isa, &mut |fill| fill(&mut *out, x));
        }

        /// Every unary op, with parameters that keep their results finite
        /// on most inputs: what the tests run every copy of.
        #[cfg(test)]
        pub(crate) fn every_unary_op() -> Vec<UnaryOp> {
            let mut all = vec![$(UnaryOp::$kind($(<$pt as TestParam>::for_param(stringify!($p))),*),)*];
            all.extend([UnaryOp::Affine(1.5, -0.25), UnaryOp::RDiv(3.0), UnaryOp::ExpBase(2.5)]);
            all
        }

        /// Calls `k` with `op`'s [`Fill`] running `isa`'s copy of the loop:
        /// generic over the element type only, so each op's loop compiles
        /// once per dtype, whatever the source it maps.
        fn with_fill<T: Float>(op: UnaryOp, isa: Isa, k: &mut dyn FnMut(&Fill<'_, T>)) {
            match op {
                $(UnaryOp::$kind($($p),*) => k(&filler_on(isa, #[inline(always)] move |v| scalar::$name(v $(, $p)*))),)*
                UnaryOp::Affine(a, b) => {
                    let (a, b) = (T::from_f64(a), T::from_f64(b));
                    k(&filler_on(isa, move |v| a * v + b))
                }
                UnaryOp::RDiv(c) => {
                    let c = T::from_f64(c);
                    k(&filler_on(isa, move |v| c / v))
                }
                UnaryOp::ExpBase(c) => {
                    let c = T::from_f64(c);
                    k(&filler_on(isa, move |v| c.powf(v)))
                }
            }
        }

        /// Each registry op's kind and CUDA C expression, in code order.
        pub const UNARY_CUDA: &[(&str, &str)] = &[$((stringify!($kind), $cuda),)*];
    };
}

/// A parameter of a unary op as the tests pick it, by name.
#[cfg(test)]
trait TestParam {
    fn for_param(name: &str) -> Self;
}

#[cfg(test)]
impl TestParam for f64 {
    fn for_param(name: &str) -> f64 {
        match name {
            "lo" => -0.5,
            "hi" => 1.5,
            _ => 1.5,
        }
    }
}

#[cfg(test)]
impl TestParam for i32 {
    fn for_param(_: &str) -> i32 {
        3
    }
}

nabla_ops::unary_ops!(unary_kernels);

macro_rules! binary_kernels {
    ($(
        $(#[$doc:meta])*
        $name:ident $kind:ident {
            method: $method:ident, func: $func:ident,
            kernel: |$a:ident, $b:ident| $kernel:expr,
            cuda: $cuda:literal,
            rule: $rule:tt, reads: $reads:ident,
            example: $ex:tt => $out:expr,
        }
    )*) => {
        /// A binary elementwise operation (operands broadcast NumPy-style).
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum BinaryOp {
            $($(#[$doc])* $kind,)*
        }

        /// One generic function per binary op (see [`scalar`]).
        pub mod scalar2 {
            use crate::Float;
            $(
                $(#[$doc])*
                #[inline(always)]
                pub fn $name<T: Float>($a: T, $b: T) -> T {
                    $kernel
                }
            )*
        }

        impl BinaryOp {
            /// The CUDA operation code.
            pub fn code(self) -> i32 {
                self as i32
            }
        }

        /// Applies `op` to `a` and `b` broadcast to their common shape.
        ///
        /// Panics if the shapes do not broadcast (the runtime checks first
        /// and reports a friendlier error).
        ///
        /// ```
        /// use nabla_kernels::elementwise::{binary, BinaryOp};
        /// let a = ndarray::arr2(&[[1.0f32], [2.0]]).into_dyn();
        /// let b = ndarray::arr1(&[10.0f32, 20.0]).into_dyn();
        /// let c = binary(a.view(), b.view(), BinaryOp::Add);
        /// assert_eq!(c.shape(), &[2, 2]);
        /// assert_eq!(c.as_slice().unwrap(), &[11.0, 21.0, 12.0, 22.0]);
        /// ```
        pub fn binary<T: Float, S: ZipSource<T>>(a: S, b: S, op: BinaryOp) -> S::Out {
            match op {
                $(BinaryOp::$kind => a.zip_with(b, scalar2::$name),)*
            }
        }

        /// [`binary`] of two row-major runs of one length written into
        /// `out` (of that length, initialised or not), for callers that
        /// reuse buffers.
        ///
        /// ```
        /// use nabla_kernels::ops::{binary_into, BinaryOp};
        /// use std::mem::MaybeUninit;
        /// let mut out = [MaybeUninit::<f32>::uninit(); 2];
        /// binary_into(&[1.0, 2.0], &[3.0, 4.0], &mut out, BinaryOp::Mul);
        /// assert_eq!(out.map(|v| unsafe { v.assume_init() }), [3.0, 8.0]);
        /// ```
        ///
        /// # Panics
        /// When the lengths differ.
        pub fn binary_into<T: Float>(a: &[T], b: &[T], out: &mut [std::mem::MaybeUninit<T>], op: BinaryOp) {
            match op {
                $(BinaryOp::$kind => crate::elementwise::zip_into(a, b, out, &scalar2::$name::<T>),)*
            }
        }

        /// [`binary_into`] running `isa`'s copy of the op's loop.
        #[cfg(test)]
        pub(crate) fn binary_into_on<T: Float>(isa: Isa, a: &[T], b: &[T], out: &mut [std::mem::MaybeUninit<T>], op: BinaryOp) {
            assert!(a.len() == out.len() && b.len() == out.len());
            match op {
                $(BinaryOp::$kind => crate::elementwise::fill2_best_on(isa, out, a, b, &scalar2::$name::<T>),)*
            }
        }

        /// Every binary op.
        #[cfg(test)]
        pub(crate) const EVERY_BINARY_OP: &[BinaryOp] = &[$(BinaryOp::$kind),*];

        /// Each registry op's kind and CUDA C expression, in code order.
        pub const BINARY_CUDA: &[(&str, &str)] = &[$((stringify!($kind), $cuda),)*];
    };
}

nabla_ops::binary_ops!(binary_kernels);

/// The CUDA `switch` cases of the registry's ops, and one `#define
/// UOP_<Kind> <code>` per unary op, spliced into the CUDA source where it
/// says `NABLA_UNARY_CASES`, `NABLA_BINARY_CASES` and `NABLA_OP_CODES`.
///
/// ```
/// let src = nabla_kernels::ops::cuda_source("x NABLA_UNARY_CASES y NABLA_BINARY_CASES NABLA_OP_CODES");
/// assert!(src.contains("case 3: return sin(v);"));
/// assert!(src.contains("#define UOP_Exp 1"));
/// ```
pub fn cuda_source(template: &str) -> String {
    let unary: String = UNARY_CUDA
        .iter()
        .enumerate()
        .map(|(i, (_, e))| format!("        case {i}: return {e};\n"))
        .collect();
    let binary: String = BINARY_CUDA
        .iter()
        .enumerate()
        .map(|(i, (_, e))| format!("        case {i}: return {e};\n"))
        .collect();
    let mut codes: String = UNARY_CUDA
        .iter()
        .enumerate()
        .map(|(i, (k, _))| format!("#define UOP_{k} {i}\n"))
        .collect();
    for op in [
        UnaryOp::Affine(0.0, 0.0),
        UnaryOp::RDiv(0.0),
        UnaryOp::ExpBase(0.0),
    ] {
        let name = format!("{op:?}");
        let name = &name[..name.find('(').unwrap_or(name.len())];
        codes.push_str(&format!("#define UOP_{name} {}\n", op.code().0));
    }
    template
        .replace("NABLA_UNARY_CASES", &unary)
        .replace("NABLA_BINARY_CASES", &binary)
        .replace("NABLA_OP_CODES", &codes)
}

/// The registry's CPU kernels ([`unary`], [`binary`]) at one element
/// type, compiled once in this crate: callers link to these instead of
/// instantiating the generic kernels (one vectorised loop per op and
/// dtype) in their own crate.
///
/// ```
/// use nabla_kernels::ops::{OpKernels, UnaryOp, BinaryOp};
/// assert_eq!(f64::unary_slice(&[4.0, 9.0], UnaryOp::Sqrt()), vec![2.0, 3.0]);
/// let a = ndarray::arr1(&[1.0f32, 2.0]).into_dyn();
/// let b = ndarray::arr0(10.0f32).into_dyn();
/// assert_eq!(f32::binary_views(a.view(), b.view(), BinaryOp::Mul).as_slice().unwrap(), &[10.0, 20.0]);
/// ```
pub trait OpKernels: Float {
    /// [`unary`] over row-major elements.
    fn unary_slice(x: &[Self], op: UnaryOp) -> Vec<Self>;
    /// [`unary`] over a view in any layout.
    fn unary_view(x: ArrayViewD<'_, Self>, op: UnaryOp) -> ArrayD<Self>;
    /// [`binary`] over two row-major runs of one length.
    ///
    /// # Panics
    /// When the lengths differ.
    fn binary_slices(a: &[Self], b: &[Self], op: BinaryOp) -> Vec<Self>;
    /// [`binary`] over two views broadcast together.
    ///
    /// # Panics
    /// When the shapes do not broadcast.
    fn binary_views(a: ArrayViewD<'_, Self>, b: ArrayViewD<'_, Self>, op: BinaryOp)
    -> ArrayD<Self>;
}

macro_rules! op_kernels {
    ($($t:ty),*) => {$(
        impl OpKernels for $t {
            fn unary_slice(x: &[$t], op: UnaryOp) -> Vec<$t> {
                unary(x, op)
            }
            fn unary_view(x: ArrayViewD<'_, $t>, op: UnaryOp) -> ArrayD<$t> {
                unary(x, op)
            }
            fn binary_slices(a: &[$t], b: &[$t], op: BinaryOp) -> Vec<$t> {
                binary(a, b, op)
            }
            fn binary_views(a: ArrayViewD<'_, $t>, b: ArrayViewD<'_, $t>, op: BinaryOp) -> ArrayD<$t> {
                binary(a, b, op)
            }
        }
    )*};
}

op_kernels!(f32, f64);
