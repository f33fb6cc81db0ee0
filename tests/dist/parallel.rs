//! Data- and tensor-parallel training on every rank (called from
//! `worker::collectives`).

use crate::worker::{block, close, data};
use nabla::dist::{self, Comm, DataParallel, ParallelAttention, ParallelMlp, Zero1};
use nabla::nn::{self, Linear};
use nabla::optim::{Adam, Optimizer};
use nabla::prelude::*;

/// A `Linear` of `i → o` with deterministic f64 values.
fn linear(seed: usize, i: usize, o: usize) -> Linear {
    Linear {
        weight: data(seed, &[o, i], DType::F64),
        bias: Some(data(seed + 1, &[o], DType::F64)),
    }
}

#[derive(Clone, Tree)]
struct Mlp {
    w1: Array,
    b1: Array,
    w2: Array,
}

#[differentiable]
fn mlp_loss(p: &Mlp, x: &Array, y: &Array) -> Array {
    let h = (x.matmul(&p.w1) + &p.b1).tanh();
    nabla::mse_loss(&h.matmul(&p.w2), y)
}

/// ZeRO-1 over leaves of two dtypes (and an empty one) against
/// `DataParallel::mean` followed by the same Adam step, with gradients that
/// differ by rank; the owners of each dtype's leaves form one contiguous
/// run per rank.
pub(crate) fn zero_with_mixed_dtypes() {
    let (r, n, w) = (dist::rank(), dist::world_size(), Comm::world());
    let shapes: [(&[usize], DType); 8] = [
        (&[5, 3], DType::F32),
        (&[4], DType::F64),
        (&[7], DType::F32),
        (&[0], DType::F64),
        (&[2, 6], DType::F64),
        (&[9], DType::F32),
        (&[3, 3], DType::F64),
        (&[1], DType::F32),
    ];
    let start: Vec<Array> = shapes
        .iter()
        .enumerate()
        .map(|(k, (s, d))| data(40 + k, s, *d))
        .collect();
    let dp = DataParallel::new(w).bucket_bytes(64);
    let opt = Adam::new(0.05);
    let (mut p, mut pz) = (start.clone(), start.clone());
    let mut state = opt.init(&p);
    let mut zero = Zero1::new(dp, Adam::new(0.05), &pz);
    for dtype in [DType::F32, DType::F64] {
        let owners: Vec<usize> = (0..shapes.len())
            .filter(|&k| shapes[k].1 == dtype)
            .map(|k| zero.owners()[k])
            .collect();
        assert!(
            owners.windows(2).all(|o| o[0] <= o[1]) && owners.iter().all(|&o| o < n),
            "ZeRO-1 owners of the {dtype:?} leaves are not one run per rank: {owners:?}"
        );
    }
    for step in 0..20 {
        let g: Vec<Array> = shapes
            .iter()
            .enumerate()
            .map(|(k, (s, d))| data(100 * step + 10 * r + k, s, *d))
            .collect();
        let mean = dp.mean(&g);
        opt.update(&mut p, &mean, &mut state);
        zero.update(&mut pz, &g);
    }
    for (k, (a, b)) in pz.iter().zip(&p).enumerate() {
        let tol = if a.dtype() == DType::F32 { 1e-5 } else { 1e-12 };
        close(
            a,
            b,
            tol,
            &format!("ZeRO-1 vs data-parallel Adam, leaf {k}"),
        );
        let flat = a.reshape(&[a.numel()]);
        let all = dist::all_gather(&flat, w).to_vec::<f64>();
        let mine = flat.to_vec::<f64>();
        for chunk in all.chunks(mine.len().max(1)) {
            assert_eq!(chunk, &mine[..], "ZeRO-1 leaf {k} differs across ranks");
        }
    }
}

