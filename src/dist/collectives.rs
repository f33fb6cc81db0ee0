//! The collectives on arrays, each a custom op (`#[custom_op]`), so they
//! run on the tape, in `#[differentiable]` code, under `jvp` and `grad`.
//!
//! Every rank runs the same program, so the reverse sweep calls the
//! transposed collectives in the same order on every rank. Gradients follow
//! JAX's convention for collectives: the quantity differentiated is the sum
//! over ranks of each rank's output, so a rank's cotangent of an input
//! collects the cotangents every rank holds (the transpose of `all_reduce`
//! sums is `all_reduce` sums, of `all_gather` is `reduce_scatter`, of
//! `all_to_all` is `all_to_all`).

use super::comm::{Comm, with};
use super::flat::{Wire as Element, width};
use super::moves::{Wire, count};
use crate::custom::cpu_kernel;
use crate::{Array, ArrayValue, DType, Device, Value};
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, CommunicatorCollectives, Root};
#[cfg(feature = "cuda")]
use nabla_runtime::cuda::raw::{self, GpuArray, Nccl, NcclReduce};

/// How [`all_reduce`] combines the ranks' arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduce {
    /// Elementwise sum.
    Sum,
    /// Elementwise mean over the ranks.
    Mean,
    /// Elementwise maximum (the derivative goes to the ranks that attain
    /// it, shared equally on ties).
    Max,
}

/// One collective: on row-major host elements over MPI and, with feature
/// `cuda`, on a device array over NCCL.
trait Exchange {
    /// Its kind, for the byte count.
    const WIRE: Wire;
    fn run<T: Element>(&self, c: &SimpleCommunicator, v: &[T], out: &mut [T]);
    #[cfg(feature = "cuda")]
    fn gpu(&self, nccl: &Nccl, x: &GpuArray) -> GpuArray;
}

/// How this rank's `x` travels: 0 host array, 1 GPU array through the
/// host, 2 GPU array over NCCL (every rank must agree).
fn path(x: &Array) -> u64 {
    match x.device() {
        Device::Cpu => 0,
        #[cfg(feature = "cuda")]
        Device::Cuda(_) if super::nccl::enabled() => 2,
        Device::Cuda(_) => 1,
    }
}

/// Checks that every rank passes the same dtype and shape (a clear panic
/// on every rank otherwise), then runs `ex` on `x`'s elements on the host
/// (read in place when contiguous) and returns `shape` on `x`'s device.
#[track_caller]
fn exchange<E: Exchange>(name: &str, x: &Array, comm: Comm, shape: &[usize], ex: &E) -> Array {
    agree(name, x, comm);
    count(E::WIRE, comm.size(), x.numel() * width(x.dtype()));
    #[cfg(feature = "cuda")]
    if path(x) == 2 {
        let g = raw::gpu_array(x).expect("a GPU array");
        let nccl = super::nccl::communicator(comm, g);
        return raw::from_gpu_array(ex.gpu(&nccl, g));
    }
    let device = x.device();
    let host = x.to_device(Device::Cpu);
    let out = match x.dtype() {
        DType::F32 => cpu_kernel::<f32>(&[&host], shape, |ins, out| {
            with(comm, |c| ex.run(c, ins[0].as_slice(), out))
        }),
        DType::F64 => cpu_kernel::<f64>(&[&host], shape, |ins, out| {
            with(comm, |c| ex.run(c, ins[0].as_slice(), out))
        }),
        d => panic!(
            "nabla::dist::{name}: takes f32 or f64 arrays, got {d:?}; cast first (x.cast(DType::F32))"
        ),
    };
    if device == Device::Cpu {
        out
    } else {
        out.to_device(device)
    }
}

