//! What each rank runs (ignored tests, started by `launch.rs` under
//! `mpirun`).

use nabla::dist::{self, Comm, DataParallel, ParallelAttention, ParallelMlp, Reduce, Zero1};
use nabla::nn::{self, Linear};
use nabla::optim::{Adam, Optimizer};
use nabla::prelude::*;

/// Rank `q`'s input: every rank can build every rank's.
fn data(q: usize, shape: &[usize], dtype: DType) -> Array {
    let n: usize = shape.iter().product();
    let v = (0..n)
        .map(|i| (1.0 + 0.37 * i as f64 + 1.3 * q as f64).sin())
        .collect();
    Array::from_vec(v, shape).cast(dtype)
}

fn close(got: &Array, want: &Array, tol: f64, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    for (i, (a, b)) in got
        .to_vec::<f64>()
        .iter()
        .zip(want.to_vec::<f64>())
        .enumerate()
    {
        assert!(
            (a - b).abs() <= tol * b.abs().max(1.0),
            "{what}: element {i}: {a} vs {b} on rank {}",
            dist::rank()
        );
    }
}

/// Block `j` of `n` along the first axis.
fn block(x: &Array, j: usize, n: usize) -> Array {
    let b = x.shape()[0] / n;
    x.slice_axis(0, j * b..(j + 1) * b)
}

fn sum_all(xs: &[Array]) -> Array {
    xs[1..].iter().fold(xs[0].clone(), |a, b| &a + b)
}

/// Each collective against the same result built in one process.
fn values(dtype: DType, tol: f64) {
    let (r, n, w) = (dist::rank(), dist::world_size(), Comm::world());
    for shape in [vec![7], vec![3, 5], vec![0, 3]] {
        let xs: Vec<Array> = (0..n).map(|q| data(q, &shape, dtype)).collect();
        let x = &xs[r];
        let sum = sum_all(&xs);
        close(
            &dist::all_reduce(x, Reduce::Sum, w),
            &sum,
            tol,
            "all_reduce sum",
        );
        close(
            &dist::all_reduce(x, Reduce::Mean, w),
            &(&sum * (1.0 / n as f64)),
            tol,
            "all_reduce mean",
        );
        let max = xs[1..].iter().fold(xs[0].clone(), |a, b| a.maximum(b));
        close(
            &dist::all_reduce(x, Reduce::Max, w),
            &max,
            0.0,
            "all_reduce max",
        );
        close(
            &dist::all_gather(x, w),
            &nabla::concat(&xs, 0),
            0.0,
            "all_gather",
        );
        close(&dist::broadcast(x, n - 1, w), &xs[n - 1], 0.0, "broadcast");
    }
    for shape in [vec![3 * n, 5], vec![n], vec![0, 2]] {
        let xs: Vec<Array> = (0..n).map(|q| data(q, &shape, dtype)).collect();
        let x = &xs[r];
        let scattered = if shape[0] == 0 {
            xs[0].clone()
        } else {
            block(&sum_all(&xs), r, n)
        };
        close(
            &dist::reduce_scatter(x, w),
            &scattered,
            tol,
            "reduce_scatter",
        );
        let mine: Vec<Array> = xs
            .iter()
            .map(|xq| {
                if shape[0] == 0 {
                    xq.clone()
                } else {
                    block(xq, r, n)
                }
            })
            .collect();
        let want = if shape[0] == 0 {
            xs[0].clone()
        } else {
            nabla::concat(&mine, 0)
        };
        close(&dist::all_to_all(x, w), &want, 0.0, "all_to_all");
    }
}

/// Rank `q`'s loss weights.
fn weights(q: usize, shape: &[usize]) -> Array {
    data(q + 17, shape, DType::F64)
}

/// A loss through one collective on rank `r`: `Σ sin(c(x)) · w_r`.
#[differentiable]
fn through_all_reduce(x: &Array, w: &Array, #[nondiff] op: Reduce, #[nondiff] comm: Comm) -> Array {
    nabla::sum(&(dist::all_reduce(x, op, comm).sin() * w))
}

/// The same through `all_gather`.
#[differentiable]
fn through_all_gather(x: &Array, w: &Array, #[nondiff] comm: Comm) -> Array {
    nabla::sum(&(dist::all_gather(x, comm).sin() * w))
}

/// The same through `reduce_scatter`.
#[differentiable]
fn through_reduce_scatter(x: &Array, w: &Array, #[nondiff] comm: Comm) -> Array {
    nabla::sum(&(dist::reduce_scatter(x, comm).sin() * w))
}

/// The same through `all_to_all`.
#[differentiable]
fn through_all_to_all(x: &Array, w: &Array, #[nondiff] comm: Comm) -> Array {
    nabla::sum(&(dist::all_to_all(x, comm).sin() * w))
}

/// The same through `broadcast` from the last rank.
#[differentiable]
fn through_broadcast(x: &Array, w: &Array, #[nondiff] root: usize, #[nondiff] comm: Comm) -> Array {
    nabla::sum(&(dist::broadcast(x, root, comm).sin() * w))
}

