//! The kernels that walk strides with raw pointers, on random views: axes
//! permuted, reversed (negative strides), sliced with steps, broadcast
//! (zero strides), at an offset into a larger buffer. Each result must be
//! bit for bit the same kernel's result on a row-major copy of the view.
//! The values are multiples of 1/4 below 2^10, so sums and dot products are
//! exact in any order and bitwise equality holds for them too. Tests build
//! in debug, where the `debug_assert!`s at the kernels' pointer arithmetic
//! check every row against its view's extent.

use crate::elementwise::{
    BinaryOp, UnaryOp, add_into, binary, contiguous, contiguous_as, permuted_as, row_major,
    transposed_copy, unary,
};
use crate::reduce::{ReduceOp, reduce};
use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn, Slice};
use proptest::prelude::*;

/// How a view of a given shape lies in memory.
#[derive(Clone, Debug)]
struct Layout {
    /// Ranks of the axes' order in memory (argsorted into a permutation).
    order: Vec<u8>,
    /// Slicing step per axis.
    step: Vec<usize>,
    /// Elements skipped before each axis's first.
    start: Vec<usize>,
    /// Axes read backwards (negative strides).
    invert: Vec<bool>,
    /// Axes stored once and broadcast (zero strides).
    broadcast: Vec<bool>,
    /// Elements of the buffer before the view's block.
    pad: usize,
}

const MAX_ND: usize = 4;

fn layout() -> impl Strategy<Value = Layout> {
    (
        proptest::collection::vec(any::<u8>(), MAX_ND),
        proptest::collection::vec(prop_oneof![3 => Just(1usize), 1 => 2..=3usize], MAX_ND),
        proptest::collection::vec(0..=2usize, MAX_ND),
        proptest::collection::vec(any::<bool>(), MAX_ND),
        proptest::collection::vec(prop_oneof![4 => Just(false), 1 => Just(true)], MAX_ND),
        0..=5usize,
    )
        .prop_map(|(order, step, start, invert, broadcast, pad)| Layout {
            order,
            step,
            start,
            invert,
            broadcast,
            pad,
        })
}

fn shape(max_nd: usize) -> impl Strategy<Value = Vec<usize>> {
    proptest::collection::vec(
        prop_oneof![1 => Just(0usize), 3 => Just(1), 4 => 2..=4usize, 3 => 8..=11usize],
        0..=max_nd,
    )
    .prop_filter("a few thousand elements at most", |s| {
        s.iter().product::<usize>() <= 4096
    })
}

/// A buffer and the view of `shape` that `layout` describes in it.
struct Strided {
    buf: Vec<f64>,
    /// The stored block's shape, in memory order of its axes.
    block: Vec<usize>,
    shape: Vec<usize>,
    layout: Layout,
    /// `perm[i]`: the block axis that becomes view axis `i`.
    perm: Vec<usize>,
}

impl Strided {
    /// `layout` (with broadcasting when `broadcast`) for `shape`, values
    /// from `seed`.
    fn new(shape: &[usize], layout: &Layout, seed: u64, broadcast: bool) -> Strided {
        let nd = shape.len();
        let mut memory_order: Vec<usize> = (0..nd).collect();
        memory_order.sort_by_key(|&i| (layout.order[i], i));
        // Block axis `j` holds view axis `memory_order[j]`.
        let stored = |i: usize| {
            if broadcast && layout.broadcast[i] {
                shape[i].min(1)
            } else {
                shape[i]
            }
        };
        let block: Vec<usize> = memory_order
            .iter()
            .map(|&i| layout.start[i] + stored(i) * layout.step[i])
            .collect();
        let n: usize = block.iter().product::<usize>() + layout.pad;
        let mut s = seed | 1;
        let buf = (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s % 4096) as f64 / 4.0 - 512.0
            })
            .collect();
        let mut perm = vec![0; nd];
        for (j, &i) in memory_order.iter().enumerate() {
            perm[i] = j;
        }
        Strided {
            buf,
            block,
            shape: shape.to_vec(),
            layout: layout.clone(),
            perm,
        }
    }

    /// The view's axes before broadcasting, as stored.
    fn stored(&self) -> ArrayViewD<'_, f64> {
        let l = &self.layout;
        let n: usize = self.block.iter().product();
        let block = ArrayViewD::from_shape(IxDyn(&self.block), &self.buf[l.pad..l.pad + n])
            .expect("the block fits its buffer");
        let mut v = block.permuted_axes(IxDyn(&self.perm));
        for i in 0..v.ndim() {
            let (start, step) = (l.start[i], l.step[i]);
            let len = (v.shape()[i] - start) / step;
            v.slice_axis_inplace(
                Axis(i),
                Slice::new(
                    start as isize,
                    Some((start + len * step) as isize),
                    step as isize,
                ),
            );
            if l.invert[i] {
                v.invert_axis(Axis(i));
            }
        }
        v
    }

    /// `f` of the view: the stored axes broadcast to the shape.
    fn with<R>(&self, f: impl FnOnce(ArrayViewD<'_, f64>) -> R) -> R {
        let s = self.stored();
        f(s.broadcast(IxDyn(&self.shape))
            .expect("stored axes broadcast to the shape"))
    }

    /// The view's elements in a new row-major array.
    fn copy(&self) -> ArrayD<f64> {
        self.with(|v| copy(&v))
    }
}