/// Every rank's dtype and shape, compared: a mismatch panics on every rank
/// with all of them listed (no rank is left waiting in the collective).
#[track_caller]
fn agree(name: &str, x: &Array, comm: Comm) {
    // dtype and path, rank count, then the first eight dimensions (more
    // fold into the last slot).
    const SLOTS: usize = 10;
    let mut mine = [0u64; SLOTS];
    mine[0] = x.dtype() as u64 | path(x) << 8;
    mine[1] = x.ndim() as u64;
    for (k, &d) in x.shape().iter().enumerate() {
        let slot = (2 + k).min(SLOTS - 1);
        mine[slot] = mine[slot].wrapping_mul(1_000_003).wrapping_add(d as u64);
    }
    let all = with(comm, |c| {
        let mut all = vec![0u64; SLOTS * c.size() as usize];
        c.all_gather_into(&mine[..], &mut all[..]);
        all
    });
    if all.chunks(SLOTS).any(|r| r != mine) {
        let ranks: Vec<String> = all
            .chunks(SLOTS)
            .enumerate()
            .map(|(q, r)| {
                // Axes past the eighth are folded into one slot: shown as "…".
                let nd = r[1] as usize;
                let exact = if nd > SLOTS - 2 { SLOTS - 3 } else { nd };
                let mut dims: Vec<String> = r[2..2 + exact].iter().map(u64::to_string).collect();
                if nd > exact {
                    dims.push(format!("… ({nd} axes)"));
                }
                let dims = format!("[{}]", dims.join(", "));
                let dtype = [DType::F32, DType::F64, DType::I64, DType::Bool]
                    .into_iter()
                    .find(|&d| d as u64 == r[0] & 0xff);
                let dtype = dtype.map_or_else(|| "?".to_string(), |d| format!("{d:?}"));
                let on = ["cpu", "gpu via the host", "gpu via NCCL"][(r[0] >> 8).min(2) as usize];
                format!("rank {q}: {dtype} {dims} on {on}")
            })
            .collect();
        panic!(
            "nabla::dist::{name}: the ranks passed arrays of different dtypes, shapes or devices ({}); every rank must pass the same dtype and shape, all on the CPU or all on GPUs",
            ranks.join(", ")
        );
    }
}

fn system(op: Reduce) -> SystemOperation {
    match op {
        Reduce::Sum | Reduce::Mean => SystemOperation::sum(),
        Reduce::Max => SystemOperation::max(),
    }
}

struct AllReduce(Reduce);
impl Exchange for AllReduce {
    const WIRE: Wire = Wire::AllReduce;
    fn run<T: Element>(&self, c: &SimpleCommunicator, v: &[T], out: &mut [T]) {
        c.all_reduce_into(v, out, system(self.0));
    }
    #[cfg(feature = "cuda")]
    fn gpu(&self, nccl: &Nccl, x: &GpuArray) -> GpuArray {
        let op = match self.0 {
            Reduce::Sum | Reduce::Mean => NcclReduce::Sum,
            Reduce::Max => NcclReduce::Max,
        };
        nccl.all_reduce(x, op)
    }
}

struct AllGather;
impl Exchange for AllGather {
    const WIRE: Wire = Wire::AllGather;
    fn run<T: Element>(&self, c: &SimpleCommunicator, v: &[T], out: &mut [T]) {
        c.all_gather_into(v, out);
    }
    #[cfg(feature = "cuda")]
    fn gpu(&self, nccl: &Nccl, x: &GpuArray) -> GpuArray {
        nccl.all_gather(x)
    }
}

struct ReduceScatter;
impl Exchange for ReduceScatter {
    const WIRE: Wire = Wire::ReduceScatter;
    fn run<T: Element>(&self, c: &SimpleCommunicator, v: &[T], out: &mut [T]) {
        c.reduce_scatter_block_into(v, out, SystemOperation::sum());
    }
    #[cfg(feature = "cuda")]
    fn gpu(&self, nccl: &Nccl, x: &GpuArray) -> GpuArray {
        nccl.reduce_scatter(x)
    }
}

struct AllToAll;
impl Exchange for AllToAll {
    const WIRE: Wire = Wire::AllToAll;
    fn run<T: Element>(&self, c: &SimpleCommunicator, v: &[T], out: &mut [T]) {
        c.all_to_all_into(v, out);
    }
    #[cfg(feature = "cuda")]
    fn gpu(&self, nccl: &Nccl, x: &GpuArray) -> GpuArray {
        nccl.all_to_all(x)
    }
}

struct Broadcast(usize);
impl Exchange for Broadcast {
    const WIRE: Wire = Wire::Broadcast;
    fn run<T: Element>(&self, c: &SimpleCommunicator, v: &[T], out: &mut [T]) {
        out.copy_from_slice(v);
        c.process_at_rank(self.0 as i32).broadcast_into(out);
    }
    #[cfg(feature = "cuda")]
    fn gpu(&self, nccl: &Nccl, x: &GpuArray) -> GpuArray {
        nccl.broadcast(x, self.0)
    }
}

