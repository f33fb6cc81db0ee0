//! Fused elementwise regions (`#[differentiable]` fuses by default,
//! `fuse = false` keeps every operation a pass): each function here has an
//! unfused twin, and the two agree on values and gradients, in f32 and
//! f64, with broadcasting, scalar operands, non-contiguous inputs, regions
//! inside loops and branches, and under `jvp` (one pass over dual blocks:
//! [`forward_mode`]), `vmap` (passes over the batch: [`batched`]) and
//! `hessian` (which runs regions op by op).
//! `nabla::fused::passes` tells that the fused
//! programs ran fused passes and the twins none. The random programs
//! (`random_programs.rs`) compare the fused generated code with the
//! op-by-op tape.

use crate::common::*;
use nabla::prelude::*;

/// A function and its unfused twin from one body (defined before the
/// submodules, which use it).
macro_rules! twins {
    ($fused:ident, $plain:ident, ($($p:ident),*) $body:block) => {
        #[differentiable]
        fn $fused($($p: &Array),*) -> Array $body
        #[differentiable(fuse = false)]
        fn $plain($($p: &Array),*) -> Array $body
    };
}

mod batched;
mod forward_mode;
mod levels;
mod mean;
mod tail;

twins!(rosen, rosen_plain, (x) {
    let n = x.shape()[0];
    let head = x.slice_axis(0, 0..n - 1);
    let tail = x.slice_axis(0, 1..n);
    let d = tail - head.square();
    nabla::sum(&(d.square() * 100.0 + (1.0 - head).square()))
});

// Broadcasting: x [3, 4], a row b [4] and a 0-d scale s.
twins!(wide, wide_plain, (x, b, s) {
    let h = (x * s + b).tanh() * x.exp() - b.sigmoid();
    nabla::sum(&(h.softplus() * s))
});

// A region inside a loop and one inside a data-dependent branch.
twins!(looped, looped_plain, (x, w) {
    let mut h = x * 1.0;
    for _ in 0..3 {
        h = (h * w).sin() + x * 0.5;
    }
    if nabla::sum(&h).item() > 0.0 {
        nabla::sum(&(h.square() * 0.5 + w.cos()))
    } else {
        nabla::sum(&(h.exp() - w * w))
    }
});

// Transcendental functions and an intermediate read twice (`h`), all one
// region ending in a sum.
twins!(dag, dag_plain, (x, w) {
    let h = x.sin() * w + x.exp();
    nabla::sum(&(&h * &h + h.tanh()))
});

// Slices along a trailing axis (not contiguous runs of `x`), and a slice
// offset of two.
twins!(columns, columns_plain, (x) {
    let m = x.shape()[1];
    let left = x.slice_axis(1, 0..m - 2);
    let right = x.slice_axis(1, 2..m);
    nabla::sum(&(left * right.cos() - right.square()))
});

fn close_to(a: &Array, b: &Array, tol: f64, what: &str) {
    assert_close(a, b, tol, what);
}

/// Runs `f`, returning its result and how many fused passes it ran.
/// The tolerance of a value compared with its twin's (relative).
fn tol(dtype: DType) -> f64 {
    if dtype == DType::F64 { 1e-12 } else { 1e-4 }
}

fn counted<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = nabla::fused::passes();
    let out = f();
    (out, nabla::fused::passes() - before)
}

