//! Per-example sums of a region under `vmap` ([`reduce_rows`]): the
//! region's elements in row-major order fall into one run per example
//! (batch axis first), and each run is summed in the same pass that
//! evaluates the region, operands read in place where each example's
//! elements are contiguous.

use super::parts;
use super::pass::{broadcast, reduce_body};
use super::region::{Kernel, Region};
use super::simd::{Operand, Src, dispatch, pairwise};
use crate::array::count_pass;
use crate::{Array, DType};
use nabla_kernels::parallel::for_each;
use std::sync::Mutex;

/// The region's sum (or mean) over each of `rows` equal runs of its
/// elements in row-major order: the per-example sums of a batch whose
/// axis comes first (`vmap`), in one pass that writes nothing but the
/// sums. Each run is summed by chunks aligned to its start and then
/// pairwise, so the result does not depend on the number of threads.
pub(crate) fn reduce_rows<R: Region<N>, const N: usize>(
    ops: &[Array; N],
    rows: usize,
) -> Option<Array> {
    let shape = broadcast(ops)?;
    if rows == 0 || shape.first() != Some(&rows) {
        return None;
    }
    count_pass();
    Some(match ops[0].dtype() {
        DType::F64 => reduce_rows_typed::<R, N, f64>(ops, &shape, rows),
        _ => reduce_rows_typed::<R, N, f32>(ops, &shape, rows),
    })
}

fn reduce_rows_typed<R: Region<N>, const N: usize, T: Kernel>(
    ops: &[Array; N],
    shape: &[usize],
    rows: usize,
) -> Array {
    let n: usize = shape.iter().product();
    let m = n / rows;
    let ins: [RowOperand<'_, T>; N] = RowOperand::all(ops, shape);
    // Work item `j`: chunk `j % per_row` of row `j / per_row`, one sum each.
    let per_row = m.div_ceil(parts::CHUNK).max(1);
    let items = rows * per_row;
    let groups = parts::split(n).len().min(items);
    let per_group = items.div_ceil(groups);
    let sums: Vec<Mutex<Vec<f64>>> = parts::slots(groups);
    for_each(groups, |p| {
        let mut out = sums[p].lock().expect("one group per lock");
        for j in p * per_group..((p + 1) * per_group).min(items) {
            let (row, c) = (j / per_row, j % per_row);
            let start = row * m + c * parts::CHUNK;
            let end = (row * m + m).min(start + parts::CHUNK);
            if start < end {
                let src: [Src<'_, T>; N] = RowOperand::rows(&ins, row, m);
                let within = start - row * m..end - row * m;
                dispatch!(reduce_body::<R, N, T>(&src, within, &mut out));
            } else {
                out.push(0.0);
            }
        }
    });
    let sums = parts::joined(sums);
    let scale = super::region::reduce_scale::<R, N>(m);
    let v: Vec<T> = sums
        .chunks(per_row)
        .map(|s| <T as nabla_kernels::Float>::from_f64(pairwise(s) * scale))
        .collect();
    Array::from_vec(v, &[rows])
}

/// One operand of a per-row pass ([`reduce_rows`]): read in place when
/// each row's elements are contiguous in its buffer (a slice of every
/// example, or a row shared by the batch), else a whole [`Operand`].
enum RowOperand<'a, T: 'static> {
    /// Row `i` is `data[i * stride..][..m]`.
    Rows {
        data: &'a [T],
        stride: usize,
    },
    Whole(Operand<T>),
}

impl<'a, T: Kernel> RowOperand<'a, T> {
    fn of(x: &'a Array, shape: &[usize]) -> RowOperand<'a, T> {
        let a = T::typed(x).expect("checked dtype");
        let (sh, st) = (a.shape(), a.strides());
        // Rows in place: the broadcast shape, the axes after the first
        // row-major, a forward (or zero) stride between rows.
        let mut step = 1isize;
        let rows_contiguous = sh == shape
            && !sh.is_empty()
            && st[0] >= 0
            && (1..sh.len()).rev().all(|i| {
                let ok = sh[i] == 1 || st[i] == step;
                step *= sh[i] as isize;
                ok
            });
        let m: usize = sh.iter().skip(1).product();
        if rows_contiguous && m > 0 && a.len() > 1 {
            let stride = st[0] as usize;
            let len = (sh[0] - 1) * stride + m;
            // SAFETY: the view addresses rows at `i * stride` for `i <
            // sh[0]`, each `m` contiguous elements, all inside the buffer
            // `a` keeps alive for `'a`; `len` ends at the last one.
            let data = unsafe { std::slice::from_raw_parts(a.as_ptr(), len) };
            return RowOperand::Rows { data, stride };
        }
        RowOperand::Whole(Operand::of(x, shape))
    }

    /// Every operand read by rows ([`RowOperand::of`]).
    fn all<const N: usize>(ops: &'a [Array; N], shape: &[usize]) -> [RowOperand<'a, T>; N] {
        std::array::from_fn(|k| RowOperand::of(&ops[k], shape))
    }

    /// Row `i` of `m` elements of each of `ins`.
    fn rows<const N: usize>(
        ins: &'a [RowOperand<'a, T>; N],
        i: usize,
        m: usize,
    ) -> [Src<'a, T>; N] {
        std::array::from_fn(|k| ins[k].row(i, m))
    }

    /// Row `i` of `m` elements.
    fn row(&self, i: usize, m: usize) -> Src<'_, T> {
        match self {
            RowOperand::Rows { data, stride } => Src::Slice(&data[i * stride..][..m]),
            RowOperand::Whole(o) => match o.src() {
                Src::Slice(v) => Src::Slice(&v[i * m..][..m]),
                s => s,
            },
        }
    }
}
