//! Regions under `vmap` (`Batched<Array>` operands): one pass over the
//! whole batch forward and one back, against the unfused twins and
//! against each example run alone, with operands shared by the batch
//! (`in_axes` `None`: their cotangents stay per example), a batch axis
//! that is not first, slices, per-example sums and means, and cotangents
//! other than one.

use super::{close_to, counted, rosen, rosen_plain, tol, wide, wide_plain};
use nabla::prelude::*;

// A squared error with a broadcast row, its mean the result.
twins!(mse, mse_plain, (x, b, y) {
    nabla::mean(&(x * 2.0 + b - y).square())
});

// A region that does not reduce, read by a matmul (so its cotangent is
// neither one nor uniform), with a row shared by the batch.
twins!(layer, layer_plain, (x, b, w) {
    let h = (x * 2.0 + b).tanh() * x.sin();
    (h.matmul(w) - 0.5).square().sum()
});

/// `f` of each example (`xs`'s rows) stacked: what `vmap(f)` must give.
fn per_example(xs: &Array, f: impl Fn(&Array) -> Array) -> Array {
    let n = xs.shape()[0];
    let rows: Vec<Array> = (0..n)
        .map(|i| {
            let y = f(&xs.slice_axis(0, i..i + 1).squeeze(0));
            let mut s = vec![1];
            s.extend_from_slice(y.shape());
            y.reshape(&s)
        })
        .collect();
    nabla::concat(&rows, 0)
}

#[test]
fn reducing_regions_run_once_for_the_batch() {
    for dtype in [DType::F64, DType::F32] {
        let t = tol(dtype);
        nabla::manual_seed(41);
        let xs = nabla::randn(&[5, 7], dtype);
        let (y, passes) = counted(|| vmap(rosen)(&xs));
        assert_eq!(passes, 1, "one pass for the batch");
        assert_eq!(y.shape(), &[5]);
        close_to(&y, &vmap(rosen_plain)(&xs), t, "vmap value");
        close_to(&y, &per_example(&xs, *rosen), t, "each example");
        let (g, passes) = counted(|| vmap(grad(rosen))(&xs));
        assert_eq!(passes, 1, "one pullback pass (grad needs no value)");
        close_to(&g, &vmap(grad(rosen_plain))(&xs), t, "vmap(grad)");
        close_to(&g, &per_example(&xs, |x| grad(rosen)(x)), t, "grad of each");
    }
}

#[test]
fn shared_operands_get_per_example_cotangents() {
    for dtype in [DType::F64, DType::F32] {
        let t = tol(dtype);
        nabla::manual_seed(42);
        let xs = nabla::randn(&[4, 3, 5], dtype);
        let b = nabla::randn(&[5], dtype);
        let s = Array::scalar(0.6f64).cast(dtype);
        let f = vmap!(wide, in_axes = (0, None, None));
        // As many passes for the batch as for one example.
        let x0 = xs.slice_axis(0, 0..1).squeeze(0);
        let (y, passes) = counted(|| f(&xs, &b, &s));
        assert_eq!(passes, counted(|| wide(&x0, &b, &s)).1);
        close_to(
            &y,
            &vmap!(wide_plain, in_axes = (0, None, None))(&xs, &b, &s),
            t,
            "value",
        );
        // One vmapped gradient per argument (a gradient of several is a
        // tuple, which vmap does not take).
        let (gx, passes) =
            counted(|| vmap!(grad!(wide, argnums = 0), in_axes = (0, None, None))(&xs, &b, &s));
        // The loss region pulls back in one pass over the batch (regions
        // read by later operations run op by op under `vmap`).
        assert!(passes >= 1, "fused: {passes}");
        let gb = vmap!(grad!(wide, argnums = 1), in_axes = (0, None, None))(&xs, &b, &s);
        let gs = vmap!(grad!(wide, argnums = 2), in_axes = (0, None, None))(&xs, &b, &s);
        let px = vmap!(grad!(wide_plain, argnums = 0), in_axes = (0, None, None))(&xs, &b, &s);
        let pb = vmap!(grad!(wide_plain, argnums = 1), in_axes = (0, None, None))(&xs, &b, &s);
        let ps = vmap!(grad!(wide_plain, argnums = 2), in_axes = (0, None, None))(&xs, &b, &s);
        assert_eq!(
            (gb.shape(), gs.shape()),
            (&[4, 5][..], &[4][..]),
            "per example"
        );
        close_to(&gx, &px, t, "d/dx");
        close_to(&gb, &pb, t, "d/db per example");
        close_to(&gs, &ps, t, "d/ds per example");
        let one = |x: &Array| grad!(wide, argnums = (0, 1, 2))(x, &b, &s);
        close_to(&gb, &per_example(&xs, |x| one(x).1), t, "d/db of each");
        close_to(&gs, &per_example(&xs, |x| one(x).2), t, "d/ds of each");
    }
}