#[test]
fn rosenbrock_fuses_into_one_pass_each_way() {
    for dtype in [DType::F64, DType::F32] {
        nabla::manual_seed(3);
        let x = nabla::randn(&[1000], dtype);
        // The forward program (what every transform runs, and a direct
        // call) is one pass; the unfused twin none.
        let (y, passes) = counted(|| rosen::forward::<Array>(&x));
        assert_eq!(passes, 1, "one forward pass");
        assert_eq!(counted(|| rosen(&x)).1, 1);
        assert_eq!(counted(|| rosen_plain(&x)).1, 0);
        let ((g, plain), passes) = counted(|| (grad(rosen)(&x), grad(rosen_plain)(&x)));
        // The sum is the function's result, so grad runs one pass for the
        // value and the gradient for cotangent 1.
        assert_eq!(passes, 1, "one pass for value and gradient of grad(rosen)");
        let tol = if dtype == DType::F64 { 1e-13 } else { 1e-5 };
        close_to(&y, &rosen_plain(&x), tol, "value");
        close_to(&g, &plain, tol, "gradient");
        assert_eq!(g.dtype(), dtype);
    }
}

#[test]
fn broadcasting_and_scalar_operands() {
    nabla::manual_seed(4);
    let (x, b, s) = (
        nabla::randn(&[3, 4], DType::F64),
        nabla::randn(&[4], DType::F64),
        Array::scalar(0.7f64),
    );
    let ((gx, gb, gs), passes) = counted(|| grad!(wide, argnums = (0, 1, 2))(&x, &b, &s));
    assert!(passes >= 2, "fused passes ran: {passes}");
    let (px, pb, ps) = grad!(wide_plain, argnums = (0, 1, 2))(&x, &b, &s);
    close_to(&gx, &px, 1e-12, "d/dx");
    close_to(&gb, &pb, 1e-12, "d/db (summed over rows)");
    close_to(&gs, &ps, 1e-12, "d/ds (summed to 0-d)");
    assert_eq!((gb.shape(), gs.shape()), (&[4][..], &[][..]));
    // The fused function's derivatives against its finite differences.
    nabla::testing::check_grads(wide, &(x, b, s), 2);
}

#[test]
fn rows_columns_and_leading_ones_broadcast() {
    // A row with leading 1s and a row of a 3-d batch are repeated whole
    // (tiled); a column is broadcast element by element.
    for (xs, bs) in [
        (&[3usize, 4][..], &[1usize, 4][..]),
        (&[3, 4], &[3, 1]),
        (&[2, 3, 4], &[3, 4]),
        (&[2, 3, 4], &[1, 1, 4]),
        (&[2, 3, 4], &[2, 1, 4]),
    ] {
        nabla::manual_seed(6);
        let (x, b, s) = (
            nabla::randn(xs, DType::F64),
            nabla::randn(bs, DType::F64),
            Array::scalar(0.4f64),
        );
        let what = format!("x {xs:?}, b {bs:?}");
        close_to(
            &wide(&x, &b, &s),
            &wide_plain(&x, &b, &s),
            1e-12,
            &format!("{what}: value"),
        );
        let (gx, gb, _) = grad!(wide, argnums = (0, 1, 2))(&x, &b, &s);
        let (px, pb, _) = grad!(wide_plain, argnums = (0, 1, 2))(&x, &b, &s);
        close_to(&gx, &px, 1e-12, &format!("{what}: d/dx"));
        close_to(&gb, &pb, 1e-12, &format!("{what}: d/db"));
    }
}

#[test]
fn non_contiguous_inputs() {
    nabla::manual_seed(5);
    let x = nabla::randn(&[4, 3], DType::F64).transpose();
    let b = nabla::randn(&[4], DType::F64);
    let s = Array::scalar(-0.3f64);
    assert_eq!(x.shape(), &[3, 4]);
    close_to(&wide(&x, &b, &s), &wide_plain(&x, &b, &s), 1e-12, "value");
    close_to(
        &grad(wide)(&x, &b, &s),
        &grad(wide_plain)(&x, &b, &s),
        1e-12,
        "gradient",
    );
}

#[test]
fn regions_in_loops_and_branches() {
    for seed in 0..4 {
        nabla::manual_seed(seed);
        let (x, w) = (
            nabla::randn(&[5], DType::F64),
            nabla::randn(&[5], DType::F64),
        );
        let ((gx, gw), passes) = counted(|| grad!(looped, argnums = (0, 1))(&x, &w));
        assert!(passes >= 4, "loop regions fused: {passes}");
        let (px, pw) = grad!(looped_plain, argnums = (0, 1))(&x, &w);
        close_to(&gx, &px, 1e-12, "d/dx");
        close_to(&gw, &pw, 1e-12, "d/dw");
    }
}

