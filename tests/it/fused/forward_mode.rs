//! Fused regions in forward mode: `jvp` of a fused function runs each
//! region as one pass over dual blocks (primal and tangent together), and
//! agrees with the unfused twin's op-by-op forward mode, in f32 and f64,
//! with slices, broadcasting and scalar operands, non-contiguous inputs,
//! arguments without a tangent, regions that do not end in a sum, and
//! arrays large enough to split between threads.

use super::*;
use nabla::Dual;
use nabla::testing::{Options, check_grads_with};

// A region that does not end in a sum, and reads `x` twice.
twins!(map, map_plain, (x, w) {
    (x.sin() * w + x.exp()) * x
});

#[test]
fn jvp_of_rosenbrock_is_one_dual_pass() {
    for n in [6usize, 1000, 200_003] {
        for dtype in [DType::F64, DType::F32] {
            nabla::manual_seed(n as u64 + 11);
            let (x, t) = (nabla::randn(&[n], dtype), nabla::randn(&[n], dtype));
            let ((y, dy), passes) = counted(|| jvp(rosen)((&x,), (&t,)));
            assert_eq!(passes, 1, "n {n}: primal and tangent in one pass");
            let ((py, pdy), plain) = counted(|| jvp(rosen_plain)((&x,), (&t,)));
            assert_eq!(plain, 0);
            // The sums of 2e5 f32 terms differ by their rounding order.
            let t = if dtype == DType::F32 && n > 1000 {
                1e-3
            } else {
                tol(dtype)
            };
            close_to(&y, &py, t, "value");
            close_to(&dy, &pdy, t, "tangent");
            assert_eq!(dy.dtype(), dtype);
        }
    }
}

#[test]
fn jvp_of_an_elementwise_region_writes_both_arrays() {
    for (n, dtype) in [
        (37usize, DType::F64),
        (37, DType::F32),
        (131_075, DType::F64),
    ] {
        nabla::manual_seed(12);
        let (x, w) = (nabla::randn(&[n], dtype), nabla::randn(&[n], dtype));
        let (tx, tw) = (nabla::randn(&[n], dtype), nabla::randn(&[n], dtype));
        let ((y, dy), passes) = counted(|| jvp(map)((&x, &w), (&tx, &tw)));
        assert_eq!(passes, 1);
        let (py, pdy) = jvp(map_plain)((&x, &w), (&tx, &tw));
        close_to(&y, &py, tol(dtype), "value");
        close_to(&dy, &pdy, tol(dtype), "tangent");
        // Against central differences of the fused function itself (at a
        // few elements of the long arrays: each difference runs it whole).
        if dtype == DType::F64 {
            let opts = Options {
                order: 1,
                max_elements: if n > 1000 { 3 } else { 12 },
                ..Options::default()
            };
            check_grads_with(map, &(x, w), &opts).unwrap_or_else(|m| panic!("{m}"));
        }
    }
}

#[test]
fn broadcasting_scalars_and_transposed_inputs_under_jvp() {
    nabla::manual_seed(13);
    let x = nabla::randn(&[4, 3], DType::F64).transpose();
    let (b, s) = (nabla::randn(&[4], DType::F64), Array::scalar(0.7f64));
    let (tx, tb, ts) = (
        nabla::randn(&[3, 4], DType::F64),
        nabla::randn(&[4], DType::F64),
        Array::scalar(-1.5f64),
    );
    let ((y, dy), passes) = counted(|| jvp(wide)((&x, &b, &s), (&tx, &tb, &ts)));
    assert!(passes >= 1, "fused dual passes ran");
    let (py, pdy) = jvp(wide_plain)((&x, &b, &s), (&tx, &tb, &ts));
    close_to(&y, &py, 1e-12, "value");
    close_to(&dy, &pdy, 1e-12, "tangent");
}

#[test]
fn arguments_without_a_tangent_stay_constant_in_the_pass() {
    // `jacfwd` w.r.t. `x` alone: `w` enters as a constant (no tangent).
    nabla::manual_seed(14);
    let (x, w) = (
        nabla::randn(&[5], DType::F64),
        nabla::randn(&[5], DType::F64),
    );
    close_to(
        &jacfwd!(map, argnums = 0)(&x, &w),
        &jacfwd!(map_plain, argnums = 0)(&x, &w),
        1e-12,
        "jacfwd w.r.t. x",
    );
    let t = nabla::randn(&[5], DType::F64);
    let (dy, pdy) = (
        jvp(map)((&x, &w), (&t, &Array::zeros(&[5], DType::F64))).1,
        jvp(map_plain)((&x, &w), (&t, &Array::zeros(&[5], DType::F64))).1,
    );
    close_to(&dy, &pdy, 1e-12, "zero tangent for w");
}

#[test]
fn constant_operands_have_no_tangent_block() {
    // The generated forward program at `Dual<Array>`, `w` a constant (a
    // symbolic-zero tangent), as inside `jvp` of a caller.
    for dtype in [DType::F64, DType::F32] {
        nabla::manual_seed(15);
        let (x, w, t) = (
            nabla::randn(&[50], dtype),
            nabla::randn(&[50], dtype),
            nabla::randn(&[50], dtype),
        );
        let (xd, wd) = (Dual::new(x, Some(t)), Dual::constant(w));
        let (y, passes) = counted(|| map::forward::<Dual<Array>>(&xd, &wd));
        assert_eq!(passes, 1);
        let py = map_plain::forward::<Dual<Array>>(&xd, &wd);
        close_to(&y.primal, &py.primal, tol(dtype), "value");
        close_to(
            &y.tangent.expect("a tangent"),
            &py.tangent.expect("a tangent"),
            tol(dtype),
            "tangent",
        );
        // No tangent at all: the plain forward pass, and a symbolic zero.
        let (y, passes) =
            counted(|| map::forward::<Dual<Array>>(&Dual::constant(xd.primal.clone()), &wd));
        assert_eq!(passes, 1);
        assert!(y.tangent.is_none());
        close_to(&y.primal, &py.primal, tol(dtype), "constant value");
    }
}
