//! Fused loops as data, for a code generator to compile.
//!
//! When [`crate::dynamic::record`] (and so `nabla.jit`) fuses a run of
//! elementwise instructions, it replays the run block by block through
//! the registry's kernels: one pass over each block per kernel. A code
//! generator installed with [`set_loop_compiler`] gets each run as a
//! [`LoopBody`] instead, an expression per result evaluated at one index,
//! and returns machine code that computes every result in one pass with
//! the intermediates in registers. The `nabla-jit` crate is such a
//! generator (Cranelift); without one installed, or where it declines a
//! body, the block interpreter runs.
//!
//! A compiled loop runs only on blocks where every read of the body is in
//! bounds and none of its zero-padded edges is hit (the interior of the
//! arrays); the interpreter handles the blocks at the edges. Its results
//! must equal the interpreter's bit for bit, except that a sum may add in
//! another (fixed) order.
//!
//! ```
//! use nabla::dynamic::loops::{BinaryOp, Expr, LoopBody, Sink};
//! // out[i] = (x[i + 1] - x[i]) * 2
//! let body = LoopBody {
//!     dtype: nabla::DType::F64,
//!     inputs: 1,
//!     exprs: vec![
//!         Expr::Load { input: 0, offset: 1 },
//!         Expr::Load { input: 0, offset: 0 },
//!         Expr::Binary(BinaryOp::Sub, 0, 1),
//!         Expr::Const(2.0),
//!         Expr::Binary(BinaryOp::Mul, 2, 3),
//!     ],
//!     sinks: vec![(4, Sink::Store(0))],
//! };
//! assert_eq!(body.eval_f64(&[&[1.0, 4.0, 9.0]], 1), vec![10.0]);
//! ```

use crate::DType;
use nabla_kernels::ops::OpKernels;
pub use nabla_kernels::ops::{BinaryOp, UnaryOp};
use std::sync::OnceLock;

/// One value of a loop body at the loop's index `i`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Expr {
    /// `inputs[input][i + offset]`.
    Load {
        /// Which input.
        input: usize,
        /// Added to the loop's index.
        offset: isize,
    },
    /// `inputs[input][index]`, the same at every `i`.
    Splat {
        /// Which input.
        input: usize,
        /// The element read.
        index: usize,
    },
    /// A constant (rounded to the body's dtype).
    Const(f64),
    /// A registry kernel of an earlier expression.
    Unary(UnaryOp, usize),
    /// A registry kernel of two earlier expressions.
    Binary(BinaryOp, usize, usize),
}

/// Where a loop body's value goes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sink {
    /// Written to `outputs[k][i]`.
    Store(usize),
    /// Added (in `f64`) into `sums[k]`.
    Sum(usize),
}

/// A fused loop: for each index `i` of a range, the expressions in order
/// (each refers only to earlier ones) and where results go.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopBody {
    /// The element type of every input, expression and output.
    pub dtype: DType,
    /// How many input arrays the body reads.
    pub inputs: usize,
    /// The values at one index, each from earlier ones.
    pub exprs: Vec<Expr>,
    /// `(expression, sink)`; the sinks' indices number the outputs and
    /// the sums of the run together.
    pub sinks: Vec<(usize, Sink)>,
}

impl LoopBody {
    /// The body at index `i` in `f64`, through the registry's scalar
    /// kernels: the values a compiled loop must produce (a reference for
    /// code generators' tests; stores and sums in sink order).
    ///
    /// ```
    /// use nabla::dynamic::loops::{Expr, LoopBody, Sink};
    /// let body = LoopBody {
    ///     dtype: nabla::DType::F64,
    ///     inputs: 0,
    ///     exprs: vec![Expr::Const(3.0)],
    ///     sinks: vec![(0, Sink::Sum(0))],
    /// };
    /// assert_eq!(body.eval_f64(&[], 0), vec![3.0]);
    /// ```
    pub fn eval_f64(&self, inputs: &[&[f64]], i: usize) -> Vec<f64> {
        let mut v: Vec<f64> = Vec::with_capacity(self.exprs.len());
        for e in &self.exprs {
            let x = match *e {
                Expr::Load { input, offset } => inputs[input][(i as isize + offset) as usize],
                Expr::Splat { input, index } => inputs[input][index],
                Expr::Const(c) => c,
                Expr::Unary(op, a) => f64::unary_slice(&[v[a]], op)[0],
                Expr::Binary(op, a, b) => f64::binary_slices(&[v[a]], &[v[b]], op)[0],
            };
            v.push(x);
        }
        self.sinks.iter().map(|&(e, _)| v[e]).collect()
    }
}

/// Machine code for one [`LoopBody`].
pub trait CompiledLoop: Send + Sync {
    /// Runs the body for `i` in `lo..lo + n`: stores go to
    /// `outputs[k][i - lo]`, sums are added into `sums[k]`.
    ///
    /// # Safety
    /// `inputs[k]` points at an array of the body's dtype holding every
    /// element the body loads for these `i`; `outputs[k]` at `n` writable
    /// elements of the dtype for each stored `k`; `sums` has an entry for
    /// every sink index.
    unsafe fn run(
        &self,
        inputs: &[*const u8],
        outputs: &[*mut u8],
        lo: usize,
        n: usize,
        sums: &mut [f64],
    );
}

/// A code generator for fused loops.
pub trait LoopCompiler: Send + Sync {
    /// Machine code for `body`, or `None` where the generator does not
    /// handle one of its kernels (the block interpreter then runs it).
    fn compile(&self, body: &LoopBody) -> Option<Box<dyn CompiledLoop>>;
}

static COMPILER: OnceLock<&'static dyn LoopCompiler> = OnceLock::new();

/// Installs the code generator that fused runs recorded from now on are
/// compiled with (the first call wins; later ones return false).
/// `NABLA_JIT_CODEGEN=0` keeps the block interpreter (for A/B runs).
///
/// ```
/// use nabla::dynamic::loops::{LoopBody, LoopCompiler, CompiledLoop, set_loop_compiler};
/// struct Never;
/// impl LoopCompiler for Never {
///     fn compile(&self, _: &LoopBody) -> Option<Box<dyn CompiledLoop>> { None }
/// }
/// static NEVER: Never = Never;
/// let _ = set_loop_compiler(&NEVER);
/// ```
pub fn set_loop_compiler(c: &'static dyn LoopCompiler) -> bool {
    COMPILER.set(c).is_ok()
}

/// The installed generator, unless `NABLA_JIT_CODEGEN=0`.
pub(crate) fn compiler() -> Option<&'static dyn LoopCompiler> {
    static ON: OnceLock<bool> = OnceLock::new();
    if !*ON.get_or_init(|| std::env::var("NABLA_JIT_CODEGEN").map_or(true, |v| v != "0")) {
        return None;
    }
    COMPILER.get().copied()
}
