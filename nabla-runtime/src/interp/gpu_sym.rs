//! Fused regions on the GPU: a region's float-tier program, generic over
//! [`Value`], is run once at [`Sym`] — a value that writes CUDA C instead
//! of computing — and the statements it writes become the body of one
//! kernel (`nabla_kernels::cuda::fused`), compiled by NVRTC once per
//! device and cached like every other kernel. The forward program and the
//! VJP program of each region are written once per process (keyed by the
//! region's type) and work for `f32` and `f64`.
//!
//! On the device a region reads its operands through their layouts, so a
//! broadcast operand (a bias row, a row's mean) is never copied: the
//! forward pass writes the region's result (or, for a region ending in
//! `sum`/`mean`, one partial sum per block), and the pullback writes each
//! operand's cotangent at the broadcast shape in the same kernel; those of
//! broadcast operands are then summed to their shapes.

use crate::fused::pass;
use crate::fused::region::{Input, Region};
use crate::storage::Data;
use crate::{Array, Shape, Value};
use nabla_kernels::cuda::{FusedBody, GpuArray};
use nabla_kernels::elementwise::{BinaryOp, CompareOp, UnaryOp};
use std::any::TypeId;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Operands one kernel reads at most (the kernel's parameters hold a
/// layout per operand); larger regions run op by op.
const MAX_OPERANDS: usize = 20;

thread_local! {
    /// The statements written so far by the program being run at [`Sym`].
    static CODE: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// One value of a region's program as CUDA C: the statement `T t<i> = ..;`
/// that computes it.
#[derive(Clone, Copy, Debug)]
pub struct Sym(u32);

impl Sym {
    /// A new statement computing `expr`.
    fn emit(expr: String) -> Sym {
        CODE.with(|c| {
            let mut c = c.borrow_mut();
            let i = c.len();
            c.push(format!("T t{i} = {expr};"));
            Sym(i as u32)
        })
    }

    fn unary(&self, op: UnaryOp) -> Sym {
        let (code, p, q) = op.code();
        Sym::emit(format!(
            "unary_op<T>({code}, {self}, {}, {})",
            literal(p),
            literal(q)
        ))
    }

    fn binary(&self, o: &Sym, op: BinaryOp) -> Sym {
        Sym::emit(format!("binary_op<T>({}, {self}, {o})", op.code()))
    }
}

impl std::fmt::Display for Sym {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "t{}", self.0)
    }
}

/// `v` as an exact C `double` expression.
fn literal(v: f64) -> String {
    if v.is_finite() {
        // Rust's shortest round-trip form, in C's exponent syntax.
        format!("{v:e}")
    } else {
        format!("__longlong_as_double({:#x}LL)", v.to_bits())
    }
}

/// `c` as a constant of the element type.
fn constant(c: f64) -> String {
    format!("((T){})", literal(c))
}

