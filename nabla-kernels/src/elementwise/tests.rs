//! Unit tests of the elementwise kernels: the broadcast, row and strided
//! paths against ndarray's generic iterators, the row-major and permuted
//! copies, and a large parallel map.

use super::zip::zip_strided;
use super::*;
use crate::PARALLEL_THRESHOLD;
use ndarray::{ArrayD, ArrayViewD, IxDyn, Zip, arr1, arr2};

#[test]
fn broadcast_paths_agree() {
    let a = arr2(&[[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]]).into_dyn();
    let r = arr1(&[10.0f64, 20.0, 30.0]).into_dyn();
    let fast = binary(a.view(), r.view(), BinaryOp::Sub);
    let rev = binary(r.view(), a.view(), BinaryOp::Sub);
    assert_eq!(
        fast.as_slice().unwrap(),
        &[-9.0, -18.0, -27.0, -6.0, -15.0, -24.0]
    );
    assert_eq!(rev.as_slice().unwrap(), &[9.0, 18.0, 27.0, 6.0, 15.0, 24.0]);
    let t = a.t();
    let col = arr2(&[[1.0f64], [2.0], [3.0]]).into_dyn();
    let g = binary(t.view(), col.view(), BinaryOp::Mul);
    assert_eq!(g.shape(), &[3, 2]);
    assert_eq!(g[[2, 1]], 18.0);
}

#[test]
fn row_paths_match_the_generic_iterator() {
    // Sliced (last axis contiguous, rows strided), broadcast rows, and a
    // transpose (not eligible) all agree with element-by-element maths.
    let big =
        ndarray::Array2::from_shape_fn((5, 12), |(i, j)| (i * 12 + j) as f64 * 0.1).into_dyn();
    let a = big.slice(ndarray::s![.., 1..11]).into_dyn();
    let b = big.slice(ndarray::s![.., 0..10]).into_dyn();
    let row = ndarray::Array1::from_shape_fn(10, |j| j as f64).into_dyn();
    let want = |x: f64, y: f64| x * y - 1.0;
    let check = |got: ArrayD<f64>, a: &ArrayViewD<'_, f64>, b: &ArrayViewD<'_, f64>| {
        let d = IxDyn(got.shape());
        let (av, bv) = (a.broadcast(d.clone()).unwrap(), b.broadcast(d).unwrap());
        for ((g, &x), &y) in got.iter().zip(av.iter()).zip(bv.iter()) {
            assert_eq!(*g, want(x, y));
        }
    };
    check(zip_map(a.view(), b.view(), want), &a.view(), &b.view());
    check(zip_map(a.view(), row.view(), want), &a.view(), &row.view());
    let t = a.t();
    let t2 = b.t();
    check(zip_map(t.view(), t2.view(), want), &t.view(), &t2.view());
    let m = map(a.view(), |v| v.sin());
    for (g, &x) in m.iter().zip(a.iter()) {
        assert_eq!(*g, x.sin());
    }
    assert_eq!(m.shape(), &[5, 10]);
    // Three axes, outer ones permuted (rows reached through the odometer).
    let c = ndarray::Array3::from_shape_fn((3, 4, 9), |(i, j, k)| (i * 36 + j * 9 + k) as f64)
        .into_dyn();
    let p = c.view().permuted_axes(vec![1, 0, 2]);
    let q = c.slice(ndarray::s![.., .., ..]).into_dyn();
    let q = q.view().permuted_axes(vec![1, 0, 2]);
    let r = zip_map(p.view(), q.view(), want);
    check(r, &p.view(), &q.view());
    let m3 = map(p.view(), |v| v + 0.5);
    for (g, &x) in m3.iter().zip(p.iter()) {
        assert_eq!(*g, x + 0.5);
    }
    // Short rows with broadcast axes on both sides (the small strided
    // path): [6, 1, 2, 3] against [2, 2, 3], and a transposed operand.
    let u = ndarray::Array4::from_shape_fn((6, 1, 2, 3), |(i, _, j, k)| (i * 6 + j * 3 + k) as f64)
        .into_dyn();
    let v = ndarray::Array3::from_shape_fn((2, 2, 3), |(i, j, k)| (i * 6 + j * 3 + k) as f64 - 5.5)
        .into_dyn();
    let got = zip_map(u.view(), v.view(), want);
    assert_eq!(got.shape(), &[6, 2, 2, 3]);
    check(got, &u.view(), &v.view());
    let vt = v.view().permuted_axes(vec![0, 2, 1]).to_owned();
    let vt = vt.view().permuted_axes(vec![0, 2, 1]);
    check(zip_map(u.view(), vt.view(), want), &u.view(), &vt.view());
}