#[test]
fn under_vmap_and_hessian_regions_agree_with_the_twins() {
    nabla::manual_seed(6);
    let x = nabla::randn(&[6], DType::F64);
    let t = nabla::randn(&[6], DType::F64);
    close_to(
        &hessian(rosen)(&x),
        &hessian(rosen_plain)(&x),
        1e-12,
        "hessian",
    );
    let xs = nabla::randn(&[3, 6], DType::F64);
    close_to(
        &vmap(grad(rosen))(&xs),
        &vmap(grad(rosen_plain))(&xs),
        1e-12,
        "vmap(grad)",
    );
    let (hv, phv) = (
        jvp(grad(rosen))((&x,), (&t,)).1,
        jvp(grad(rosen_plain))((&x,), (&t,)).1,
    );
    close_to(&hv, &phv, 1e-12, "hvp");
}

#[test]
fn tracked_arrays_keep_the_tape() {
    // An array that requires grad is recorded op by op, so backward works.
    let x = Array::from_vec(vec![0.5f64, -1.0, 2.0], &[3]).requires_grad();
    let (y, passes) = counted(|| rosen(&x));
    assert_eq!(passes, 0);
    y.backward();
    close_to(&x.grad(), &grad(rosen)(&x.detach()), 1e-12, "tape");
}

#[test]
fn large_arrays_split_between_threads_agree_with_the_unfused_program() {
    // Above the parallel threshold the passes split into parts; the
    // slices' cotangents cross part boundaries (the halo), and odd sizes
    // leave partial blocks and chunks.
    for n in [200_003usize, 131_072] {
        for dtype in [DType::F64, DType::F32] {
            nabla::manual_seed(n as u64);
            let x = nabla::randn(&[n], dtype);
            let (y, py) = (rosen(&x), rosen_plain(&x));
            let (g, pg) = (grad(rosen)(&x), grad(rosen_plain)(&x));
            let tol = if dtype == DType::F64 { 1e-12 } else { 1e-4 };
            close_to(&y, &py, tol, "value");
            // Elementwise, the fused gradient is the same sum of the same
            // two terms per element: within an ulp or two in f64.
            let (a, b) = (
                g.cast(DType::F64).to_vec::<f64>(),
                pg.cast(DType::F64).to_vec::<f64>(),
            );
            for (i, (u, v)) in a.iter().zip(&b).enumerate() {
                let scale = u.abs().max(v.abs()).max(1e-300);
                let tol = if dtype == DType::F64 { 4e-16 } else { 4e-7 };
                assert!(
                    (u - v).abs() / scale <= tol,
                    "n {n} {dtype:?} element {i}: {u} vs {v}"
                );
            }
        }
    }
}

#[test]
fn transcendental_regions_with_shared_intermediates_fuse() {
    for dtype in [DType::F64, DType::F32] {
        nabla::manual_seed(7);
        let (x, w) = (nabla::randn(&[1000], dtype), nabla::randn(&[1000], dtype));
        let (y, passes) = counted(|| dag(&x, &w));
        assert_eq!(passes, 1, "one region, one pass");
        let ((gx, gw), passes) = counted(|| grad!(dag, argnums = (0, 1))(&x, &w));
        assert_eq!(passes, 1);
        let (px, pw) = grad!(dag_plain, argnums = (0, 1))(&x, &w);
        let tol = if dtype == DType::F64 { 1e-12 } else { 1e-4 };
        close_to(&y, &dag_plain(&x, &w), tol, "value");
        close_to(&gx, &px, tol, "d/dx");
        close_to(&gw, &pw, tol, "d/dw");
    }
}

