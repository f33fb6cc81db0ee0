//! Fused replays against the same programs run instruction by
//! instruction (eagerly), on sizes spanning several blocks.

use super::{BLOCK, run_offset};
use crate::dynamic::{Dyn, grad, record, value_and_grad};
use crate::{Array, ArrayValue, Value};
use ndarray::Slice;

fn arr(v: &[f64], shape: &[usize]) -> Dyn {
    Dyn::from(Array::from_vec(v.to_vec(), shape))
}

fn vals(d: &Dyn) -> Vec<f64> {
    d.to_array().to_vec::<f64>()
}

fn wave(n: usize, k: f64) -> Vec<f64> {
    (0..n).map(|i| ((i as f64) * k).sin() + 0.1).collect()
}

/// `f` recorded on `xs`, replayed on inputs scaled by 0.7, equals `f` run
/// eagerly on those inputs to `tol` (relative); returns the program.
fn replays_like_eager(
    f: impl Fn(&[Dyn]) -> Vec<Dyn>,
    xs: &[Dyn],
    tol: f64,
) -> crate::dynamic::Program {
    let (_, p) = record(&f, xs);
    let again: Vec<Dyn> = xs
        .iter()
        .map(|x| Dyn::from(x.to_array().mul_scalar(0.7)))
        .collect();
    let got = p.run(&again);
    let want = f(&again);
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.shape_vec(), w.shape_vec(), "{p}");
        for (a, b) in vals(g).iter().zip(vals(w)) {
            let same = (a - b).abs() <= tol * (1.0 + b.abs()) || (a.is_nan() && b.is_nan());
            assert!(same, "{a} vs {b}\n{p}");
        }
    }
    p
}

#[test]
fn contiguous_slices_have_an_offset() {
    assert_eq!(run_offset(&[5], &[Slice::from(1..)]), Some(1));
    assert_eq!(run_offset(&[5], &[Slice::from(..-1)]), Some(0));
    assert_eq!(run_offset(&[3, 4], &[Slice::from(1..3)]), Some(4));
    assert_eq!(
        run_offset(&[3, 4], &[Slice::from(2..3), Slice::from(1..3)]),
        Some(9)
    );
    assert_eq!(
        run_offset(&[3, 4], &[Slice::from(..), Slice::from(1..)]),
        None
    );
    assert_eq!(run_offset(&[6], &[Slice::new(0, None, 2)]), None);
    assert_eq!(run_offset(&[2, 1, 4], &[Slice::from(1..2)]), Some(4));
}

#[test]
fn a_stencil_gradient_is_one_pass_across_block_edges() {
    // Rosenbrock's gradient: slices, their placements into zeros and the
    // elementwise work between them read neighbours across block edges.
    let n = 4 * BLOCK + 3;
    let rosen = |x: &Dyn| {
        let a = x.slice(&[Slice::new(0, Some(-1), 1)]);
        let b = x.slice(&[Slice::new(1, None, 1)]);
        let t = b.sub(&a.mul(&a)).powi(2).mul_scalar(100.0);
        t.add(&a.neg().add_scalar(1.0).powi(2))
            .sum_axes(&[0], false)
    };
    let p = replays_like_eager(
        |x| vec![grad(rosen, &x[0])],
        &[arr(&wave(n, 0.37), &[n])],
        0.0,
    );
    assert_eq!(p.fused_runs(), 1, "{p}");
    // The value too: the sum is an output of the same pass.
    let p = replays_like_eager(
        |x| {
            let (v, g) = value_and_grad(|x| rosen(&x[0]), &x[..1]);
            vec![v, g[0].clone()]
        },
        &[arr(&wave(n, 0.37), &[n])],
        1e-13,
    );
    assert_eq!(p.fused_runs(), 1, "{p}");
}

