//! Regions ending in a `mean` of their whole result: one pass like a sum,
//! the value and the cotangent scaled by `1/n`, against the unfused twins
//! under grad (unit and non-unit cotangents), `jvp`, `hessian` and `vmap`,
//! with broadcasting and slices.

use super::{close_to, counted, tol};
use nabla::prelude::*;

// A squared error with a broadcast row (`b`), the mean its result.
twins!(mse, mse_plain, (x, b, y) {
    nabla::mean(&(x * 2.0 + b - y).square())
});

// A mean read by the rest of the function (so its cotangent is not 1),
// with slices inside the region.
twins!(mean_sliced, mean_sliced_plain, (x) {
    let n = x.shape()[0];
    let a = x.slice_axis(0, 0..n - 1);
    let c = x.slice_axis(0, 1..n);
    (a * c.sin()).mean() * 3.0 + x.sum()
});

// A mean region in the output-only tail: `jacrev` and `hessian` skip its
// forward ops (its shape-only program), scaling the cotangent by `1/n`.
twins!(mean_tail, mean_tail_plain, (x) {
    (x.sin() * 0.5 + 2.0).mean() * 3.0
});

#[test]
fn mean_regions_in_the_tail_scale_the_cotangent() {
    for dtype in [DType::F64, DType::F32] {
        let t = tol(dtype);
        nabla::manual_seed(32);
        let x = nabla::randn(&[5], dtype);
        let h = hessian(mean_tail)(&x);
        close_to(&h, &hessian(mean_tail_plain)(&x), t, "hessian");
        // The closed form: diag(-1.5 sin(x) / 5).
        let want = Array::eye(5, dtype) * (x.sin() * (-1.5 / 5.0)).reshape(&[5, 1]);
        close_to(&h, &want, t, "closed form");
        let xs = nabla::randn(&[3, 5], dtype);
        close_to(
            &vmap(jacrev(mean_tail))(&xs),
            &vmap(jacrev(mean_tail_plain))(&xs),
            t,
            "vmap(jacrev)",
        );
    }
}

#[test]
fn mean_regions_fuse_and_match_their_twins() {
    for dtype in [DType::F64, DType::F32] {
        let t = tol(dtype);
        nabla::manual_seed(31);
        let x = nabla::randn(&[40, 50], dtype);
        let b = nabla::randn(&[50], dtype);
        let y = nabla::randn(&[40, 50], dtype);
        let (v, passes) = counted(|| mse(&x, &b, &y));
        assert_eq!(passes, 1, "one map-reduce pass");
        close_to(&v, &mse_plain(&x, &b, &y), t, "mse value");
        let ((gx, gb, gy), passes) = counted(|| grad!(mse, argnums = (0, 1, 2))(&x, &b, &y));
        assert_eq!(passes, 1, "value and gradient in one pass");
        let (px, pb, py) = grad!(mse_plain, argnums = (0, 1, 2))(&x, &b, &y);
        close_to(&gx, &px, t, "d/dx");
        close_to(&gb, &pb, t, "d/db");
        close_to(&gy, &py, t, "d/dy");
        // The closed form: d/dx = 2 · 2 (2x + b - y) / n.
        let n = (40 * 50) as f64;
        let want = (&x * 2.0 + &b - &y) * (4.0 / n);
        close_to(&gx, &want.cast(dtype), t, "closed form");
        // A cotangent other than one through the fused pullback.
        let ct = Array::scalar(-1.5f64).cast(dtype);
        let (_, pull) = vjp!(mse)(&x, &b, &y);
        let (_, plain) = vjp!(mse_plain)(&x, &b, &y);
        let (f, p) = (pull(&ct), plain(&ct));
        close_to(&f.0, &p.0, t, "pullback of -1.5, x");
        close_to(&f.1, &p.1, t, "pullback of -1.5, b");
        // Forward mode: one pass over dual blocks.
        let (dx, db, dy) = (
            nabla::randn(&[40, 50], dtype),
            nabla::randn(&[50], dtype),
            nabla::randn(&[40, 50], dtype),
        );
        let ((_, tf), passes) = counted(|| jvp!(mse)((&x, &b, &y), (&dx, &db, &dy)));
        assert_eq!(passes, 1, "one pass over dual blocks");
        let (_, tp) = jvp!(mse_plain)((&x, &b, &y), (&dx, &db, &dy));
        close_to(&tf, &tp, t, "jvp");

        let z = nabla::randn(&[300], dtype);
        close_to(
            &grad(mean_sliced)(&z),
            &grad(mean_sliced_plain)(&z),
            t,
            "sliced gradient",
        );
        let z6 = nabla::randn(&[6], dtype);
        close_to(
            &hessian(mean_sliced)(&z6),
            &hessian(mean_sliced_plain)(&z6),
            t,
            "sliced hessian",
        );
        let zs = nabla::randn(&[3, 6], dtype);
        close_to(
            &vmap(grad(mean_sliced))(&zs),
            &vmap(grad(mean_sliced_plain))(&zs),
            t,
            "vmap(grad)",
        );
    }
}
