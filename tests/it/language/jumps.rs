//! `continue` and `break` in differentiable loops (rewritten into static
//! flags before lowering): data-dependent and static jumps, variable trip
//! counts, nested loops, `while` with jumps, against finite differences,
//! the tape, forward mode and loops of single examples under `vmap`.

use crate::common::*;
use nabla::prelude::*;
use nabla::testing::{check_grads, tree};

/// Skips the elements whose running value went negative (data-dependent
/// `continue`), accumulating the others.
#[differentiable]
fn skip_negative(x: &Array) -> Array {
    let mut acc = x.slice_axis(0, 0..1) * 0.0;
    let mut run = x.slice_axis(0, 0..1);
    for i in 1..6 {
        run = (&run + x.slice_axis(0, i..i + 1)).sin();
        if run.item() < 0.0 {
            continue;
        }
        acc = &acc + run.square();
    }
    nabla::sum(&acc)
}

/// Newton's method for √a with a data-dependent `break`: the trip count
/// depends on the input.
#[differentiable]
fn newton_sqrt(a: f64) -> f64 {
    let mut x = a;
    for _ in 0..100 {
        if (x * x - a).abs() < 1e-12 {
            break;
        }
        x = 0.5 * (x + a / x);
    }
    x
}

/// Nested loops: `break` in the inner loop, static `continue` in the outer,
/// a `continue` inside an `else` branch.
#[differentiable]
fn nested(w: &Array) -> Array {
    let mut h = w.clone();
    for i in 0..4 {
        if i == 1 {
            continue;
        }
        for j in 0..10 {
            if j >= i + 2 {
                break;
            }
            h = (&h * 0.9 + w * 0.1).tanh();
        }
        if i == 3 {
            h = h.square();
        } else {
            h = &h + w;
            continue;
        }
        h = &h * 1.5;
    }
    nabla::sum(&h)
}

/// `while` with both jumps.
#[differentiable]
fn while_jumps(x: &Array) -> Array {
    let mut y = x.clone();
    let mut n = 0usize;
    while n < 20 {
        n += 1;
        if n.is_multiple_of(3) {
            continue;
        }
        y = (&y * 1.1).sin() + x * 0.05;
        if nabla::sum(&y).item() > 2.5 {
            break;
        }
    }
    nabla::sum(&(&y * &y))
}

#[test]
fn data_dependent_continue_matches_fd_tape_and_jvp() {
    for seed in 0..6 {
        let _rng = seeded(seed);
        let x = nabla::randn(&[6], DType::F64);
        let g = nabla::grad(skip_negative)(&x);
        check_grads(skip_negative, &(x.clone(),), 1);
        let t = x.clone().requires_grad();
        skip_negative(&t).backward();
        assert_close(&t.grad(), &g, 1e-12, "tape");
        let dir = nabla::randn(&[6], DType::F64);
        let (_, d) = nabla::jvp(skip_negative)((&x,), (&dir,));
        assert!(
            (d.item() - (&g * &dir).sum().item()).abs() < 1e-10,
            "jvp = grad · dir"
        );
    }
}

#[test]
fn break_gives_a_variable_trip_count_and_exact_derivatives() {
    for a in [0.25, 2.0, 9.0, 1e4] {
        let x = newton_sqrt(a);
        assert!(
            (x - a.sqrt()).abs() < 1e-9 * a.sqrt().max(1.0),
            "√{a} = {x}"
        );
        // d√a/da = 1/(2√a): the derivative of the converged iteration.
        let g = nabla::grad(newton_sqrt)(a);
        assert!((g - 0.5 / a.sqrt()).abs() < 1e-8, "d√{a}: {g}");
        let h = nabla::grad(nabla::grad(newton_sqrt))(a);
        assert!(
            (h + 0.25 * a.powf(-1.5)).abs() < 1e-6 * a.powf(-1.5).max(1.0),
            "d²√{a}: {h}"
        );
    }
}