#[test]
fn small_strided_broadcasts_match_the_generic_iterator() {
    // Random shapes of up to 5 axes, each operand broadcasting (length-1
    // or missing leading axes), permuted, reversed or sliced; the strided
    // path (`zip_strided`) against ndarray's broadcast iterators.
    let mut rng = testing::Rng(0x2545_f491_4f6c_dd1d);
    for case in 0..400 {
        let nd = rng.below(6);
        let out: Vec<usize> = (0..nd).map(|_| 1 + rng.below(4)).collect();
        let (la, lb) = (
            testing::operand(&mut rng, &out, 3.0),
            testing::operand(&mut rng, &out, -1.0),
        );
        let (va, vb) = (la.view(), lb.view());
        let shape = broadcast_shape(va.shape(), vb.shape());
        let f = |x: f64, y: f64| x * 3.0 - y;
        let got = zip_strided(&va, &vb, &shape, &f).expect("few axes");
        let d = IxDyn(&shape);
        let want = Zip::from(&va.broadcast(d.clone()).unwrap())
            .and(&vb.broadcast(d).unwrap())
            .map_collect(|&x, &y| f(x, y));
        assert_eq!(got, want, "case {case}: {:?} {:?}", va.shape(), vb.shape());
    }
}

#[test]
fn large_broadcasts_match_the_generic_iterator() {
    // Above the parallel threshold, general broadcasts (a bias over NCHW,
    // random layouts) run per index of the first axis by strides.
    let mut rng = testing::Rng(0x9e37_79b9_7f4a_7c15);
    for case in 0..12 {
        let nd = 2 + rng.below(4);
        let mut out: Vec<usize> = (0..nd).map(|_| 2 + rng.below(6)).collect();
        let n: usize = out.iter().product();
        out[nd - 1] *= PARALLEL_THRESHOLD / n + 1;
        let (la, lb) = (
            testing::operand(&mut rng, &out, 3.0),
            testing::operand(&mut rng, &out, -1.0),
        );
        let (va, vb) = (la.view(), lb.view());
        let shape = broadcast_shape(va.shape(), vb.shape());
        let got = zip_map(va.clone(), vb.clone(), |x: f64, y: f64| x * 3.0 - y);
        let d = IxDyn(&shape);
        let want = Zip::from(&va.broadcast(d.clone()).unwrap())
            .and(&vb.broadcast(d).unwrap())
            .map_collect(|&x, &y| x * 3.0 - y);
        assert_eq!(got, want, "case {case}: {:?} {:?}", va.shape(), vb.shape());
    }
    let x = ArrayD::from_shape_fn(IxDyn(&[8, 16, 32, 32]), |i| i[3] as f64 + i[0] as f64);
    let b = ArrayD::from_shape_fn(IxDyn(&[1, 16, 1, 1]), |i| 100.0 * i[1] as f64);
    let y = zip_map(x.view(), b.view(), |x: f64, y: f64| x + y);
    assert_eq!(y[[7, 15, 31, 30]], 7.0 + 30.0 + 1500.0);
}

