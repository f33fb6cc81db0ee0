//! Binary elementwise primitives with NumPy broadcasting.
//!
//! Each primitive module holds its `forward` (kernel), its partial
//! derivatives, its `jvp` rule and one VJP rule per operand (`vjp_0`,
//! `vjp_1`; each sums the broadcast cotangent back to its operand's shape,
//! so a caller computes only the cotangents it needs). The modules and
//! `Array` methods of the ops declared with partials in the op registry
//! (`nabla-ops`) are generated here by `binary_primitive!` (through
//! `binary_modules` (`registry.rs`)); `add`, `sub` and `mul`, whose rules
//! skip the general product, are written out below. Batching rule (all of
//! them): move both batch axes to the front, broadcasting an unbatched
//! operand.
//!
//! The `jvp` rules are `#[inline(always)]`: a fused forward-mode pass runs
//! them on blocks of lanes, where they must melt into the block's vector
//! code (docs/design.md, "Forward mode").

use crate::autograd::binary_node;
use crate::primitives::unary::not_float;
use crate::registry::binary_modules;
use crate::storage::{float_map2, float_slice_map2};
use crate::{Array, Value};
use nabla_kernels::elementwise::{BinaryOp, CompareOp, try_broadcast_shape};
use nabla_kernels::ops::OpKernels;

/// Checks that `a` and `b` broadcast and share a float dtype (equal
/// shapes, the common case, without building the broadcast shape: the
/// kernel computes it again anyway).
#[track_caller]
pub(crate) fn check_binary(op: &str, a: &Array, b: &Array) {
    check_dtypes(op, a, b);
    let (sa, sb) = (a.shape(), b.shape());
    if sa != sb {
        broadcast_shapes(op, sa, sb);
    }
}

/// The broadcast shape of `a` and `b`, or a panic naming `op` and the fix.
#[track_caller]
pub(crate) fn broadcast_shapes(op: &str, a: &[usize], b: &[usize]) -> crate::Shape {
    // A `match`, not a closure: the panic's location stays the caller's.
    match try_broadcast_shape(a, b) {
        Some(s) => s,
        None => panic!(
            "{op}: shapes {a:?} and {b:?} do not broadcast; trailing dimensions must be equal or 1 \
             (reshape or expand_dims one operand)"
        ),
    }
}

#[track_caller]
pub(crate) fn check_dtypes(op: &str, a: &Array, b: &Array) {
    if !a.dtype().is_float() {
        not_float(op, a);
    }
    if !b.dtype().is_float() {
        not_float(op, b);
    }
    if a.dtype() != b.dtype() {
        panic!(
            "{op}: dtype mismatch, {} {:?} and {} {:?}; Nabla never promotes implicitly: convert one side with \
             .cast(DType::{})",
            a.dtype(),
            a.shape(),
            b.dtype(),
            b.shape(),
            if a.dtype() == crate::DType::F64 {
                "F64"
            } else {
                "F32"
            }
        );
    }
}

/// Runs a binary kernel after checking shapes and dtypes.
#[track_caller]
pub(crate) fn binary_forward(a: &Array, b: &Array, op: BinaryOp, name: &str) -> Array {
    let y = binary_kernel(a, b, op, name);
    crate::array::nans::check(name, &[a, b], &y);
    y
}

#[track_caller]
fn binary_kernel(a: &Array, b: &Array, op: BinaryOp, name: &str) -> Array {
    check_binary(name, a, b);
    crate::array::on_gpus!(name, [a, b], |g| nabla_kernels::cuda::binary(
        &g[0], &g[1], op
    ));
    if a.shape() == b.shape()
        && let Some(y) = float_slice_map2!(&*a.data, &*b.data, |x, y| OpKernels::binary_slices(
            x, y, op
        ))
    {
        return Array::from_data(y);
    }
    Array::from_data(float_map2!(
        &*a.data,
        &*b.data,
        |x, y| OpKernels::binary_views(x.view(), y.view(), op),
        unreachable!()
    ))
}

type Vjp = fn(&Array, &Array, &Array, &Array) -> Array;

