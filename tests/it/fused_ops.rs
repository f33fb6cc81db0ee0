//! `mul_scaled` (`a · b · c` in one pass, used by `square`'s rules): its
//! forward, tape VJP (with broadcasting), `Dual` JVP and `Batched` rule
//! against the unfused composition and finite differences in f64.

use crate::common::*;
use nabla::prelude::*;
use nabla::{Batched, Dual};

fn a() -> Array {
    Array::from_vec(vec![0.3f64, -1.2, 0.8, 2.0, -0.4, 1.1], &[2, 3])
}

fn b() -> Array {
    Array::from_vec(vec![1.5f64, -0.7, 0.2], &[3])
}

#[test]
fn forward_matches_the_composition_with_broadcasting() {
    let want = (&a() * &b()) * 1.7;
    assert_close(&a().mul_scaled(&b(), 1.7), &want, 1e-15, "a·b·c");
    assert_close(&b().mul_scaled(&a(), 1.7), &want, 1e-15, "b·a·c");
    let f32s = a().cast(DType::F32).mul_scaled(&b().cast(DType::F32), 1.7);
    assert_eq!(f32s.dtype(), DType::F32);
}

#[test]
fn tape_gradients_match_finite_differences() {
    let (x, y) = (a().requires_grad(), b().requires_grad());
    let w = Array::from_vec(vec![0.5f64, 1.0, -2.0, 0.3, 0.7, -1.0], &[2, 3]);
    let loss = nabla::sum(&(x.mul_scaled(&y, -0.6) * &w));
    loss.backward();
    // Hand-rolled: the gradient under test is the tape's (`backward`).
    let f = |p: &Array, q: &Array| nabla::sum(&((p * q) * -0.6 * &w)).item();
    let eps = 1e-6;
    for (which, g) in [(0, x.grad()), (1, y.grad())] {
        let base = if which == 0 { a() } else { b() };
        let mut want = Vec::new();
        for k in 0..base.numel() {
            let mut e = vec![0.0f64; base.numel()];
            e[k] = eps;
            let d = Array::from_vec(e, base.shape());
            let (p, m) = (&base + &d, &base - &d);
            let (fp, fm) = if which == 0 {
                (f(&p, &b()), f(&m, &b()))
            } else {
                (f(&a(), &p), f(&a(), &m))
            };
            want.push((fp - fm) / (2.0 * eps));
        }
        assert_close(
            &g,
            &Array::from_vec(want, base.shape()),
            1e-8,
            &format!("grad {which}"),
        );
    }
}

#[test]
fn dual_and_batched_rules_agree_with_the_composition() {
    let (ta, tb) = (a().sin(), b().cos());
    for (da, db) in [
        (Some(ta.clone()), Some(tb.clone())),
        (Some(ta.clone()), None),
        (None, Some(tb.clone())),
    ] {
        let x = Dual::new(a(), da);
        let y = Dual::new(b(), db);
        let fused = x.mul_scaled(&y, 0.9);
        let plain = x.mul(&y).mul_scalar(0.9);
        assert_close(&fused.primal, &plain.primal, 1e-15, "dual primal");
        assert_close(
            &fused.tangent_or_zero(),
            &plain.tangent_or_zero(),
            1e-15,
            "dual tangent",
        );
    }
    // A batch of 4 `a`s against one shared `b`.
    let xs = Array::from_vec(
        (0..24).map(|i| (i as f64 * 0.37).sin()).collect(),
        &[4, 2, 3],
    );
    let got = Batched::new(xs.clone(), Some(0))
        .mul_scaled(&Batched::unbatched(b()), 2.5)
        .materialize(4, 0);
    for r in 0..4 {
        let row = xs.index_select(0, &[r]).squeeze(0);
        assert_close(
            &got.index_select(0, &[r]).squeeze(0),
            &row.mul_scaled(&b(), 2.5),
            1e-15,
            &format!("batched row {r}"),
        );
    }
}

#[test]
fn square_derivatives_use_it_and_stay_exact() {
    // grad(sum(x²)) = 2x through the tape, and the JVP 2·x·ẋ through Dual.
    let x = a().requires_grad();
    nabla::sum(&x.square()).backward();
    assert_close(&x.grad(), &(a() * 2.0), 1e-15, "tape");
    let d = Dual::new(a(), Some(b().broadcast_to(&[2, 3]))).square();
    assert_close(&d.tangent_or_zero(), &(a() * b() * 2.0), 1e-15, "jvp");
}

