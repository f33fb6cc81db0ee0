//! A [`LoopBody`] as a Cranelift function:
//!
//! ```text
//! fn(inputs: *const *const T, outputs: *const *mut T, lo: i64, n: i64, sums: *mut f64)
//! ```
//!
//! The body runs over `j = 0..n` (index `i = lo + j`): a vector loop of
//! 16-byte lanes, then a scalar loop for the rest. Constants and splats
//! are computed once before the loops; each sum keeps one `f64`
//! accumulator per lane and adds them, lane by lane, then the scalar
//! tail, into `sums` at the end.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    AbiParam, Endianness, InstBuilder, MemFlags, Type, UserFuncName, Value, types,
};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module, default_libcall_names};
use nabla_runtime::DType;
use nabla_runtime::dynamic::loops::{BinaryOp, CompiledLoop, Expr, LoopBody, Sink, UnaryOp};

type Entry = unsafe extern "C" fn(*const *const u8, *const *mut u8, i64, i64, *mut f64);

/// A compiled loop and the module owning its code.
pub(crate) struct Loop {
    module: Option<JITModule>,
    entry: Entry,
}

// SAFETY: after `finalize_definitions` the module only owns the loop's
// executable memory; nothing reads or changes it until `Drop`, and the
// code itself keeps no state, so calls from several threads are safe.
unsafe impl Send for Loop {}
// SAFETY: as above; `run` only calls the finished code.
unsafe impl Sync for Loop {}

impl Drop for Loop {
    fn drop(&mut self) {
        if let Some(m) = self.module.take() {
            // SAFETY: `entry` points into this module's memory and is
            // dropped with it; no call is in flight (`&mut self`).
            unsafe { m.free_memory() };
        }
    }
}

impl CompiledLoop for Loop {
    unsafe fn run(
        &self,
        inputs: &[*const u8],
        outputs: &[*mut u8],
        lo: usize,
        n: usize,
        sums: &mut [f64],
    ) {
        // SAFETY: the caller guarantees the pointers cover what the body
        // loads and stores for these indices (CompiledLoop::run).
        unsafe {
            (self.entry)(
                inputs.as_ptr(),
                outputs.as_ptr(),
                lo as i64,
                n as i64,
                sums.as_mut_ptr(),
            )
        }
    }
}

/// True when every expression has a lowering here.
fn supported(body: &LoopBody) -> bool {
    matches!(body.dtype, DType::F32 | DType::F64)
        && body.exprs.iter().all(|e| match *e {
            Expr::Unary(op, _) => {
                matches!(
                    op,
                    UnaryOp::Neg()
                        | UnaryOp::Abs()
                        | UnaryOp::Sqrt()
                        | UnaryOp::Rsqrt()
                        | UnaryOp::Square()
                        | UnaryOp::Recip()
                        | UnaryOp::Relu()
                        | UnaryOp::Floor()
                        | UnaryOp::Ceil()
                        | UnaryOp::Affine(..)
                        | UnaryOp::RDiv(_)
                ) || matches!(op, UnaryOp::Powi(0..=3))
            }
            Expr::Binary(op, ..) => matches!(
                op,
                BinaryOp::Add
                    | BinaryOp::Sub
                    | BinaryOp::Mul
                    | BinaryOp::Div
                    | BinaryOp::Maximum
                    | BinaryOp::Minimum
            ),
            _ => true,
        })
}

/// The loop of `body`, or `None` when a kernel has no lowering here or
/// the host is not supported.
pub(crate) fn compile(body: &LoopBody) -> Option<Loop> {
    if !supported(body) {
        return None;
    }
    let mut flags = settings::builder();
    flags.set("opt_level", "speed").ok()?;
    flags.set("use_colocated_libcalls", "false").ok()?;
    flags.set("is_pic", "false").ok()?;
    let isa = cranelift_native::builder()
        .ok()?
        .finish(settings::Flags::new(flags))
        .ok()?;
    let ptr = isa.pointer_type();
    let mut module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
    let mut ctx = module.make_context();
    for _ in 0..3 {
        ctx.func.signature.params.push(AbiParam::new(ptr));
    }
    ctx.func.signature.params[2] = AbiParam::new(types::I64);
    ctx.func.signature.params.push(AbiParam::new(types::I64));
    ctx.func.signature.params.push(AbiParam::new(ptr));
    let id = module
        .declare_function("fused_loop", Linkage::Local, &ctx.func.signature)
        .ok()?;
    ctx.func.name = UserFuncName::user(0, id.as_u32());
    let mut fctx = FunctionBuilderContext::new();
    Emitter::new(body, ptr, FunctionBuilder::new(&mut ctx.func, &mut fctx)).emit();
    let dump = std::env::var_os("NABLA_JIT_DUMP").is_some();
    ctx.set_disasm(dump);
    module.define_function(id, &mut ctx).ok()?;
    if dump {
        eprintln!("{body:?}\n{}", ctx.func.display());
        if let Some(d) = ctx.compiled_code().and_then(|c| c.vcode.as_ref()) {
            eprintln!("{d}");
        }
    }
    module.clear_context(&mut ctx);
    module.finalize_definitions().ok()?;
    let code = module.get_finalized_function(id);
    // SAFETY: the function was declared with `Entry`'s signature (three
    // pointers-or-i64 and two i64 in the platform's C convention).
    let entry: Entry = unsafe { std::mem::transmute::<*const u8, Entry>(code) };
    Some(Loop {
        module: Some(module),
        entry,
    })
}