#[test]
fn contiguous_copies_match_the_logical_order() {
    let c = ndarray::Array3::from_shape_fn((3, 4, 5), |(i, j, k)| (i * 100 + j * 10 + k) as i64)
        .into_dyn();
    let one_row = c.slice(ndarray::s![.., 0..1, ..]).into_dyn();
    let views = [
        c.view().permuted_axes(vec![2, 0, 1]), // last stride 4
        c.view().permuted_axes(vec![1, 0, 2]), // rows contiguous
        c.slice(ndarray::s![.., 1..3, ..;2]).into_dyn(), // stride-2 rows
        c.view(),                              // already standard
        c.slice(ndarray::s![.., 0..0, ..])
            .into_dyn()
            .permuted_axes(vec![2, 0, 1]), // empty
        // a broadcast (stride-0) axis
        one_row
            .broadcast(vec![3, 4, 5])
            .expect("broadcasts")
            .permuted_axes(vec![0, 2, 1]),
    ];
    for v in views {
        let got = contiguous(&v);
        assert!(got.is_standard_layout());
        assert_eq!(got, v.to_owned());
        assert_eq!(
            got.iter().copied().collect::<Vec<_>>(),
            v.iter().copied().collect::<Vec<_>>()
        );
    }
}

#[test]
fn permuted_copies_match_permute_then_copy() {
    // Every permutation of a 4-axis array (standard, sliced with a
    // stride, and with a broadcast axis), copied into a 2-axis shape,
    // against ndarray's permuted view read in logical order.
    let c = ndarray::Array4::from_shape_fn((2, 3, 4, 5), |(i, j, k, l)| {
        (i * 1000 + j * 100 + k * 10 + l) as i64
    })
    .into_dyn();
    let strided = c.slice(ndarray::s![.., .., ..;2, ..]).into_dyn();
    let row = c.slice(ndarray::s![.., 0..1, .., ..]).into_dyn();
    let wide = row.broadcast(vec![2, 3, 4, 5]).expect("broadcasts");
    let mut perms = Vec::new();
    for a in 0..4 {
        for b in 0..4 {
            for d in 0..4 {
                // The fourth axis is the one left: 0 + 1 + 2 + 3 = 6.
                let Some(e) = 6usize.checked_sub(a + b + d) else {
                    continue;
                };
                if a != b && a != d && b != d && e < 4 && e != a && e != b && e != d {
                    perms.push([a, b, d, e]);
                }
            }
        }
    }
    assert_eq!(perms.len(), 24);
    for v in [c.view(), strided.view(), wide.view()] {
        for p in &perms {
            let pv = v.clone().permuted_axes(p.to_vec());
            let n = pv.len();
            let shape = [
                pv.shape()[0] * pv.shape()[1],
                n / (pv.shape()[0] * pv.shape()[1]),
            ];
            let got = permuted_as(&v, p, &shape);
            assert_eq!(got.shape(), &shape);
            assert_eq!(
                got.iter().copied().collect::<Vec<_>>(),
                pv.iter().copied().collect::<Vec<_>>(),
                "{p:?} of {:?}",
                v.strides()
            );
        }
    }
}

#[test]
#[should_panic(expected = "permuted_as: [0, 0] is not a permutation of 2 axes")]
fn permuted_copies_reject_repeated_axes() {
    let x = ndarray::Array2::<f64>::zeros((2, 3)).into_dyn();
    permuted_as(&x.view(), &[0, 0], &[6]);
}

#[test]
fn large_parallel_map() {
    let n = PARALLEL_THRESHOLD * 3 + 7;
    let x = ndarray::Array1::from_iter((0..n).map(|i| i as f32)).into_dyn();
    let y = unary(x.view(), UnaryOp::Affine(2.0, 1.0));
    assert!(
        y.iter()
            .enumerate()
            .all(|(i, &v)| v == 2.0 * i as f32 + 1.0)
    );
}

