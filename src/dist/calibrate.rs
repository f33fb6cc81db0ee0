//! [`calibrate`]: the planner's [`CostModel`] measured on the ranks of a
//! mesh: per mesh axis, the latency and bandwidth of its all-reduce (a
//! least-squares line through the times of a few sizes), and one rank's
//! matrix-product throughput.

use super::collectives::{Reduce, all_reduce};
use super::comm::{Comm, with};
use super::mesh::Mesh;
use super::moves::{Wire, wire_bytes};
use super::plan::CostModel;
use crate::{Array, DType, Device};
use mpi::collective::SystemOperation;
use mpi::traits::CommunicatorCollectives;
use std::time::Instant;

/// Elements (f32) of the all-reduces timed on each axis: 1 KiB to 4 MiB.
const SIZES: [usize; 5] = [256, 4096, 65_536, 262_144, 1 << 20];
/// Timed repetitions of each measurement (the fastest counts).
const REPS: usize = 5;

/// Measures the links and the arithmetic of `mesh`'s ranks (on the CPU)
/// for the planner: [`calibrate_on`] with [`Device::Cpu`].
///
/// ```standalone_crate
/// use nabla::dist::{self, Mesh};
/// let _mpi = dist::init();
/// let mesh = Mesh::new(&[("x", dist::world_size())]);
/// let model = dist::calibrate(&mesh);
/// assert!(model.flops_per_s > 0.0 && model.latency_s > 0.0 && model.bandwidth(0) > 0.0);
/// ```
#[track_caller]
pub fn calibrate(mesh: &Mesh) -> CostModel {
    calibrate_on(mesh, Device::Cpu)
}

/// Measures, on arrays on `device` (a GPU moves them over NCCL with
/// features `cuda` and `mpi`), what the planner's [`CostModel`] is made
/// of, and returns the same model on every rank. Every rank of the mesh
/// calls it.
///
/// - Per mesh axis of more than one rank: an all-reduce over the axis's
///   communicator of 1 KiB to 4 MiB (f32), fastest of five runs each,
///   and the line `time = latency + bytes / bandwidth` through them by
///   least squares (of relative errors), `bytes` counted as the planner counts them (what one
///   rank sends, `2b(n−1)/n`). A slope the noise makes non-positive
///   falls back to the largest size's bytes over its time.
/// - `latency_s`: the largest axis intercept, at least 1% of the
///   smallest time measured (an intercept can fall below zero in noise).
/// - `flops_per_s`: one rank's `matmul` of square f32 matrices (256 on
///   the CPU, 2048 on a GPU), `2n³` flops over its fastest time.
///
/// Ranks measure their own numbers; the model takes the slowest rank's
/// (an all-reduce max of the times per unit), so every rank plans alike.
/// An axis of one rank moves nothing; it gets the fastest measured
/// bandwidth (the default model's on a mesh of one rank, with its
/// latency). The all-reduces count in [`bytes_sent`](super::bytes_sent).
///
/// ```standalone_crate
/// use nabla::{Device, dist::{self, Mesh, Plan}};
/// let _mpi = dist::init();
/// let mesh = Mesh::new(&[("data", dist::world_size()), ("model", 1)]);
/// let device = if nabla::cuda::is_available() { Device::Cuda(0) } else { Device::Cpu };
/// let model = dist::calibrate_on(&mesh, device);
/// assert_eq!(model.bandwidth.len(), 2);
/// let plan = Plan::for_mesh(&[("data", 64), ("model", 8)]).cost_model(model).mlp(4096, &[1024, 1024]);
/// println!("{plan}");
/// ```
#[track_caller]
pub fn calibrate_on(mesh: &Mesh, device: Device) -> CostModel {
    let shape = mesh.shape();
    // Seconds per byte along each axis (0 where the axis has one rank),
    // then the latency, then seconds per flop: what the ranks' max is
    // taken of.
    let mut slow: Vec<f64> = Vec::with_capacity(shape.len() + 2);
    let mut latency: f64 = 0.0;
    for m in 0..shape.len() {
        let n = shape.size(m);
        if n == 1 {
            slow.push(0.0);
            continue;
        }
        let comm = mesh.axis_comm(m);
        let points: Vec<(f64, f64)> = SIZES
            .iter()
            .map(|&k| {
                let x = Array::ones(&[k], DType::F32).to_device(device);
                let t = fastest(comm, || all_reduce(&x, Reduce::Sum, comm));
                (wire_bytes(Wire::AllReduce, n, 4 * k) as f64, t)
            })
            .collect();
        let (a, b) = fit(&points);
        let (big_bytes, big_t) = points[points.len() - 1];
        slow.push(if b > 0.0 { b } else { big_t / big_bytes });
        let least = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
        latency = latency.max(a.clamp(0.01 * least, least));
    }
    slow.push(latency);
    let k = if device == Device::Cpu { 256 } else { 2048 };
    let a = Array::linspace(-1.0, 1.0, k * k, DType::F32)
        .reshape(&[k, k])
        .to_device(device);
    let t = fastest(mesh.comm(), || a.matmul(&a));
    slow.push(t / (2.0 * (k as f64).powi(3)));
    let slow = with(mesh.comm(), |c| {
        let mut out = vec![0.0f64; slow.len()];
        c.all_reduce_into(&slow[..], &mut out[..], SystemOperation::max());
        out
    });
    let default = CostModel::default();
    let per_byte = &slow[..shape.len()];
    let fastest_link = per_byte
        .iter()
        .filter(|&&s| s > 0.0)
        .map(|s| 1.0 / s)
        .fold(0.0, f64::max);
    let measured = fastest_link > 0.0;
    CostModel {
        flops_per_s: 1.0 / slow[shape.len() + 1],
        bandwidth: per_byte
            .iter()
            .map(|&s| match (s > 0.0, measured) {
                (true, _) => 1.0 / s,
                (false, true) => fastest_link,
                (false, false) => default.bandwidth(0),
            })
            .collect(),
        latency_s: if measured {
            slow[shape.len()]
        } else {
            default.latency_s
        },
    }
}

