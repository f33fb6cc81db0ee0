//! `Staged`: the tracer of [`super::record`], which turns one run of a
//! function into a [`Program`] that later calls replay without running the
//! function (what Python's `nabla.jit` records).
//!
//! A `Staged` value is the op's value one level down (computed as the
//! function runs, so shapes are known) plus where it comes from in the
//! program: an input, an earlier instruction, or a constant (a value of an
//! outer level the function closed over). Every op appends one instruction:
//! a closure that applies the same `Value`/`ArrayValue` method to the
//! instruction's operands. A [`Program`] keeps only the instructions its
//! outputs need and frees each intermediate after its last use.

use super::{Dyn, Level};
use crate::{ArrayValue, Value};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

/// One instruction's computation: its operands to its result.
pub(crate) type OpFn = Box<dyn Fn(&[&Dyn]) -> Dyn + Send + Sync>;

pub(crate) enum Instr {
    /// A constant captured from outside the recorded function.
    Const(Dyn),
    /// `f(operands)`; `name` is what `Program`'s display shows; `elem`
    /// says which elementwise kernel `f` is, when it is one (so a chain of
    /// them can run as one pass, `dynamic/fuse.rs`).
    Op {
        name: String,
        operands: Vec<usize>,
        f: OpFn,
        elem: Option<Elem>,
    },
}

use super::fuse::Desc;
pub(crate) use super::fuse::Elem;

/// The instructions recorded so far (slots `0..inputs` are the inputs).
pub(crate) struct Recorder {
    inputs: usize,
    instrs: Mutex<Vec<(Instr, crate::Shape, crate::DType)>>,
}

/// Where a staged value comes from.
#[derive(Clone)]
enum Src {
    /// Not produced by the recorded function: a constant of the program.
    Const,
    /// Slot `usize` of the recorder.
    Slot(Arc<Recorder>, usize),
}

/// A value traced by [`super::record`].
#[derive(Clone)]
pub struct Staged {
    /// The value, one level down.
    pub value: Dyn,
    src: Src,
}

impl Staged {
    /// A constant of the program.
    pub(crate) fn constant(value: Dyn) -> Staged {
        Staged {
            value,
            src: Src::Const,
        }
    }

    /// The op's output `value`, appended to the program as `name` applied
    /// to `operands` by `f`.
    pub(crate) fn record(
        value: Dyn,
        operands: &[&Staged],
        name: impl FnOnce() -> String,
        f: impl Fn(&[&Dyn]) -> Dyn + Send + Sync + 'static,
    ) -> Staged {
        Staged::record_elem(value, operands, name, f, None)
    }

    /// [`Staged::record`] of an op that is the elementwise kernel `elem`.
    pub(crate) fn record_elem(
        value: Dyn,
        operands: &[&Staged],
        name: impl FnOnce() -> String,
        f: impl Fn(&[&Dyn]) -> Dyn + Send + Sync + 'static,
        elem: Option<Elem>,
    ) -> Staged {
        let Some(rec) = operands.iter().find_map(|s| match &s.src {
            Src::Slot(r, _) => Some(r.clone()),
            Src::Const => None,
        }) else {
            return Staged::constant(value);
        };
        let mut instrs = rec.instrs.lock().expect("recorder lock");
        let mut slots = Vec::with_capacity(operands.len());
        for s in operands {
            match &s.src {
                Src::Slot(_, k) => slots.push(*k),
                Src::Const => {
                    instrs.push((
                        Instr::Const(s.value.clone()),
                        s.value.shape_vec(),
                        s.value.dtype(),
                    ));
                    slots.push(rec.inputs + instrs.len() - 1);
                }
            }
        }
        let op = Instr::Op {
            name: name(),
            operands: slots,
            f: Box::new(f),
            elem,
        };
        instrs.push((op, value.shape_vec(), value.dtype()));
        let slot = rec.inputs + instrs.len() - 1;
        drop(instrs);
        Staged {
            value,
            src: Src::Slot(rec, slot),
        }
    }

    /// `f` on this one operand, recorded as `name`.
    pub(crate) fn unary(
        &self,
        name: impl FnOnce() -> String,
        f: impl Fn(&Dyn) -> Dyn + Send + Sync + 'static,
    ) -> Staged {
        self.unary_elem(name, f, None)
    }

