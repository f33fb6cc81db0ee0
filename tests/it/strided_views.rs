//! Host storage views (`nabla-runtime`'s `storage/host.rs`) over random
//! layouts: arrays made with `Array::from_external` at an offset into a
//! larger buffer, with strides of either sign, steps and zero (broadcast)
//! strides, then sliced, permuted, reshaped, mapped, reduced, multiplied
//! and updated. Every result must be bit for bit the same op's result on a
//! row-major copy (`Array::from_vec`); values are multiples of 1/4 below
//! 2^10, so sums and products are exact in any order. The external buffer
//! must come back unchanged (Nabla never writes external memory).

use nabla::{Array, DType};
use proptest::prelude::*;
use std::sync::Arc;

/// A random layout over a buffer: per axis a length, a stride (of either
/// sign, 0 for a broadcast axis) and the buffer offset of element
/// `[0, 0, ..]` that keeps every element inside.
fn layout() -> impl Strategy<Value = (Vec<usize>, Vec<isize>, usize)> {
    proptest::collection::vec(
        (
            prop_oneof![1 => Just(1usize), 3 => 2..=5usize, 1 => 8..=9usize],
            prop_oneof![1 => Just(0isize), 4 => -3..=3isize],
        ),
        1..=3,
    )
    .prop_flat_map(|axes| {
        let (shape, mut strides): (Vec<usize>, Vec<isize>) = axes.into_iter().unzip();
        // Strides of at least the inner block's extent keep distinct
        // elements apart (a view never aliases itself except by
        // broadcasting); the signs and zeros stay as drawn.
        let mut block = 1isize;
        for k in (0..shape.len()).rev() {
            let s = strides[k];
            if s != 0 {
                strides[k] = s.signum() * block * s.abs();
                block *= s.abs() * shape[k] as isize;
            }
        }
        let low: isize = shape
            .iter()
            .zip(&strides)
            .map(|(&d, &s)| (d as isize - 1) * s.min(0))
            .sum();
        (
            Just(shape),
            Just(strides),
            (-low) as usize..=(-low) as usize + 4,
        )
    })
}

/// The buffer's values at `len` positions.
fn values(len: usize, seed: u64) -> Vec<f64> {
    let mut s = seed | 1;
    (0..len)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s % 4096) as f64 / 4.0 - 512.0
        })
        .collect()
}

/// The external array of `(shape, strides, first)` over `buf`, and its
/// row-major copy made by index arithmetic here, not by Nabla.
fn external(
    buf: &Arc<Vec<f64>>,
    shape: &[usize],
    strides: &[isize],
    first: usize,
) -> (Array, Array) {
    let n: usize = shape.iter().product();
    let mut rows = Vec::with_capacity(n);
    for i in 0..n {
        let (mut rest, mut off) = (i, first as isize);
        for k in (0..shape.len()).rev() {
            off += (rest % shape[k]) as isize * strides[k];
            rest /= shape[k];
        }
        rows.push(buf[off as usize]);
    }
    let ptr = buf[first..].as_ptr();
    // SAFETY: `layout` keeps every element `first + Σ iₖ·strides[k]`
    // inside `buf` (one allocation, aligned `f64`s), which the clone of the
    // `Arc` moved into `keep` holds unwritten while the array lives.
    let x = unsafe { Array::from_external(ptr, shape, strides, Box::new(buf.clone())) };
    (x, Array::from_vec(rows, shape))
}

#[track_caller]
fn same(got: &Array, want: &Array, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}: shapes");
    let (g, w) = (got.to_vec::<f64>(), want.to_vec::<f64>());
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        assert!(
            a.to_bits() == b.to_bits(),
            "{what}: element {i} is {a:?}, on the row-major copy {b:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn ops_on_external_views_match_row_major_copies(
        (shape, strides, first) in layout(),
        seed in any::<u64>(),
        cut in 0..=1usize,
    ) {
        let reach: usize = shape.iter().zip(&strides).map(|(&d, &s)| (d - 1) * s.unsigned_abs()).sum();
        let buf = Arc::new(values(first + reach + 3, seed));
        let before = (*buf).clone();
        let (x, c) = external(&buf, &shape, &strides, first);
        same(&x, &c, "the view itself");
        same(&x.exp(), &c.exp(), "exp");
        same(&(&x * &x), &(&c * &c), "x * x");
        same(&(&x + &c.sqrt()), &(&c + &c.sqrt()), "x + sqrt(c)");
        same(&x.sum(), &c.sum(), "sum");
        let axes: Vec<isize> = (0..shape.len() as isize).step_by(2).collect();
        same(&x.sum_axes(&axes, false), &c.sum_axes(&axes, false), "sum over even axes");
        let perm: Vec<usize> = (0..shape.len()).rev().collect();
        same(&x.permute(&perm).exp(), &c.permute(&perm).exp(), "permute");
        let n: usize = shape.iter().product();
        same(&x.reshape(&[n]), &c.reshape(&[n]), "reshape");
        let ranges: Vec<std::ops::Range<usize>> = shape.iter().map(|&d| cut.min(d - 1)..d).collect();
        same(&x.slice(&ranges).square(), &c.slice(&ranges).square(), "slice");
        if shape.len() == 2 {
            same(&x.matmul(&x.transpose()), &c.matmul(&c.transpose()), "x xᵀ");
        }
        // Updates in place copy external elements first: the array
        // changes, the buffer does not.
        let mut y = x.clone();
        y += &Array::ones(&shape, DType::F64);
        same(&y, &(&c + 1.0), "+=");
        let ones = Array::ones(&[1], DType::F64);
        let first_row: Vec<ndarray::Slice> = shape
            .iter()
            .enumerate()
            .map(|(k, _)| ndarray::Slice::from(0..if k == 0 { 1 } else { shape[k] }))
            .collect();
        let part = Array::ones(&[&[1][..], &shape[1..]].concat(), DType::F64);
        let z = nabla::ArrayValue::add_into_slice(x.clone(), &first_row, &part);
        let zc = nabla::ArrayValue::add_into_slice(c.clone(), &first_row, &part);
        same(&z, &zc, "add_into_slice");
        same(&x, &c, "the view after its clones were updated");
        drop((x, y, z, ones));
        prop_assert_eq!(&*buf, &before, "the external buffer was written");
    }
}