/// `add_into_slice` (a slice's cotangent added into an existing one, in
/// place when untracked) equals `x + slice_place(ct)`, never changes an
/// array another holder sees, and keeps recording on the tape when tracked.
#[test]
fn add_into_slice_matches_the_padded_sum_and_keeps_values() {
    use nabla::ArrayValue;
    use ndarray::Slice;
    let x = Array::from_vec((0..12).map(|i| i as f64).collect(), &[3, 4]);
    let ct = Array::from_vec(vec![10.0f64, 20.0, 30.0, 40.0, 50.0, 60.0], &[3, 2]);
    let slices = [Slice::from(..), Slice::from(1..3)];
    let want = &x + &ct.slice_place(&[3, 4], &slices);
    let shared = x.clone();
    let got = shared.add_into_slice(&slices, &ct);
    assert_close(&got, &want, 0.0, "in place");
    assert_eq!(
        x.to_vec::<f64>(),
        (0..12).map(|i| i as f64).collect::<Vec<_>>(),
        "the other holder's value"
    );
    let got32 = x
        .cast(DType::F32)
        .add_into_slice(&slices, &ct.cast(DType::F32));
    assert_close(&got32.cast(DType::F64), &want, 0.0, "f32");
    // Tracked: the fallback records, so gradients reach both operands.
    let (xt, ctt) = (x.requires_grad(), ct.requires_grad());
    nabla::sum(&xt.clone().add_into_slice(&slices, &ctt).square()).backward();
    assert_close(&xt.grad(), &(&want * 2.0), 1e-12, "grad x");
    let g_ct = (&want * 2.0).slice_axis(1, 1..3);
    assert_close(&ctt.grad(), &g_ct, 1e-12, "grad ct");
}

/// `add_mul_scaled` (`x + a·b·c`, in place when untracked) equals the
/// composition, leaves other holders' values alone, and records when
/// tracked.
#[test]
fn add_mul_scaled_matches_the_composition_and_keeps_values() {
    let x = a().sin();
    let b2 = b().broadcast_to(&[2, 3]);
    let want = &x + &a().mul_scaled(&b2, -1.5);
    let shared = x.clone();
    let got = shared.add_mul_scaled(&a(), &b2, -1.5);
    assert_close(&got, &want, 1e-15, "in place");
    assert_close(&x, &a().sin(), 0.0, "the other holder's value");
    let f32s = x
        .cast(DType::F32)
        .add_mul_scaled(&a().cast(DType::F32), &b2.cast(DType::F32), -1.5);
    assert_close(&f32s.cast(DType::F64), &want, 1e-6, "f32");
    // Broadcast operands take the composed path.
    assert_close(
        &x.clone().add_mul_scaled(&a(), &b(), -1.5),
        &want,
        1e-15,
        "broadcast",
    );
    let (xt, at) = (x.requires_grad(), a().requires_grad());
    nabla::sum(&xt.clone().add_mul_scaled(&at, &b2, -1.5)).backward();
    assert_close(&xt.grad(), &Array::ones(&[2, 3], DType::F64), 0.0, "grad x");
    assert_close(&at.grad(), &(&b2 * -1.5), 1e-15, "grad a");
}

/// The `Dual` and `Batched` versions of the accumulating ops agree with the
/// composition they replace, with and without tangents and batch axes.
#[test]
fn accumulating_ops_on_duals_and_batches_match_the_composition() {
    use nabla::ArrayValue;
    use ndarray::Slice;
    let slices = [Slice::from(..), Slice::from(1..3)];
    let (x, ct) = (
        a().cos(),
        Array::from_vec(vec![1.0f64, -2.0, 0.5, 3.0], &[2, 2]),
    );
    for (tx, tc) in [(true, true), (true, false), (false, true), (false, false)] {
        let dx = Dual::new(x.clone(), tx.then(|| x.sin()));
        let dc = Dual::new(ct.clone(), tc.then(|| ct.exp()));
        let got = dx.clone().add_into_slice(&slices, &dc);
        let want = dx.add(&dc.slice_place(&[2, 3], &slices));
        assert_close(&got.primal, &want.primal, 0.0, "dual primal");
        assert_close(
            &got.tangent_or_zero(),
            &want.tangent_or_zero(),
            0.0,
            "dual tangent",
        );
        let (da, db) = (
            Dual::new(a(), tc.then(|| a().square())),
            Dual::new(a().exp(), tx.then(a)),
        );
        let got = dx.clone().add_mul_scaled(&da, &db, 0.7);
        let want = dx.add(&da.mul_scaled(&db, 0.7));
        assert_close(&got.primal, &want.primal, 1e-15, "dual fma primal");
        assert_close(
            &got.tangent_or_zero(),
            &want.tangent_or_zero(),
            1e-15,
            "dual fma tangent",
        );
    }
    // Batched: both batched (axis 0 and axis 1), and mixed batched/unbatched.
    let xs = Array::from_vec((0..24).map(|i| i as f64).collect(), &[4, 2, 3]);
    let cs = Array::from_vec((0..16).map(|i| (i as f64).sin()).collect(), &[4, 2, 2]);
    let cases = [
        (
            Batched::new(xs.clone(), Some(0)),
            Batched::new(cs.clone(), Some(0)),
        ),
        (
            Batched::new(xs.clone(), Some(0)),
            Batched::new(cs.permute(&[1, 0, 2]), Some(1)),
        ),
        (
            Batched::new(xs.clone(), Some(0)),
            Batched::unbatched(ct.clone()),
        ),
        (
            Batched::unbatched(x.clone()),
            Batched::new(cs.clone(), Some(0)),
        ),
    ];
    for (k, (bx, bc)) in cases.into_iter().enumerate() {
        let got = bx.clone().add_into_slice(&slices, &bc).materialize(4, 0);
        let want = bx.add(&bc.slice_place(&[2, 3], &slices)).materialize(4, 0);
        assert_close(&got, &want, 0.0, &format!("batched case {k}"));
    }
    let bx = Batched::new(xs.clone(), Some(0));
    let ba = Batched::new(xs.sin(), Some(0));
    let got = bx.clone().add_mul_scaled(&ba, &ba, 2.0).materialize(4, 0);
    let want = bx.add(&ba.mul_scaled(&ba, 2.0)).materialize(4, 0);
    assert_close(&got, &want, 1e-15, "batched fma");
}