    /// [`Staged::unary`] of an op that is the elementwise kernel `elem`.
    pub(crate) fn unary_elem(
        &self,
        name: impl FnOnce() -> String,
        f: impl Fn(&Dyn) -> Dyn + Send + Sync + 'static,
        elem: Option<Elem>,
    ) -> Staged {
        let y = f(&self.value);
        Staged::record_elem(y, &[self], name, move |x| f(x[0]), elem)
    }

    /// `f` on two operands, recorded as `name`.
    pub(crate) fn binary(
        &self,
        o: &Staged,
        name: impl FnOnce() -> String,
        f: impl Fn(&Dyn, &Dyn) -> Dyn + Send + Sync + 'static,
    ) -> Staged {
        self.binary_elem(o, name, f, None)
    }

    /// [`Staged::binary`] of an op that is the elementwise kernel `elem`.
    pub(crate) fn binary_elem(
        &self,
        o: &Staged,
        name: impl FnOnce() -> String,
        f: impl Fn(&Dyn, &Dyn) -> Dyn + Send + Sync + 'static,
        elem: Option<Elem>,
    ) -> Staged {
        let y = f(&self.value, &o.value);
        Staged::record_elem(y, &[self, o], name, move |x| f(x[0], x[1]), elem)
    }
}

/// A recorded function: replays its instructions on new inputs of the
/// recorded shapes and dtypes.
pub struct Program {
    inputs: Vec<(crate::Shape, crate::DType)>,
    /// The live instructions, each with the slots it frees once it ran.
    instrs: Vec<(usize, Instr, crate::Shape, crate::DType, Vec<usize>)>,
    outputs: Vec<usize>,
    /// Slots (inputs included) freed before the first instruction.
    unused_inputs: Vec<usize>,
    /// Runs of elementwise instructions that replay as one pass, and the
    /// run each instruction belongs to.
    groups: Vec<super::fuse::Group>,
    group_of: Vec<Option<usize>>,
}

/// Records `f` on `inputs` at a new level: its outputs (values one level
/// down, as the run computed them) and the program that replays it.
///
/// ```
/// use nabla::dynamic::{self, Dyn};
/// use nabla::{Array, Value};
/// let x = Dyn::from(Array::from_vec(vec![1.0f64, 2.0], &[2]));
/// let (y, program) = dynamic::record(|x| vec![x[0].sin().mul(&x[0])], &[x]);
/// let again = program.run(&[Dyn::from(Array::from_vec(vec![3.0f64, 4.0], &[2]))]);
/// assert_eq!(again[0].to_array().to_vec::<f64>()[0], 3f64.sin() * 3.0);
/// assert_eq!(y[0].to_array().to_vec::<f64>()[1], 2f64.sin() * 2.0);
/// ```
pub fn record(f: impl FnOnce(&[Dyn]) -> Vec<Dyn>, inputs: &[Dyn]) -> (Vec<Dyn>, Program) {
    let level = super::new_level();
    let rec = Arc::new(Recorder {
        inputs: inputs.len(),
        instrs: Mutex::new(Vec::new()),
    });
    let ins: Vec<Dyn> = inputs
        .iter()
        .enumerate()
        .map(|(k, x)| {
            let s = Staged {
                value: x.clone(),
                src: Src::Slot(rec.clone(), k),
            };
            Dyn::Staged(level, Box::new(s))
        })
        .collect();
    let outs = f(&ins);
    drop(ins);
    let mut values = Vec::with_capacity(outs.len());
    let mut slots = Vec::with_capacity(outs.len());
    for o in &outs {
        let s = o.staged_at(level);
        let slot = match &s.src {
            Src::Slot(_, k) => *k,
            Src::Const => {
                let mut instrs = rec.instrs.lock().expect("recorder lock");
                instrs.push((
                    Instr::Const(s.value.clone()),
                    s.value.shape_vec(),
                    s.value.dtype(),
                ));
                rec.inputs + instrs.len() - 1
            }
        };
        values.push(s.value);
        slots.push(slot);
    }
    drop(outs);
    let instrs = std::mem::take(&mut *rec.instrs.lock().expect("recorder lock"));
    let shapes = inputs.iter().map(|x| (x.shape_vec(), x.dtype())).collect();
    (values, Program::new(shapes, instrs, slots))
}