struct Emitter<'b, 'f> {
    body: &'b LoopBody,
    b: FunctionBuilder<'f>,
    ptr: Type,
    /// The element type, its vector type, lanes per vector, log2 of bytes.
    elem: Type,
    vec: Type,
    lanes: usize,
    shift: i64,
    /// Per sum sink: one f64 accumulator per lane, and the tail's.
    accs: Vec<(Vec<Variable>, Variable)>,
}

impl<'b, 'f> Emitter<'b, 'f> {
    fn new(body: &'b LoopBody, ptr: Type, b: FunctionBuilder<'f>) -> Self {
        let (elem, vec, lanes, shift) = match body.dtype {
            DType::F32 => (types::F32, types::F32X4, 4, 2),
            _ => (types::F64, types::F64X2, 2, 3),
        };
        Emitter {
            body,
            b,
            ptr,
            elem,
            vec,
            lanes,
            shift,
            accs: Vec::new(),
        }
    }

    fn emit(mut self) {
        let flags = MemFlags::new().with_notrap();
        let entry = self.b.create_block();
        self.b.append_block_params_for_function_params(entry);
        self.b.switch_to_block(entry);
        let p = self.b.block_params(entry).to_vec();
        let (ins, outs, lo, n, sums) = (p[0], p[1], p[2], p[3], p[4]);
        let pw = self.ptr.bytes() as i32;
        // Inputs at `lo`, their starts (for splats) and the outputs.
        let lo_bytes = self.b.ins().ishl_imm(lo, self.shift);
        let mut starts = Vec::new();
        let mut at_lo = Vec::new();
        for k in 0..self.body.inputs {
            let s = self.b.ins().load(self.ptr, flags, ins, k as i32 * pw);
            starts.push(s);
            at_lo.push(self.b.ins().iadd(s, lo_bytes));
        }
        let stored: Vec<usize> = self
            .body
            .sinks
            .iter()
            .map(|s| match s.1 {
                Sink::Store(k) | Sink::Sum(k) => k,
            })
            .collect();
        let width = stored.iter().max().map_or(0, |m| m + 1);
        let out_ptrs: Vec<Value> = (0..width)
            .map(|k| self.b.ins().load(self.ptr, flags, outs, k as i32 * pw))
            .collect();
        // Loop-invariant values, scalar and splatted.
        let mut fixed: Vec<Option<(Value, Value)>> = vec![None; self.body.exprs.len()];
        for (x, e) in self.body.exprs.iter().enumerate() {
            let s = match *e {
                Expr::Const(c) => self.constant(c),
                Expr::Splat { input, index } => {
                    let off = (index as i64) << self.shift;
                    let addr = self.b.ins().iadd_imm(starts[input], off);
                    self.b.ins().load(self.elem, flags, addr, 0)
                }
                _ => continue,
            };
            let v = self.b.ins().splat(self.vec, s);
            fixed[x] = Some((s, v));
        }
        let j = self.b.declare_var(types::I64);
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b.def_var(j, zero);
        let fzero = self.b.ins().f64const(0.0);
        for _ in self
            .body
            .sinks
            .iter()
            .filter(|s| matches!(s.1, Sink::Sum(_)))
        {
            let lanes: Vec<Variable> = (0..self.lanes)
                .map(|_| {
                    let v = self.b.declare_var(types::F64);
                    self.b.def_var(v, fzero);
                    v
                })
                .collect();
            let tail = self.b.declare_var(types::F64);
            self.b.def_var(tail, fzero);
            self.accs.push((lanes, tail));
        }
        let (vhead, vbody, shead, sbody, exit) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().jump(vhead, &[]);
        // Vector loop: while j + lanes <= n.
        self.b.switch_to_block(vhead);
        let jv = self.b.use_var(j);
        let next = self.b.ins().iadd_imm(jv, self.lanes as i64);
        let more = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, next, n);
        self.b.ins().brif(more, vbody, &[], shead, &[]);
        self.b.switch_to_block(vbody);
        self.step(true, j, &at_lo, &out_ptrs, &fixed);
        self.b.ins().jump(vhead, &[]);
        // Scalar tail: while j < n.
        self.b.switch_to_block(shead);
        let jv = self.b.use_var(j);
        let more = self.b.ins().icmp(IntCC::SignedLessThan, jv, n);
        self.b.ins().brif(more, sbody, &[], exit, &[]);
        self.b.switch_to_block(sbody);
        self.step(false, j, &at_lo, &out_ptrs, &fixed);
        self.b.ins().jump(shead, &[]);
        // Sums: lanes in order, then the tail, added to what is there.
        self.b.switch_to_block(exit);
        let mut acc_i = 0;
        for &(_, sink) in &self.body.sinks {
            let Sink::Sum(k) = sink else { continue };
            let (lanes, tail) = self.accs[acc_i].clone();
            acc_i += 1;
            let mut t = self.b.use_var(lanes[0]);
            for &l in &lanes[1..] {
                let v = self.b.use_var(l);
                t = self.b.ins().fadd(t, v);
            }
            let tv = self.b.use_var(tail);
            t = self.b.ins().fadd(t, tv);
            let old = self.b.ins().load(types::F64, flags, sums, k as i32 * 8);
            let new = self.b.ins().fadd(old, t);
            self.b.ins().store(flags, new, sums, k as i32 * 8);
        }
        self.b.ins().return_(&[]);
        self.b.seal_all_blocks();
        self.b.finalize();
    }

    /// A scalar constant of the element type.
    fn constant(&mut self, c: f64) -> Value {
        if self.elem == types::F32 {
            self.b.ins().f32const(c as f32)
        } else {
            self.b.ins().f64const(c)
        }
    }

    /// One iteration at `j`: every expression (vectors or scalars), the
    /// stores and the sums; then `j` advances.
    fn step(
        &mut self,
        vector: bool,
        j: Variable,
        at_lo: &[Value],
        outs: &[Value],
        fixed: &[Option<(Value, Value)>],
    ) {
        let flags = MemFlags::new().with_notrap();
        let ty = if vector { self.vec } else { self.elem };
        let jv = self.b.use_var(j);
        let off = self.b.ins().ishl_imm(jv, self.shift);
        let mut addr: Vec<Option<Value>> = vec![None; at_lo.len()];
        let mut v: Vec<Value> = Vec::with_capacity(self.body.exprs.len());
        for (x, e) in self.body.exprs.iter().enumerate() {
            let val = match *e {
                Expr::Const(_) | Expr::Splat { .. } => {
                    let (s, vv) = fixed[x].expect("hoisted above");
                    if vector { vv } else { s }
                }
                Expr::Load { input, offset } => {
                    let a =
                        *addr[input].get_or_insert_with(|| self.b.ins().iadd(at_lo[input], off));
                    let bytes = (offset << self.shift) as i32;
                    self.b.ins().load(ty, flags, a, bytes)
                }
                Expr::Unary(op, a) => self.unary(op, v[a], ty),
                Expr::Binary(op, a, c) => self.binary(op, v[a], v[c], ty),
            };
            v.push(val);
        }
        let mut acc_i = 0;
        for &(e, sink) in &self.body.sinks {
            match sink {
                Sink::Store(k) => {
                    let a = self.b.ins().iadd(outs[k], off);
                    self.b.ins().store(flags, v[e], a, 0);
                }
                Sink::Sum(_) => {
                    let (lanes, tail) = self.accs[acc_i].clone();
                    acc_i += 1;
                    if vector {
                        for (l, var) in lanes.iter().enumerate() {
                            let x = self.b.ins().extractlane(v[e], l as u8);
                            self.add_to(*var, x);
                        }
                    } else {
                        self.add_to(tail, v[e]);
                    }
                }
            }
        }
        let step = if vector { self.lanes as i64 } else { 1 };
        let jn = self.b.ins().iadd_imm(jv, step);
        self.b.def_var(j, jn);
    }

    /// `var += x` in f64.
    fn add_to(&mut self, var: Variable, x: Value) {
        let x = if self.elem == types::F32 {
            self.b.ins().fpromote(types::F64, x)
        } else {
            x
        };
        let old = self.b.use_var(var);
        let new = self.b.ins().fadd(old, x);
        self.b.def_var(var, new);
    }

    /// `c` of the element type, splatted when `ty` is a vector.
    fn splat_const(&mut self, c: f64, ty: Type) -> Value {
        let s = self.constant(c);
        if ty.is_vector() {
            self.b.ins().splat(ty, s)
        } else {
            s
        }
    }

    /// `if c { x } else { y }` for a comparison `c` of `ty` values.
    fn choose(&mut self, c: Value, x: Value, y: Value, ty: Type) -> Value {
        if ty.is_vector() {
            let flags = MemFlags::new().with_endianness(Endianness::Little);
            let mask = self.b.ins().bitcast(ty, flags, c);
            self.b.ins().bitselect(mask, x, y)
        } else {
            self.b.ins().select(c, x, y)
        }
    }

    /// The registry kernel's formula (nabla-ops), operation by operation,
    /// so results match the interpreter's bit for bit.
    fn unary(&mut self, op: UnaryOp, x: Value, ty: Type) -> Value {
        match op {
            UnaryOp::Neg() => self.b.ins().fneg(x),
            UnaryOp::Abs() => self.b.ins().fabs(x),
            UnaryOp::Sqrt() => self.b.ins().sqrt(x),
            UnaryOp::Floor() => self.b.ins().floor(x),
            UnaryOp::Ceil() => self.b.ins().ceil(x),
            UnaryOp::Square() | UnaryOp::Powi(2) => self.b.ins().fmul(x, x),
            UnaryOp::Powi(3) => {
                let sq = self.b.ins().fmul(x, x);
                self.b.ins().fmul(sq, x)
            }
            UnaryOp::Powi(1) => x,
            UnaryOp::Powi(_) => self.splat_const(1.0, ty),
            UnaryOp::Recip() => {
                let one = self.splat_const(1.0, ty);
                self.b.ins().fdiv(one, x)
            }
            UnaryOp::Rsqrt() => {
                let one = self.splat_const(1.0, ty);
                let r = self.b.ins().sqrt(x);
                self.b.ins().fdiv(one, r)
            }
            UnaryOp::Relu() => {
                let z = self.splat_const(0.0, ty);
                let c = self.b.ins().fcmp(FloatCC::GreaterThan, x, z);
                self.choose(c, x, z, ty)
            }
            // `a * x + c`, leaving out what is exact to leave out: `1 * x`
            // is `x`, `-1 * x + c` is `c - x`, `y + -0.0` is `y`.
            UnaryOp::Affine(a, c) => {
                let keep = c != 0.0 || c.is_sign_positive();
                let m = match a {
                    1.0 => x,
                    -1.0 if keep => {
                        let c = self.splat_const(c, ty);
                        return self.b.ins().fsub(c, x);
                    }
                    -1.0 => return self.b.ins().fneg(x),
                    _ => {
                        let a = self.splat_const(a, ty);
                        self.b.ins().fmul(a, x)
                    }
                };
                if !keep {
                    return m;
                }
                let c = self.splat_const(c, ty);
                self.b.ins().fadd(m, c)
            }
            UnaryOp::RDiv(c) => {
                let c = self.splat_const(c, ty);
                self.b.ins().fdiv(c, x)
            }
            other => unreachable!("`supported` admits no {other:?}"),
        }
    }

    fn binary(&mut self, op: BinaryOp, x: Value, y: Value, ty: Type) -> Value {
        match op {
            BinaryOp::Add => self.b.ins().fadd(x, y),
            BinaryOp::Sub => self.b.ins().fsub(x, y),
            BinaryOp::Mul => self.b.ins().fmul(x, y),
            BinaryOp::Div => self.b.ins().fdiv(x, y),
            // `if a > b || a.is_nan() { a } else { b }` (and `<`).
            BinaryOp::Maximum | BinaryOp::Minimum => {
                let cc = if op == BinaryOp::Maximum {
                    FloatCC::GreaterThan
                } else {
                    FloatCC::LessThan
                };
                let c = self.b.ins().fcmp(cc, x, y);
                let nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
                let c = self.b.ins().bor(c, nan);
                self.choose(c, x, y, ty)
            }
            other => unreachable!("`supported` admits no {other:?}"),
        }
    }
}
