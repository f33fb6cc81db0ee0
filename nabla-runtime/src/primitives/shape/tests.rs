//! Unit tests of the shape primitives: reshapes that stay views of strided
//! arrays, and the fused permute-then-reshape against the two steps.

use crate::{Array, storage::Data};

fn ptr(a: &Array) -> *const f64 {
    match &*a.data {
        Data::F64(x) => x.as_ptr(),
        _ => unreachable!("f64 only here"),
    }
}

#[test]
fn inserting_or_removing_unit_axes_of_a_strided_array_is_a_view() {
    let x = Array::from_vec((0..24).map(f64::from).collect(), &[2, 3, 4]);
    let p = x.permute(&[2, 0, 1]); // [4, 2, 3], not contiguous
    let copied = Array::from_vec(p.to_vec::<f64>(), &[4, 2, 3]);
    for shape in [&[4usize, 1, 2, 3][..], &[1, 4, 2, 1, 3, 1], &[4, 2, 3]] {
        let r = p.reshape(shape);
        assert_eq!(r.shape(), shape);
        assert_eq!(r.to_vec::<f64>(), copied.to_vec::<f64>(), "{shape:?}");
        assert_eq!(ptr(&r), ptr(&x), "{shape:?} shares storage");
        // And back, removing the unit axes again.
        let back = r.reshape(&[4, 2, 3]);
        assert_eq!(back.to_vec::<f64>(), copied.to_vec::<f64>());
    }
    // Any other reshape of a strided array copies, in row-major order.
    let flat = p.reshape(&[24]);
    assert_eq!(flat.to_vec::<f64>(), copied.to_vec::<f64>());
    // Inserting unit axes around existing ones, contiguous or not.
    let u = x.reshape(&[2, 1, 12]);
    for (base, shape) in [
        (&u, &[1usize, 2, 1, 1, 12, 1][..]),
        (&u, &[2, 1, 1, 12]),
        (&p, &[1, 4, 1, 2, 3]),
    ] {
        let r = base.reshape(shape);
        assert_eq!(r.shape(), shape);
        assert_eq!(r.to_vec::<f64>(), base.to_vec::<f64>(), "{shape:?}");
        assert_eq!(ptr(&r), ptr(&x), "{shape:?} shares storage");
    }
}

#[test]
fn permute_reshape_is_permute_then_reshape() {
    use crate::ArrayValue;
    let x = Array::from_vec((0..24).map(f64::from).collect(), &[2, 3, 4]);
    for base in [x.clone(), x.permute(&[1, 2, 0]).reshape(&[2, 3, 4])] {
        for perm in [[0usize, 1, 2], [2, 0, 1], [1, 2, 0], [0, 2, 1]] {
            let want = base.permute(&perm).reshape(&[6, 4]);
            let got = ArrayValue::permute_reshape(&base, &perm, &[6, 4]);
            assert_eq!(got.shape(), &[6, 4]);
            assert_eq!(got.to_vec::<f64>(), want.to_vec::<f64>(), "{perm:?}");
        }
    }
    // Wherever permute-then-reshape is a view, so is the result: into
    // the permuted shape itself, with length-1 axes added, and from a
    // permutation that leaves the layout row-major.
    for (src, perm, shape) in [
        (&x, &[2usize, 0, 1][..], &[4usize, 2, 3][..]),
        (&x, &[2, 0, 1], &[4, 1, 2, 3, 1]),
        (&x.reshape(&[2, 1, 12]), &[1, 0, 2], &[6, 4]),
    ] {
        let got = ArrayValue::permute_reshape(src, perm, shape);
        assert_eq!(ptr(&got), ptr(&x), "{perm:?} into {shape:?}");
        let want = src.permute(perm).reshape(shape);
        assert_eq!(got.shape(), shape);
        assert_eq!(got.to_vec::<f64>(), want.to_vec::<f64>());
    }
    // With a tape: the gradient flows back through both steps.
    let w = x.clone().requires_grad();
    let y = ArrayValue::permute_reshape(&w, &[2, 0, 1], &[4, 6]);
    let weights = Array::from_vec((0..24).map(|i| f64::from(i) * 0.5).collect(), &[4, 6]);
    (y * weights.clone()).sum().backward();
    let want = weights.reshape(&[4, 2, 3]).permute(&[1, 2, 0]);
    assert_eq!(w.grad().to_vec::<f64>(), want.to_vec::<f64>());
}

/// `concat` of contiguous parts (whole-block copies) against ndarray's
/// `concatenate` of the same values, along every axis, with a zero-width
/// part, integers, and a non-contiguous part (ndarray's path).
#[test]
fn concat_by_blocks_matches_ndarray() {
    let a = Array::from_vec((0..24).map(f64::from).collect(), &[2, 3, 4]);
    let b = Array::from_vec((100..124).map(f64::from).collect(), &[2, 3, 4]);
    let empty = Array::zeros(&[2, 3, 0], crate::DType::F64);
    let strided =
        Array::from_vec((200..224).map(f64::from).collect(), &[4, 3, 2]).permute(&[2, 1, 0]);
    for axis in 0..3 {
        let parts = [a.clone(), b.clone(), strided.clone()];
        let y = super::concat::forward(&parts, axis);
        let views: Vec<_> = parts.iter().map(|p| p.to_ndarray::<f64>()).collect();
        let views: Vec<_> = views.iter().map(|v| v.view()).collect();
        let want = ndarray::concatenate(ndarray::Axis(axis), &views).expect("shapes agree");
        assert_eq!(y.shape(), want.shape(), "axis {axis}");
        assert_eq!(
            y.to_vec::<f64>(),
            want.iter().copied().collect::<Vec<_>>(),
            "axis {axis}"
        );
        // Contiguous parts only (the block path), same values.
        let y2 = super::concat::forward(&[a.clone(), b.clone()], axis);
        let want2 = ndarray::concatenate(ndarray::Axis(axis), &views[..2]).expect("shapes agree");
        assert_eq!(
            y2.to_vec::<f64>(),
            want2.iter().copied().collect::<Vec<_>>(),
            "axis {axis}"
        );
    }
    let y = super::concat::forward(&[a.clone(), empty, b.clone()], 2);
    assert_eq!(y.shape(), &[2, 3, 8]);
    assert_eq!(y.to_vec::<f64>()[4..8], [100.0, 101.0, 102.0, 103.0]);
    let i = Array::from_vec(vec![1i64, 2, 3, 4], &[2, 2]);
    let j = super::concat::forward(&[i.clone(), i], 1);
    assert_eq!(j.to_vec::<i64>(), vec![1, 2, 1, 2, 3, 4, 3, 4]);
}