/// The first axis split into `parts` equal blocks, or a panic naming the op.
#[track_caller]
fn blocks(name: &str, x: &Array, parts: usize) -> Vec<usize> {
    let Some(&d0) = x.shape().first() else {
        panic!(
            "nabla::dist::{name}: needs an array with at least one axis, got a scalar; reshape it to [1]"
        )
    };
    if !d0.is_multiple_of(parts) {
        panic!(
            "nabla::dist::{name}: the first axis ({d0}, shape {:?}) must split evenly over the {parts} ranks; pad it to a multiple of {parts}",
            x.shape()
        );
    }
    let mut s = x.shape().to_vec();
    s[0] = d0 / parts;
    s
}

/// Combines every rank's `x` elementwise ([`Reduce::Sum`], `Mean` or
/// `Max`); every rank gets the result (`MPI_Allreduce`). Differentiable:
/// the transpose of a sum is a sum of the cotangents, of a mean their mean.
///
/// ```standalone_crate
/// use nabla::{Array, dist::{self, Comm, Reduce}};
/// let _mpi = dist::init();
/// let x = Array::from_vec(vec![dist::rank() as f64], &[1]);
/// let total = dist::all_reduce(&x, Reduce::Sum, Comm::world());
/// let n = dist::world_size() as f64;
/// assert_eq!(total.to_vec::<f64>(), vec![n * (n - 1.0) / 2.0]);
/// ```
#[crate::custom_op(jvp = all_reduce_jvp, vjp = all_reduce_vjp)]
pub fn all_reduce(x: &Array, op: Reduce, comm: Comm) -> Array {
    let y = exchange("all_reduce", x, comm, x.shape(), &AllReduce(op));
    if op == Reduce::Mean {
        y.mul_scalar(1.0 / comm.size() as f64)
    } else {
        y
    }
}

/// Where `x` attains the ranks' maximum `y`, over how many ranks do.
fn max_weights<V: ArrayValue>(x: &V, y: &V, comm: Comm) -> V {
    let hit = x.cmp_mask(y, crate::CompareOp::Eq);
    let count = all_reduce::forward::<V>(&hit, Reduce::Sum, comm);
    hit.div(&count)
}

fn all_reduce_jvp<V: ArrayValue>(x: &V, y: &V, dx: Option<&V>, op: Reduce, comm: Comm) -> V {
    let Some(dx) = dx else {
        return y.zeros_like();
    };
    match op {
        Reduce::Sum | Reduce::Mean => all_reduce::forward::<V>(dx, op, comm),
        Reduce::Max => {
            all_reduce::forward::<V>(&dx.mul(&max_weights(x, y, comm)), Reduce::Sum, comm)
        }
    }
}

fn all_reduce_vjp<V: ArrayValue>(x: &V, y: &V, ct: &V, op: Reduce, comm: Comm) -> V {
    match op {
        Reduce::Sum | Reduce::Mean => all_reduce::forward::<V>(ct, op, comm),
        Reduce::Max => {
            all_reduce::forward::<V>(ct, Reduce::Sum, comm).mul(&max_weights(x, y, comm))
        }
    }
}

/// Every rank's `x` concatenated along the first axis, in rank order, on
/// every rank (`MPI_Allgather`). Differentiable: the transpose is
/// [`reduce_scatter`].
///
/// ```standalone_crate
/// use nabla::{Array, dist::{self, Comm}};
/// let _mpi = dist::init();
/// let x = Array::from_vec(vec![dist::rank() as f32], &[1]);
/// let all = dist::all_gather(&x, Comm::world());
/// assert_eq!(all.shape(), &[dist::world_size()]);
/// ```
#[crate::custom_op(jvp = all_gather_jvp, vjp = all_gather_vjp)]
pub fn all_gather(x: &Array, comm: Comm) -> Array {
    let Some(&d0) = x.shape().first() else {
        panic!(
            "nabla::dist::all_gather: needs an array with at least one axis, got a scalar; reshape it to [1]"
        )
    };
    let mut shape = x.shape().to_vec();
    shape[0] = d0 * comm.size();
    exchange("all_gather", x, comm, &shape, &AllGather)
}

fn all_gather_jvp<V: ArrayValue>(_x: &V, y: &V, dx: Option<&V>, comm: Comm) -> V {
    dx.map_or_else(|| y.zeros_like(), |d| all_gather::forward::<V>(d, comm))
}

fn all_gather_vjp<V: ArrayValue>(_x: &V, _y: &V, ct: &V, comm: Comm) -> V {
    reduce_scatter::forward::<V>(ct, comm)
}