#[test]
fn slices_along_a_trailing_axis() {
    for shape in [[7usize, 9], [300, 400]] {
        nabla::manual_seed(8);
        let x = nabla::randn(&shape, DType::F64);
        let (y, passes) = counted(|| columns(&x));
        assert_eq!(passes, 1);
        close_to(&y, &columns_plain(&x), 1e-12, "value");
        close_to(
            &grad(columns)(&x),
            &grad(columns_plain)(&x),
            1e-12,
            "gradient",
        );
    }
}

#[test]
fn a_cotangent_other_than_one_scales_the_unit_pullback() {
    for dtype in [DType::F64, DType::F32] {
        nabla::manual_seed(9);
        let x = nabla::randn(&[300], dtype);
        let ct = Array::scalar(2.5f64).cast(dtype);
        let (y, pullback) = vjp(rosen)(&x);
        let (py, plain) = vjp(rosen_plain)(&x);
        let tol = if dtype == DType::F64 { 1e-12 } else { 1e-4 };
        close_to(&y, &py, tol, "value");
        close_to(&pullback(&ct), &plain(&ct), tol, "pullback of 2.5");
        // Inside a larger function the region's cotangent is not 1.
        let (g, passes) = counted(|| grad(scaled)(&x));
        assert!(passes >= 1);
        close_to(
            &g,
            &grad(scaled_plain)(&x),
            tol,
            "gradient of 3 * rosen + x",
        );
    }
}

twins!(scaled, scaled_plain, (x) {
    let n = x.shape()[0];
    let head = x.slice_axis(0, 0..n - 1);
    let tail = x.slice_axis(0, 1..n);
    let r = nabla::sum(&((tail - head.square()).square() * 100.0 + (1.0 - head).square()));
    r * 3.0 + nabla::sum(&x.sin())
});

// Three slices of one buffer, offsets 0, 5 and 12: their cotangents land
// in one buffer, overlapping.
twins!(stencil, stencil_plain, (x) {
    let n = x.shape()[0];
    let a = x.slice_axis(0, 0..n - 12);
    let b = x.slice_axis(0, 5..n - 7);
    let c = x.slice_axis(0, 12..n);
    nabla::sum(&((a - b * 2.0 + &c).square() * c.cos()))
});

// Two slices 20 apart: additions that cross between the threads' parts
// (halos) at a larger offset.
twins!(far, far_plain, (x) {
    let n = x.shape()[0];
    let a = x.slice_axis(0, 0..n - 20);
    let b = x.slice_axis(0, 20..n);
    nabla::sum(&(&a * b.sin() + a.square()))
});

// Slices 64 and 65 apart: the widest layout the gathering pullback takes,
// and the narrowest that the scattering one takes.
twins!(apart64, apart64_plain, (x) {
    let n = x.shape()[0];
    let a = x.slice_axis(0, 0..n - 64);
    let b = x.slice_axis(0, 64..n);
    nabla::sum(&(a.exp() * &b + b.square()))
});
twins!(apart65, apart65_plain, (x) {
    let n = x.shape()[0];
    let a = x.slice_axis(0, 0..n - 65);
    let b = x.slice_axis(0, 65..n);
    let c = x.slice_axis(0, 30..n - 35);
    nabla::sum(&(a.exp() * &b + b.square() * c))
});

// Neighbours, without a sum: the pullback takes an array cotangent.
twins!(shifted, shifted_plain, (x) {
    let n = x.shape()[0];
    x.slice_axis(0, 0..n - 1) * x.slice_axis(0, 1..n).exp()
});