#[test]
fn nested_loops_with_jumps_match_fd_and_vmap_matches_a_loop() {
    let _rng = seeded(11);
    let w = nabla::randn(&[3], DType::F64) * 0.5;
    check_grads(nested, &(w.clone(),), 1);
    let ws = nabla::randn(&[4, 3], DType::F64) * 0.5;
    let batched = nabla::vmap(nabla::grad(nested))(&ws);
    for i in 0..4 {
        let wi = ws.slice_axis(0, i..i + 1).reshape(&[3]);
        assert_close(
            &batched.slice_axis(0, i..i + 1).reshape(&[3]),
            &nabla::grad(nested)(&wi),
            1e-12,
            &format!("vmap example {i}"),
        );
    }
    let h = nabla::hessian(nested)(&w);
    assert_close(
        &h,
        &h.transpose(),
        1e-10,
        "Hessian through jumps is symmetric",
    );
}

#[test]
fn while_with_jumps_matches_fd() {
    for seed in 0..4 {
        let _rng = seeded(20 + seed);
        let x = nabla::randn(&[3], DType::F64) * 0.5 + 0.3;
        check_grads(while_jumps, &(x,), 1);
    }
}

/// Doubles until above 100: `break` decides the trip count.
#[differentiable]
fn doubling(x: f64) -> f64 {
    let mut y = x;
    for _ in 0..30 {
        if y > 100.0 {
            break;
        }
        y *= 2.0;
    }
    y
}

/// Static `break` and `continue`: adds only the odd steps below 7.
#[differentiable]
fn odd_steps(x: &Array) -> Array {
    let mut y = x * 0.0;
    for i in 0..100 {
        if i == 7 {
            break;
        }
        if i % 2 == 0 {
            continue;
        }
        y = &y + x * (i as f64);
    }
    nabla::sum(&y)
}

#[test]
fn break_and_continue_change_the_trip_count() {
    assert_eq!(doubling(1.0), 128.0);
    assert_eq!(nabla::grad(doubling)(1.0), 128.0);
    assert_eq!(doubling(3.0), 192.0);
    assert_eq!(nabla::grad(doubling)(3.0), 64.0);
    let x = Array::from_vec(vec![1.0f64, 2.0], &[2]);
    // 1 + 3 + 5 = 9 per element.
    assert_eq!(odd_steps(&x).item(), 27.0);
    assert_eq!(nabla::grad(odd_steps)(&x).to_vec::<f64>(), vec![9.0, 9.0]);
    let xs = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2]);
    assert_eq!(
        nabla::vmap(odd_steps)(&xs).to_vec::<f64>(),
        vec![27.0, 63.0]
    );
}

// ----- early `return` -----

/// Returns from inside a loop once the running sum passes a threshold
/// (data-dependent), else after the loop.
#[differentiable]
fn early_in_loop(x: &Array) -> Array {
    let mut y = x.clone();
    for _ in 0..10 {
        y = y.sin() + x;
        if nabla::sum(&y).item() > 2.0 {
            return nabla::sum(&y.square());
        }
    }
    nabla::sum(&y)
}

/// Early returns from branches at the top level and from a nested loop.
#[differentiable]
fn early_everywhere(x: f64) -> f64 {
    if x < -1.0 {
        return x * x;
    }
    let mut y = x;
    for i in 0..5 {
        for _ in 0..3 {
            y = y * 0.9 + 0.3 * x;
            if y > 1.5 {
                return y * 10.0 + (i as f64);
            }
        }
    }
    y.sin()
}