/// Every path of a unary map over a view that is not one row-major
/// slice, small and large: a transpose (mapped in memory order, keeping
/// its strides), a reversed axis, a slice with a contiguous last axis
/// (row by row) and a strided slice (gathered first), all against
/// ndarray's element iterator.
#[test]
fn strided_maps_match_the_generic_iterator() {
    let f = |v: f64| v * 0.5 - 1.0;
    for (r, c) in [(3, 5), (40, 70), (300, 250)] {
        let a = ndarray::Array::from_shape_fn((r, c), |(i, j)| (i * c + j) as f64).into_dyn();
        let mut rev = a.clone();
        rev.invert_axis(ndarray::Axis(0));
        let views = [
            a.t(),
            rev.view(),
            a.slice(ndarray::s![.., 1..]).into_dyn(),
            a.slice(ndarray::s![.., ..;2]).into_dyn(),
            a.slice(ndarray::s![..;2, ..]).into_dyn(),
        ];
        for (k, v) in views.into_iter().enumerate() {
            let got = map(v.clone(), f);
            assert_eq!(got.shape(), v.shape(), "{r}x{c} view {k}");
            assert!(
                got.iter().zip(v.iter()).all(|(&g, &x)| g == f(x)),
                "{r}x{c} view {k}"
            );
        }
        // A transpose keeps its column-major layout, as NumPy's ufuncs do.
        assert_eq!(map(a.t(), f).strides(), a.t().strides(), "{r}x{c}");
    }
}

#[test]
fn sign_keeps_signed_zeros_and_nan() {
    fn check<T: crate::Float + std::fmt::Debug>(vals: &[f64]) {
        let x = ndarray::Array1::from_iter(vals.iter().map(|&v| T::from_f64(v))).into_dyn();
        let y = unary(x.view(), UnaryOp::Sign());
        let got: Vec<f64> = y.iter().map(|v| v.to_f64()).collect();
        assert_eq!(&got[..4], &[1.0, -1.0, 1.0, -1.0]);
        assert!(got[4] == 0.0 && got[4].is_sign_positive(), "sign(+0) = +0");
        assert!(got[5] == 0.0 && got[5].is_sign_negative(), "sign(-0) = -0");
        assert!(got[6].is_nan(), "sign(NaN) = NaN");
    }
    // 19 elements: a vector body and a scalar tail.
    let mut vals = vec![3.0, -2.0, 1e-30, -f64::INFINITY, 0.0, -0.0, f64::NAN];
    vals.extend((0..12).map(|i| i as f64 - 5.5));
    check::<f32>(&vals);
    check::<f64>(&vals);
}

#[test]
fn every_start_offset_and_length_agrees_with_scalar_maths() {
    // Slices of a larger buffer start 0..16 elements past its start, so
    // the vector loops see every alignment of their output's first
    // element relative to a cache line, and lengths around the threshold
    // of the aligned split (32 f64 / 64 f32) and odd tails.
    let big: Vec<f64> = (0..600).map(|i| (i as f64 * 0.37).sin()).collect();
    let big32: Vec<f32> = big.iter().map(|&v| v as f32).collect();
    for off in 0..16 {
        for n in [1, 7, 31, 32, 33, 64, 65, 100, 257] {
            let a = &big[off..off + n];
            let b = &big[off + 3..off + 3 + n];
            let got: Vec<f64> = binary(a, b, BinaryOp::Mul);
            assert!(
                got.iter()
                    .zip(a.iter().zip(b))
                    .all(|(g, (x, y))| *g == x * y)
            );
            let got: Vec<f64> = unary(a, UnaryOp::Neg());
            assert!(got.iter().zip(a).all(|(g, x)| *g == -x));
            let a32 = &big32[off..off + n];
            let got: Vec<f32> = unary(a32, UnaryOp::Square());
            assert!(got.iter().zip(a32).all(|(g, x)| *g == x * x));
            // In place, into a region starting at every offset.
            let mut x = ArrayD::from_shape_vec(IxDyn(&[n + 16]), big[..n + 16].to_vec()).unwrap();
            let before = x.clone();
            let c = ArrayD::from_shape_vec(IxDyn(&[n]), b.to_vec()).unwrap();
            let mut region = x.slice_mut(ndarray::s![off..off + n]).into_dyn();
            add_into(&mut region, c.view());
            for (i, (g, w)) in x.iter().zip(before.iter()).enumerate() {
                let add = if (off..off + n).contains(&i) {
                    b[i - off]
                } else {
                    0.0
                };
                assert_eq!(*g, w + add, "offset {off}, length {n}, element {i}");
            }
        }
    }
}