/// `DataParallel::backward` (buckets reduced while the tape's backward pass
/// runs) against the whole pass followed by `DataParallel::mean`, and the
/// tape's gradients against the generated `grad`: small buckets, so
/// several are in flight, and a parameter the loss does not use.
pub(crate) fn overlapped_backward() {
    let w = Comm::world();
    let x = data(1, &[12, 3], DType::F64);
    let y = data(2, &[12, 2], DType::F64);
    let p = Mlp {
        w1: data(10, &[3, 8], DType::F64),
        b1: data(20, &[8], DType::F64),
        w2: data(30, &[8, 2], DType::F64),
    };
    let dp = DataParallel::new(w).bucket_bytes(8 * 20).overlap(true);
    let (xs, ys) = (dp.shard(&x), dp.shard(&y));
    let tracked = |p: &Mlp| {
        let unused = data(40, &[3], DType::F64).requires_grad();
        let w1 = p.w1.clone().requires_grad();
        // w1 twice (a tied parameter): both places get its gradient.
        let leaves = vec![
            w1.clone(),
            p.b1.clone().requires_grad(),
            unused,
            p.w2.clone().requires_grad(),
            w1,
        ];
        let h = (xs.matmul(&leaves[0]) + &leaves[1]).tanh();
        let loss = nabla::mse_loss(&h.matmul(&leaves[3]), &ys);
        (leaves, loss)
    };
    let (leaves, loss) = tracked(&p);
    let got = dp.backward(&loss, &leaves);
    let (after_leaves, loss) = tracked(&p);
    let after = dp.overlap(false).backward(&loss, &after_leaves);
    let (plain, loss) = tracked(&p);
    loss.backward();
    let local: Vec<Array> = plain
        .iter()
        .map(|a| a.try_grad().unwrap_or_else(|| a.detach().zeros_like()))
        .collect();
    let want = dp.mean(&local);
    let generated = dp.mean(&grad(mlp_loss)(&p, &xs, &ys));
    let generated = [
        generated.w1.clone(),
        generated.b1,
        Array::zeros(&[3], DType::F64),
        generated.w2,
        generated.w1,
    ];
    for k in 0..5 {
        close(
            &got[k],
            &want[k],
            1e-12,
            &format!("overlapped backward, leaf {k}"),
        );
        close(
            &after[k],
            &want[k],
            0.0,
            &format!("backward without overlap, leaf {k}"),
        );
        close(
            &got[k],
            &generated[k],
            1e-12,
            &format!("overlapped backward vs grad, leaf {k}"),
        );
        close(
            &leaves[k].grad(),
            &got[k],
            0.0,
            &format!(".grad() after the overlapped backward, leaf {k}"),
        );
    }
}

/// 50 Adam steps: data-parallel (each rank a shard of the 12-row batch,
/// gradients averaged in buckets of one leaf) against the same steps on
/// the full batch in one process; every rank's parameters bitwise equal.
pub(crate) fn data_parallel_training() {
    let (r, w) = (dist::rank(), Comm::world());
    let x = data(1, &[12, 3], DType::F64);
    let y = data(2, &[12, 2], DType::F64);
    // Rank-dependent starting points: `sync` must replace them by rank 0's.
    let init = |q: usize| Mlp {
        w1: data(10 + q, &[3, 8], DType::F64),
        b1: data(20 + q, &[8], DType::F64),
        w2: data(30 + q, &[8, 2], DType::F64),
    };
    let dp = DataParallel::new(w).bucket_bytes(8 * 24);
    let mut p = dp.sync(&init(r));
    let (xs, ys) = (dp.shard(&x), dp.shard(&y));
    let mut whole = init(0);
    let opt = Adam::new(0.01);
    let (mut sp, mut sw) = (opt.init(&p), opt.init(&whole));
    // ZeRO-1: the same steps with Adam's moments split over the ranks.
    let mut pz = p.clone();
    let mut zero = Zero1::new(dp, Adam::new(0.01), &pz);
    for _ in 0..50 {
        let g = dp.mean(&grad(mlp_loss)(&p, &xs, &ys));
        opt.update(&mut p, &g, &mut sp);
        let gw = grad(mlp_loss)(&whole, &x, &y);
        opt.update(&mut whole, &gw, &mut sw);
        let gz = grad(mlp_loss)(&pz, &xs, &ys);
        zero.update(&mut pz, &gz);
    }
    for (z, a) in nabla::tree::leaves(&pz).iter().zip(nabla::tree::leaves(&p)) {
        close(z, &a, 1e-9, "ZeRO-1 vs data-parallel training");
        let flat = z.reshape(&[z.numel()]);
        let all = dist::all_gather(&flat, w).to_vec::<f64>();
        let mine = flat.to_vec::<f64>();
        for chunk in all.chunks(mine.len()) {
            assert!(
                chunk
                    .iter()
                    .zip(&mine)
                    .all(|(u, v)| u.to_bits() == v.to_bits()),
                "ZeRO-1 parameters differ across ranks"
            );
        }
    }
    for (a, b) in nabla::tree::leaves(&p)
        .iter()
        .zip(nabla::tree::leaves(&whole))
    {
        close(a, &b, 1e-6, "data-parallel vs full-batch training");
        // Bitwise the same on every rank: every rank's copy gathered.
        let flat = a.reshape(&[a.numel()]);
        let all = dist::all_gather(&flat, w).to_vec::<f64>();
        let mine = flat.to_vec::<f64>();
        for chunk in all.chunks(mine.len()) {
            assert!(
                chunk
                    .iter()
                    .zip(&mine)
                    .all(|(u, v)| u.to_bits() == v.to_bits()),
                "parameters differ across ranks"
            );
        }
    }
    let l = mlp_loss(&p, &x, &y).item();
    assert!(
        l < mlp_loss(&init(0), &x, &y).item(),
        "training lowers the loss"
    );
}