#[test]
fn early_return_inside_loops_matches_fd_and_the_tape() {
    for seed in 0..8 {
        let _rng = seeded(40 + seed);
        let x = nabla::randn(&[3], DType::F64) * 0.6;
        let g = nabla::grad(early_in_loop)(&x);
        check_grads(early_in_loop, &(x.clone(),), 1);
        let t = x.clone().requires_grad();
        early_in_loop(&t).backward();
        assert_close(&t.grad(), &g, 1e-12, "tape");
    }
    for x in [-2.0, -0.5, 0.3, 0.9, 2.0, 5.0] {
        let g = nabla::grad(early_everywhere)(x);
        // Hand-rolled: check_grads takes functions of arrays, not of floats.
        let fd = (early_everywhere(x + 1e-6) - early_everywhere(x - 1e-6)) / 2e-6;
        assert!((g - fd).abs() < 1e-5, "x = {x}: {g} vs {fd}");
        let h = nabla::grad(nabla::grad(early_everywhere))(x);
        let fdh = (nabla::grad(early_everywhere)(x + 1e-5)
            - nabla::grad(early_everywhere)(x - 1e-5))
            / 2e-5;
        assert!((h - fdh).abs() < 1e-4, "x = {x}: {h} vs {fdh}");
    }
    // The values themselves: each return path is taken somewhere.
    assert_eq!(early_everywhere(-2.0), 4.0);
    assert!(early_everywhere(5.0) >= 15.0);
    assert!(early_everywhere(0.3).abs() <= 1.0);
}

// ----- loops over slices of arrays -----

/// A stack of layers given as a slice: `for w in ws`.
#[differentiable]
fn through_layers(ws: &[Array], x: &Array) -> Array {
    let mut h = x.clone();
    for w in ws {
        h = h.matmul(w).tanh();
    }
    nabla::sum(&h)
}

/// The same over `ws.iter()`, with a `continue`.
#[differentiable]
fn skip_small(ws: &[Array], x: &Array) -> Array {
    let mut acc = nabla::sum(x) * 0.0;
    for w in ws.iter() {
        let s = nabla::sum(&(w * x));
        if s.item() < 0.0 {
            continue;
        }
        acc = &acc + &s.square();
    }
    acc
}

#[test]
fn loops_over_slices_of_arrays() {
    let _rng = seeded(60);
    let ws: Vec<Array> = (0..3)
        .map(|_| nabla::randn(&[4, 4], DType::F64) * 0.5)
        .collect();
    let x = nabla::randn(&[2, 4], DType::F64);
    let (gws, gx) = nabla::grad!(through_layers, argnums = (0, 1))(&ws, &x);
    assert_eq!(gws.len(), 3);
    assert!(gws.iter().all(|g| g.shape() == [4, 4]) && gx.shape() == x.shape());
    check_grads(through_layers, &(tree(&ws[..]), x.clone()), 1);
    let vs: Vec<Array> = (0..4).map(|_| nabla::randn(&[3], DType::F64)).collect();
    let y = nabla::randn(&[3], DType::F64);
    assert_eq!(nabla::grad(skip_small)(&vs, &y).len(), 4);
    check_grads(skip_small, &(tree(&vs[..]), y), 1);
}

// ----- loop variables borrowing static arguments -----

/// `for r in rates.iter()` over a borrowed static slice: the loop variable
/// is a reference (`&f64`) and the body dereferences it.
#[differentiable]
fn discounted(x: &Array, #[nondiff] rates: &[f64]) -> Array {
    let mut v = x.clone();
    for r in rates.iter() {
        v = &v * (1.0 - *r) + v.square() * *r;
    }
    nabla::sum(&v)
}

/// And by value (`for k in 0..n`, `usize`) next to a borrowed one.
#[differentiable]
fn weighted_steps(x: &Array, #[nondiff] ws: &[f64]) -> Array {
    let mut v = x.clone();
    for (k, w) in ws.iter().enumerate() {
        v = (&v * *w).sin() + x * (k as f64);
    }
    nabla::sum(&v)
}

/// The rates of the test below, and the functions at them as functions
/// of arrays alone (what `check_grads` takes).
const RATES: [f64; 3] = [0.1, 0.25, 0.05];

#[differentiable]
fn discounted_at_rates(x: &Array) -> Array {
    discounted(x, &RATES)
}

#[differentiable]
fn weighted_at_rates(x: &Array) -> Array {
    weighted_steps(x, &RATES)
}