#[test]
fn means_batch_axes_elsewhere_and_general_cotangents() {
    for dtype in [DType::F64, DType::F32] {
        let t = tol(dtype);
        nabla::manual_seed(43);
        // The batch on axis 1 of `x` and `y` (read through strides), `b`
        // shared: a per-example mean.
        let (x, b, y) = (
            nabla::randn(&[6, 3, 4], dtype),
            nabla::randn(&[4], dtype),
            nabla::randn(&[6, 3, 4], dtype),
        );
        let f = vmap!(mse, in_axes = (1, None, 1));
        let (v, passes) = counted(|| f(&x, &b, &y));
        assert_eq!(passes, 1);
        close_to(
            &v,
            &vmap!(mse_plain, in_axes = (1, None, 1))(&x, &b, &y),
            t,
            "mean",
        );
        let gx = vmap!(grad!(mse, argnums = 0), in_axes = (1, None, 1))(&x, &b, &y);
        let gb = vmap!(grad!(mse, argnums = 1), in_axes = (1, None, 1))(&x, &b, &y);
        let px = vmap!(grad!(mse_plain, argnums = 0), in_axes = (1, None, 1))(&x, &b, &y);
        let pb = vmap!(grad!(mse_plain, argnums = 1), in_axes = (1, None, 1))(&x, &b, &y);
        close_to(&gx, &px, t, "mean d/dx");
        close_to(&gb, &pb, t, "mean d/db");
        // A region whose cotangent comes from a matmul's pullback.
        let xs = nabla::randn(&[5, 3, 4], dtype);
        let w = nabla::randn(&[4, 2], dtype);
        let (gx, passes) =
            counted(|| vmap!(grad!(layer, argnums = 0), in_axes = (0, None, None))(&xs, &b, &w));
        // The loss region pulls back in one pass; the region read by the
        // matmul runs op by op under `vmap` (its saved result is cheaper
        // than recomputing it).
        assert_eq!(passes, 1);
        let gb = vmap!(grad!(layer, argnums = 1), in_axes = (0, None, None))(&xs, &b, &w);
        let gw = vmap!(grad!(layer, argnums = 2), in_axes = (0, None, None))(&xs, &b, &w);
        let px = vmap!(grad!(layer_plain, argnums = 0), in_axes = (0, None, None))(&xs, &b, &w);
        let pb = vmap!(grad!(layer_plain, argnums = 1), in_axes = (0, None, None))(&xs, &b, &w);
        let pw = vmap!(grad!(layer_plain, argnums = 2), in_axes = (0, None, None))(&xs, &b, &w);
        close_to(&gx, &px, t, "layer d/dx");
        close_to(&gb, &pb, t, "layer d/db");
        close_to(&gw, &pw, t, "layer d/dw");
        let one = |x: &Array| grad!(layer, argnums = (0, 1, 2))(x, &b, &w);
        close_to(
            &gx,
            &per_example(&xs, |x| one(x).0),
            t,
            "layer d/dx of each",
        );
    }
}

#[test]
fn unbatched_calls_and_nested_batches_still_agree() {
    nabla::manual_seed(44);
    // Everything shared by the batch (the region is not batched at all),
    // and vmap of vmap (`Batched<Batched<Array>>`, op by op).
    let (x, b, s) = (
        nabla::randn(&[3, 4], DType::F64),
        nabla::randn(&[4], DType::F64),
        Array::scalar(0.3f64),
    );
    let bs = nabla::randn(&[2, 4], DType::F64);
    close_to(
        &vmap!(wide, in_axes = (None, 0, None))(&x, &bs, &s),
        &vmap!(wide_plain, in_axes = (None, 0, None))(&x, &bs, &s),
        1e-12,
        "batched row only",
    );
    let xss = nabla::randn(&[2, 3, 6], DType::F64);
    close_to(
        &vmap(vmap(grad(rosen)))(&xss),
        &vmap(vmap(grad(rosen_plain)))(&xss),
        1e-12,
        "vmap(vmap(grad))",
    );
    close_to(
        &wide(&x, &b, &s),
        &wide_plain(&x, &b, &s),
        1e-12,
        "plain call",
    );
}

#[test]
fn large_examples_pull_back_one_example_at_a_time() {
    // Examples of at least 2^15 elements: each example's pullback is the
    // unbatched pass (slices and their cotangents in place), stacked.
    for dtype in [DType::F64, DType::F32] {
        let t = tol(dtype);
        nabla::manual_seed(45);
        let xs = nabla::randn(&[3, 40_000], dtype) * 0.5;
        let (g, passes) = counted(|| vmap(grad(rosen))(&xs));
        assert_eq!(passes, 3, "one pullback per example (grad needs no value)");
        close_to(&g, &vmap(grad(rosen_plain))(&xs), t, "vmap(grad(rosen))");
        close_to(&g, &per_example(&xs, |x| grad(rosen)(x)), t, "grad of each");
        // A row shared by the batch: its cotangent per example.
        let (x, b, s) = (
            nabla::randn(&[2, 200, 200], dtype),
            nabla::randn(&[200], dtype),
            Array::scalar(0.8f64).cast(dtype),
        );
        let gb = vmap!(grad!(wide, argnums = 1), in_axes = (0, None, None))(&x, &b, &s);
        let pb = vmap!(grad!(wide_plain, argnums = 1), in_axes = (0, None, None))(&x, &b, &s);
        assert_eq!(gb.shape(), &[2, 200]);
        close_to(&gb, &pb, t, "d/db per example");
        let gx = vmap!(grad!(wide, argnums = 0), in_axes = (0, None, None))(&x, &b, &s);
        let px = vmap!(grad!(wide_plain, argnums = 0), in_axes = (0, None, None))(&x, &b, &s);
        close_to(&gx, &px, t, "d/dx");
    }
}
