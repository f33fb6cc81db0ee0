//! A [`Plan`] evaluated block by block over concrete arrays.

use super::Compiled;
use super::plan::{Edge, Op, Plan, Src};
use crate::dynamic::Dyn;
use crate::{Array, Element};
use nabla_kernels::ops::{OpKernels, binary_into, unary_into};
use nabla_kernels::{PARALLEL_THRESHOLD, parallel};
use std::mem::MaybeUninit;

/// Per-thread buffers, reused from block to block.
struct Scratch<T> {
    regs: Vec<Vec<T>>,
    /// Where each node's buffer starts, in the node's own elements.
    starts: Vec<isize>,
    /// The range of each node a block needs.
    need: Vec<Option<(isize, isize)>>,
    tmp: [Vec<T>; 2],
}

/// A block's index, its chunk of each output and its partial sums.
type Item<'a, T> = (usize, Vec<&'a mut [MaybeUninit<T>]>, Vec<f64>);

/// Runs `plan` on `slots`: false (nothing written) when an external is
/// not a concrete row-major array of the recorded size and dtype.
pub(super) fn run<T: OpKernels + Element + Default>(
    plan: &Plan,
    compiled: Option<&Compiled>,
    slots: &mut [Option<Dyn>],
) -> bool {
    let mut ext: Vec<&[T]> = Vec::with_capacity(plan.externals.len());
    for &(k, len) in &plan.externals {
        let Some(Dyn::Array(a)) = &slots[k] else {
            return false;
        };
        if a.dtype() != plan.dtype || a.numel() != len {
            return false;
        }
        let Some(s) = a.host_view::<T>().and_then(|v| v.to_slice()) else {
            return false;
        };
        ext.push(s);
    }
    let sizes: Vec<usize> = plan
        .outputs
        .iter()
        .map(|(_, s)| s.iter().product())
        .collect();
    // Output index -> the node computing it.
    let mut node_of_out = vec![0; plan.outputs.len()];
    for (i, n) in plan.nodes.iter().enumerate() {
        if let Some(o) = n.out {
            node_of_out[o] = i;
        }
    }
    let mut outs: Vec<Vec<T>> = sizes.iter().map(|&n| Vec::with_capacity(n)).collect();
    let bs = super::BLOCK;
    let blocks = plan.master.div_ceil(bs);
    let ins: Vec<usize> = ext.iter().map(|s| s.as_ptr() as usize).collect();
    // Per block: its index, a chunk of every output (empty for sums and
    // past an output's end) and, once run, its partial sums.
    let mut items: Vec<Item<'_, T>> = (0..blocks).map(|b| (b, Vec::new(), Vec::new())).collect();
    for (o, v) in outs.iter_mut().enumerate() {
        let node = &plan.nodes[node_of_out[o]];
        let n = if node.op == Op::Sum { 0 } else { sizes[o] };
        let mut chunks = v.spare_capacity_mut()[..n].chunks_mut(bs);
        for item in items.iter_mut() {
            item.1.push(chunks.next().unwrap_or_default());
        }
    }
    // A piece of consecutive blocks runs on one thread with one scratch.
    let piece = |_: usize, items: &mut [Item<'_, T>]| {
        let mut s = Scratch {
            regs: vec![Vec::new(); plan.regs],
            starts: vec![0; plan.nodes.len()],
            need: vec![None; plan.nodes.len()],
            tmp: [Vec::new(), Vec::new()],
        };
        let ins: Vec<*const u8> = ins.iter().map(|&p| p as *const u8).collect();
        let mut outs: Vec<*mut u8> = Vec::with_capacity(plan.outputs.len());
        for (b, dst, partial) in items.iter_mut() {
            let b = *b;
            let lo = b * bs;
            let hi = (lo + bs).min(plan.master);
            *partial = match compiled {
                Some(c) if c.range.0 <= lo as isize && hi as isize <= c.range.1 => {
                    outs.clear();
                    outs.extend(dst.iter_mut().map(|d| d.as_mut_ptr().cast::<u8>()));
                    let mut sums = vec![0.0; plan.outputs.len()];
                    // SAFETY: inside `range` every load of the body is in
                    // its external (`lower` narrows the range to that), and
                    // each stored output's chunk holds `hi - lo` elements
                    // (outputs are at least `range.1` long).
                    unsafe { c.code.run(&ins, &outs, lo, hi - lo, &mut sums) };
                    sums
                }
                _ => block(plan, &ext, &mut s, b, bs, dst),
            };
        }
    };
    if plan.master < PARALLEL_THRESHOLD {
        // Small: waking other threads costs more than the work.
        piece(0, &mut items);
    } else {
        let per = blocks.div_ceil(4 * rayon::current_num_threads());
        parallel::chunks_mut(&mut items, per, piece);
    }
    let partials: Vec<Vec<f64>> = items.into_iter().map(|(_, _, p)| p).collect();
    for (o, v) in outs.iter_mut().enumerate() {
        if plan.nodes[node_of_out[o]].op == Op::Sum {
            let total: f64 = partials.iter().map(|p| p[o]).sum();
            v.push(<T as Element>::from_f64(total));
        } else {
            // SAFETY: the blocks cover [0, master), which holds every
            // output's elements, and each block wrote its chunk of each
            // output whole (`block` copies its owned range out).
            unsafe { v.set_len(sizes[o]) };
        }
    }
    for ((slot, shape), v) in plan.outputs.iter().zip(outs) {
        slots[*slot] = Some(Dyn::Array(Array::from_vec(v, shape)));
    }
    true
}