/// Forward plus tape recording, shared by every binary primitive.
#[track_caller]
pub(crate) fn apply(
    a: &Array,
    b: &Array,
    name: &'static str,
    op: BinaryOp,
    vjp_0: Vjp,
    vjp_1: Vjp,
) -> Array {
    let y = binary_forward(a, b, op, name);
    binary_node(y, name, a, b, |y| {
        let (ar, br, yr) = (a.detach(), b.detach(), y.detach());
        move |ct, want| {
            [
                want[0].then(|| vjp_0(&ar, &br, &yr, ct)),
                want[1].then(|| vjp_1(&ar, &br, &yr, ct)),
            ]
        }
    })
}

/// Sums `g` back to the shape of `like`.
fn unbroadcast<V: Value>(g: V, like: &V) -> V {
    g.sum_to_shape(&like.shape_vec())
}

/// A binary op's tangent when only one operand has one: that operand's
/// term `t`, broadcast to the output `y`'s shape only when the other
/// operand widened it.
fn widened<V: Value>(t: V, y: &V) -> V {
    let s = y.shape_vec();
    if t.shape_vec() == s {
        t
    } else {
        t.broadcast_to(&s)
    }
}

/// `ẏ = ∂a·ȧ + ∂b·ḃ`, skipping symbolic-zero tangents.
#[inline(always)]
fn jvp_from<V: Value>(y: &V, da: Option<(&V, V)>, db: Option<(&V, V)>) -> V {
    let t = |(d, p): (&V, V)| d.mul(&p);
    match (da.map(t), db.map(t)) {
        (Some(a), Some(b)) => a.add(&b),
        (Some(t), None) | (None, Some(t)) => widened(t, y),
        (None, None) => y.zeros_like(),
    }
}