macro_rules! sym_methods {
    ($(
        $(#[$doc:meta])*
        $name:ident $kind:ident $(($($p:ident: $pt:ty),*))? {
            method: $method:ident, func: $func:ident,
            $($body:tt)*
        }
    )*) => {
        $( sym_methods!(@one $kind [$($($p: $pt),*)?] $method); )*
    };
    (@one $kind:ident [$($p:ident: $pt:ty),*] $method:ident) => {
        fn $method(&self $(, $p: $pt)*) -> Self {
            self.unary(UnaryOp::$kind($($p),*))
        }
    };
}

macro_rules! sym_methods2 {
    ($(
        $(#[$doc:meta])*
        $name:ident $kind:ident {
            method: $method:ident, func: $func:ident,
            $($body:tt)*
        }
    )*) => {
        $(
            fn $method(&self, o: &Self) -> Self {
                self.binary(o, BinaryOp::$kind)
            }
        )*
    };
}

impl Value for Sym {
    fn shape_vec(&self) -> Shape {
        Shape::new()
    }
    fn full_like(&self, v: f64) -> Self {
        Sym::emit(constant(v))
    }
    fn add_scalar(&self, c: f64) -> Self {
        Sym::emit(format!("{self} + {}", constant(c)))
    }
    fn mul_scalar(&self, c: f64) -> Self {
        Sym::emit(format!("{self} * {}", constant(c)))
    }
    fn mul_scaled(&self, o: &Self, c: f64) -> Self {
        Sym::emit(format!("{self} * {o} * {}", constant(c)))
    }
    fn add_mul_scaled(self, a: &Self, b: &Self, c: f64) -> Self {
        Sym::emit(format!("{self} + {a} * {b} * {}", constant(c)))
    }
    fn fused_rule<R: crate::ElementwiseRule>(a: &Self, b: &Self, c: &Self) -> Self {
        R::eval(a, b, c)
    }
    nabla_ops::unary_ops!(sym_methods);
    nabla_ops::binary_ops!(sym_methods2);
    fn cmp_mask(&self, o: &Self, op: CompareOp) -> Self {
        Sym::emit(format!(
            "compare_op<T>({}, {self}, {o}) ? (T)1 : (T)0",
            op as i32
        ))
    }
    /// Regions are elementwise over one broadcast shape.
    fn sum_to_shape(&self, _shape: &[usize]) -> Self {
        *self
    }
    fn broadcast_to(&self, _shape: &[usize]) -> Self {
        *self
    }
    fn stop_gradient(&self) -> Self {
        *self
    }
    #[track_caller]
    fn item_f64(&self) -> f64 {
        panic!("a fused region does not read `item()`; this is a bug in #[differentiable]'s fusion")
    }
}

/// Runs `program` on `inputs` symbolic operands and returns the kernel
/// body: the statements, then `y<k> = ..;` for each output.
fn write(inputs: usize, program: impl FnOnce(&[Sym]) -> Vec<Sym>) -> FusedBody {
    CODE.with(|c| c.borrow_mut().clear());
    let xs: Vec<Sym> = (0..inputs).map(|k| Sym::emit(format!("v{k}"))).collect();
    let outs = program(&xs);
    let mut code = CODE
        .with(|c| std::mem::take(&mut *c.borrow_mut()))
        .join("\n");
    for (k, y) in outs.iter().enumerate() {
        code.push_str(&format!("\ny{k} = {y};"));
    }
    FusedBody::new(inputs, outs.len(), code)
}

/// Which of a region's programs a body holds.
#[derive(Clone, Copy, Hash, PartialEq, Eq)]
enum Program {
    Forward,
    Vjp,
}

/// Written bodies, by region type and program.
type Bodies = Mutex<HashMap<(TypeId, Program), Arc<FusedBody>>>;

/// The body of region `R`'s `program`, written on first use.
fn body<R: Region<N>, const N: usize>(program: Program) -> Arc<FusedBody> {
    static BODIES: OnceLock<Bodies> = OnceLock::new();
    let key = (TypeId::of::<R>(), program);
    let bodies = BODIES.get_or_init(Default::default);
    if let Some(b) = bodies.lock().unwrap().get(&key) {
        return b.clone();
    }
    let b = Arc::new(match program {
        Program::Forward => write(N, |x| {
            let x: [Sym; N] = std::array::from_fn(|k| x[k]);
            vec![R::scalar(&x)]
        }),
        Program::Vjp => write(N + 1, |x| {
            let ops: [Sym; N] = std::array::from_fn(|k| x[k]);
            R::scalar_vjp(&ops, &x[N]).to_vec()
        }),
    });
    bodies.lock().unwrap().insert(key, b.clone());
    b
}

/// The device buffer of a GPU array.
fn device_data(x: &Array) -> Option<&GpuArray> {
    match &*x.data {
        Data::Cuda(g) => Some(g),
        _ => None,
    }
}

/// The region's operands when every argument is an untracked float array
/// on one GPU (same dtype) and the operands broadcast together.
pub(crate) fn operands<const N: usize, const B: usize>(
    args: &[&Array; B],
    inputs: &[Input; N],
) -> Option<[Array; N]> {
    let first = device_data(args.first()?)?;
    if N == 0
        || N + 1 > MAX_OPERANDS
        || !matches!(args[0].dtype(), crate::DType::F32 | crate::DType::F64)
    {
        return None;
    }
    for a in args {
        let g = device_data(a)?;
        if a.dtype() != args[0].dtype() || a.is_tracked() || g.ordinal() != first.ordinal() {
            return None;
        }
    }
    let ops: [Array; N] = std::array::from_fn(|k| inputs[k].of(args));
    let shape = pass::broadcast(&ops)?;
    (shape.iter().product::<usize>() > 0).then_some(ops)
}

fn buffers<'a>(ops: impl IntoIterator<Item = &'a Array>) -> Vec<&'a GpuArray> {
    ops.into_iter()
        .map(|a| device_data(a).expect("operands are GPU arrays"))
        .collect()
}

/// The region's result on the device: its elementwise result, or its sum
/// or mean (one kernel, then the blocks' partial sums added).
pub(crate) fn forward<R: Region<N>, const N: usize>(ops: &[Array; N]) -> Array {
    let shape = pass::broadcast(ops).expect("operands broadcast");
    let b = body::<R, N>(Program::Forward);
    let bufs = buffers(ops);
    crate::array::count_pass();
    let y = if R::REDUCE {
        let scale = crate::fused::region::reduce_scale::<R, N>(shape.iter().product());
        nabla_kernels::cuda::fused_sum(&b, &bufs, &shape, scale)
    } else {
        nabla_kernels::cuda::fused_map(&b, &bufs, &[], &shape)
            .pop()
            .expect("one output")
    };
    Array::from_data(Data::Cuda(y))
}

