//! The value traits that derivative rules and generated code are generic
//! over.
//!
//! * [`Value`] — the scalar tier: elementwise math. Implemented by `f32`,
//!   `f64`, [`Array`] and the interpretation types `Dual<V>` and
//!   `Batched<V>`. Its elementwise methods come from the op registry
//!   (`nabla-ops`), one per declared op.
//! * [`ArrayValue`] — the array tier: shape ops, reductions, indexing and
//!   matmul. Implemented by [`Array`], `Dual<V>` and `Batched<V>`.
//!
//! Every VJP and JVP rule in [`crate::primitives`] is written against these traits,
//! so a rule is itself differentiable: instantiate it with a forward-mode
//! type and you differentiate the derivative.
//!
//! ```
//! use nabla::{primitives, Array, Value};
//! // The VJP rule of sin, used on plain f64 and on arrays alike.
//! let g = primitives::unary::sin::vjp(&1.0f64, &1.0f64.sin(), &1.0f64);
//! assert!((g - 1.0f64.cos()).abs() < 1e-15);
//! let x = Array::from_vec(vec![1.0f64], &[1]);
//! let ga = primitives::unary::sin::vjp(&x, &x.sin(), &x.ones_like());
//! assert!((ga.item() - g).abs() < 1e-15);
//! ```

use crate::Array;
use nabla_kernels::elementwise::CompareOp;

/// A shape as the value traits return it: axis lengths, kept inline for up
/// to six axes, so the shape queries that rules and generated code make on
/// every op do not allocate. Dereferences to `[usize]`.
///
/// ```
/// use nabla::{Array, DType, Shape, Value};
/// let s: Shape = Array::zeros(&[2, 3], DType::F32).shape_vec();
/// assert_eq!(&s[..], &[2, 3]);
/// assert_eq!(s.iter().product::<usize>(), 6);
/// ```
pub use nabla_kernels::Shape;

/// An elementwise rule of three operands written once against [`Value`]
/// (for instance a unary op's JVP `ẋ · f'(x, y)`), which
/// [`Value::fused_rule`] can run as a single pass.
///
/// `eval` may use only elementwise [`Value`] methods (no shape ops, no
/// reductions): arrays evaluate it one element at a time, at the scalar
/// type, over the three operands broadcast together.
///
/// ```
/// use nabla::{Array, ElementwiseRule, Value};
/// struct TanhJvp;
/// impl ElementwiseRule for TanhJvp {
///     fn eval<V: Value>(_x: &V, y: &V, dx: &V) -> V {
///         dx.mul(&y.square().neg().add_scalar(1.0))
///     }
/// }
/// let x = Array::from_vec(vec![0.0f64, 0.5], &[2]);
/// let dx = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]);
/// let fused = Value::fused_rule::<TanhJvp>(&x, &x.tanh(), &dx);
/// let by_ops = TanhJvp::eval(&x, &x.tanh(), &dx);
/// assert_eq!(fused.to_vec::<f64>(), by_ops.to_vec::<f64>());
/// ```
pub trait ElementwiseRule {
    /// The rule on any value type.
    fn eval<V: Value>(a: &V, b: &V, c: &V) -> V;
}