/// Block `b`: computes what its outputs' elements need, writes them into
/// `dst` (one chunk per output, empty for sums and past an output's end)
/// and returns each output's partial sum (zero for the others).
fn block<T: OpKernels + Element + Default>(
    plan: &Plan,
    ext: &[&[T]],
    scratch: &mut Scratch<T>,
    b: usize,
    bs: usize,
    dst: &mut [&mut [MaybeUninit<T>]],
) -> Vec<f64> {
    let lo = (b * bs) as isize;
    let hi = (lo + bs as isize).min(plan.master as isize);
    let Scratch {
        regs,
        starts,
        need,
        tmp,
    } = scratch;
    for (i, n) in plan.nodes.iter().enumerate() {
        need[i] = n
            .out
            .map(|_| (lo, hi.min(n.domain as isize)))
            .filter(|r| r.0 < r.1);
    }
    for i in (0..plan.nodes.len()).rev() {
        let Some((a, z)) = need[i] else { continue };
        for e in &plan.nodes[i].edges {
            let Src::Node(m) = e.src else { continue };
            let (va, vz) = (a.max(e.valid.0), z.min(e.valid.1));
            if va >= vz {
                continue;
            }
            let r = if e.bcast {
                (e.shift, e.shift + 1)
            } else {
                (va + e.shift, vz + e.shift)
            };
            need[m] = Some(need[m].map_or(r, |(x, y)| (x.min(r.0), y.max(r.1))));
        }
    }
    let mut partial = if plan.sums {
        vec![0.0; plan.outputs.len()]
    } else {
        Vec::new()
    };
    for (i, node) in plan.nodes.iter().enumerate() {
        let Some((a, z)) = need[i] else { continue };
        let m = (z - a) as usize;
        if node.op == Op::Sum {
            let [t0, _] = &mut *tmp;
            let x = read(&node.edges[0], a, z, plan, ext, regs, starts, t0);
            partial[node.out.expect("a sum is an output")] =
                x.iter().map(|v| Element::to_f64(*v)).sum();
            continue;
        }
        let owned = (lo, hi.min(node.len as isize));
        let direct = node.out.is_some() && !node.read_in_run && (a, z) == owned;
        let mut buf = std::mem::take(&mut regs[node.reg]);
        let target: &mut [MaybeUninit<T>] = if direct {
            &mut dst[node.out.expect("an output")][..m]
        } else {
            buf.resize(m, T::default());
            // SAFETY: the kernels and the copy below only store
            // initialised values, so `buf` stays initialised.
            unsafe { &mut *(buf.as_mut_slice() as *mut [T] as *mut [MaybeUninit<T>]) }
        };
        let [t0, t1] = &mut *tmp;
        match node.op {
            Op::Unary(op) => {
                let x = read(&node.edges[0], a, z, plan, ext, regs, starts, t0);
                unary_into(x, target, op);
            }
            Op::Binary(op) => {
                let x = read(&node.edges[0], a, z, plan, ext, regs, starts, t0);
                let y = read(&node.edges[1], a, z, plan, ext, regs, starts, t1);
                binary_into(x, y, target, op);
            }
            Op::Copy => {
                let x = read(&node.edges[0], a, z, plan, ext, regs, starts, t0);
                for (d, s) in target.iter_mut().zip(x) {
                    d.write(*s);
                }
            }
            Op::Sum => unreachable!("sums are handled above"),
        }
        if let (Some(o), false) = (node.out, direct) {
            let from = (owned.0 - a) as usize;
            let count = (owned.1 - owned.0).max(0) as usize;
            for (d, s) in dst[o].iter_mut().zip(&buf[from..from + count]) {
                d.write(*s);
            }
        }
        starts[i] = a;
        regs[node.reg] = buf;
    }
    partial
}

/// Elements `[a, z)` of `e`'s read: a slice of the source where the read
/// is a plain run of it, else written into `tmp`.
#[allow(clippy::too_many_arguments)]
fn read<'s, T: OpKernels + Element + Default>(
    e: &Edge,
    a: isize,
    z: isize,
    plan: &Plan,
    ext: &[&'s [T]],
    regs: &'s [Vec<T>],
    starts: &[isize],
    tmp: &'s mut Vec<T>,
) -> &'s [T] {
    let m = (z - a) as usize;
    let (data, start): (&'s [T], isize) = match e.src {
        Src::Node(j) => (&regs[plan.nodes[j].reg], starts[j]),
        Src::Ext(k) => (ext[k], 0),
        Src::Scalar(v) => {
            fill(tmp, m, a, e.valid, |_| <T as Element>::from_f64(v));
            return tmp;
        }
    };
    if e.bcast {
        let v = data[(e.shift - start) as usize];
        fill(tmp, m, a, e.valid, |_| v);
        return tmp;
    }
    if e.valid.0 <= a && z <= e.valid.1 {
        let at = (a + e.shift - start) as usize;
        return &data[at..at + m];
    }
    fill(tmp, m, a, e.valid, |i| data[(i + e.shift - start) as usize]);
    tmp
}

/// `tmp` as `m` elements for reader indices `[a, a + m)`: `f(i)` inside
/// `valid`, zero outside.
fn fill<T: Default + Copy>(
    tmp: &mut Vec<T>,
    m: usize,
    a: isize,
    valid: (isize, isize),
    f: impl Fn(isize) -> T,
) {
    tmp.clear();
    tmp.extend((0..m as isize).map(|k| {
        let i = a + k;
        if i >= valid.0 && i < valid.1 {
            f(i)
        } else {
            T::default()
        }
    }));
}