#[test]
fn wide_stencils_rows_and_repeats() {
    let n = 3 * BLOCK + 11;
    let x = arr(&wave(n, 0.11), &[n]);
    // a five-point stencil of an intermediate, and its gradient
    let stencil = |x: &Dyn| {
        let y = x.sin();
        let m = n as isize;
        let s = |a: isize, b: isize| y.slice(&[Slice::new(a, Some(m - 4 + b), 1)]);
        s(0, 0)
            .add(&s(1, 1).mul_scalar(-4.0))
            .add(&s(2, 2).mul_scalar(6.0))
            .add(&s(3, 3).mul_scalar(-4.0))
            .add(&s(4, 4))
    };
    replays_like_eager(|x| vec![stencil(&x[0])], std::slice::from_ref(&x), 1e-14);
    let loss = |x: &Dyn| stencil(x).powi(2).sum_axes(&[0], false);
    replays_like_eager(|x| vec![grad(loss, &x[0])], std::slice::from_ref(&x), 1e-12);
    // rows of a matrix (a contiguous run) and a column range (not one)
    let m = arr(&wave(40 * 70, 0.03), &[40, 70]);
    let rows = |x: &[Dyn]| {
        let x = &x[0];
        let top = x.slice(&[Slice::from(..-1), Slice::from(..)]);
        let bottom = x.slice(&[Slice::from(1..), Slice::from(..)]);
        let cols = x.slice(&[Slice::from(..), Slice::from(1..)]);
        let d = bottom.sub(&top).tanh();
        vec![
            d.mul(&d).sum_axes(&[0, 1], false),
            cols.exp().add_scalar(1.0),
        ]
    };
    replays_like_eager(rows, std::slice::from_ref(&m), 1e-12);
    let g = |x: &[Dyn]| vec![grad(|x| rows(std::slice::from_ref(x))[0].clone(), &x[0])];
    replays_like_eager(g, std::slice::from_ref(&m), 1e-12);
    // a runtime scalar repeated, a constant array of equal elements, and a
    // window read far from the block it feeds (the run then does not fuse)
    let s = arr(&[1.5], &[]);
    let ones = arr(&vec![1.0; n], &[n]);
    let far = move |x: &[Dyn]| {
        let y = x[0].mul(&x[1]).exp().mul(&ones);
        let half = (n / 2) as isize;
        let lo = y.slice(&[Slice::new(0, Some(half), 1)]);
        let hi = y.slice(&[Slice::new(half, Some(2 * half), 1)]);
        vec![lo.mul(&hi).add(&x[1].broadcast_to(&[n / 2]))]
    };
    replays_like_eager(far, &[x.clone(), s], 1e-14);
}

#[test]
fn repeated_kernels_run_once() {
    let x = arr(&wave(100, 0.2), &[100]);
    let (_, p) = record(
        |x| vec![x[0].sin().add(&x[0].sin())],
        std::slice::from_ref(&x),
    );
    assert_eq!(p.len(), 2, "{p}");
    let want: Vec<f64> = wave(100, 0.2).iter().map(|v| 2.0 * v.sin()).collect();
    assert_eq!(vals(&p.run(&[x])[0]), want);
}

#[test]
fn random_chains_replay_like_eager() {
    // Chains of elementwise ops, slices, placements, repeats and sums in
    // an order drawn by a fixed generator, in f64 and f32.
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |k: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % k as u64) as usize
    };
    for case in 0..40 {
        let n = 1 + next(3 * BLOCK);
        let ops: Vec<(usize, usize)> = (0..8).map(|_| (next(9), 1 + next(5))).collect();
        let chain = move |x: &[Dyn]| {
            let mut y = x[0].clone();
            let mut outs = Vec::new();
            for &(op, k) in &ops {
                let len = y.shape_vec()[0];
                y = match op {
                    0 => y.sin(),
                    1 => y.mul(&y.exp()),
                    2 => y.mul(&y).add_scalar(k as f64).sqrt(),
                    3 if len > k => y.slice(&[Slice::new(k as isize, None, 1)]),
                    4 => y.slice_place(
                        &[len + k],
                        &[Slice::new(k as isize, Some((len + k) as isize), 1)],
                    ),
                    5 => {
                        let mean = y.sum_axes(&[0], true).mul_scalar(1.0 / len as f64);
                        y.sub(&mean.broadcast_to(&[len]))
                    }
                    6 => {
                        outs.push(y.sum_axes(&[0], false));
                        y.neg().mul_scalar(0.5)
                    }
                    7 => y.tanh().mul(&y),
                    _ => y.add(&y.cos()),
                };
            }
            outs.push(y);
            outs
        };
        let xs = wave(n, 0.05 + case as f64 * 0.01);
        // (a fused sum adds in another order: 1e-9 leaves room for a
        // difference after it to cancel digits, not for a misplaced read)
        replays_like_eager(&chain, &[arr(&xs, &[n])], 1e-9);
        // f32 against the f64 values (f32's eager sums round more than
        // the fused pass's, which adds in f64)
        let xf = Dyn::from(Array::from_vec(
            xs.iter().map(|&v| v as f32).collect(),
            &[n],
        ));
        let (_, p) = record(&chain, std::slice::from_ref(&xf));
        let exact = chain(&[arr(&xs, &[n])]);
        for (g, w) in p.run(std::slice::from_ref(&xf)).iter().zip(exact) {
            let (g, w) = (g.to_array().to_vec::<f32>(), vals(&w));
            for (&a, b) in g.iter().zip(&w) {
                let same =
                    (a as f64 - b).abs() <= 1e-3 * (1.0 + b.abs()) || (a.is_nan() && b.is_nan());
                assert!(same, "case {case}: {a} vs {b}\n{p}");
            }
        }
    }
}