/// The view's elements in a new row-major array (by the iterator, not by
/// a kernel under test).
fn copy(v: &ArrayViewD<'_, f64>) -> ArrayD<f64> {
    ArrayD::from_shape_vec(v.raw_dim(), v.iter().copied().collect()).expect("its own shape")
}

#[track_caller]
fn same(got: &ArrayViewD<'_, f64>, want: &ArrayViewD<'_, f64>, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}: shapes");
    for (i, (g, w)) in got.iter().zip(want.iter()).enumerate() {
        assert!(
            g.to_bits() == w.to_bits(),
            "{what}: element {i} (row-major) is {g:?}, on a contiguous copy {w:?}"
        );
    }
}

/// `shape` with some axes 1 and some leading axes dropped, by `mask`: an
/// operand that broadcasts to `shape`.
fn narrowed(shape: &[usize], mask: &[bool], drop: usize) -> Vec<usize> {
    shape
        .iter()
        .zip(mask)
        .skip(drop.min(shape.len()))
        .map(|(&d, &one)| if one { 1 } else { d })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn unary_maps_of_strided_views(sh in shape(MAX_ND), l in layout(), seed in any::<u64>()) {
        let x = Strided::new(&sh, &l, seed, true);
        let c = x.copy();
        for op in [UnaryOp::Exp(), UnaryOp::Neg(), UnaryOp::Sqrt(), UnaryOp::Tanh()] {
            let got = x.with(|v| unary(v, op));
            same(&got.view(), &unary(c.view(), op).view(), &format!("{op:?}"));
        }
    }

    #[test]
    fn binary_maps_of_strided_broadcast_views(
        sh in shape(MAX_ND),
        (la, lb) in (layout(), layout()),
        mask in proptest::collection::vec(any::<bool>(), MAX_ND),
        drop in 0..=2usize,
        seed in any::<u64>(),
    ) {
        let a = Strided::new(&sh, &la, seed, true);
        let b = Strided::new(&narrowed(&sh, &mask, drop), &lb, seed ^ 0x55, true);
        let (ca, cb) = (a.copy(), b.copy());
        a.with(|av| b.with(|bv| {
            for op in [BinaryOp::Add, BinaryOp::Mul, BinaryOp::Sub] {
                let what = format!("{op:?}");
                let want = binary(ca.view(), cb.view(), op);
                same(&binary(av.clone(), bv.clone(), op).view(), &want.view(), &what);
                let want = binary(cb.view(), ca.view(), op);
                same(&binary(bv.clone(), av.clone(), op).view(), &want.view(), &what);
            }
            let got = crate::elementwise::mul_scaled(av, bv, 0.5);
            let want = crate::elementwise::mul_scaled(ca.view(), cb.view(), 0.5);
            same(&got.view(), &want.view(), "mul_scaled");
        }));
    }

    #[test]
    fn row_major_copies_of_strided_views(sh in shape(MAX_ND), l in layout(), seed in any::<u64>()) {
        let x = Strided::new(&sh, &l, seed, true);
        let c = x.copy();
        x.with(|v| {
            same(&contiguous(&v).view(), &c.view(), "contiguous");
            assert_eq!(row_major(&v), c.iter().copied().collect::<Vec<_>>(), "row_major");
            let flat = [v.len()];
            let want = copy(&c.view().into_shape_with_order(IxDyn(&flat)).expect("flat"));
            same(&contiguous_as(&v, &flat).view(), &want.view(), "contiguous_as");
            let perm: Vec<usize> = (0..v.ndim()).rev().collect();
            let want = copy(&c.view().permuted_axes(IxDyn(&perm)));
            same(&permuted_as(&v, &perm, want.shape()).view(), &want.view(), "permuted_as");
            if v.ndim() == 2 {
                let v2 = v.clone().into_dimensionality::<ndarray::Ix2>().expect("two axes");
                same(&transposed_copy(v2).into_dyn().view(), &c.view(), "transposed_copy");
            }
        });
    }

    #[test]
    fn accumulation_into_strided_views(
        sh in shape(MAX_ND),
        (lx, lc) in (layout(), layout()),
        seed in any::<u64>(),
    ) {
        // The target has no broadcast axes (a mutable view cannot).
        let mut x = Strided::new(&sh, &lx, seed, false);
        let c = Strided::new(&sh, &lc, seed ^ 0x77, true);
        let mut want = x.copy();
        want += &c.copy();
        let before = x.buf.clone();
        // The addresses the view covers, to check nothing else changes.
        let base = x.buf.as_ptr() as usize;
        let inside: std::collections::HashSet<usize> =
            x.with(|v| v.iter().map(|e| (e as *const f64 as usize - base) / 8).collect());
        {
            let l = x.layout.clone();
            let n: usize = x.block.iter().product();
            let (block, perm) = (x.block.clone(), x.perm.clone());
            let buf = &mut x.buf[l.pad..l.pad + n];
            let mut v = ndarray::ArrayViewMutD::from_shape(IxDyn(&block), buf)
                .expect("the block fits its buffer")
                .permuted_axes(IxDyn(&perm));
            for i in 0..v.ndim() {
                let (start, step) = (l.start[i], l.step[i]);
                let len = (v.shape()[i] - start) / step;
                v.slice_axis_inplace(Axis(i), Slice::new(start as isize, Some((start + len * step) as isize), step as isize));
                if l.invert[i] {
                    v.invert_axis(Axis(i));
                }
            }
            c.with(|cv| add_into(&mut v, cv));
        }
        same(&x.copy().view(), &want.view(), "add_into");
        for (k, (a, b)) in x.buf.iter().zip(&before).enumerate() {
            prop_assert!(inside.contains(&k) || a.to_bits() == b.to_bits(), "add_into wrote element {} outside the view", k);
        }
    }

    #[test]
    fn reductions_of_strided_views(sh in shape(MAX_ND), l in layout(), seed in any::<u64>(), pick in any::<u8>()) {
        let x = Strided::new(&sh, &l, seed, true);
        let c = x.copy();
        let axes: Vec<usize> = (0..sh.len()).filter(|i| pick >> i & 1 == 1).collect();
        for op in [ReduceOp::Sum, ReduceOp::Max] {
            if op == ReduceOp::Max && axes.iter().any(|&a| sh[a] == 0) {
                continue;
            }
            let got = x.with(|v| reduce(v, &axes, op));
            same(&got.view(), &reduce(c.view(), &axes, op).view(), &format!("{op:?} over {axes:?}"));
        }
    }

    #[test]
    fn slices_placed_from_strided_views(sh in shape(3), l in layout(), seed in any::<u64>(), lead in 0..=2usize) {
        let src = Strided::new(&sh, &l, seed, true);
        let out: Vec<usize> = sh.iter().map(|&d| d + lead).collect();
        let slices: Vec<Slice> = sh.iter().map(|&d| Slice::new(lead as isize, Some((lead + d) as isize), 1)).collect();
        let got = src.with(|v| crate::index::slice_place(&out, &slices, v));
        let want = crate::index::slice_place(&out, &slices, src.copy().view());
        same(&got.view(), &want.view(), "slice_place");
    }

    #[test]
    fn products_of_strided_views(
        (batch, m, k, n) in (1..=3usize, 1..=5usize, 1..=9usize, 1..=5usize),
        (la, lb) in (layout(), layout()),
        seed in any::<u64>(),
    ) {
        let a = Strided::new(&[batch, m, k], &la, seed, true);
        let b = Strided::new(&[batch, k, n], &lb, seed ^ 0x99, true);
        let got = a.with(|av| b.with(|bv| crate::matmul::matmul(
            av.into_dimensionality().expect("three axes"),
            bv.into_dimensionality().expect("three axes"),
        )));
        let (ca, cb) = (a.copy(), b.copy());
        let want = crate::matmul::matmul(
            ca.view().into_dimensionality().expect("three axes"),
            cb.view().into_dimensionality().expect("three axes"),
        );
        same(&got.into_dyn().view(), &want.into_dyn().view(), "matmul");
    }
}