#[differentiable]
fn tp_loss(m: &ParallelMlp, x: &Array, #[nondiff] comm: Comm) -> Array {
    nabla::sum(&m.forward(x, comm).sin())
}

#[differentiable]
fn full_loss(m: &nn::Mlp, x: &Array) -> Array {
    nabla::sum(&m.forward(x).sin())
}

/// The tensor-parallel MLP against the unsharded one: values, the input's
/// gradient (whole on every rank) and each rank's parameter gradients
/// (its blocks of the unsharded ones).
pub(crate) fn tensor_parallel_mlp() {
    let (r, n, w) = (dist::rank(), dist::world_size(), Comm::world());
    let full = nn::Mlp {
        fc: linear(50, 5, 12),
        proj: linear(60, 12, 5),
    };
    let tp = ParallelMlp::shard(&full, w);
    let x = data(70, &[4, 5], DType::F64);
    close(
        &tp.forward(&x, w),
        &full.forward(&x),
        1e-12,
        "tensor-parallel MLP: value",
    );
    let (gm, gx) = grad!(tp_loss, argnums = (0, 1))(&tp, &x, w);
    let (fm, fx) = grad!(full_loss, argnums = (0, 1))(&full, &x);
    close(&gx, &fx, 1e-12, "tensor-parallel MLP: input gradient");
    let rows = |a: &Array| block(a, r, n);
    let cols = |a: &Array| block(&a.transpose(), r, n).transpose();
    close(
        &gm.fc.local.weight,
        &rows(&fm.fc.weight),
        1e-12,
        "fc weight gradient",
    );
    close(
        gm.fc.local.bias.as_ref().unwrap(),
        &rows(fm.fc.bias.as_ref().unwrap()),
        1e-12,
        "fc bias gradient",
    );
    close(
        &gm.proj.weight,
        &cols(&fm.proj.weight),
        1e-12,
        "proj weight gradient",
    );
    close(
        gm.proj.bias.as_ref().unwrap(),
        fm.proj.bias.as_ref().unwrap(),
        1e-12,
        "proj bias gradient",
    );
}

#[differentiable]
fn tp_attention_loss(m: &ParallelAttention, x: &Array, #[nondiff] comm: Comm) -> Array {
    nabla::sum(&m.forward(x, comm).sin())
}

#[differentiable]
fn full_attention_loss(m: &nn::MultiHeadAttention, x: &Array) -> Array {
    nabla::sum(&m.forward(x).sin())
}

/// The tensor-parallel attention block against the unsharded one (causal,
/// six heads: two or three per rank on 2 or 3 ranks).
pub(crate) fn tensor_parallel_attention() {
    let (r, n, w) = (dist::rank(), dist::world_size(), Comm::world());
    let c = 12;
    let full = nn::MultiHeadAttention {
        qkv: linear(80, c, 3 * c),
        proj: linear(90, c, c),
        heads: nabla::tree::Setting(6),
        causal: nabla::tree::Setting(true),
    };
    let tp = ParallelAttention::shard(&full, w);
    let x = data(95, &[2, 5, c], DType::F64);
    close(
        &tp.forward(&x, w),
        &full.forward(&x),
        1e-12,
        "tensor-parallel attention: value",
    );
    let (gm, gx) = grad!(tp_attention_loss, argnums = (0, 1))(&tp, &x, w);
    let (fm, fx) = grad!(full_attention_loss, argnums = (0, 1))(&full, &x);
    close(&gx, &fx, 1e-12, "tensor-parallel attention: input gradient");
    // This rank's rows of each of the query, key and value blocks.
    let pick = |a: &Array| {
        let parts: Vec<Array> = (0..3)
            .map(|k| block(&a.slice_axis(0, k * c..(k + 1) * c), r, n))
            .collect();
        nabla::concat(&parts, 0)
    };
    close(
        &gm.qkv.local.weight,
        &pick(&fm.qkv.weight),
        1e-12,
        "qkv weight gradient",
    );
    close(
        gm.qkv.local.bias.as_ref().unwrap(),
        &pick(fm.qkv.bias.as_ref().unwrap()),
        1e-12,
        "qkv bias gradient",
    );
    let cols = |a: &Array| block(&a.transpose(), r, n).transpose();
    close(
        &gm.proj.weight,
        &cols(&fm.proj.weight),
        1e-12,
        "attention proj weight gradient",
    );
    close(
        gm.proj.bias.as_ref().unwrap(),
        fm.proj.bias.as_ref().unwrap(),
        1e-12,
        "attention proj bias gradient",
    );
}
