//! `#[nabla::checkpoint(snapshots = s)]` on a `for` loop: binomial (Revolve)
//! checkpointing gives the plain loop's gradients bit for bit, recomputes
//! exactly the optimal number of iterations, and composes with `jvp`,
//! `hessian` and `vmap`.

use crate::common::*;
use nabla::prelude::*;
use nabla::revolve::min_forward_steps;
use std::cell::Cell;

thread_local! {
    /// How many times a loop body ran on this thread.
    static RUNS: Cell<usize> = const { Cell::new(0) };
}

fn count_run() -> usize {
    RUNS.with(|r| {
        r.set(r.get() + 1);
        r.get()
    })
}

fn runs() -> usize {
    RUNS.with(|r| r.replace(0))
}

#[differentiable]
fn cell(h: &Array, w: &Array) -> Array {
    (h.matmul(w)).tanh()
}

/// A recurrent loop with two carried values, a call of another
/// differentiable function, the loop variable in arithmetic and a static
/// counter of body runs.
#[differentiable]
fn plain(x: &Array, w: &Array, n: usize) -> Array {
    let mut h = x.clone();
    let mut acc = nabla::sum(&x.zeros_like());
    for i in 0..n {
        let _ = crate::transforms::revolve::count_run();
        h = cell(&h, w) * (1.0 + 0.01 * i as f64) + &h * 0.5;
        acc += nabla::sum(&h.square());
    }
    acc + nabla::sum(&h)
}

#[differentiable]
fn snap1(x: &Array, w: &Array, n: usize) -> Array {
    let mut h = x.clone();
    let mut acc = nabla::sum(&x.zeros_like());
    #[nabla::checkpoint(snapshots = 1)]
    for i in 0..n {
        let _ = crate::transforms::revolve::count_run();
        h = cell(&h, w) * (1.0 + 0.01 * i as f64) + &h * 0.5;
        acc += nabla::sum(&h.square());
    }
    acc + nabla::sum(&h)
}

#[differentiable]
fn snap2(x: &Array, w: &Array, n: usize) -> Array {
    let mut h = x.clone();
    let mut acc = nabla::sum(&x.zeros_like());
    #[nabla::checkpoint(snapshots = 2)]
    for i in 0..n {
        let _ = crate::transforms::revolve::count_run();
        h = cell(&h, w) * (1.0 + 0.01 * i as f64) + &h * 0.5;
        acc += nabla::sum(&h.square());
    }
    acc + nabla::sum(&h)
}

#[differentiable]
fn snap3(x: &Array, w: &Array, n: usize) -> Array {
    let mut h = x.clone();
    let mut acc = nabla::sum(&x.zeros_like());
    #[nabla::checkpoint(snapshots = 3)]
    for i in 0..n {
        let _ = crate::transforms::revolve::count_run();
        h = cell(&h, w) * (1.0 + 0.01 * i as f64) + &h * 0.5;
        acc += nabla::sum(&h.square());
    }
    acc + nabla::sum(&h)
}

#[differentiable]
fn snap20(x: &Array, w: &Array, n: usize) -> Array {
    let mut h = x.clone();
    let mut acc = nabla::sum(&x.zeros_like());
    #[nabla::checkpoint(snapshots = 20)]
    for i in 0..n {
        let _ = crate::transforms::revolve::count_run();
        h = cell(&h, w) * (1.0 + 0.01 * i as f64) + &h * 0.5;
        acc += nabla::sum(&h.square());
    }
    acc + nabla::sum(&h)
}

type Loop = fn(&Array, &Array, usize) -> (Array, Array);
type LoopW = fn(&Array, &Array, usize) -> Array;

#[test]
fn checkpointed_loops_give_the_plain_gradients_bit_for_bit() {
    let _rng = seeded(31);
    let x = nabla::randn(&[2, 4], DType::F64);
    let w = nabla::randn(&[4, 4], DType::F64) * 0.4;
    let variants: [(usize, Loop); 4] = [
        (1, |x, w, n| nabla::grad!(snap1, argnums = (0, 1))(x, w, n)),
        (2, |x, w, n| nabla::grad!(snap2, argnums = (0, 1))(x, w, n)),
        (3, |x, w, n| nabla::grad!(snap3, argnums = (0, 1))(x, w, n)),
        (20, |x, w, n| {
            nabla::grad!(snap20, argnums = (0, 1))(x, w, n)
        }),
    ];
    for n in [0, 1, 2, 3, 7, 19, 20, 21, 40] {
        runs();
        let (gx, gw) = nabla::grad!(plain, argnums = (0, 1))(&x, &w, n);
        assert_eq!(runs(), n, "the taped loop runs each iteration once");
        for (s, grad) in variants {
            let (cx, cw) = grad(&x, &w, n);
            let what = format!("n = {n}, snapshots = {s}");
            assert_close(&cx, &gx, 0.0, &format!("d/dx, {what}"));
            assert_close(&cw, &gw, 0.0, &format!("d/dw, {what}"));
            assert_eq!(
                runs(),
                n + min_forward_steps(n, s),
                "each iteration recorded once plus the schedule's recomputations, {what}"
            );
        }
    }
    // The forward program ignores the attribute.
    assert_close(&snap2(&x, &w, 9), &plain(&x, &w, 9), 0.0, "value");
}