/// Element by element, within a few roundings of the largest element
/// (the fused pass adds an element's terms in another order than the
/// op-by-op program; a wrong offset or a lost term is off by far more).
fn elementwise_close(g: &Array, p: &Array, dtype: DType, what: &str) {
    let (a, b) = (
        g.cast(DType::F64).to_vec::<f64>(),
        p.cast(DType::F64).to_vec::<f64>(),
    );
    assert_eq!(a.len(), b.len());
    let top = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let tol = top * if dtype == DType::F64 { 1e-14 } else { 1e-5 };
    for (i, (u, v)) in a.iter().zip(&b).enumerate() {
        assert!((u - v).abs() <= tol, "{what} element {i}: {u} vs {v}");
    }
}

#[test]
fn overlapping_slices_of_one_buffer_agree_with_the_unfused_program() {
    for n in [13usize, 40, 1000, 4097, 200_003] {
        for dtype in [DType::F64, DType::F32] {
            nabla::manual_seed(n as u64 + 16);
            let x = nabla::randn(&[n], dtype);
            let ((g, passes), p) = (counted(|| grad(stencil)(&x)), grad(stencil_plain)(&x));
            assert_eq!(passes, 1, "n {n}: value and gradient in one pass");
            elementwise_close(&g, &p, dtype, &format!("stencil n {n} {dtype:?}"));
            if n > 20 {
                let ((g, passes), p) = (counted(|| grad(far)(&x)), grad(far_plain)(&x));
                assert_eq!(passes, 1);
                elementwise_close(&g, &p, dtype, &format!("far n {n} {dtype:?}"));
            }
            if n > 65 {
                let ((g, passes), p) = (counted(|| grad(apart64)(&x)), grad(apart64_plain)(&x));
                assert_eq!(passes, 1);
                elementwise_close(&g, &p, dtype, &format!("apart 64 n {n} {dtype:?}"));
                let ((g, passes), p) = (counted(|| grad(apart65)(&x)), grad(apart65_plain)(&x));
                assert_eq!(passes, 1);
                elementwise_close(&g, &p, dtype, &format!("apart 65 n {n} {dtype:?}"));
            }
            // An elementwise result: the pass reads its cotangent per
            // element.
            let ct = nabla::randn(&[n - 1], dtype);
            let ((_, pb), (_, ppb)) = (vjp(shifted)(&x), vjp(shifted_plain)(&x));
            let (g, passes) = counted(|| pb(&ct));
            assert_eq!(passes, 1);
            elementwise_close(&g, &ppb(&ct), dtype, &format!("shifted n {n}"));
        }
    }
}

#[test]
fn every_instruction_set_gives_the_gradients_of_the_unfused_program() {
    // The passes have a baseline, an AVX2 and an AVX-512 copy; this machine
    // runs the widest it has unless capped. (Other tests running meanwhile
    // just take another copy.)
    for n in [97usize, 4097, 200_003] {
        for dtype in [DType::F64, DType::F32] {
            nabla::manual_seed(n as u64 + 99);
            let x = nabla::randn(&[n], dtype);
            let t = nabla::randn(&[n], dtype);
            let rosen_g = grad(rosen_plain)(&x);
            let apart_g = grad(apart65_plain)(&x);
            let (y, dy) = jvp(rosen_plain)((&x,), (&t,));
            for level in [0, 1, 2] {
                nabla::fused::limit_simd(level);
                let what = format!("level {level} n {n} {dtype:?}");
                elementwise_close(&grad(rosen)(&x), &rosen_g, dtype, &format!("rosen {what}"));
                elementwise_close(&grad(apart65)(&x), &apart_g, dtype, &format!("65 {what}"));
                // The sums of 2e5 f32 terms differ by their rounding order.
                let sum_tol = if dtype == DType::F32 && n > 1000 {
                    1e-3
                } else {
                    tol(dtype)
                };
                let (fy, fdy) = jvp(rosen)((&x,), (&t,));
                close_to(&fy, &y, sum_tol, &format!("jvp primal {what}"));
                close_to(&fdy, &dy, sum_tol, &format!("jvp tangent {what}"));
            }
            nabla::fused::limit_simd(u8::MAX);
        }
    }
}