/// The ranks' arrays summed, then split along the first axis: rank `r`
/// gets block `r` (`MPI_Reduce_scatter_block`). The first axis must split
/// evenly over the ranks. Differentiable: the transpose is [`all_gather`].
///
/// ```standalone_crate
/// use nabla::{Array, dist::{self, Comm}};
/// let _mpi = dist::init();
/// let n = dist::world_size();
/// let x = Array::ones(&[2 * n], nabla::DType::F64);
/// let mine = dist::reduce_scatter(&x, Comm::world());
/// assert_eq!(mine.to_vec::<f64>(), vec![n as f64; 2]);
/// ```
#[crate::custom_op(jvp = reduce_scatter_jvp, vjp = reduce_scatter_vjp)]
pub fn reduce_scatter(x: &Array, comm: Comm) -> Array {
    let shape = blocks("reduce_scatter", x, comm.size());
    exchange("reduce_scatter", x, comm, &shape, &ReduceScatter)
}

fn reduce_scatter_jvp<V: ArrayValue>(_x: &V, y: &V, dx: Option<&V>, comm: Comm) -> V {
    dx.map_or_else(|| y.zeros_like(), |d| reduce_scatter::forward::<V>(d, comm))
}

fn reduce_scatter_vjp<V: ArrayValue>(_x: &V, _y: &V, ct: &V, comm: Comm) -> V {
    all_gather::forward::<V>(ct, comm)
}

/// The first axis split into one block per rank; block `j` goes to rank
/// `j`, and each rank concatenates what it receives in rank order
/// (`MPI_Alltoall`). Differentiable: its own transpose.
///
/// ```standalone_crate
/// use nabla::{Array, dist::{self, Comm}};
/// let _mpi = dist::init();
/// let n = dist::world_size();
/// let x = Array::full(&[n], dist::rank() as f64, nabla::DType::F64);
/// let got = dist::all_to_all(&x, Comm::world());
/// assert_eq!(got.to_vec::<f64>(), (0..n).map(|r| r as f64).collect::<Vec<_>>());
/// ```
#[crate::custom_op(jvp = all_to_all_jvp, vjp = all_to_all_vjp)]
pub fn all_to_all(x: &Array, comm: Comm) -> Array {
    blocks("all_to_all", x, comm.size());
    exchange("all_to_all", x, comm, x.shape(), &AllToAll)
}

fn all_to_all_jvp<V: ArrayValue>(_x: &V, y: &V, dx: Option<&V>, comm: Comm) -> V {
    dx.map_or_else(|| y.zeros_like(), |d| all_to_all::forward::<V>(d, comm))
}

fn all_to_all_vjp<V: ArrayValue>(_x: &V, _y: &V, ct: &V, comm: Comm) -> V {
    all_to_all::forward::<V>(ct, comm)
}

/// Rank `root`'s `x` on every rank (`MPI_Bcast`); the other ranks pass an
/// array of the same dtype and shape, whose values are ignored.
/// Differentiable: the transpose sums the ranks' cotangents into `root`'s
/// (the others' inputs get zero).
///
/// ```standalone_crate
/// use nabla::{Array, dist::{self, Comm}};
/// let _mpi = dist::init();
/// let x = Array::from_vec(vec![dist::rank() as f64 + 1.0], &[1]);
/// assert_eq!(dist::broadcast(&x, 0, Comm::world()).to_vec::<f64>(), vec![1.0]);
/// ```
#[crate::custom_op(jvp = broadcast_jvp, vjp = broadcast_vjp)]
pub fn broadcast(x: &Array, root: usize, comm: Comm) -> Array {
    let n = comm.size();
    if root >= n {
        panic!(
            "nabla::dist::broadcast: root {root} is not a rank of this communicator of {n}; pick a root below {n}"
        );
    }
    exchange("broadcast", x, comm, x.shape(), &Broadcast(root))
}

fn broadcast_jvp<V: ArrayValue>(_x: &V, y: &V, dx: Option<&V>, root: usize, comm: Comm) -> V {
    dx.map_or_else(
        || y.zeros_like(),
        |d| broadcast::forward::<V>(d, root, comm),
    )
}

fn broadcast_vjp<V: ArrayValue>(_x: &V, _y: &V, ct: &V, root: usize, comm: Comm) -> V {
    let total = all_reduce::forward::<V>(ct, Reduce::Sum, comm);
    if comm.rank() == root {
        total
    } else {
        total.zeros_like()
    }
}