/// Elementwise math shared by scalars, arrays and interpretation types.
///
/// Binary methods broadcast NumPy-style. `*_mask` methods return 1 where the
/// comparison holds and 0 elsewhere, in the value's own type, and carry no
/// derivative.
///
/// ```
/// use nabla::Value;
/// fn softsign<V: Value>(x: &V) -> V { x.div(&x.abs().add_scalar(1.0)) }
/// assert_eq!(softsign(&1.0f64), 0.5);
/// ```
#[allow(missing_docs)]
pub trait Value: Clone + Sized + 'static {
    /// The per-example shape (`[]` for scalars).
    fn shape_vec(&self) -> Shape;
    /// The per-example number of axes (`shape_vec().len()`, without
    /// building the shape).
    fn ndim(&self) -> usize {
        self.shape_vec().len()
    }
    /// Same shape and dtype, every element `v`.
    fn full_like(&self, v: f64) -> Self;
    fn zeros_like(&self) -> Self {
        self.full_like(0.0)
    }
    fn ones_like(&self) -> Self {
        self.full_like(1.0)
    }
    /// `self + c`, keeping the dtype (scalars are weakly typed).
    fn add_scalar(&self, c: f64) -> Self;
    /// `self * c`, keeping the dtype.
    fn mul_scalar(&self, c: f64) -> Self;
    /// `self · o · c` (one pass where the type has a fused kernel).
    fn mul_scaled(&self, o: &Self, c: f64) -> Self {
        self.mul(o).mul_scalar(c)
    }
    /// `self + a · b · c`, consuming `self` (arrays add in place, one pass,
    /// when nothing is recorded on the tape): a cotangent accumulated into
    /// an existing one.
    fn add_mul_scaled(self, a: &Self, b: &Self, c: f64) -> Self
    where
        Self: Sized,
    {
        self.add(&a.mul_scaled(b, c))
    }
    /// `R::eval(a, b, c)`, in one pass over the three operands (broadcast
    /// together) where the type has a fused kernel: arrays on the CPU, and
    /// batched values of them. Other types evaluate the rule op by op.
    fn fused_rule<R: ElementwiseRule>(a: &Self, b: &Self, c: &Self) -> Self {
        R::eval(a, b, c)
    }
    nabla_ops::unary_ops!(value_decls decl);
    nabla_ops::binary_ops!(value_decls decl);
    /// 1 where `self op o`, else 0 (no derivative).
    fn cmp_mask(&self, o: &Self, op: CompareOp) -> Self;
    /// Sums a broadcast cotangent back to `shape` (identity for scalars).
    fn sum_to_shape(&self, shape: &[usize]) -> Self;
    /// Broadcasts to `shape` NumPy-style (identity for scalars).
    fn broadcast_to(&self, shape: &[usize]) -> Self;
    /// The same value, treated as a constant by every transform.
    fn stop_gradient(&self) -> Self;
    /// The natural logarithm: `ln`, under the name NumPy, JAX and PyTorch
    /// use (a float's own `f64::log` takes a base, so on `f64` and `f32`
    /// call it as `Value::log(&x)` or write `x.ln()`).
    ///
    /// ```
    /// use nabla::{Array, Dual, Value};
    ///
    /// fn log_of<V: Value>(x: &V) -> V {
    ///     x.log()
    /// }
    /// let d = log_of(&Dual::new(2.0f64, Some(1.0)));
    /// assert_eq!((d.primal, d.tangent_or_zero()), (2.0f64.ln(), 0.5));
    /// assert_eq!(log_of(&Array::scalar(1.0f64)).item(), 0.0);
    /// ```
    #[track_caller]
    fn log(&self) -> Self {
        self.ln()
    }
    /// The value of a one-element value as a plain `f64` (no derivative):
    /// what `x.item()` means in differentiable code, e.g. in the condition
    /// of a data-dependent `if`.
    #[track_caller]
    fn item_f64(&self) -> f64;
}

/// Whether `a op b` holds (what `cmp_mask` computes per element).
#[inline(always)]
pub(crate) fn holds<T: PartialOrd>(op: CompareOp, a: T, b: T) -> bool {
    match op {
        CompareOp::Gt => a > b,
        CompareOp::Ge => a >= b,
        CompareOp::Lt => a < b,
        CompareOp::Le => a <= b,
        CompareOp::Eq => a == b,
        CompareOp::Ne => a != b,
    }
}

macro_rules! scalar_value {
    ($t:ty) => {
        impl Value for $t {
            #[inline]
            fn shape_vec(&self) -> Shape {
                Shape::new()
            }
            #[inline]
            fn full_like(&self, v: f64) -> Self {
                v as $t
            }
            #[inline]
            fn add_scalar(&self, c: f64) -> Self {
                self + c as $t
            }
            #[inline]
            fn mul_scalar(&self, c: f64) -> Self {
                self * c as $t
            }
            nabla_ops::unary_ops!(value_decls scalar);
            nabla_ops::binary_ops!(value_decls scalar);
            #[inline]
            fn cmp_mask(&self, o: &Self, op: CompareOp) -> Self {
                if holds(op, *self, *o) { 1.0 } else { 0.0 }
            }
            #[inline]
            fn sum_to_shape(&self, _shape: &[usize]) -> Self {
                *self
            }
            #[inline]
            fn broadcast_to(&self, _shape: &[usize]) -> Self {
                *self
            }
            #[inline]
            fn stop_gradient(&self) -> Self {
                *self
            }
            #[inline]
            fn item_f64(&self) -> f64 {
                *self as f64
            }
        }
    };
}

scalar_value!(f32);
scalar_value!(f64);