macro_rules! binary_primitive {
    (
        $(#[$doc:meta])*
        $name:ident = $kernel:expr,
        partials |$a:ident, $b:ident, $y:ident| ($pa:expr, $pb:expr) $reads:ident
    ) => {
        $(#[$doc])*
        pub mod $name {
            use super::*;
            /// Forward: the broadcasting kernel.
            ///
            /// ```
            #[doc = concat!("use nabla::{primitives::binary::", stringify!($name), " as op, Array, DType, Value};")]
            /// let a = Array::full(&[2, 1], 2.0, DType::F64);
            /// let b = Array::full(&[3], 3.0, DType::F64);
            /// let y = op::forward(&a, &b);
            /// assert_eq!(y.shape(), &[2, 3]);
            #[doc = concat!("let expected = Value::", stringify!($name), "(&2.0f64, &3.0); // the scalar formula")]
            /// assert!(y.to_vec::<f64>().iter().all(|v| (v - expected).abs() < 1e-12));
            /// ```
            #[track_caller]
            pub fn forward(a: &Array, b: &Array) -> Array {
                binary_forward(a, b, $kernel, stringify!($name))
            }
            /// `∂y/∂a` elementwise (at the broadcast shape).
            ///
            /// ```
            #[doc = concat!("use nabla::primitives::binary::", stringify!($name), " as op;")]
            #[doc = concat!("let f = |a: f64, b: f64| nabla::Value::", stringify!($name), "(&a, &b);")]
            /// let (a, b, h) = (2.0, 3.0, 1e-6);
            /// let slope = (f(a + h, b) - f(a - h, b)) / (2.0 * h); // central difference
            /// assert!((op::partial_a(&a, &b, &f(a, b)) - slope).abs() < 1e-6);
            /// ```
            #[allow(unused_variables)]
            pub fn partial_a<V: Value>($a: &V, $b: &V, $y: &V) -> V {
                $pa
            }
            /// `∂y/∂b` elementwise (at the broadcast shape).
            ///
            /// ```
            #[doc = concat!("use nabla::primitives::binary::", stringify!($name), " as op;")]
            #[doc = concat!("let f = |a: f64, b: f64| nabla::Value::", stringify!($name), "(&a, &b);")]
            /// let (a, b, h) = (2.0, 3.0, 1e-6);
            /// let slope = (f(a, b + h) - f(a, b - h)) / (2.0 * h); // central difference
            /// assert!((op::partial_b(&a, &b, &f(a, b)) - slope).abs() < 1e-6);
            /// ```
            #[allow(unused_variables)]
            pub fn partial_b<V: Value>($a: &V, $b: &V, $y: &V) -> V {
                $pb
            }
            /// JVP rule; `None` is a symbolic-zero tangent.
            ///
            /// ```
            #[doc = concat!("use nabla::{primitives::binary::", stringify!($name), " as op, Value};")]
            /// let (a, b) = (2.0f64, 3.0f64);
            #[doc = concat!("let y = Value::", stringify!($name), "(&a, &b);")]
            /// let (pa, pb) = (op::partial_a(&a, &b, &y), op::partial_b(&a, &b, &y));
            /// assert_eq!(op::jvp(&a, &b, &y, Some(&2.0), Some(&0.5)), 2.0 * pa + 0.5 * pb);
            /// assert_eq!(op::jvp(&a, &b, &y, None, None), 0.0);
            /// ```
            #[inline(always)]
            pub fn jvp<V: Value>(a: &V, b: &V, y: &V, da: Option<&V>, db: Option<&V>) -> V {
                jvp_from(y, da.map(|d| (d, partial_a(a, b, y))), db.map(|d| (d, partial_b(a, b, y))))
            }
            /// VJP rule for `a`.
            ///
            /// ```
            #[doc = concat!("use nabla::{primitives::binary::", stringify!($name), " as op, Array, DType};")]
            /// let (a, b) = (Array::scalar(2.0f64), Array::full(&[3], 3.0, DType::F64));
            /// let y = op::forward(&a, &b);
            /// let g = op::vjp_0(&a, &b, &y, &Array::ones(&[3], DType::F64)); // summed to `a`'s shape
            /// let pa = op::partial_a(&2.0f64, &3.0, &y.to_vec::<f64>()[0]);
            /// assert!(g.shape().is_empty() && (g.item() - 3.0 * pa).abs() < 1e-12);
            /// ```
            pub fn vjp_0<V: Value>(a: &V, b: &V, y: &V, ct: &V) -> V {
                unbroadcast(ct.mul(&partial_a(a, b, y)), a)
            }
            /// VJP rule for `b`.
            ///
            /// ```
            #[doc = concat!("use nabla::{primitives::binary::", stringify!($name), " as op, Array, DType};")]
            /// let (a, b) = (Array::full(&[3], 2.0, DType::F64), Array::scalar(3.0f64));
            /// let y = op::forward(&a, &b);
            /// let g = op::vjp_1(&a, &b, &y, &Array::ones(&[3], DType::F64)); // summed to `b`'s shape
            /// let pb = op::partial_b(&2.0f64, &3.0, &y.to_vec::<f64>()[0]);
            /// assert!(g.shape().is_empty() && (g.item() - 3.0 * pb).abs() < 1e-12);
            /// ```
            pub fn vjp_1<V: Value>(a: &V, b: &V, y: &V, ct: &V) -> V {
                unbroadcast(ct.mul(&partial_b(a, b, y)), b)
            }
            binary_primitive!(@from_inputs $reads $name);
        }
    };
    (@from_inputs inputs $name:ident) => {
        /// [`vjp_0`] without the output: these partials read only `a` and
        /// `b` (`reads: inputs` in the registry), so an output-only tail can
        /// skip computing `y`. `ct` need only broadcast to the output's shape.
        ///
        /// ```
        #[doc = concat!("use nabla::{primitives::binary::", stringify!($name), " as op, Value};")]
        /// let (a, b) = (2.0f64, 3.0f64);
        #[doc = concat!("let y = Value::", stringify!($name), "(&a, &b);")]
        /// assert_eq!(op::vjp_0_from_inputs(&a, &b, &1.5), op::vjp_0(&a, &b, &y, &1.5));
        /// ```
        pub fn vjp_0_from_inputs<V: Value>(a: &V, b: &V, ct: &V) -> V {
            unbroadcast(ct.mul(&partial_a(a, b, a)), a)
        }
        /// [`vjp_1`] without the output (see [`vjp_0_from_inputs`]).
        ///
        /// ```
        #[doc = concat!("use nabla::{primitives::binary::", stringify!($name), " as op, Value};")]
        /// let (a, b) = (2.0f64, 3.0f64);
        #[doc = concat!("let y = Value::", stringify!($name), "(&a, &b);")]
        /// assert_eq!(op::vjp_1_from_inputs(&a, &b, &1.5), op::vjp_1(&a, &b, &y, &1.5));
        /// ```
        pub fn vjp_1_from_inputs<V: Value>(a: &V, b: &V, ct: &V) -> V {
            unbroadcast(ct.mul(&partial_b(a, b, a)), b)
        }
    };
    (@from_inputs $reads:ident $name:ident) => {};
}
pub(crate) use binary_primitive;

nabla_ops::binary_ops!(binary_modules);

/// `a + b`.
pub mod add {
    use super::*;
    /// Forward: the broadcasting kernel.
    ///
    /// ```
    /// use nabla::{primitives::binary::add, Array};
    /// let a = Array::from_vec(vec![1.0f64, 2.0], &[2, 1]);
    /// let b = Array::from_vec(vec![10.0f64, 20.0], &[2]);
    /// assert_eq!(add::forward(&a, &b).to_vec::<f64>(), vec![11.0, 21.0, 12.0, 22.0]);
    /// ```
    #[track_caller]
    pub fn forward(a: &Array, b: &Array) -> Array {
        binary_forward(a, b, BinaryOp::Add, "add")
    }
    /// JVP rule: `ȧ + ḃ`.
    ///
    /// ```
    /// use nabla::{primitives::binary::add, Array, DType};
    /// let (a, b) = (Array::zeros(&[2, 1], DType::F64), Array::zeros(&[2], DType::F64));
    /// let y = add::forward(&a, &b);
    /// let da = Array::from_vec(vec![1.0f64, 2.0], &[2, 1]);
    /// let t = add::jvp(&a, &b, &y, Some(&da), None); // widened to the output's shape
    /// assert_eq!((t.shape(), t.to_vec::<f64>()), (&[2, 2][..], vec![1.0, 1.0, 2.0, 2.0]));
    /// ```
    #[inline(always)]
    pub fn jvp<V: Value>(_a: &V, _b: &V, y: &V, da: Option<&V>, db: Option<&V>) -> V {
        match (da, db) {
            (Some(x), Some(z)) => x.add(z),
            (Some(t), None) | (None, Some(t)) => widened(t.clone(), y),
            (None, None) => y.zeros_like(),
        }
    }
    /// VJP rule for `a`: `ȳ` summed to `a`'s shape.
    ///
    /// ```
    /// use nabla::{primitives::binary::add, Array, DType};
    /// let (a, b) = (Array::zeros(&[2, 1], DType::F64), Array::zeros(&[2], DType::F64));
    /// let ct = Array::ones(&[2, 2], DType::F64);
    /// assert_eq!(add::vjp_0(&a, &b, &ct, &ct).to_vec::<f64>(), vec![2.0, 2.0]);
    /// ```
    pub fn vjp_0<V: Value>(a: &V, _b: &V, _y: &V, ct: &V) -> V {
        unbroadcast(ct.clone(), a)
    }
    /// VJP rule for `b`.
    ///
    /// ```
    /// use nabla::{primitives::binary::add, Array, DType};
    /// let (a, b) = (Array::zeros(&[2, 3], DType::F64), Array::scalar(0.0f64));
    /// let ct = Array::ones(&[2, 3], DType::F64);
    /// assert_eq!(add::vjp_1(&a, &b, &ct, &ct).item(), 6.0); // summed to `b`'s shape
    /// ```
    pub fn vjp_1<V: Value>(_a: &V, b: &V, _y: &V, ct: &V) -> V {
        unbroadcast(ct.clone(), b)
    }
}

/// `a - b`.
pub mod sub {
    use super::*;
    /// Forward: the broadcasting kernel.
    ///
    /// ```
    /// use nabla::{primitives::binary::sub, Array};
    /// let a = Array::from_vec(vec![5.0f64, 7.0], &[2]);
    /// assert_eq!(sub::forward(&a, &Array::scalar(1.0f64)).to_vec::<f64>(), vec![4.0, 6.0]);
    /// ```
    #[track_caller]
    pub fn forward(a: &Array, b: &Array) -> Array {
        binary_forward(a, b, BinaryOp::Sub, "sub")
    }
    /// JVP rule: `ȧ - ḃ`.
    ///
    /// ```
    /// use nabla::primitives::binary::sub;
    /// assert_eq!(sub::jvp(&5.0f64, &1.0, &4.0, Some(&2.0), Some(&0.5)), 1.5);
    /// assert_eq!(sub::jvp(&5.0f64, &1.0, &4.0, None, Some(&0.5)), -0.5);
    /// ```
    #[inline(always)]
    pub fn jvp<V: Value>(_a: &V, _b: &V, y: &V, da: Option<&V>, db: Option<&V>) -> V {
        match (da, db) {
            (Some(x), Some(z)) => x.sub(z),
            (Some(t), None) => widened(t.clone(), y),
            (None, Some(t)) => widened(t.neg(), y),
            (None, None) => y.zeros_like(),
        }
    }
    /// VJP rule for `a`.
    ///
    /// ```
    /// use nabla::primitives::binary::sub;
    /// assert_eq!(sub::vjp_0(&5.0f64, &1.0, &4.0, &2.0), 2.0);
    /// ```
    pub fn vjp_0<V: Value>(a: &V, _b: &V, _y: &V, ct: &V) -> V {
        unbroadcast(ct.clone(), a)
    }
    /// VJP rule for `b`: `-ȳ` summed to `b`'s shape.
    ///
    /// ```
    /// use nabla::{primitives::binary::sub, Array, DType};
    /// let (a, b) = (Array::zeros(&[3], DType::F64), Array::scalar(0.0f64));
    /// let ct = Array::ones(&[3], DType::F64);
    /// assert_eq!(sub::vjp_1(&a, &b, &ct, &ct).item(), -3.0);
    /// ```
    pub fn vjp_1<V: Value>(_a: &V, b: &V, _y: &V, ct: &V) -> V {
        unbroadcast(ct.neg(), b)
    }
}

binary_primitive! {
    /// `a * b`.
    mul = BinaryOp::Mul, partials |a, b, y| (b.clone(), a.clone()) inputs
}

impl Array {
    /// `self + other` elementwise with broadcasting (the `+` operator).
    ///
    /// ```
    /// # use nabla::Array;
    /// assert_eq!(Array::scalar(2.0f64).add(&Array::scalar(3.0f64)).item(), 5.0);
    /// ```
    #[track_caller]
    pub fn add(&self, other: &Array) -> Array {
        apply(
            self,
            other,
            "add",
            BinaryOp::Add,
            add::vjp_0::<Array>,
            add::vjp_1::<Array>,
        )
    }
    /// `self - other` elementwise with broadcasting (the `-` operator).
    ///
    /// ```
    /// # use nabla::Array;
    /// assert_eq!(Array::scalar(2.0f64).sub(&Array::scalar(3.0f64)).item(), -1.0);
    /// ```
    #[track_caller]
    pub fn sub(&self, other: &Array) -> Array {
        apply(
            self,
            other,
            "sub",
            BinaryOp::Sub,
            sub::vjp_0::<Array>,
            sub::vjp_1::<Array>,
        )
    }
    /// `self * other` elementwise with broadcasting (the `*` operator).
    ///
    /// ```
    /// # use nabla::Array;
    /// assert_eq!(Array::scalar(2.0f64).mul(&Array::scalar(3.0f64)).item(), 6.0);
    /// ```
    #[track_caller]
    pub fn mul(&self, other: &Array) -> Array {
        apply(
            self,
            other,
            "mul",
            BinaryOp::Mul,
            mul::vjp_0::<Array>,
            mul::vjp_1::<Array>,
        )
    }
}

/// `a · b · c` for a constant `c`, in one pass (a fused multiply; the JVP
/// and VJP of `square` use it). Its own rules sit here with its kernel.
pub mod mul_scaled {
    use super::*;
    /// Forward: the fused kernel (a product and a scale on a GPU).
    ///
    /// ```
    /// use nabla::{primitives::binary::mul_scaled, Array};
    /// let a = Array::from_vec(vec![1.0f64, 2.0], &[2]);
    /// let b = Array::from_vec(vec![3.0f64, 4.0], &[2]);
    /// assert_eq!(mul_scaled::forward(&a, &b, 0.5).to_vec::<f64>(), vec![1.5, 4.0]);
    /// ```
    #[track_caller]
    pub fn forward(a: &Array, b: &Array, c: f64) -> Array {
        let y = kernel(a, b, c);
        crate::array::nans::check("mul_scaled", &[a, b], &y);
        y
    }

    #[track_caller]
    fn kernel(a: &Array, b: &Array, c: f64) -> Array {
        check_binary("mul_scaled", a, b);
        crate::array::on_gpus!("mul_scaled", [a, b], |g| nabla_kernels::cuda::unary(
            &nabla_kernels::cuda::binary(&g[0], &g[1], BinaryOp::Mul),
            nabla_kernels::elementwise::UnaryOp::Affine(c, 0.0)
        ));
        Array::from_data(float_map2!(
            &*a.data,
            &*b.data,
            |x, y| nabla_kernels::elementwise::mul_scaled(x.view(), y.view(), c),
            unreachable!()
        ))
    }
    /// JVP rule: `ẏ = c · (ȧ · b + a · ḃ)`, skipping symbolic zeros.
    ///
    /// ```
    /// use nabla::primitives::binary::mul_scaled;
    /// // y = 0.5·a·b at a = 2, b = 3: ẏ = 0.5·(ȧ·3 + 2·ḃ)
    /// assert_eq!(mul_scaled::jvp(&2.0f64, &3.0, &3.0, Some(&1.0), Some(&1.0), 0.5), 2.5);
    /// ```
    #[inline(always)]
    pub fn jvp<V: Value>(a: &V, b: &V, y: &V, da: Option<&V>, db: Option<&V>, c: f64) -> V {
        let ta = da.map(|d| d.mul_scaled(b, c));
        let tb = db.map(|d| a.mul_scaled(d, c));
        match (ta, tb) {
            (Some(x), Some(z)) => x.add(&z),
            (Some(x), None) | (None, Some(x)) => widened(x, y),
            (None, None) => y.zeros_like(),
        }
    }
    /// VJP rule: `(c · ȳ · b, c · ȳ · a)`, each summed back to its shape.
    ///
    /// ```
    /// use nabla::primitives::binary::mul_scaled;
    /// assert_eq!(mul_scaled::vjp(&2.0f64, &3.0, &1.0, 0.5), (1.5, 1.0));
    /// ```
    pub fn vjp<V: Value>(a: &V, b: &V, ct: &V, c: f64) -> (V, V) {
        (
            unbroadcast(ct.mul_scaled(b, c), a),
            unbroadcast(ct.mul_scaled(a, c), b),
        )
    }
}

impl Array {
    /// `self · o · c` with broadcasting, in one pass.
    ///
    /// ```
    /// # use nabla::Array;
    /// let a = Array::from_vec(vec![1.0f64, 2.0], &[2]);
    /// let b = Array::from_vec(vec![3.0f64, 4.0], &[2]);
    /// assert_eq!(a.mul_scaled(&b, 0.5).to_vec::<f64>(), vec![1.5, 4.0]);
    /// ```
    #[track_caller]
    pub fn mul_scaled(&self, o: &Array, c: f64) -> Array {
        let y = mul_scaled::forward(self, o, c);
        binary_node(y, "mul_scaled", self, o, |_| {
            let (ar, br) = (self.detach(), o.detach());
            move |ct, want| {
                [
                    want[0].then(|| unbroadcast(ct.mul_scaled(&br, c), &ar)),
                    want[1].then(|| unbroadcast(ct.mul_scaled(&ar, c), &br)),
                ]
            }
        })
    }
}

/// `x + a · b · c` (see `Value::add_mul_scaled`): in place, one pass, when
/// nothing is recorded on the tape, all three are host float arrays of one
/// dtype and `a`, `b` broadcast to `x`'s shape in a way the kernel handles
/// (`add_mul_scaled_into`); `x` is taken by value, so its buffer is reused
/// when no one else holds it (copy-on-write otherwise). Anything else
/// composes.
pub(crate) fn add_mul_scaled(mut x: Array, a: &Array, b: &Array, c: f64) -> Array {
    use crate::storage::Data;
    use nabla_kernels::elementwise::add_mul_scaled_into;
    if !crate::autograd::needs_grad(&[&x, a, b]) {
        let done = match (std::sync::Arc::make_mut(&mut x.data), &*a.data, &*b.data) {
            (Data::F64(x), Data::F64(a), Data::F64(b)) => {
                add_mul_scaled_into(&mut x.view_mut(), a.view(), b.view(), c)
            }
            (Data::F32(x), Data::F32(a), Data::F32(b)) => {
                add_mul_scaled_into(&mut x.view_mut(), a.view(), b.view(), c)
            }
            _ => false,
        };
        if done {
            return x;
        }
    }
    Value::add(&x, &a.mul_scaled(b, c))
}
