//! Machine code for `nabla.jit`'s fused loops.
//!
//! [`nabla::dynamic::record`](nabla_runtime::dynamic::record) (and so the
//! Python package's `nabla.jit`) replays runs of elementwise instructions
//! as one pass; without a code generator that pass interprets the
//! registry's kernels block by block. [`install`] registers this crate's
//! generator: each run is compiled once, when it is recorded, into a loop
//! that keeps the intermediates in vector registers (Cranelift, 128-bit
//! lanes, the host's instruction set). The results equal the
//! interpreter's bit for bit; sums add in another fixed order.
//!
//! The generator takes the arithmetic kernels (`+ - * /`, negation,
//! absolute value, square root, reciprocals, squares and small integer
//! powers, `relu`, `maximum`/`minimum`, floor, ceiling and the affine
//! forms the fusion pass makes); a run with any other kernel (`exp`,
//! `tanh`, ...) stays with the interpreter, whose kernels for those are
//! vectorised already. `NABLA_JIT_DUMP=1` prints each body, its
//! Cranelift IR and the machine code to standard error.
//!
//! ```
//! use nabla::dynamic::{grad, record, Dyn};
//! use nabla::{Array, ArrayValue, Value};
//! nabla_jit::install();
//! let rosen = |x: &Dyn| {
//!     let a = x.slice(&[ndarray::Slice::new(0, Some(-1), 1)]);
//!     let b = x.slice(&[ndarray::Slice::new(1, None, 1)]);
//!     let t = b.sub(&a.mul(&a)).powi(2).mul_scalar(100.0);
//!     t.add(&a.neg().add_scalar(1.0).powi(2)).sum_axes(&[0], false)
//! };
//! let x = Dyn::from(Array::from_vec((0..5000).map(|i| (i as f64 * 0.1).sin()).collect(), &[5000]));
//! let (_, program) = record(|x| vec![grad(rosen, &x[0])], std::slice::from_ref(&x));
//! let g = program.run(std::slice::from_ref(&x));
//! assert_eq!(g[0].to_array().to_vec::<f64>(), grad(rosen, &x).to_array().to_vec::<f64>());
//! ```

mod emit;

use nabla_runtime::dynamic::loops::{CompiledLoop, LoopBody, LoopCompiler, set_loop_compiler};

/// Registers the generator for every fused run recorded from now on;
/// true where this call installed it (false when a generator was already
/// installed). `NABLA_JIT_CODEGEN=0` in the environment keeps the
/// interpreter (for A/B measurements).
///
/// ```
/// nabla_jit::install();
/// assert!(!nabla_jit::install()); // once is enough
/// ```
pub fn install() -> bool {
    static GENERATOR: Cranelift = Cranelift;
    set_loop_compiler(&GENERATOR)
}

/// The Cranelift code generator (see the crate docs).
///
/// ```
/// use nabla::dynamic::loops::{BinaryOp, Expr, LoopBody, LoopCompiler, Sink};
/// let body = LoopBody {
///     dtype: nabla::DType::F64,
///     inputs: 1,
///     exprs: vec![Expr::Load { input: 0, offset: 0 }, Expr::Binary(BinaryOp::Mul, 0, 0)],
///     sinks: vec![(1, Sink::Sum(0))],
/// };
/// let code = nabla_jit::Cranelift.compile(&body).expect("arithmetic compiles");
/// let x = [1.0f64, 2.0, 3.0];
/// let mut sums = [0.0];
/// // SAFETY: the body loads x[i] for i < 3 and stores nothing.
/// unsafe { code.run(&[x.as_ptr().cast()], &[std::ptr::null_mut()], 0, 3, &mut sums) };
/// assert_eq!(sums, [14.0]);
/// ```
pub struct Cranelift;

impl LoopCompiler for Cranelift {
    fn compile(&self, body: &LoopBody) -> Option<Box<dyn CompiledLoop>> {
        emit::compile(body).map(|l| Box::new(l) as Box<dyn CompiledLoop>)
    }
}