impl Program {
    fn new(
        inputs: Vec<(crate::Shape, crate::DType)>,
        mut instrs: Vec<(Instr, crate::Shape, crate::DType)>,
        outputs: Vec<usize>,
    ) -> Program {
        let n_in = inputs.len();
        let total = n_in + instrs.len();
        // One instruction per distinct kernel application: a kernel
        // applied again to the same operands reads the first result.
        let mut alias: Vec<usize> = (0..total).collect();
        let mut seen: std::collections::HashMap<(String, Vec<usize>), usize> = Default::default();
        for (i, (instr, ..)) in instrs.iter_mut().enumerate() {
            if let Instr::Op {
                name,
                operands,
                elem,
                ..
            } = instr
            {
                for k in operands.iter_mut() {
                    *k = alias[*k];
                }
                if elem.is_some() {
                    let first = *seen
                        .entry((name.clone(), operands.clone()))
                        .or_insert(n_in + i);
                    alias[n_in + i] = first;
                }
            }
        }
        let outputs: Vec<usize> = outputs.iter().map(|&o| alias[o]).collect();
        // Live slots: what the outputs need, walking back.
        let mut live = vec![false; total];
        for &o in &outputs {
            live[o] = true;
        }
        for (i, (instr, ..)) in instrs.iter().enumerate().rev() {
            if let (true, Instr::Op { operands, .. }) = (live[n_in + i], instr) {
                for &k in operands {
                    live[k] = true;
                }
            }
        }
        // Last use of each slot, so replay can free it.
        let mut last = vec![None; total];
        for (i, (instr, ..)) in instrs.iter().enumerate() {
            if let (true, Instr::Op { operands, .. }) = (live[n_in + i], instr) {
                for &k in operands {
                    last[k] = Some(n_in + i);
                }
            }
        }
        for &o in &outputs {
            last[o] = None;
        }
        let mut frees: Vec<Vec<usize>> = vec![Vec::new(); total];
        for (k, l) in last.iter().enumerate() {
            if let Some(at) = l {
                frees[*at].push(k);
            }
        }
        let unused_inputs = (0..n_in)
            .filter(|&k| !outputs.contains(&k) && last[k].is_none())
            .collect();
        let mut kept: Vec<_> = instrs
            .into_iter()
            .enumerate()
            .filter(|(i, _)| live[n_in + i])
            .map(|(i, (instr, s, d))| (n_in + i, instr, s, d, std::mem::take(&mut frees[n_in + i])))
            .collect();
        // Constants first (they read nothing), so they do not split the
        // runs of elementwise instructions that fuse. Frees stay attached
        // to the instruction of a slot's last use, which still runs after
        // every earlier use.
        kept.sort_by_key(|(_, instr, ..)| !matches!(instr, Instr::Const(_)));
        let (group_of, groups) = Self::fusable(&inputs, &kept, &outputs);
        Program {
            inputs,
            instrs: kept,
            outputs,
            unused_inputs,
            groups,
            group_of,
        }
    }

    /// The runs of `kept` that can replay as one pass.
    #[allow(clippy::type_complexity)]
    fn fusable(
        inputs: &[(crate::Shape, crate::DType)],
        kept: &[(usize, Instr, crate::Shape, crate::DType, Vec<usize>)],
        outputs: &[usize],
    ) -> (Vec<Option<usize>>, Vec<super::fuse::Group>) {
        let mut types: std::collections::HashMap<usize, (crate::Shape, crate::DType)> =
            inputs.iter().cloned().enumerate().collect();
        let mut readers: std::collections::HashMap<usize, Vec<usize>> = Default::default();
        let mut desc: Vec<Desc> = Vec::with_capacity(kept.len());
        for (at, instr, shape, dtype, _) in kept {
            types.insert(*at, (shape.clone(), *dtype));
            let (elem, ops) = match instr {
                Instr::Op { elem, operands, .. } => (*elem, operands.clone()),
                Instr::Const(_) => (None, Vec::new()),
            };
            for &k in &ops {
                readers.entry(k).or_default().push(*at);
            }
            desc.push((*at, elem, ops, shape.clone(), *dtype));
        }
        let slot_type = |k: usize| types[&k].clone();
        let constants: std::collections::HashMap<usize, f64> = kept
            .iter()
            .filter_map(|(at, instr, ..)| match instr {
                Instr::Const(Dyn::Array(a)) => uniform(a).map(|v| (*at, v)),
                _ => None,
            })
            .collect();
        let constant = |k: usize| constants.get(&k).copied();
        let read_outside = |k: usize, group: &[usize]| {
            outputs.contains(&k)
                || readers
                    .get(&k)
                    .is_some_and(|r| r.iter().any(|u| !group.contains(u)))
        };
        super::fuse::groups(&desc, &slot_type, &constant, &read_outside)
    }