#[test]
fn loop_variables_borrowing_static_arguments() {
    let x = Array::from_vec(vec![0.3f64, -0.2, 0.5], &[3]);
    check_grads(discounted_at_rates, &(x.clone(),), 2);
    check_grads(weighted_at_rates, &(x,), 2);
}

/// A static inside a branch that borrows a static argument (the branch
/// residuals are held owned too).
#[differentiable]
fn pick_rate(x: &Array, #[nondiff] rates: &[f64], hi: bool) -> Array {
    let y = if hi {
        let r = &rates[1];
        x * *r
    } else {
        let r = &rates[0];
        x.square() * *r
    };
    nabla::sum(&y)
}

/// [`pick_rate`] down both branches, as a function of arrays alone.
#[differentiable]
fn pick_both(xs: &[Array]) -> Vec<Array> {
    let rates = [0.5, 2.0];
    vec![
        pick_rate(&xs[0], &rates, false),
        pick_rate(&xs[0], &rates, true),
    ]
}

#[test]
fn branch_statics_borrowing_static_arguments() {
    let x = Array::from_vec(vec![0.3f64, -0.2, 0.5], &[3]);
    check_grads(pick_both, &vec![x], 2);
}

// ----- match arms that bind -----

/// An activation chosen by a static enum with data.
#[derive(Clone, Debug)]
pub enum Act {
    Leaky(f64),
    Scaled { gain: f64, name: String },
    Tanh,
}

#[differentiable]
fn activate(x: &Array, #[nondiff] act: &Act) -> Array {
    let y = match act {
        Act::Leaky(a) => x.relu() - (-x).relu() * *a,
        Act::Scaled { gain, name } if name.len() > 3 => x.tanh() * *gain,
        Act::Scaled { gain, .. } => x.sin() * *gain,
        Act::Tanh => x.tanh(),
    };
    nabla::sum(&y.square())
}

/// A match on a data-derived integer with a binding and a guard.
#[differentiable]
fn by_bucket(x: &Array) -> Array {
    let bucket = (nabla::sum(x).item().abs() * 2.0) as i64;
    match bucket {
        0 => nabla::sum(&x.square()),
        n if n < 3 => nabla::sum(&x.exp()) * (n as f64),
        n => nabla::sum(&x.sin()) * (n as f64),
    }
}

/// The activations of the test below.
fn acts() -> [Act; 4] {
    [
        Act::Leaky(0.1),
        Act::Scaled {
            gain: 2.0,
            name: "wide".into(),
        },
        Act::Scaled {
            gain: 3.0,
            name: "ab".into(),
        },
        Act::Tanh,
    ]
}

/// [`activate`] with each of [`acts`], as a function of arrays alone.
#[differentiable]
fn activate_each(xs: &[Array]) -> Vec<Array> {
    let each = acts();
    vec![
        activate(&xs[0], &each[0]),
        activate(&xs[0], &each[1]),
        activate(&xs[0], &each[2]),
        activate(&xs[0], &each[3]),
    ]
}

#[test]
fn match_arms_that_bind_static_values() {
    let x = Array::from_vec(vec![0.3f64, -0.7, 0.5], &[3]);
    let want = [
        |x: &Array| (x.relu() - (-x).relu() * 0.1).square().sum(),
        |x: &Array| (x.tanh() * 2.0).square().sum(),
        |x: &Array| (x.sin() * 3.0).square().sum(),
        |x: &Array| x.tanh().square().sum(),
    ];
    for (act, w) in acts().iter().zip(want) {
        assert_close(&activate(&x, act), &w(&x), 1e-12, &format!("{act:?} value"));
    }
    check_grads(activate_each, &vec![x], 1);
    for s in [0.1, 0.6, 1.3, 2.9] {
        let x = Array::from_vec(vec![s, 0.0, 0.0], &[3]);
        check_grads(by_bucket, &(x,), 1);
    }
}