/// `add_mul_scaled` with operands that broadcast to the accumulator (rows,
/// single elements, batched and unbatched, lower per-example rank) equals
/// the composition on arrays, duals and batches, and leaves other holders'
/// values alone.
#[test]
fn add_mul_scaled_with_broadcast_operands_matches_the_composition() {
    let x = a().sin(); // [2, 3]
    let row = b(); // [3]
    let one = Array::scalar(0.25f64);
    let col = Array::from_vec(vec![2.0f64, -1.0], &[2, 1]);
    for (k, (p, q)) in [
        (a(), row.clone()),
        (row.clone(), a()),
        (a(), one.clone()),
        (one.clone(), row.clone()),
        (row.reshape(&[1, 3]), row.clone()),
        (a(), col.clone()), // a column: composed path
        // One element of higher rank enlarges the result: composed path.
        (Array::from_vec(vec![0.25f64], &[1, 1, 1]), row.clone()),
    ]
    .into_iter()
    .enumerate()
    {
        let want = &x + &p.mul_scaled(&q, -0.5);
        let keep = x.clone();
        assert_close(
            &keep.clone().add_mul_scaled(&p, &q, -0.5),
            &want,
            1e-15,
            &format!("array case {k}"),
        );
        assert_close(&keep, &a().sin(), 0.0, "the other holder's value");
        // A non-contiguous accumulator.
        let xt = Array::from_vec(x.transpose().to_vec::<f64>(), &[3, 2]).transpose();
        assert_eq!(xt.strides(), &[1, 2]);
        assert_close(&xt.add_mul_scaled(&p, &q, -0.5), &want, 1e-15, "strided");
    }
    // Duals whose operands broadcast (tangents on either, both or none).
    for (ta, tb) in [(true, true), (true, false), (false, true), (false, false)] {
        let dx = Dual::new(x.clone(), Some(x.cos()));
        let da = Dual::new(row.clone(), ta.then(|| row.exp()));
        let db = Dual::new(one.clone(), tb.then(|| Array::scalar(3.0f64)));
        let got = dx.clone().add_mul_scaled(&da, &db, 0.7);
        let want = dx.add(&da.mul_scaled(&db, 0.7));
        assert_close(&got.primal, &want.primal, 1e-15, "dual primal");
        assert_close(
            &got.tangent_or_zero(),
            &want.tangent_or_zero(),
            1e-15,
            "dual tangent",
        );
        let dx0 = Dual::new(x.clone(), None);
        let got = dx0.clone().add_mul_scaled(&da, &db, 0.7);
        let want = dx0.add(&da.mul_scaled(&db, 0.7));
        assert_close(
            &got.tangent_or_zero(),
            &want.tangent_or_zero(),
            1e-15,
            "dual no tangent",
        );
    }
    // Batches: the accumulator batched on axis 0 or 1; operands batched
    // with a lower per-example rank, or unbatched rows.
    let xs = Array::from_vec((0..24).map(|i| i as f64 * 0.1).collect(), &[4, 2, 3]);
    let rows = Array::from_vec((0..12).map(|i| (i as f64).cos()).collect(), &[4, 3]);
    let accs = [
        Batched::new(xs.clone(), Some(0)),
        Batched::new(xs.permute(&[1, 0, 2]), Some(1)),
    ];
    let ops = [
        (
            Batched::new(rows.clone(), Some(0)),
            Batched::unbatched(row.clone()),
        ),
        (Batched::unbatched(a()), Batched::new(rows.clone(), Some(0))),
        (
            Batched::new(xs.exp(), Some(0)),
            Batched::unbatched(one.clone()),
        ),
    ];
    for (i, acc) in accs.iter().enumerate() {
        for (j, (p, q)) in ops.iter().enumerate() {
            let got = acc.clone().add_mul_scaled(p, q, 1.5).materialize(4, 0);
            let want = acc.add(&p.mul_scaled(q, 1.5)).materialize(4, 0);
            assert_close(&got, &want, 1e-14, &format!("batched acc {i} ops {j}"));
        }
    }
}
