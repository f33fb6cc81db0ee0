//! Empty arrays follow NumPy: reductions over nothing give their
//! identity (sum 0, prod 1; mean is 0/0 = NaN, as NumPy gives with a
//! warning), max/min/argmax/argmin of nothing are a panic that names the
//! op and says the input is empty, `matmul` with an inner length of 0
//! gives zeros, and empty parts join like any other.

use super::{panic_message, well_formed};
use nabla::{Array, DType};

fn empty(shape: &[usize], dtype: DType) -> Array {
    Array::zeros(shape, dtype)
}

fn values(a: &Array) -> Vec<f64> {
    a.cast(DType::F64).to_vec::<f64>()
}

#[test]
fn sum_prod_and_mean_of_nothing() {
    for dtype in [DType::F32, DType::F64] {
        let x = empty(&[0], dtype);
        assert_eq!((x.sum().item(), x.prod().item()), (0.0, 1.0), "{dtype}");
        assert!(
            x.mean().item().is_nan(),
            "{dtype}: the mean of nothing is NaN"
        );
        // Over an empty axis of a non-empty shape: one identity per row.
        let x = empty(&[2, 0, 3], dtype);
        let s = x.sum_axes(&[1], false);
        assert_eq!((s.shape(), values(&s)), (&[2, 3][..], vec![0.0; 6]));
        let p = x.prod_axes(&[1], true);
        assert_eq!((p.shape(), values(&p)), (&[2, 1, 3][..], vec![1.0; 6]));
        let m = x.mean_axes(&[1], false);
        assert_eq!(m.shape(), &[2, 3]);
        assert!(values(&m).iter().all(|v| v.is_nan()));
        // Over a non-empty axis: an empty result.
        let s = x.sum_axes(&[2], false);
        assert_eq!((s.shape(), s.numel()), (&[2, 0][..], 0));
        assert_eq!(x.cumsum(1).shape(), &[2, 0, 3]);
    }
}

#[test]
fn max_and_argmax_of_nothing_are_a_clear_error() {
    type Op = fn(&Array) -> Array;
    let ops: [(&str, Op); 6] = [
        ("max", |x| x.max()),
        ("min", |x| x.min()),
        ("max", |x| x.max_axes(&[1], false)),
        ("min", |x| x.min_axes(&[-2], true)),
        ("argmax", |x| x.argmax(1)),
        ("argmin", |x| x.argmin(1)),
    ];
    for (name, op) in ops {
        let x = empty(&[2, 0, 3], DType::F64);
        let err = std::panic::catch_unwind(|| op(&x)).expect_err(name);
        let msg = panic_message(&*err);
        assert!(msg.contains("empty"), "{name}: {msg}");
        assert!(well_formed(&[name], &msg).is_ok(), "{name}: {msg}");
    }
    // Along a non-empty axis of an array with an empty one: fine, empty.
    let x = empty(&[2, 0, 3], DType::F64);
    assert_eq!(x.max_axes(&[2], false).shape(), &[2, 0]);
    assert_eq!(x.argmin(0).shape(), &[0, 3]);
}

#[test]
fn matmul_over_nothing_is_zeros() {
    let a = nabla::randn(&[3, 0], DType::F64);
    let b = nabla::randn(&[0, 4], DType::F64);
    let y = a.matmul(&b);
    assert_eq!((y.shape(), values(&y)), (&[3, 4][..], vec![0.0; 12]));
    // Batched, and an empty output.
    let y = empty(&[2, 3, 0], DType::F32).matmul(&empty(&[2, 0, 5], DType::F32));
    assert_eq!((y.shape(), values(&y)), (&[2, 3, 5][..], vec![0.0; 30]));
    assert_eq!(a.transpose().matmul(&a).shape(), &[0, 0]);
    let v = empty(&[0], DType::F64);
    assert_eq!(v.dot(&v).item(), 0.0);
    // An empty batch.
    let y = empty(&[0, 2, 3], DType::F64).matmul(&empty(&[1, 3, 4], DType::F64));
    assert_eq!(y.shape(), &[0, 2, 4]);
}

#[test]
fn empty_parts_join() {
    let a = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let e = empty(&[0, 3], DType::F64);
    let y = nabla::concat(&[&e, &a, &e], 0);
    assert_eq!((y.shape(), values(&y)), (&[2, 3][..], values(&a)));
    let y = nabla::concat(&[&e, &e], 0);
    assert_eq!(y.shape(), &[0, 3]);
    let y = nabla::concat(&[&a, &empty(&[2, 0], DType::F64)], 1);
    assert_eq!(y.shape(), &[2, 3]);
    let parts = a.split(&[0, 2, 0], 0);
    assert_eq!(
        parts.iter().map(|p| p.shape().to_vec()).collect::<Vec<_>>(),
        vec![vec![0, 3], vec![2, 3], vec![0, 3]]
    );
}

#[test]
fn elementwise_and_shape_ops_keep_empty_shapes() {
    let x = empty(&[3, 0], DType::F64);
    assert_eq!(x.exp().shape(), &[3, 0]);
    assert_eq!((&x + &empty(&[1, 0], DType::F64)).shape(), &[3, 0]);
    assert_eq!(x.transpose().reshape(&[0, 1, 3]).shape(), &[0, 1, 3]);
    assert_eq!(x.softmax(-1).shape(), &[3, 0]);
    assert_eq!(x.sum_to_shape(&[1, 0]).shape(), &[1, 0]);
    // A 0-d array is one element, not an empty one.
    let s = Array::scalar(2.5f64);
    assert_eq!(
        (s.sum().item(), s.max().item(), s.mean().item()),
        (2.5, 2.5, 2.5)
    );
}