/// The fewest recomputed steps, by exhaustive search over where to place
/// the next snapshot (independent of the closed form).
fn fewest(l: usize, s: usize) -> usize {
    let mut t = vec![vec![0usize; s + 1]; l + 1];
    for (k, row) in t.iter_mut().enumerate() {
        row[1] = k * k.saturating_sub(1) / 2;
    }
    for k in 2..=l {
        for j in 2..=s {
            t[k][j] = (1..k)
                .map(|m| m + t[k - m][j - 1] + t[m][j])
                .min()
                .unwrap_or(0);
        }
    }
    t[l][s]
}

#[test]
fn recomputations_match_the_binomial_formula_and_the_search() {
    let _rng = seeded(32);
    let x = nabla::randn(&[2, 4], DType::F64);
    let w = nabla::randn(&[4, 4], DType::F64) * 0.4;
    for n in 0..=30 {
        let variants: [(usize, LoopW); 3] = [
            (1, *nabla::grad!(snap1, argnums = 1)),
            (2, *nabla::grad!(snap2, argnums = 1)),
            (3, *nabla::grad!(snap3, argnums = 1)),
        ];
        for (s, grad) in variants {
            runs();
            let _ = grad(&x, &w, n);
            let recomputed = runs() - n;
            assert_eq!(recomputed, fewest(n, s), "n = {n}, snapshots = {s}");
            assert_eq!(
                recomputed,
                min_forward_steps(n, s),
                "n = {n}, snapshots = {s}"
            );
        }
    }
    // A long loop: r = 2 (C(22, 20) = 231 >= 200 > 21), 2·200 − C(22, 21).
    runs();
    let _ = nabla::grad!(snap20, argnums = 1)(&x, &w, 200);
    assert_eq!(runs() - 200, 2 * 200 - 22);
}

/// The state as one array, for the composable transforms.
#[differentiable]
fn roll_plain(s: &Array) -> Array {
    let mut h = s.clone();
    for i in 0..12 {
        h = (&h * (0.9 + 0.01 * i as f64)).sin() + h.square() * 0.1;
    }
    nabla::sum(&h.exp())
}

#[differentiable]
fn roll_snap(s: &Array) -> Array {
    let mut h = s.clone();
    #[nabla::checkpoint(snapshots = 3)]
    for i in 0..12 {
        h = (&h * (0.9 + 0.01 * i as f64)).sin() + h.square() * 0.1;
    }
    nabla::sum(&h.exp())
}

#[test]
fn jvp_hessian_and_vmap_agree_with_the_plain_loop() {
    let _rng = seeded(33);
    let s = nabla::randn(&[3], DType::F64) * 0.5;
    assert_close(
        &nabla::grad(roll_snap)(&s),
        &nabla::grad(roll_plain)(&s),
        0.0,
        "grad",
    );
    let t = s.cos();
    let (y1, d1) = nabla::jvp(roll_snap)((&s,), (&t,));
    let (y0, d0) = nabla::jvp(roll_plain)((&s,), (&t,));
    assert_close(&y1, &y0, 0.0, "jvp value");
    assert_close(&d1, &d0, 0.0, "jvp tangent");
    // Forward-over-reverse through the schedule's closures.
    assert_close(
        &nabla::hessian(roll_snap)(&s),
        &nabla::hessian(roll_plain)(&s),
        1e-12,
        "hessian",
    );
    let xs = nabla::randn(&[5, 3], DType::F64) * 0.5;
    assert_close(
        &nabla::vmap(nabla::grad(roll_snap))(&xs),
        &nabla::vmap(nabla::grad(roll_plain))(&xs),
        1e-12,
        "vmap(grad)",
    );
}

/// Scalar code: the loop state is a tuple of floats.
#[differentiable]
fn oscillator_plain(k: f64) -> f64 {
    let mut x = 1.0 * k / k;
    let mut v = 0.0 * k;
    for _ in 0..100 {
        let a = -k * x - 0.1 * v;
        let x_next = x + 0.05 * v;
        v += 0.05 * a;
        x = x_next;
    }
    0.5 * v * v + 0.5 * k * x * x
}

