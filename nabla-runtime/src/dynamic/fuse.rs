//! Chains of elementwise instructions of a recorded [`super::Program`]
//! run as one pass: consecutive instructions that are elementwise kernels
//! of one float dtype and one shape form a group; at replay, when every
//! operand from outside the group is a concrete row-major array of that
//! shape (or a one-element array), the group runs over blocks of
//! [`BLOCK`] elements with each intermediate in a block-sized buffer, and
//! only the members used after the group are written out. Otherwise the
//! group runs instruction by instruction, as without fusion.

use super::Dyn;
use crate::{Array, DType, Element};
use nabla_kernels::ops::{BinaryOp, OpKernels, UnaryOp};
use rayon::prelude::*;
use std::collections::HashMap;

/// Elements per block: a block of every intermediate stays in cache.
pub(crate) const BLOCK: usize = 4096;

/// Which elementwise kernel an instruction is.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Elem {
    Unary(UnaryOp),
    Binary(BinaryOp),
}

/// A group of instructions run as one pass.
pub(crate) struct Group {
    /// (slot written, kernel, operand slots), in program order.
    pub(crate) members: Vec<(usize, Elem, Vec<usize>)>,
    /// Operand slots produced outside the group.
    pub(crate) externals: Vec<usize>,
    /// Member slots read after the group (or program outputs).
    pub(crate) outputs: Vec<usize>,
    pub(crate) shape: crate::Shape,
    pub(crate) dtype: DType,
}

impl Group {
    /// Runs the group on `slots` as one pass, or returns false (nothing
    /// written) when an operand is not a concrete row-major array of the
    /// group's shape and dtype, or a one-element one.
    pub(crate) fn run(&self, slots: &mut [Option<Dyn>]) -> bool {
        static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        if !*ON.get_or_init(|| std::env::var("NABLA_JIT_FUSE").map_or(true, |v| v != "0")) {
            return false;
        }
        match self.dtype {
            DType::F32 => self.run_typed::<f32>(slots),
            DType::F64 => self.run_typed::<f64>(slots),
            _ => false,
        }
    }

    fn run_typed<T: OpKernels + Element + Default>(&self, slots: &mut [Option<Dyn>]) -> bool {
        let n: usize = self.shape.iter().product();
        let mut full: HashMap<usize, &[T]> = HashMap::new();
        let mut scalar: HashMap<usize, T> = HashMap::new();
        for &k in &self.externals {
            let Some(Dyn::Array(a)) = &slots[k] else {
                return false;
            };
            if a.dtype() != self.dtype {
                return false;
            }
            let Some(view) = a.host_view::<T>() else {
                return false;
            };
            if a.numel() == 1 {
                scalar.insert(k, *view.iter().next().expect("one element"));
            } else if a.shape() == &self.shape[..]
                && let Some(s) = view.to_slice()
            {
                full.insert(k, s);
            } else {
                return false;
            }
        }
        let mut outs: Vec<Vec<T>> = self.outputs.iter().map(|_| vec![T::default(); n]).collect();
        {
            // Each output split into blocks; the blocks run in parallel.
            let mut chunks: Vec<Vec<&mut [T]>> = Vec::new();
            let mut iters: Vec<_> = outs.iter_mut().map(|o| o.chunks_mut(BLOCK)).collect();
            for _ in 0..n.div_ceil(BLOCK) {
                chunks.push(
                    iters
                        .iter_mut()
                        .map(|it| it.next().expect("one chunk per block"))
                        .collect(),
                );
            }
            // Where each member's operands come from, decided once.
            enum From {
                Member(usize),
                Full(usize),
                Scalar(usize),
            }
            let pos: HashMap<usize, usize> = self
                .members
                .iter()
                .enumerate()
                .map(|(i, m)| (m.0, i))
                .collect();
            let ext: Vec<&[T]> = self
                .externals
                .iter()
                .filter_map(|k| full.get(k).copied())
                .collect();
            let ext_at: HashMap<usize, usize> = self
                .externals
                .iter()
                .filter(|k| full.contains_key(k))
                .enumerate()
                .map(|(i, &k)| (k, i))
                .collect();
            let scalars: Vec<T> = self
                .externals
                .iter()
                .filter_map(|k| scalar.get(k).copied())
                .collect();
            let scalar_at: HashMap<usize, usize> = self
                .externals
                .iter()
                .filter(|k| scalar.contains_key(k))
                .enumerate()
                .map(|(i, &k)| (k, i))
                .collect();
            let plan: Vec<Vec<From>> = self
                .members
                .iter()
                .map(|(_, _, ops)| {
                    ops.iter()
                        .map(|k| match (pos.get(k), ext_at.get(k)) {
                            (Some(&i), _) => From::Member(i),
                            (None, Some(&i)) => From::Full(i),
                            (None, None) => From::Scalar(scalar_at[k]),
                        })
                        .collect()
                })
                .collect();
            let out_pos: Vec<usize> = self.outputs.iter().map(|k| pos[k]).collect();
            chunks.into_par_iter().enumerate().for_each(|(b, mut dst)| {
                let lo = b * BLOCK;
                let m = BLOCK.min(n - lo);
                let fills: Vec<Vec<T>> = scalars.iter().map(|&v| vec![v; m]).collect();
                let mut vals: Vec<Vec<T>> = Vec::with_capacity(self.members.len());
                for ((_, elem, _), from) in self.members.iter().zip(&plan) {
                    let get = |f: &From| -> &[T] {
                        match *f {
                            From::Member(i) => &vals[i],
                            From::Full(i) => &ext[i][lo..lo + m],
                            From::Scalar(i) => &fills[i],
                        }
                    };
                    let y = match elem {
                        Elem::Unary(op) => T::unary_slice(get(&from[0]), *op),
                        Elem::Binary(op) => T::binary_slices(get(&from[0]), get(&from[1]), *op),
                    };
                    vals.push(y);
                }
                for (&p, d) in out_pos.iter().zip(dst.iter_mut()) {
                    d.copy_from_slice(&vals[p]);
                }
            });
        }
        for (&k, v) in self.outputs.iter().zip(outs) {
            slots[k] = Some(Dyn::Array(Array::from_vec(v, &self.shape)));
        }
        true
    }
}