/// The operands' cotangents for the region's cotangent `ct` (one kernel
/// writing all of them at the broadcast shape, then each summed to its
/// operand's shape), or `None` when `ct` cannot go to the device kernel
/// (tracked, or not of the operands' dtype and device).
pub(crate) fn vjp<R: Region<N>, const N: usize>(
    ops: &[Array; N],
    ct: &Array,
) -> Option<Vec<Array>> {
    let shape = pass::broadcast(ops)?;
    let g = device_data(ct)?;
    if ct.is_tracked()
        || ct.dtype() != ops[0].dtype()
        || g.ordinal() != device_data(&ops[0])?.ordinal()
    {
        return None;
    }
    let ct = if R::REDUCE {
        if ct.numel() != 1 {
            return None;
        }
        let c = ct.reshape(&[]);
        let scale = crate::fused::region::reduce_scale::<R, N>(shape.iter().product());
        if scale == 1.0 { c } else { c.mul_scalar(scale) }
    } else {
        if !nabla_kernels::elementwise::broadcasts_to(ct.shape(), &shape) {
            return None;
        }
        ct.clone()
    };
    let b = body::<R, N>(Program::Vjp);
    let mut bufs = buffers(ops);
    bufs.push(device_data(&ct).expect("on the device"));
    let gs = nabla_kernels::cuda::fused_map(&b, &bufs, &[], &shape);
    crate::array::count_pass();
    Some(
        gs.into_iter()
            .zip(ops)
            .map(|(g, x)| {
                let g = Array::from_data(Data::Cuda(g));
                if g.shape() == x.shape() {
                    g
                } else {
                    g.sum_to_shape(x.shape())
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ArrayValue;
    use crate::vocab::accumulate::OutSpec;

    /// `exp(a)·b + leaky_relu(a, 0.1) · [a > b] + powi(b, 3) − ∞`-free
    /// constants: a region touching unary ops with and without parameters,
    /// binary ops, comparisons, and a constant that is not finite.
    struct Test;
    impl Region<2> for Test {
        const REDUCE: bool = false;
        const MEAN: bool = false;
        const RESULT: bool = false;
        fn scalar<T: Value + Copy>(x: &[T; 2]) -> T {
            let (a, b) = (&x[0], &x[1]);
            a.exp()
                .mul(b)
                .add(&a.leaky_relu(0.1).mul(&a.cmp_mask(b, CompareOp::Gt)))
                .add(&b.powi(3))
                .maximum(&a.full_like(f64::NEG_INFINITY))
                .mul_scalar(0.5)
        }
        fn scalar_vjp<T: Value + Copy>(x: &[T; 2], ct: &T) -> [T; 2] {
            [x[0].exp().mul(ct), x[1].mul_scaled(ct, 3.0)]
        }
        fn ops<V: ArrayValue>(x: [&V; 2]) -> V {
            x[0].clone()
        }
        fn ops_vjp<V: ArrayValue>(x: [&V; 2]) -> (V, impl FnOnce(V) -> [V; 2] + use<V>) {
            (x[0].clone(), |c: V| [c.clone(), c])
        }
        fn ops_vjp_shapes<V: ArrayValue>(
            x: [&V; 2],
        ) -> (OutSpec, impl FnOnce(V) -> [V; 2] + use<V>) {
            (OutSpec::of(x[0]), |c: V| [c.clone(), c])
        }
    }

    #[test]
    fn region_programs_become_kernels_that_nvrtc_compiles() {
        let fwd = body::<Test, 2>(Program::Forward);
        let vjp = body::<Test, 2>(Program::Vjp);
        let src = nabla_kernels::cuda::fused_source(&fwd, "float", false);
        assert!(src.contains("unary_op<T>("), "{src}");
        assert!(
            src.contains("__longlong_as_double(0xfff0000000000000LL)"),
            "{src}"
        );
        assert!(src.contains("compare_op<T>(0, t0, t1)"), "{src}");
        // The same body twice: written once.
        assert!(Arc::ptr_eq(&fwd, &body::<Test, 2>(Program::Forward)));
        for (b, elem, sum) in [
            (&fwd, "float", false),
            (&fwd, "double", true),
            (&vjp, "float", false),
            (&vjp, "double", false),
        ] {
            let src = nabla_kernels::cuda::fused_source(b, elem, sum);
            match nabla_kernels::cuda::compile_source(&src, "fused_region.cu", 90) {
                Ok(image) => assert!(!image.is_empty()),
                Err(e) if e.0.starts_with("NVRTC (libnvrtc.so) not found") => {
                    eprintln!("skipped: {e}");
                    return;
                }
                Err(e) => panic!("{elem}: {e}\n{src}"),
            }
        }
    }
}