/// Shape ops, reductions, indexing and matmul, on top of [`Value`].
///
/// Axes passed here are already normalised (non-negative, sorted); the
/// user-facing methods on [`Array`] accept negative axes and check them.
///
/// ```
/// use nabla::{Array, ArrayValue};
/// fn total<V: ArrayValue>(x: &V) -> V { x.sum_axes(&[0], false) }
/// assert_eq!(total(&Array::from_vec(vec![1.0f64, 2.0], &[2])).item(), 3.0);
/// ```
#[allow(missing_docs)]
pub trait ArrayValue: Value {
    fn reshape(&self, shape: &[usize]) -> Self;
    fn permute(&self, perm: &[usize]) -> Self;
    /// `self.permute(perm).reshape(shape)`; arrays copy once, without
    /// building the permuted view.
    fn permute_reshape(&self, perm: &[usize], shape: &[usize]) -> Self
    where
        Self: Sized,
    {
        self.permute(perm).reshape(shape)
    }
    fn sum_axes(&self, axes: &[usize], keepdim: bool) -> Self;
    fn max_axes(&self, axes: &[usize], keepdim: bool) -> Self;
    fn min_axes(&self, axes: &[usize], keepdim: bool) -> Self;
    fn prod_axes(&self, axes: &[usize], keepdim: bool) -> Self;
    /// `max`/`min`'s JVP at `self` with extreme `y`: the tangent `dx`
    /// averaged over the positions that attain `y` (reduced over `axes`).
    fn chooser_jvp(&self, y: &Self, axes: &[usize], keepdim: bool, dx: &Self) -> Self;
    /// `max`/`min`'s VJP at `self` with extreme `y`: the cotangent `ct`
    /// (shaped like `y`) sent to the positions that attain `y`.
    fn chooser_vjp(&self, y: &Self, axes: &[usize], keepdim: bool, ct: &Self) -> Self;
    fn cumsum_axis(&self, axis: usize, reverse: bool) -> Self;
    /// `slices` has one entry per axis.
    fn slice(&self, slices: &[ndarray::Slice]) -> Self;
    /// Zeros of `shape` with `self` placed at `slices` (VJP of slice).
    fn slice_place(&self, shape: &[usize], slices: &[ndarray::Slice]) -> Self;
    /// `self + slice_place(ct)`, `slices` selecting a region of `self`'s
    /// shape: a slice's cotangent accumulated into an existing cotangent
    /// (arrays do it in place, one pass over the region).
    fn add_into_slice(self, slices: &[ndarray::Slice], ct: &Self) -> Self
    where
        Self: Sized,
    {
        let shape = self.shape_vec();
        self.add(&ct.slice_place(&shape, slices))
    }
    fn index_select(&self, axis: usize, idx: &[usize]) -> Self;
    /// Zeros of `shape` plus `self`'s slabs scattered to `idx` along `axis`.
    fn index_add(&self, shape: &[usize], axis: usize, idx: &[usize]) -> Self;
    fn concat(parts: &[Self], axis: usize) -> Self;
    /// `mask ? a : b`; the mask is a static bool array.
    fn select(mask: &Array, a: &Self, b: &Self) -> Self;
    fn matmul(&self, o: &Self) -> Self;
    /// A constant of this value's kind (and dtype) holding `a`: no
    /// tangent, no batch axis. Transforms use it for basis vectors.
    fn lift(&self, a: &Array) -> Self;
    /// The element type of the arrays underneath.
    fn dtype(&self) -> crate::DType;
    /// The device of the arrays underneath.
    fn device(&self) -> crate::Device;
    crate::vocab::custom_op::apply_custom!(decl);
}

/// Splits a registry list (`nabla_ops::unary_ops!`/`binary_ops!`) into
/// one call of `$target!(@form ..)` per op (`$target` in scope where the
/// list is expanded), with the op's name, kind,
/// parameters (`[p: T, ..]`, empty for binary ops) and method name: the
/// one place that reads the entry format for the `Value` method callbacks
/// (`value_decls!`, `lane_methods!`, `registry::value_methods!`).
macro_rules! each_method {
    ($target:ident $form:ident $(
        $(#[$doc:meta])*
        $name:ident $kind:ident $(($($p:ident: $pt:ty),*))? {
            method: $method:ident, func: $func:ident,
            $($body:tt)*
        }
    )*) => {
        $(
            $target!(@$form $(#[$doc])* $name $kind [$($($p: $pt),*)?]
                $method, $(($($p),*))?);
        )*
    };
}
pub(crate) use each_method;

/// The `Value` methods of every op of the registry (`nabla-ops`) in two
/// forms: `decl` (the trait's declarations) and `scalar` (`f32`/`f64`, the
/// kernel's scalar formula). The other forms are in `registry.rs`.
macro_rules! value_decls {
    ($form:ident $($entries:tt)*) => {
        $crate::vocab::value::each_method!(value_decls $form $($entries)*);
    };
    // Unary ops carry a (possibly empty) parameter list; binary ops none.
    (@decl $(#[$doc:meta])* $name:ident $kind:ident [$($p:ident: $pt:ty),*] $method:ident, ($($q:ident),*)) => {
        $(#[$doc])*
        fn $method(&self $(, $p: $pt)*) -> Self;
    };
    (@decl $(#[$doc:meta])* $name:ident $kind:ident [] $method:ident,) => {
        $(#[$doc])*
        fn $method(&self, o: &Self) -> Self;
    };
    (@scalar $(#[$doc:meta])* $name:ident $kind:ident [$($p:ident: $pt:ty),*] $method:ident, ($($q:ident),*)) => {
        #[inline]
        fn $method(&self $(, $p: $pt)*) -> Self {
            nabla_kernels::ops::scalar::$name(*self $(, $p)*)
        }
    };
    (@scalar $(#[$doc:meta])* $name:ident $kind:ident [] $method:ident,) => {
        #[inline]
        fn $method(&self, o: &Self) -> Self {
            nabla_kernels::ops::scalar2::$name(*self, *o)
        }
    };
}
pub(crate) use value_decls;