    /// The number of instructions the program runs (dead code dropped).
    ///
    /// ```
    /// use nabla::dynamic::{self, Dyn};
    /// use nabla::{Array, Value};
    /// let x = Dyn::from(Array::scalar(1.0f64));
    /// // `x.cos()` is computed but never used: it is not in the program.
    /// let (_, p) = dynamic::record(|x| { let _unused = x[0].cos(); vec![x[0].sin()] }, &[x]);
    /// assert_eq!(p.len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        self.instrs.len()
    }

    /// How many runs of instructions replay as one pass each (when their
    /// operands are concrete arrays): runs with a slice, a placement, a
    /// repeat or a sum among elementwise kernels.
    ///
    /// ```
    /// use nabla::dynamic::{self, Dyn};
    /// use nabla::{Array, ArrayValue, Value};
    /// use ndarray::Slice;
    /// let x = Dyn::from(Array::from_vec(vec![0.5f64; 8], &[8]));
    /// // x[1:] * x[:-1] + 1: the slices are offsets of one pass
    /// let (_, p) = dynamic::record(|x| {
    ///     let (a, b) = (x[0].slice(&[Slice::from(1..)]), x[0].slice(&[Slice::from(..-1)]));
    ///     vec![a.mul(&b).add_scalar(1.0)]
    /// }, &[x]);
    /// assert_eq!(p.fused_runs(), 1);
    /// ```
    pub fn fused_runs(&self) -> usize {
        self.groups.len()
    }

    /// How many of the [`fused_runs`](Self::fused_runs) run as machine
    /// code from the installed loop compiler
    /// ([`loops::set_loop_compiler`](super::loops::set_loop_compiler);
    /// 0 without one).
    ///
    /// ```
    /// use nabla::dynamic::{self, Dyn};
    /// use nabla::{Array, ArrayValue, Value};
    /// let x = Dyn::from(Array::from_vec(vec![0.5f64; 8], &[8]));
    /// let (_, p) = dynamic::record(|x| vec![x[0].exp().sum_axes(&[0], false)], &[x]);
    /// assert!(p.compiled_runs() <= p.fused_runs());
    /// ```
    pub fn compiled_runs(&self) -> usize {
        self.groups.iter().filter(|g| g.compiled.is_some()).count()
    }

    /// True for a program that only passes values through.
    pub fn is_empty(&self) -> bool {
        self.instrs.is_empty()
    }

    /// The shapes and dtypes the program was recorded for.
    pub fn input_types(&self) -> &[(crate::Shape, crate::DType)] {
        &self.inputs
    }

    /// The outputs on new `inputs` (of the recorded shapes and dtypes;
    /// tracers of other transforms are fine: the program then runs under
    /// them).
    #[track_caller]
    pub fn run(&self, inputs: &[Dyn]) -> Vec<Dyn> {
        assert_eq!(
            inputs.len(),
            self.inputs.len(),
            "jit: the program was recorded for {} inputs but got {}; call it with the same arguments",
            self.inputs.len(),
            inputs.len()
        );
        for (k, (x, (s, d))) in inputs.iter().zip(&self.inputs).enumerate() {
            let (xs, xd) = (x.shape_vec(), x.dtype());
            assert!(
                xs == *s && xd == *d,
                "jit: input {k} has shape {:?} and dtype {xd:?} but the program was recorded for {:?} and {d:?}; \
                 record it again for these arguments",
                &xs[..],
                &s[..]
            );
        }
        // Slots are numbered in recording order; constants run first, so
        // the largest slot is not always the last instruction's.
        let total = self
            .instrs
            .iter()
            .map(|i| i.0 + 1)
            .max()
            .unwrap_or(0)
            .max(self.inputs.len());
        let mut slots: Vec<Option<Dyn>> = Vec::with_capacity(total.max(self.inputs.len()));
        slots.extend(inputs.iter().cloned().map(Some));
        slots.resize(total.max(self.inputs.len()), None);
        for &k in &self.unused_inputs {
            slots[k] = None;
        }
        let mut i = 0;
        while i < self.instrs.len() {
            if let Some(g) = self.group_of[i] {
                let group = &self.groups[g];
                if group.run(&mut slots) {
                    // The whole run in one pass: free what its members free.
                    let len = group.len;
                    for (_, _, _, _, frees) in &self.instrs[i..i + len] {
                        for &k in frees {
                            slots[k] = None;
                        }
                    }
                    i += len;
                    continue;
                }
            }
            let (at, instr, _, _, frees) = &self.instrs[i];
            let y = match instr {
                Instr::Const(c) => c.clone(),
                Instr::Op { operands, f, .. } => {
                    let args: Vec<&Dyn> = operands
                        .iter()
                        .map(|&k| {
                            slots[k]
                                .as_ref()
                                .expect("an operand is computed before its use")
                        })
                        .collect();
                    f(&args)
                }
            };
            slots[*at] = Some(y);
            for &k in frees {
                slots[k] = None;
            }
            i += 1;
        }
        self.outputs
            .iter()
            .map(|&k| slots[k].clone().expect("every output is computed"))
            .collect()
    }
}