#[test]
fn a_single_element_operand_agrees_on_every_path() {
    // A one-element operand (a scalar or all-unit axes) against contiguous
    // and sliced operands, on either side, in rows long (the per-row unary
    // map of the strided path) and short.
    let big = ndarray::Array2::from_shape_fn((6, 40), |(i, j)| (i * 40 + j) as f64).into_dyn();
    let s = arr1(&[2.5f64]).into_dyn();
    let s0 = ndarray::arr0(-1.5f64).into_dyn();
    for v in [
        big.view(),
        big.slice(ndarray::s![.., 1..]).into_dyn(),
        big.slice(ndarray::s![.., ..3]).into_dyn(),
    ] {
        for k in [s.view(), s0.view()] {
            let y = k.iter().next().copied().unwrap();
            let l = zip_map(v.view(), k.view(), |a, b| a - b);
            let r = zip_map(k.view(), v.view(), |a, b| a - b);
            assert_eq!(l.shape(), v.shape());
            for ((l, r), &x) in l.iter().zip(r.iter()).zip(v.iter()) {
                assert_eq!((*l, *r), (x - y, y - x));
            }
        }
    }
    // A row broadcast along the rows of a sliced operand: rows with one
    // stride-0 side (the per-row map of the strided path).
    let col = ndarray::Array2::from_shape_fn((6, 1), |(i, _)| i as f64 + 0.5).into_dyn();
    let v = big.slice(ndarray::s![.., 2..]).into_dyn();
    for (got, flip) in [
        (zip_map(v.view(), col.view(), |a, b| a * b - a), false),
        (zip_map(col.view(), v.view(), |a, b| a * b - a), true),
    ] {
        for ((i, j), g) in ndarray::indices(got.shape())
            .into_iter()
            .map(|d| (d[0], d[1]))
            .zip(got.iter())
        {
            let (x, c) = (v[[i, j]], col[[i, 0]]);
            let want = if flip { c * x - c } else { x * c - x };
            assert_eq!(*g, want, "[{i}, {j}]");
        }
    }
}

#[test]
fn add_into_takes_any_layout() {
    // Rows of a region (contiguous last axis), a transposed region (the
    // generic path), short rows and three axes, against ndarray's `+=`.
    let base =
        ndarray::Array3::from_shape_fn((3, 5, 20), |(i, j, k)| (i * 100 + j * 20 + k) as f64)
            .into_dyn();
    let regions = [
        ndarray::s![.., 1.., 2..].to_owned(),
        ndarray::s![1.., .., ..3].to_owned(),
        ndarray::s![.., ..;2, 5..15].to_owned(),
    ];
    for sl in regions {
        let mut got = base.clone();
        let mut want = base.clone();
        let shape = base.slice(&sl).shape().to_vec();
        let c = ArrayD::from_shape_fn(IxDyn(&shape), |d| {
            (0..3).map(|k| d[k] * (k + 1)).sum::<usize>() as f64
        });
        add_into(&mut got.slice_mut(&sl).into_dyn(), c.view());
        let mut w = want.slice_mut(&sl);
        w += &c.view().into_dimensionality::<ndarray::Ix3>().unwrap();
        assert_eq!(got, want);
    }
    // A transposed target.
    let mut x = ndarray::Array2::from_shape_fn((12, 10), |(i, j)| (i * 10 + j) as f64).into_dyn();
    let want = &x + &ndarray::Array2::<f64>::ones((12, 10)).into_dyn();
    let c = ndarray::Array2::<f64>::ones((10, 12)).into_dyn();
    let mut t = x.view_mut().reversed_axes();
    add_into(&mut t, c.view());
    assert_eq!(x, want);
}
