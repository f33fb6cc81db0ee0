//! Fused elementwise regions: `#[differentiable]` groups a chain of
//! elementwise operations (`tail - head.square()`, `d.square() * 100.0 +
//! (1.0 - head).square()`) into one region and calls it through
//! [`forward`] and [`vjp`]. On CPU arrays of one float dtype that nothing
//! records on the tape, the region runs as **one pass** over its inputs
//! (broadcast against each other), evaluating the region's scalar program
//! per element, and its pullback as one more pass that evaluates the
//! scalar VJP per element (the region's forward recomputed in registers,
//! as XLA does) before summing each input's cotangent to its shape. Any
//! other value (a GPU array, a tracked array, `Dual`, `Batched`, mixed
//! dtypes) runs the region op by op, exactly as without fusion.
//!
//! ```
//! use nabla::Array;
//!
//! #[nabla::differentiable]
//! fn rosenbrock(x: &Array) -> Array {
//!     let n = x.shape()[0];
//!     let (head, tail) = (x.slice_axis(0, 0..n - 1), x.slice_axis(0, 1..n));
//!     nabla::sum(&((tail - head.square()).square() * 100.0 + (1.0 - head).square()))
//! }
//!
//! fn main() {
//!     let x = Array::from_vec(vec![1.0f64, 1.0, 1.0], &[3]);
//!     // The minimum: value 0, gradient 0 (one fused pass each way).
//!     assert_eq!(rosenbrock(&x).item(), 0.0);
//!     assert_eq!(nabla::grad(rosenbrock)(&x).to_vec::<f64>(), vec![0.0; 3]);
//! }
//! ```

use crate::dtype::Data;
use crate::{Array, ArrayValue, DType, Value};
use ndarray::{ArcArray, IxDyn};
use std::any::{Any, TypeId};

thread_local! {
    static PASSES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// How many fused passes (forward or pullback) this thread has run: what
/// tests read to tell a fused program from an op-by-op one.
///
/// ```
/// use nabla::Array;
///
/// #[nabla::differentiable]
/// fn f(x: &Array) -> Array {
///     (x.sin() * x + 1.0).sum()
/// }
///
/// fn main() {
///     let before = nabla::fused::passes();
///     f(&Array::ones(&[4], nabla::DType::F64));
///     assert_eq!(nabla::fused::passes(), before + 1);
/// }
/// ```
pub fn passes() -> usize {
    PASSES.with(|p| p.get())
}

fn count_pass() {
    PASSES.with(|p| p.set(p.get() + 1));
}

/// A fused region of `N` inputs and one output, written by
/// `#[differentiable]` from the region's own generated programs.
#[doc(hidden)]
pub trait Region<const N: usize>: 'static {
    /// The region at one element.
    fn scalar<T: Value + Copy>(x: [T; N]) -> T;
    /// The inputs' cotangents at one element, for the output's `ct`.
    fn scalar_vjp<T: Value + Copy>(x: [T; N], ct: T) -> [T; N];
    /// The region op by op, at any value type.
    fn ops<V: ArrayValue>(x: [&V; N]) -> V;
    /// The region's VJP op by op, at any value type.
    #[allow(clippy::type_complexity)]
    fn ops_vjp<V: ArrayValue>(x: [&V; N]) -> (V, impl FnOnce(V) -> [V; N] + use<V, Self, N>);
}

/// The region `R` on `x`: one pass when the kernel applies, op by op
/// otherwise.
#[doc(hidden)]
#[track_caller]
pub fn forward<V: ArrayValue, R: Region<N>, const N: usize>(x: [&V; N]) -> V {
    if let Some(a) = arrays(&x)
        && let Some(y) = kernel_forward::<R, N>(a)
    {
        return from_array(y);
    }
    R::ops(x)
}

/// The region's pullback: the saved inputs of a fused pass, or the op-by-op
/// pullback.
enum Pullback<P, const N: usize> {
    Fused([Array; N]),
    Ops(P),
}

