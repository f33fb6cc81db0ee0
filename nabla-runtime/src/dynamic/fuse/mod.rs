//! Runs of a recorded [`super::Program`]'s instructions that replay as one
//! pass, as XLA's loop fusion does for a jitted JAX function.
//!
//! Every instruction reads and writes its arrays as flat row-major runs,
//! so a run of instructions fuses when each one maps elements of its
//! operands to elements of its result at fixed flat offsets ([`Elem`]):
//! elementwise kernels, slices whose elements are one contiguous run of
//! their operand (`x[1:]`, a row range), their transposes that place a
//! run into zeros (`slice_place`), reshapes, broadcasts of one element and
//! sums of every element. [`plan`] turns a run into a graph whose edges
//! carry those offsets (views fold into the edges, so a slice costs
//! nothing), and [`run`] evaluates it block by block: for each block of
//! the outputs it works out which range of each intermediate the block
//! reads (a slice of an intermediate reads it shifted, so a block computes
//! a few elements of halo instead of writing the intermediate out), keeps
//! each intermediate in a block-sized buffer reused once it is dead, and
//! writes only the results read after the run. Blocks run in parallel;
//! sums add their per-block partial sums in block order, so a replay is
//! deterministic for any number of threads.

mod lower;
mod plan;
mod run;

use super::Dyn;
use crate::DType;
use nabla_kernels::ops::{BinaryOp, UnaryOp};
use ndarray::Slice;

pub(crate) use plan::Plan;

/// Elements per block of the outputs: a block of every live intermediate
/// stays in the first-level cache.
pub(crate) const BLOCK: usize = 1024;

/// How an instruction maps its operands' flat elements to its result's.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Elem {
    /// An elementwise kernel of one operand.
    Unary(UnaryOp),
    /// An elementwise kernel of two operands, each of the result's size
    /// or of one element.
    Binary(BinaryOp),
    /// `out[i] = x[i + offset]`: a slice whose elements are one contiguous
    /// run of the operand (or a reshape, at offset 0).
    Window(usize),
    /// `out[i] = x[i - offset]` where that is in `x`, zero elsewhere: a run
    /// placed into zeros (the transpose of [`Elem::Window`]).
    Place(usize),
    /// The operand's one element, repeated.
    Splat,
    /// The sum of every element, as a one-element result.
    Sum,
}

/// The flat offset of the first element of `shape` sliced by `slices`
/// when the slice's elements are one contiguous run of it (every step 1;
/// only the last axis not taken whole may be partial, and the axes before
/// it keep one index each), else `None`.
///
/// ```ignore
/// assert_eq!(run_offset(&[5], &[Slice::from(1..)]), Some(1));
/// assert_eq!(run_offset(&[3, 4], &[Slice::from(1..3)]), Some(4)); // rows 1 and 2
/// assert_eq!(run_offset(&[3, 4], &[Slice::from(..), Slice::from(1..)]), None); // a column range
/// ```
pub(crate) fn run_offset(shape: &[usize], slices: &[Slice]) -> Option<usize> {
    let mut ranges = Vec::with_capacity(shape.len());
    for (k, &n) in shape.iter().enumerate() {
        let s = slices.get(k).copied().unwrap_or(Slice::from(..));
        let at = |i: isize| {
            if i < 0 {
                (n as isize + i).max(0) as usize
            } else {
                (i as usize).min(n)
            }
        };
        let (lo, hi) = (at(s.start), s.end.map_or(n, at));
        let hi = hi.max(lo);
        if s.step != 1 && hi - lo > 1 {
            return None;
        }
        ranges.push((lo, hi));
    }
    if ranges.iter().any(|&(lo, hi)| lo == hi) {
        return Some(0);
    }
    let partial = ranges
        .iter()
        .enumerate()
        .rev()
        .find(|(k, r)| **r != (0, shape[*k]));
    let Some((p, _)) = partial else {
        return Some(0);
    };
    if ranges[..p].iter().any(|&(lo, hi)| hi - lo != 1) {
        return None;
    }
    let mut offset = 0;
    let mut stride = 1;
    for (k, &n) in shape.iter().enumerate().rev() {
        offset += ranges[k].0 * stride;
        stride *= n;
    }
    Some(offset)
}

/// A run of instructions that replays as one pass.
pub(crate) struct Group {
    /// How many consecutive instructions of the program it replaces.
    pub(crate) len: usize,
    pub(crate) plan: Plan,
    /// The plan as machine code, where a code generator is installed
    /// ([`super::loops::set_loop_compiler`]) and takes it.
    pub(crate) compiled: Option<Compiled>,
}

/// A compiled loop and the index range where it is exact.
pub(crate) struct Compiled {
    code: Box<dyn super::loops::CompiledLoop>,
    range: (isize, isize),
}

impl Compiled {
    fn of(plan: &Plan) -> Option<Compiled> {
        let compiler = super::loops::compiler()?;
        let (body, range) = lower::lower(plan)?;
        let code = compiler.compile(&body)?;
        Some(Compiled { code, range })
    }
}