/// Splits `kinds` (per instruction: its slot, its kernel if elementwise,
/// its operands, its shape and dtype) into runs that can fuse; `used_after`
/// tells whether a slot is read outside a run. Returns, per instruction,
/// the index of its group (`None`: runs alone) and the groups.
#[allow(clippy::type_complexity)]
pub(crate) fn groups(
    instrs: &[(usize, Option<Elem>, Vec<usize>, crate::Shape, DType)],
    slot_shape: &dyn Fn(usize) -> (crate::Shape, DType),
    read_outside: &dyn Fn(usize, &[usize]) -> bool,
) -> (Vec<Option<usize>>, Vec<Group>) {
    let mut of: Vec<Option<usize>> = vec![None; instrs.len()];
    let mut out: Vec<Group> = Vec::new();
    let mut i = 0;
    while i < instrs.len() {
        let fits = |j: usize, shape: &crate::Shape, dtype: DType| {
            let (_, elem, ops, s, d) = &instrs[j];
            elem.is_some()
                && s == shape
                && *d == dtype
                && ops.iter().all(|&k| {
                    let (ks, kd) = slot_shape(k);
                    kd == dtype && (ks == *shape || ks.iter().product::<usize>() == 1)
                })
        };
        let (_, _, _, shape, dtype) = &instrs[i];
        let float = matches!(dtype, DType::F32 | DType::F64);
        let mut j = i;
        while j < instrs.len() && float && fits(j, shape, *dtype) {
            j += 1;
        }
        if j - i >= 2 {
            let members: Vec<(usize, Elem, Vec<usize>)> = instrs[i..j]
                .iter()
                .map(|(slot, e, ops, _, _)| (*slot, e.expect("elementwise"), ops.clone()))
                .collect();
            let written: Vec<usize> = members.iter().map(|m| m.0).collect();
            let mut externals: Vec<usize> = members
                .iter()
                .flat_map(|m| m.2.iter().copied())
                .filter(|k| !written.contains(k))
                .collect();
            externals.sort_unstable();
            externals.dedup();
            let outputs = written
                .iter()
                .copied()
                .filter(|&k| read_outside(k, &written))
                .collect();
            for o in of.iter_mut().take(j).skip(i) {
                *o = Some(out.len());
            }
            out.push(Group {
                members,
                externals,
                outputs,
                shape: shape.clone(),
                dtype: *dtype,
            });
            i = j;
        } else {
            i += 1;
        }
    }
    (of, out)
}