/// Gradients: on rank `r`, the gradient of the ranks' summed losses in
/// `x_r`, three ways: `grad` of the generated code, the tape, and the
/// undistributed loss (every rank's inputs stacked) differentiated in one
/// process; the global directional derivative against central differences.
fn gradients() {
    let (r, n, w) = (dist::rank(), dist::world_size(), Comm::world());
    let shape = vec![2 * n, 3];
    let xs: Vec<Array> = (0..n).map(|q| data(q, &shape, DType::F64)).collect();
    let stacked = nabla::stack(&xs, 0);
    let x = xs[r].clone();
    type Local = Box<dyn Fn(&Array) -> Array>;
    // (name, this rank's loss, the output shape, the undistributed loss of
    // all ranks' stacked inputs, summed over ranks).
    let cases: Vec<(&str, Local, Vec<usize>, Local)> = vec![
        (
            "all_reduce sum",
            Box::new(move |x: &Array| {
                through_all_reduce(x, &weights(r, &shape_of(x)), Reduce::Sum, w)
            }),
            shape.clone(),
            Box::new(move |s: &Array| {
                let y = s.sum_axes(&[0], false).sin();
                (0..n).fold(Array::scalar(0.0f64), |a, q| {
                    &a + &nabla::sum(&(&y * &weights(q, &shape_of(&y))))
                })
            }),
        ),
        (
            "all_reduce mean",
            Box::new(move |x: &Array| {
                through_all_reduce(x, &weights(r, &shape_of(x)), Reduce::Mean, w)
            }),
            shape.clone(),
            Box::new(move |s: &Array| {
                let y = (s.sum_axes(&[0], false) * (1.0 / n as f64)).sin();
                (0..n).fold(Array::scalar(0.0f64), |a, q| {
                    &a + &nabla::sum(&(&y * &weights(q, &shape_of(&y))))
                })
            }),
        ),
        (
            "all_reduce max",
            Box::new(move |x: &Array| {
                through_all_reduce(x, &weights(r, &shape_of(x)), Reduce::Max, w)
            }),
            shape.clone(),
            Box::new(move |s: &Array| {
                let y = s.max_axes(&[0], false).sin();
                (0..n).fold(Array::scalar(0.0f64), |a, q| {
                    &a + &nabla::sum(&(&y * &weights(q, &shape_of(&y))))
                })
            }),
        ),
        (
            "all_gather",
            Box::new(move |x: &Array| through_all_gather(x, &weights(r, &[2 * n * n, 3]), w)),
            shape.clone(),
            Box::new(move |s: &Array| {
                let y = s.reshape(&[2 * n * n, 3]).sin();
                (0..n).fold(Array::scalar(0.0f64), |a, q| {
                    &a + &nabla::sum(&(&y * &weights(q, &[2 * n * n, 3])))
                })
            }),
        ),
        (
            "reduce_scatter",
            Box::new(move |x: &Array| through_reduce_scatter(x, &weights(r, &[2, 3]), w)),
            shape.clone(),
            Box::new(move |s: &Array| {
                let total = s.sum_axes(&[0], false);
                (0..n).fold(Array::scalar(0.0f64), |a, q| {
                    &a + &nabla::sum(&(block(&total, q, n).sin() * weights(q, &[2, 3])))
                })
            }),
        ),
        (
            "all_to_all",
            Box::new(move |x: &Array| through_all_to_all(x, &weights(r, &[2 * n, 3]), w)),
            shape.clone(),
            Box::new(move |s: &Array| {
                (0..n).fold(Array::scalar(0.0f64), |a, q| {
                    let parts: Vec<Array> = (0..n)
                        .map(|p| block(&s.slice_axis(0, p..p + 1).reshape(&[2 * n, 3]), q, n))
                        .collect();
                    &a + &nabla::sum(&(nabla::concat(&parts, 0).sin() * weights(q, &[2 * n, 3])))
                })
            }),
        ),
        (
            "broadcast",
            Box::new(move |x: &Array| through_broadcast(x, &weights(r, &shape_of(x)), n - 1, w)),
            shape.clone(),
            Box::new(move |s: &Array| {
                let y = s.slice_axis(0, n - 1..n).reshape(&[2 * n, 3]).sin();
                (0..n).fold(Array::scalar(0.0f64), |a, q| {
                    &a + &nabla::sum(&(&y * &weights(q, &[2 * n, 3])))
                })
            }),
        ),
    ];
    let _ = &shape;
    for (name, local, _, whole) in &cases {
        // The undistributed gradient, row r of the stacked inputs.
        let ts = stacked.clone().requires_grad();
        whole(&ts).backward();
        let want = ts.grad().slice_axis(0, r..r + 1).reshape(x.shape());
        // The tape.
        let tx = x.clone().requires_grad();
        local(&tx).backward();
        close(
            &tx.grad(),
            &want,
            1e-12,
            &format!("{name}: tape vs undistributed"),
        );
        // Central differences of the global loss along v (each rank its v_r).
        let v = data(r + 40, x.shape(), DType::F64);
        let h = 1e-6;
        let global = |x: &Array| {
            dist::all_reduce(&local(x).reshape(&[1]), Reduce::Sum, w).to_vec::<f64>()[0]
        };
        let fd = (global(&(&x + &(&v * h))) - global(&(&x - &(&v * h)))) / (2.0 * h);
        let mine = nabla::sum(&(&tx.grad() * &v)).reshape(&[1]);
        let dd = dist::all_reduce(&mine, Reduce::Sum, w).to_vec::<f64>()[0];
        assert!(
            (fd - dd).abs() <= 1e-7 * dd.abs().max(1.0),
            "{name}: directional derivative {dd} vs central differences {fd}"
        );
    }
}