#[differentiable]
fn oscillator_snap(k: f64) -> f64 {
    let mut x = 1.0 * k / k;
    let mut v = 0.0 * k;
    #[nabla::checkpoint(snapshots = 4)]
    for _ in 0..100 {
        let a = -k * x - 0.1 * v;
        let x_next = x + 0.05 * v;
        v += 0.05 * a;
        x = x_next;
    }
    0.5 * v * v + 0.5 * k * x * x
}

#[test]
fn scalar_loops_and_their_second_derivatives_agree() {
    let k = 1.3;
    assert_eq!(oscillator_snap(k), oscillator_plain(k));
    assert_eq!(
        nabla::grad(oscillator_snap)(k),
        nabla::grad(oscillator_plain)(k)
    );
    let (h1, h0) = (
        nabla::grad(nabla::grad(oscillator_snap))(k),
        nabla::grad(nabla::grad(oscillator_plain))(k),
    );
    assert!((h1 - h0).abs() <= 1e-12 * h0.abs().max(1.0), "{h1} vs {h0}");
}

/// Nesting: a checkpointed loop inside a plain one, a plain loop and a
/// branch inside a checkpointed one, and a checkpointed loop inside another.
#[differentiable]
fn nested_plain(x: &Array, w: &Array) -> Array {
    let mut h = x.clone();
    for j in 0..3 {
        for i in 0..5 {
            h = cell(&h, w) + &h * (0.1 * (i + j) as f64);
            if i % 2 == 0 {
                for _ in 0..2 {
                    h = h.sin();
                }
            } else {
                h = &h * 0.9;
            }
        }
    }
    for _ in 0..4 {
        for _ in 0..6 {
            h = cell(&h, w);
        }
    }
    nabla::sum(&h.square())
}

#[differentiable]
fn nested_snap(x: &Array, w: &Array) -> Array {
    let mut h = x.clone();
    for j in 0..3 {
        #[nabla::checkpoint(snapshots = 2)]
        for i in 0..5 {
            h = cell(&h, w) + &h * (0.1 * (i + j) as f64);
            if i % 2 == 0 {
                for _ in 0..2 {
                    h = h.sin();
                }
            } else {
                h = &h * 0.9;
            }
        }
    }
    #[nabla::checkpoint(snapshots = 2)]
    for _ in 0..4 {
        #[nabla::checkpoint(snapshots = 3)]
        for _ in 0..6 {
            h = cell(&h, w);
        }
    }
    nabla::sum(&h.square())
}

#[test]
fn nested_checkpointed_loops_give_the_plain_gradients() {
    let _rng = seeded(34);
    let x = nabla::randn(&[2, 4], DType::F64);
    let w = nabla::randn(&[4, 4], DType::F64) * 0.4;
    let (gx, gw) = nabla::grad!(nested_plain, argnums = (0, 1))(&x, &w);
    let (cx, cw) = nabla::grad!(nested_snap, argnums = (0, 1))(&x, &w);
    assert_close(&cx, &gx, 0.0, "d/dx");
    assert_close(&cw, &gw, 0.0, "d/dw");
}

/// Any static iterator (collected first, so the trip count is known), a
/// loop variable that is not an index, and a static carried value.
#[differentiable]
fn iter_plain(x: &Array, #[nondiff] rates: &[f64]) -> Array {
    let mut h = x.clone();
    let mut scale = 1.0;
    for r in rates.iter().rev().copied() {
        scale *= 0.9;
        h = (&h * r).tanh() * scale + &h;
    }
    nabla::sum(&h.square())
}

#[differentiable]
fn iter_snap(x: &Array, #[nondiff] rates: &[f64]) -> Array {
    let mut h = x.clone();
    let mut scale = 1.0;
    #[nabla::checkpoint(snapshots = 2)]
    for r in rates.iter().rev().copied() {
        scale *= 0.9;
        h = (&h * r).tanh() * scale + &h;
    }
    nabla::sum(&h.square())
}

#[test]
fn static_iterators_and_static_carried_values() {
    let _rng = seeded(35);
    let x = nabla::randn(&[3], DType::F64);
    let rates: Vec<f64> = (0..11).map(|i| 0.3 + 0.05 * i as f64).collect();
    for n in [0, 1, 2, 11] {
        assert_close(
            &nabla::grad(iter_snap)(&x, &rates[..n]),
            &nabla::grad(iter_plain)(&x, &rates[..n]),
            0.0,
            &format!("{n} rates"),
        );
    }
}