/// The fastest of [`REPS`] runs of `f` (after one untimed run), each
/// started together on the ranks of `comm` and ended when its result is
/// on the host.
fn fastest(comm: Comm, f: impl Fn() -> Array) -> f64 {
    let done = |y: &Array| y.slice_axis(0, 0..1).to_vec::<f32>();
    done(&f());
    (0..REPS)
        .map(|_| {
            comm.barrier();
            let start = Instant::now();
            done(&f());
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

/// The line `t = a + b·x` through `points` (`(x, t)`) of least squared
/// relative error (weights `1/t²`), so the small sizes, which fix the
/// latency, count as much as the large ones, which fix the bandwidth.
fn fit(points: &[(f64, f64)]) -> (f64, f64) {
    let w: Vec<f64> = points
        .iter()
        .map(|p| 1.0 / (p.1 * p.1).max(1e-300))
        .collect();
    let sw: f64 = w.iter().sum();
    let mean = |f: &dyn Fn(&(f64, f64)) -> f64| {
        points.iter().zip(&w).map(|(p, w)| w * f(p)).sum::<f64>() / sw
    };
    let (mx, mt) = (mean(&|p| p.0), mean(&|p| p.1));
    let sxx = mean(&|p| (p.0 - mx).powi(2));
    let sxt = mean(&|p| (p.0 - mx) * (p.1 - mt));
    let b = if sxx > 0.0 { sxt / sxx } else { 0.0 };
    (mt - b * mx, b)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_fit_recovers_a_line() {
        let pts: Vec<(f64, f64)> = [1e3, 1e4, 1e5, 1e6]
            .iter()
            .map(|&x| (x, 5e-6 + x / 2e9))
            .collect();
        let (a, b) = super::fit(&pts);
        assert!((a - 5e-6).abs() < 1e-12 && (1.0 / b - 2e9).abs() < 1.0);
    }
}