fn shape_of(x: &Array) -> Vec<usize> {
    x.shape().to_vec()
}

/// `grad` of generated code and `jvp` through a collective.
fn transforms() {
    let (r, n, w) = (dist::rank(), dist::world_size(), Comm::world());
    let xs: Vec<Array> = (0..n).map(|q| data(q, &[4], DType::F64)).collect();
    let x = &xs[r];
    let wr = weights(r, &[4]);
    let total: Array = (0..n).fold(Array::zeros(&[4], DType::F64), |a, q| {
        &a + &weights(q, &[4])
    });
    let s = sum_all(&xs);
    // grad: cos(S) · Σ_q w_q.
    let g = grad(through_all_reduce)(x, &wr, Reduce::Sum, w);
    close(&g, &(s.cos() * &total), 1e-12, "grad through all_reduce");
    // jvp in the direction v_r on every rank: Σ_q v_q · cos(S) · w_r.
    let v = data(r + 40, &[4], DType::F64);
    let vs: Vec<Array> = (0..n).map(|q| data(q + 40, &[4], DType::F64)).collect();
    let (_, t) = jvp(through_all_reduce)((x, &wr, Reduce::Sum, w), (&v, &wr.zeros_like()));
    let want = nabla::sum(&(sum_all(&vs) * s.cos() * &wr));
    close(&t, &want, 1e-12, "jvp through all_reduce");
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

/// 50 Adam steps: data-parallel (each rank a shard of the 12-row batch,
/// gradients averaged in buckets of one leaf) against the same steps on
/// the full batch in one process; every rank's parameters bitwise equal.
fn data_parallel_training() {
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
fn tensor_parallel_mlp() {
    let (r, n, w) = (dist::rank(), dist::world_size(), Comm::world());
    let layer = |seed: usize, i: usize, o: usize| Linear {
        weight: data(seed, &[o, i], DType::F64),
        bias: Some(data(seed + 1, &[o], DType::F64)),
    };
    let full = nn::Mlp {
        fc: layer(50, 5, 12),
        proj: layer(60, 12, 5),
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
fn tensor_parallel_attention() {
    let (r, n, w) = (dist::rank(), dist::world_size(), Comm::world());
    let c = 12;
    let layer = |seed: usize, i: usize, o: usize| Linear {
        weight: data(seed, &[o, i], DType::F64),
        bias: Some(data(seed + 1, &[o], DType::F64)),
    };
    let full = nn::MultiHeadAttention {
        qkv: layer(80, c, 3 * c),
        proj: layer(90, c, c),
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

#[test]
#[ignore = "run under mpirun by the launcher tests"]
fn collectives() {
    let _mpi = dist::init();
    values(DType::F64, 1e-12);
    values(DType::F32, 1e-5);
    gradients();
    transforms();
    data_parallel_training();
    tensor_parallel_mlp();
    tensor_parallel_attention();
    // Sub-groups: the even and the odd ranks each sum their own.
    let world = Comm::world();
    let (r, n) = (world.rank(), world.size());
    let half = world.split(r % 2, r);
    let x = Array::from_vec(vec![r as f64], &[1]);
    let want: f64 = (0..n).filter(|q| q % 2 == r % 2).map(|q| q as f64).sum();
    close(
        &dist::all_reduce(&x, Reduce::Sum, half),
        &Array::from_vec(vec![want], &[1]),
        0.0,
        "split",
    );
    world.barrier();
}

#[test]
#[ignore = "run under mpirun by the launcher tests"]
fn one_rank_panics() {
    let _mpi = dist::init();
    if dist::rank() == 1 {
        panic!("rank 1 gives up here");
    }
    // The others wait in a collective that rank 1 never joins.
    let x = Array::ones(&[3], DType::F64);
    let _ = dist::all_reduce(&x, Reduce::Sum, Comm::world());
    std::thread::sleep(std::time::Duration::from_secs(120));
}

#[test]
#[ignore = "run under mpirun by the launcher tests"]
fn shapes_differ() {
    let _mpi = dist::init();
    let x = Array::ones(&[2 + dist::rank()], DType::F64);
    let _ = dist::all_reduce(&x, Reduce::Sum, Comm::world());
}

#[test]
#[ignore = "run under mpirun by the launcher tests"]
fn one_rank_exits() {
    let _mpi = dist::init();
    if dist::rank() == 1 {
        std::process::exit(3);
    }
    let x = Array::ones(&[3], DType::F64);
    let _ = dist::all_reduce(&x, Reduce::Sum, Comm::world());
    std::thread::sleep(std::time::Duration::from_secs(120));
}