/// The region `R` on `x` and its pullback.
#[doc(hidden)]
#[track_caller]
#[allow(clippy::type_complexity)]
pub fn vjp<V: ArrayValue, R: Region<N>, const N: usize>(
    x: [&V; N],
) -> (V, impl FnOnce(V) -> [V; N] + use<V, R, N>) {
    let fused = arrays(&x).and_then(|a| Some((kernel_forward::<R, N>(a)?, a.map(Array::clone))));
    let (y, pb) = match fused {
        Some((y, saved)) => (from_array(y), Pullback::Fused(saved)),
        None => {
            let (y, p) = R::ops_vjp(x);
            (y, Pullback::Ops(p))
        }
    };
    (y, move |ct: V| match pb {
        Pullback::Fused(saved) => {
            let ct = to_array(ct);
            let refs: [&Array; N] = std::array::from_fn(|k| &saved[k]);
            match kernel_vjp::<R, N>(refs, &ct) {
                Some(cts) => cts.map(from_array),
                None => R::ops_vjp(refs).1(ct).map(from_array),
            }
        }
        Pullback::Ops(p) => p(ct),
    })
}

/// `x` as arrays when `V` is `Array`.
fn arrays<'a, V: 'static, const N: usize>(x: &[&'a V; N]) -> Option<[&'a Array; N]> {
    if TypeId::of::<V>() != TypeId::of::<Array>() {
        return None;
    }
    Some(x.map(|v| (v as &dyn Any).downcast_ref::<Array>().expect("V is Array")))
}

/// An array as `V` (which is `Array`).
fn from_array<V: 'static>(y: Array) -> V {
    let mut slot = Some(y);
    (&mut slot as &mut dyn Any)
        .downcast_mut::<Option<V>>()
        .expect("V is Array")
        .take()
        .expect("set")
}

/// A `V` (which is `Array`) as an array.
fn to_array<V: 'static>(v: V) -> Array {
    let mut slot = Some(v);
    (&mut slot as &mut dyn Any)
        .downcast_mut::<Option<Array>>()
        .expect("V is Array")
        .take()
        .expect("set")
}

/// The float dtype and broadcast shape of arrays the kernel can take: CPU,
/// one float dtype, nothing tracked, shapes that broadcast (otherwise the
/// op-by-op path reports the error).
fn kernel_shape(a: &[&Array]) -> Option<(DType, crate::Shape)> {
    let dtype = a.first()?.dtype();
    if !matches!(dtype, DType::F32 | DType::F64) {
        return None;
    }
    let mut shape = crate::Shape::new();
    for x in a {
        if x.dtype() != dtype || x.is_tracked() || !matches!(&*x.data, Data::F32(_) | Data::F64(_))
        {
            return None;
        }
        shape = nabla_kernels::elementwise::try_broadcast_shape(&shape, x.shape())?;
    }
    Some((dtype, shape))
}

/// The fused forward pass, when it applies.
fn kernel_forward<R: Region<N>, const N: usize>(a: [&Array; N]) -> Option<Array> {
    let (dtype, shape) = kernel_shape(&a)?;
    count_pass();
    Some(match dtype {
        DType::F64 => forward_pass::<R, N, f64>(a, &shape),
        _ => forward_pass::<R, N, f32>(a, &shape),
    })
}

fn forward_pass<R: Region<N>, const N: usize, T: Kernel>(a: [&Array; N], shape: &[usize]) -> Array {
    let ins: [Operand<T>; N] = std::array::from_fn(|k| Operand::of(a[k], shape));
    let src: [Src<'_, T>; N] = std::array::from_fn(|k| ins[k].src());
    let n: usize = shape.iter().product();
    let mut out: Vec<T> = Vec::with_capacity(n);
    match slices(&src, n) {
        // Every operand a buffer: plain indexing the compiler can check once.
        Some(sl) => out.extend((0..n).map(|i| R::scalar(std::array::from_fn(|k| sl[k][i])))),
        None => out.extend((0..n).map(|i| R::scalar(each(&src, i)))),
    }
    Array::from_vec(out, shape)
}

/// The operands' buffers cut to `n` elements, when every one is a buffer.
fn slices<'a, T: Copy, const N: usize>(src: &[Src<'a, T>; N], n: usize) -> Option<[&'a [T]; N]> {
    let mut out: [&[T]; N] = [&[]; N];
    for (o, s) in out.iter_mut().zip(src) {
        match s {
            Src::Slice(x) => *o = &x[..n],
            Src::Scalar(_) => return None,
        }
    }
    Some(out)
}