impl std::fmt::Display for Program {
    /// A jaxpr-like listing: inputs, one line per instruction, outputs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ty = |s: &crate::Shape, d: &crate::DType| {
            let dims: Vec<String> = s.iter().map(|n| n.to_string()).collect();
            format!("{}[{}]", dtype_short(*d), dims.join(","))
        };
        let name = |k: usize| format!("v{k}");
        let ins: Vec<String> = self
            .inputs
            .iter()
            .enumerate()
            .map(|(k, (s, d))| format!("{}:{}", name(k), ty(s, d)))
            .collect();
        writeln!(f, "{{ lambda {} .", ins.join(" "))?;
        for (i, (at, instr, s, d, _)) in self.instrs.iter().enumerate() {
            if let Some(g) = self.group_of[i]
                && (i == 0 || self.group_of[i - 1] != Some(g))
            {
                let how = if self.groups[g].compiled.is_some() {
                    "compiled "
                } else {
                    ""
                };
                writeln!(
                    f,
                    "  # one {how}pass: the next {} instructions",
                    self.groups[g].len
                )?;
            }
            let mut line = String::new();
            match instr {
                Instr::Const(_) => write!(line, "const")?,
                Instr::Op {
                    name: n, operands, ..
                } => {
                    let args: Vec<String> = operands.iter().map(|&k| name(k)).collect();
                    write!(line, "{n} {}", args.join(" "))?;
                }
            }
            writeln!(f, "  {}:{} = {}", name(*at), ty(s, d), line)?;
        }
        let outs: Vec<String> = self.outputs.iter().map(|&k| name(k)).collect();
        write!(f, "  in ({}) }}", outs.join(", "))
    }
}

/// The value of every element of a float array whose elements are all
/// equal (a constant a fused pass reads as one number).
fn uniform(a: &crate::Array) -> Option<f64> {
    if !matches!(a.dtype(), crate::DType::F32 | crate::DType::F64) || a.numel() == 0 {
        return None;
    }
    let v: Vec<f64> = match a.dtype() {
        crate::DType::F32 => a.to_vec::<f32>().into_iter().map(f64::from).collect(),
        _ => a.to_vec::<f64>(),
    };
    v.iter().all(|&x| x == v[0]).then_some(v[0])
}

fn dtype_short(d: crate::DType) -> &'static str {
    match d {
        crate::DType::F32 => "f32",
        crate::DType::F64 => "f64",
        crate::DType::I64 => "i64",
        crate::DType::Bool => "bool",
    }
}

impl Dyn {
    /// As [`Dyn::dual_at`], for a recording level (a constant of the
    /// program otherwise).
    pub(crate) fn staged_at(&self, level: Level) -> Staged {
        match self {
            Dyn::Staged(l, s) if *l == level => (**s).clone(),
            _ => Staged::constant(self.clone()),
        }
    }
}
