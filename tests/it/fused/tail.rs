//! Fused regions in an output-only tail: `jacrev`, `hessian` and the
//! seed's `jacfwd(jacrev(vmap(f)))` call the shape-only VJP, where a region
//! whose output only the outputs read is not computed (its own shape-only
//! program runs instead, op by op at nested value types, and its pullback
//! reads only its arguments). Each function's fused and unfused twins
//! agree, in f64 and f32.

use super::{close_to, tol};
use nabla::prelude::*;

// The seed's `foo`: one region, `sin` and the sum, all of it in the tail.
twins!(seed, seed_plain, (x) {
    nabla::sum(&x.sin())
});

// A region without a sum in the tail, whose cotangent comes unbroadcast
// from the tail's reduction and mean; `w` broadcasts as a row.
twins!(rows, rows_plain, (x, w) {
    let h = x.sin() * w + x.square();
    h.sum_axes(&[1], false).mean()
});

// A region read by a later op (`matmul` reads it by value), so computed,
// then a second region in the tail.
twins!(live, live_plain, (x, w) {
    let h = (x.tanh() * 2.0 + 1.0).matmul(w);
    nabla::sum(&(h.exp() * 0.5 - h))
});

// Slices inside a region in the tail (Rosenbrock's shape).
twins!(sliced, sliced_plain, (x) {
    let n = x.shape()[0];
    let a = x.slice_axis(0, 0..n - 1);
    let b = x.slice_axis(0, 1..n);
    nabla::sum(&((b - a.square()).square() * 10.0 + a.cos()))
});

#[test]
fn regions_in_the_tail_match_their_unfused_twins() {
    for dtype in [DType::F64, DType::F32] {
        let t = tol(dtype);
        nabla::manual_seed(21);
        let x = nabla::randn(&[2, 3], dtype);
        let w = nabla::randn(&[3], dtype);
        let v = nabla::randn(&[5], dtype);
        close_to(
            &jacfwd(jacrev(vmap(seed)))(&x),
            &jacfwd(jacrev(vmap(seed_plain)))(&x),
            t,
            "seed Hessian",
        );
        // sin's Hessian is diagonal with -sin(x) on it.
        let h = jacfwd(jacrev(vmap(seed)))(&x).to_vec::<f64>();
        let xs = x.to_vec::<f64>();
        let (i, j) = (1, 2);
        let at = ((i * 2 + i) * 3 + j) * 6 + i * 3 + j;
        assert!((h[at] + xs[i * 3 + j].sin()).abs() < 1e-5, "diagonal entry");
        close_to(&hessian(seed)(&v), &hessian(seed_plain)(&v), t, "hessian");
        let (a, b) = (
            jacrev!(rows, argnums = (0, 1))(&x, &w),
            jacrev!(rows_plain, argnums = (0, 1))(&x, &w),
        );
        close_to(&a.0, &b.0, t, "jacrev rows, x");
        close_to(&a.1, &b.1, t, "jacrev rows, w");
        close_to(
            &hessian!(rows, argnums = 0)(&x, &w),
            &hessian!(rows_plain, argnums = 0)(&x, &w),
            t,
            "hessian rows",
        );
        let m = nabla::randn(&[3, 4], dtype);
        close_to(
            &jacrev!(live, argnums = 1)(&x, &m),
            &jacrev!(live_plain, argnums = 1)(&x, &m),
            t,
            "jacrev live",
        );
        close_to(
            &hessian(sliced)(&v),
            &hessian(sliced_plain)(&v),
            t,
            "hessian sliced",
        );
        let vs = nabla::randn(&[4, 5], dtype);
        close_to(
            &vmap(jacrev(sliced))(&vs),
            &vmap(jacrev(sliced_plain))(&vs),
            t,
            "vmap(jacrev) sliced",
        );
    }
}
