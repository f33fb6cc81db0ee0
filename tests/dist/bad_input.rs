//! Layout mistakes on every rank: each worker makes one, and `launch.rs`
//! checks that the job ends (no rank left waiting) with a message naming
//! the mistake and the fix.

use nabla::Value;
use nabla::dist::{self, Mesh, Spec};
use nabla::prelude::*;

#[test]
#[ignore = "run by launch.rs under mpirun"]
fn missing_mesh_axis() {
    let _mpi = dist::init();
    let mesh = Mesh::new(&[("data", dist::world_size())]);
    dist::distribute(
        &Array::ones(&[4], DType::F64),
        &mesh,
        &Spec::new(&[Some("model")]),
    );
}

#[test]
#[ignore = "run by launch.rs under mpirun"]
fn axis_split_twice() {
    let _mpi = dist::init();
    let mesh = Mesh::new(&[("data", dist::world_size())]);
    let x = Array::ones(&[4, 4], DType::F64);
    dist::distribute(&x, &mesh, &Spec::new(&[Some("data"), Some("data")]));
}

#[test]
#[ignore = "run by launch.rs under mpirun"]
fn uneven_split() {
    let _mpi = dist::init();
    let n = dist::world_size();
    let mesh = Mesh::new(&[("data", n)]);
    dist::distribute(
        &Array::ones(&[2 * n + 1, 2], DType::F64),
        &mesh,
        &Spec::new(&[Some("data"), None]),
    );
}

#[test]
#[ignore = "run by launch.rs under mpirun"]
fn two_meshes_in_one_op() {
    let _mpi = dist::init();
    let n = dist::world_size();
    let (a, b) = (Mesh::new(&[("data", n)]), Mesh::new(&[("model", n)]));
    let x = dist::distribute(
        &Array::ones(&[2 * n], DType::F64),
        &a,
        &Spec::new(&[Some("data")]),
    );
    let y = dist::distribute(&Array::ones(&[2 * n], DType::F64), &b, &Spec::new(&[None]));
    let _ = x.add(&y);
}

#[test]
#[ignore = "run by launch.rs under mpirun"]
fn mesh_not_the_world() {
    let _mpi = dist::init();
    Mesh::new(&[("data", dist::world_size() + 1)]);
}

#[test]
#[ignore = "run by launch.rs under mpirun"]
fn ranks_that_plan_differently() {
    let _mpi = dist::init();
    let n = dist::world_size();
    let mesh = Mesh::new(&[("data", n)]);
    // Rank 0 believes arithmetic is slow (split the batch), the others
    // that it is free (keep everything whole).
    let model = if dist::rank() == 0 {
        dist::CostModel::uniform(1e6, 1e10, 1e-9)
    } else {
        dist::CostModel::uniform(1e15, 1e6, 1e-3)
    };
    let a = dist::auto(super::spmd::mlp_loss, &mesh).cost_model(model);
    let (w1, w2) = (
        super::spmd::data(&[6, 8], 0.1),
        super::spmd::data(&[8, 3], 0.2),
    );
    let (x, y) = (
        super::spmd::data(&[16, 6], 0.3),
        super::spmd::data(&[16, 3], 0.4),
    );
    let _ = nabla::grad(a)(&w1, &w2, &x, &y);
}