impl Group {
    /// Runs the group on `slots` as one pass, or returns false (nothing
    /// written) when an operand from outside it is not a concrete
    /// row-major array of the recorded size and dtype, or while
    /// `debug_nans` is on. `NABLA_JIT_FUSE=0` turns fusion off (for A/B
    /// measurements).
    pub(crate) fn run(&self, slots: &mut [Option<Dyn>]) -> bool {
        static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        if !*ON.get_or_init(|| std::env::var("NABLA_JIT_FUSE").map_or(true, |v| v != "0")) {
            return false;
        }
        // Checking for NaNs replays instruction by instruction, each checked.
        if crate::array::nans::debug_nans_enabled() {
            return false;
        }
        match self.plan.dtype {
            DType::F32 => run::run::<f32>(&self.plan, self.compiled.as_ref(), slots),
            DType::F64 => run::run::<f64>(&self.plan, self.compiled.as_ref(), slots),
            _ => false,
        }
    }
}

/// One instruction as [`groups`] sees it: the slot it writes, how it maps
/// elements (`None`: it does not fuse), its operand slots, its result's
/// shape and dtype.
pub(crate) type Desc = (usize, Option<Elem>, Vec<usize>, crate::Shape, DType);

/// Splits `instrs` into runs that replay as one pass each. `slot_type`
/// gives any slot's shape and dtype, `constant` the value of a slot that
/// is a constant with every element equal, and `read_outside` tells
/// whether a slot is read by an instruction outside the given run (or is
/// a program output). Returns, per instruction, the index of its group
/// (`None`: it runs alone) and the groups.
pub(crate) fn groups(
    instrs: &[Desc],
    slot_type: &dyn Fn(usize) -> (crate::Shape, DType),
    constant: &dyn Fn(usize) -> Option<f64>,
    read_outside: &dyn Fn(usize, &[usize]) -> bool,
) -> (Vec<Option<usize>>, Vec<Group>) {
    let numel = |k: usize| slot_type(k).0.iter().product::<usize>();
    let mut of: Vec<Option<usize>> = vec![None; instrs.len()];
    let mut out: Vec<Group> = Vec::new();
    let mut i = 0;
    while i < instrs.len() {
        let dtype = instrs[i].4;
        let mut sums: Vec<usize> = Vec::new();
        let mut j = i;
        while j < instrs.len() && matches!(dtype, DType::F32 | DType::F64) {
            let (slot, elem, ops, shape, d) = &instrs[j];
            let n: usize = shape.iter().product();
            let fits = *d == dtype
                && ops
                    .iter()
                    .all(|&k| slot_type(k).1 == dtype && !sums.contains(&k))
                && match elem {
                    None => false,
                    Some(Elem::Unary(_)) => ops.len() == 1 && numel(ops[0]) == n,
                    Some(Elem::Binary(_)) => {
                        ops.len() == 2 && ops.iter().all(|&k| numel(k) == n || numel(k) == 1)
                    }
                    Some(Elem::Splat) => ops.len() == 1 && numel(ops[0]) == 1,
                    Some(Elem::Sum) => ops.len() == 1 && n == 1,
                    Some(Elem::Window(_) | Elem::Place(_)) => ops.len() == 1,
                };
            // An elementwise kernel of a new size reading nothing of the run
            // starts a run of its own: independent work of another size
            // gains nothing from sharing blocks.
            let independent = matches!(elem, Some(Elem::Unary(_) | Elem::Binary(_)))
                && j > i
                && !ops.iter().any(|k| instrs[i..j].iter().any(|m| m.0 == *k))
                && n != instrs[j - 1].3.iter().product::<usize>();
            if !fits || independent {
                break;
            }
            if *elem == Some(Elem::Sum) {
                sums.push(*slot);
            }
            j += 1;
        }
        let plan = (j - i >= 2)
            .then(|| Plan::new(&instrs[i..j], &slot_type, constant, read_outside))
            .flatten();
        // A run of plain elementwise kernels (every read at its own index)
        // is left to the eager kernels unless it compiles: measured on the
        // MLP step's f32 updates, the interpreter's one pass over blocks
        // was slower than two whole-array kernels (5.2-5.6 ms a step
        // against 4.9-5.0 ms); its pass pays off where it saves a view, a
        // placement or a sum.
        let fused = plan.and_then(|plan| {
            let compiled = Compiled::of(&plan);
            (!plan.plain || compiled.is_some()).then_some((plan, compiled))
        });
        match fused {
            Some((plan, compiled)) => {
                for o in of.iter_mut().take(j).skip(i) {
                    *o = Some(out.len());
                }
                out.push(Group {
                    len: j - i,
                    plan,
                    compiled,
                });
                i = j;
            }
            None => i += 1,
        }
    }
    (of, out)
}

#[cfg(test)]
mod tests;
