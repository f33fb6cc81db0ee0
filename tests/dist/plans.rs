//! Plans reused (`dist::spmd_with`): a plan made without MPI, saved and
//! loaded as JSON, runs with the results and bytes of `auto`; a plan of
//! other choices runs as it says; a plan for another program panics on
//! every rank. And `dist::calibrate`: the same positive, finite model on
//! every rank, which `auto` plans with.

use super::spmd::{close, data, mlp_loss};
use nabla::dist::{self, Comm, CostModel, Mesh, Plan};
use nabla::prelude::*;

fn meshes() -> Vec<Mesh> {
    let n = dist::world_size();
    let mut out = vec![Mesh::new(&[("x", n)])];
    if n == 4 {
        out.push(Mesh::new(&[("data", 2), ("model", 2)]));
    }
    out
}

fn args() -> (Array, Array, Array, Array) {
    let n = dist::world_size();
    (
        data(&[6, 4 * n], 0.2) - 1.0,
        data(&[4 * n, 3], 0.5) - 1.0,
        data(&[8 * n, 6], 0.8),
        data(&[8 * n, 3], 1.1),
    )
}

/// A planner for `mesh`'s axes.
fn planner(mesh: &Mesh) -> nabla::dist::Planner {
    let ms = mesh.shape();
    let axes: Vec<(&str, usize)> = ms.axes().collect();
    Plan::for_mesh(&axes)
}

/// The plan through JSON and a file (each rank its own).
fn through_json(plan: &Plan, tag: &str) -> Plan {
    let path = std::env::temp_dir().join(format!(
        "nabla-dist-plan-{}-{}-{tag}.json",
        std::process::id(),
        dist::rank()
    ));
    plan.save(&path).unwrap();
    let back = Plan::load(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(&back, plan, "{tag}: the plan through JSON");
    back
}

#[test]
#[ignore = "run by launch.rs under mpirun"]
fn given_plans() {
    let _mpi = dist::init();
    let (w1, w2, x, y) = args();
    let all = (&w1, &w2, &x, &y);
    let (l1, g1) = nabla::value_and_grad(mlp_loss)(&w1, &w2, &x, &y);
    for mesh in meshes() {
        // Slow arithmetic and fast links: splitting the work pays.
        let model = CostModel::uniform(1e6, 1e10, 1e-9);
        let a = dist::auto(mlp_loss, &mesh).cost_model(model.clone());
        nabla::value_and_grad(a)(&w1, &w2, &x, &y);
        let before = dist::bytes_sent();
        let (la, ga) = nabla::value_and_grad(a)(&w1, &w2, &x, &y);
        let auto_sent = dist::bytes_sent() - before;
        let auto_plan = a.plan();

        let made = planner(&mesh)
            .cost_model(model)
            .function(nabla::value_and_grad(mlp_loss), all);
        let plan = through_json(&made, "step");
        let s = dist::spmd_with(mlp_loss, &mesh, &plan);
        let before = dist::bytes_sent();
        let (ls, gs) = nabla::value_and_grad(s)(&w1, &w2, &x, &y);
        let sent = dist::bytes_sent() - before;
        close(&ls, &la, "spmd_with vs auto: loss");
        close(&gs, &ga, "spmd_with vs auto: gradient");
        close(&ls, &l1, "spmd_with: loss");
        close(&gs, &g1, "spmd_with: gradient");
        assert_eq!(sent, auto_sent, "bytes of spmd_with vs auto:\n{plan}");
        assert_eq!(sent, plan.bytes_per_call(), "bytes vs the plan:\n{plan}");
        assert_eq!(plan.bytes_per_call(), auto_plan.bytes_per_call());
        assert_eq!(plan.input_specs(), auto_plan.input_specs());
        assert!(sent > 0, "{plan}");
        assert_eq!(s.plan(), plan);

        // A plan of other choices than planning now would make runs as
        // it says.
        let other = planner(&mesh)
            .cost_model(CostModel::uniform(1e6, 1e10, 1e-9))
            .function(nabla::grad(mlp_loss), all);
        let other = through_json(&other, "grad");
        // What planning now (the default model) would send differs, so
        // the bytes below tell which plan ran.
        let now = planner(&mesh).function(nabla::grad(mlp_loss), all);
        assert_ne!(
            now.bytes_per_call(),
            other.bytes_per_call(),
            "{now}\n{other}"
        );
        let s = dist::spmd_with(mlp_loss, &mesh, &other);
        let before = dist::bytes_sent();
        let g = nabla::grad(s)(&w1, &w2, &x, &y);
        let sent = dist::bytes_sent() - before;
        close(&g, &g1, "spmd_with a grad plan: gradient");
        assert_eq!(sent, other.bytes_per_call(), "bytes vs the plan:\n{other}");
        if dist::rank() == 0 {
            println!("{plan}\n{other}");
        }
    }
}

/// A plan of `value_and_grad(mlp_loss)` given to a plain call.
#[test]
#[ignore = "run by launch.rs under mpirun (it panics)"]
fn plan_for_another_program() {
    let _mpi = dist::init();
    let (w1, w2, x, y) = args();
    let all = (&w1, &w2, &x, &y);
    let mesh = Mesh::new(&[("x", dist::world_size())]);
    let plan = planner(&mesh).function(nabla::value_and_grad(mlp_loss), all);
    let s = dist::spmd_with(mlp_loss, &mesh, &plan);
    s(&w1, &w2, &x, &y);
}

#[test]
#[ignore = "run by launch.rs under mpirun"]
fn calibration() {
    let _mpi = dist::init();
    let (w1, w2, x, y) = args();
    let (l1, g1) = nabla::value_and_grad(mlp_loss)(&w1, &w2, &x, &y);
    for mesh in meshes() {
        let m = dist::calibrate(&mesh);
        let nums: Vec<f64> = [m.flops_per_s, m.latency_s]
            .into_iter()
            .chain(m.bandwidth.iter().copied())
            .collect();
        assert_eq!(m.bandwidth.len(), mesh.shape().len());
        for v in &nums {
            assert!(v.is_finite() && *v > 0.0, "{m:?}");
        }
        // Every rank has the same numbers, to the bit.
        let mine = Array::from_vec(nums.clone(), &[1, nums.len()]);
        let every = dist::all_gather(&mine, Comm::world());
        for r in 0..dist::world_size() {
            let theirs = every.slice_axis(0, r..r + 1).to_vec::<f64>();
            assert_eq!(theirs, nums, "rank {r} vs rank {}", dist::rank());
        }
        let a = dist::auto(mlp_loss, &mesh).cost_model(m.clone());
        let (l, g) = nabla::value_and_grad(a)(&w1, &w2, &x, &y);
        close(&l, &l1, "auto with a calibrated model: loss");
        close(&g, &g1, "auto with a calibrated model: gradient");
        if dist::rank() == 0 {
            println!(
                "calibrated on {}: {:.3e} flop/s, latency {:.2} µs, bandwidth {:?} GB/s",
                mesh.shape(),
                m.flops_per_s,
                m.latency_s * 1e6,
                m.bandwidth.iter().map(|b| b / 1e9).collect::<Vec<_>>()
            );
        }
    }
}
