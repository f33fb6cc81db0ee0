//! What each rank runs (ignored tests, started by `launch.rs` under
//! `mpirun`).

use nabla::dist::{self, Comm, Reduce};
use nabla::prelude::*;

/// Rank `q`'s input: every rank can build every rank's.
pub(crate) fn data(q: usize, shape: &[usize], dtype: DType) -> Array {
    let n: usize = shape.iter().product();
    let v = (0..n)
        .map(|i| (1.0 + 0.37 * i as f64 + 1.3 * q as f64).sin())
        .collect();
    Array::from_vec(v, shape).cast(dtype)
}

pub(crate) fn close(got: &Array, want: &Array, tol: f64, what: &str) {
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
pub(crate) fn block(x: &Array, j: usize, n: usize) -> Array {
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
/// process; the global directional derivative against central differences
/// (hand-rolled: the loss spans MPI ranks, which `check_grads` does not).
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

#[test]
#[ignore = "run under mpirun by the launcher tests"]
fn collectives() {
    let _mpi = dist::init();
    values(DType::F64, 1e-12);
    values(DType::F32, 1e-5);
    gradients();
    transforms();
    crate::parallel::data_parallel_training();
    crate::parallel::zero_with_mixed_dtypes();
    crate::parallel::overlapped_backward();
    crate::parallel::tensor_parallel_mlp();
    crate::parallel::tensor_parallel_attention();
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
fn dtypes_differ() {
    let _mpi = dist::init();
    let dtype = if dist::rank() == 0 {
        DType::F32
    } else {
        DType::F64
    };
    dist::all_reduce(&Array::ones(&[3], dtype), Reduce::Sum, Comm::world());
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