/// The fused pullback pass, when it applies: each input's cotangent at the
/// broadcast shape, summed to the input's shape.
fn kernel_vjp<R: Region<N>, const N: usize>(a: [&Array; N], ct: &Array) -> Option<[Array; N]> {
    let mut all: Vec<&Array> = a.to_vec();
    all.push(ct);
    let (dtype, shape) = kernel_shape(&all)?;
    count_pass();
    let full = match dtype {
        DType::F64 => vjp_pass::<R, N, f64>(a, ct, &shape),
        _ => vjp_pass::<R, N, f32>(a, ct, &shape),
    };
    Some(std::array::from_fn(|k| {
        let g = &full[k];
        if a[k].shape() == &shape[..] {
            g.clone()
        } else {
            g.sum_to_shape(a[k].shape())
        }
    }))
}

fn vjp_pass<R: Region<N>, const N: usize, T: Kernel>(
    a: [&Array; N],
    ct: &Array,
    shape: &[usize],
) -> [Array; N] {
    let ins: [Operand<T>; N] = std::array::from_fn(|k| Operand::of(a[k], shape));
    let src: [Src<'_, T>; N] = std::array::from_fn(|k| ins[k].src());
    let c = Operand::<T>::of(ct, shape);
    let c = c.src();
    let n: usize = shape.iter().product();
    let zero = T::from_f64(0.0);
    let mut outs: [Vec<T>; N] = std::array::from_fn(|_| vec![zero; n]);
    {
        let mut dst: [&mut [T]; N] = outs.each_mut().map(|o| &mut o[..n]);
        match (slices(&src, n), c) {
            (Some(sl), Src::Slice(cs)) => {
                let cs = &cs[..n];
                for i in 0..n {
                    let g = R::scalar_vjp(std::array::from_fn(|k| sl[k][i]), cs[i]);
                    for (d, g) in dst.iter_mut().zip(g) {
                        d[i] = g;
                    }
                }
            }
            _ => {
                for i in 0..n {
                    let g = R::scalar_vjp(each(&src, i), c.at(i));
                    for (d, g) in dst.iter_mut().zip(g) {
                        d[i] = g;
                    }
                }
            }
        }
    }
    outs.map(|o| Array::from_vec(o, shape))
}

/// The float element types the kernel runs on.
trait Kernel: Value + Copy + crate::dtype::Element {
    fn typed(d: &Data) -> &ArcArray<Self, IxDyn>;
}
impl Kernel for f64 {
    fn typed(d: &Data) -> &ArcArray<f64, IxDyn> {
        match d {
            Data::F64(a) => a,
            _ => unreachable!("checked dtype"),
        }
    }
}
impl Kernel for f32 {
    fn typed(d: &Data) -> &ArcArray<f32, IxDyn> {
        match d {
            Data::F32(a) => a,
            _ => unreachable!("checked dtype"),
        }
    }
}

/// One input of a pass: a contiguous buffer of the broadcast shape, or one
/// element broadcast everywhere.
enum Operand<T: 'static> {
    Buffer(ArcArray<T, IxDyn>),
    Scalar(T),
}

impl<T: Kernel> Operand<T> {
    /// `x` read at the broadcast `shape`: its own buffer when it has that
    /// shape in standard layout, its element when it has one, else a
    /// contiguous broadcast copy.
    fn of(x: &Array, shape: &[usize]) -> Operand<T> {
        let a = T::typed(&x.data);
        if a.len() == 1 {
            return Operand::Scalar(*a.iter().next().expect("one element"));
        }
        if a.shape() == shape && a.is_standard_layout() {
            return Operand::Buffer(a.clone());
        }
        let b = a
            .broadcast(IxDyn(shape))
            .expect("shapes broadcast (checked)")
            .as_standard_layout()
            .into_owned();
        Operand::Buffer(b.into_shared())
    }

    /// Its elements as a pass reads them.
    fn src(&self) -> Src<'_, T> {
        match self {
            Operand::Buffer(b) => Src::Slice(b.as_slice_memory_order().expect("standard layout")),
            Operand::Scalar(s) => Src::Scalar(*s),
        }
    }
}

/// An operand's elements: a buffer of the broadcast shape, or one element.
#[derive(Clone, Copy)]
enum Src<'a, T> {
    Slice(&'a [T]),
    Scalar(T),
}

impl<T: Copy> Src<'_, T> {
    #[inline(always)]
    fn at(&self, i: usize) -> T {
        match self {
            Src::Slice(s) => s[i],
            Src::Scalar(v) => *v,
        }
    }
}

/// Element `i` of every operand.
#[inline(always)]
fn each<T: Copy, const N: usize>(src: &[Src<'_, T>; N], i: usize) -> [T; N] {
    std::array::from_fn(|k| src[k].at(i))
}
