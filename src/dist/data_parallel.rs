//! Data parallelism: each rank takes a shard of the batch, computes its
//! gradient, and the ranks average their gradients before every update,
//! so every rank keeps the same parameters (PyTorch's
//! `DistributedDataParallel`, JAX's `pmean` of the gradient under `pmap`).

use super::comm::{Comm, with};
use super::flat::{Wire, pack, unpack, width};
use crate::tree::Tree;
use crate::{Array, DType};
use mpi::collective::SystemOperation;
use mpi::traits::{Communicator, CommunicatorCollectives, Root};

/// Data-parallel training over a communicator: [`DataParallel::shard`]
/// the batch, [`DataParallel::sync`] the parameters once from rank 0, and
/// [`DataParallel::mean`] the gradients of every step, in buckets of at
/// most [`DataParallel::bucket_bytes`] (one `MPI_Allreduce` each).
///
/// ```standalone_crate
/// use nabla::dist::{self, Comm, DataParallel};
/// use nabla::optim::{Optimizer, Sgd};
/// use nabla::prelude::*;
///
/// #[differentiable]
/// fn loss(w: &Array, x: &Array, y: &Array) -> Array {
///     nabla::mse_loss(&x.matmul(w), y)
/// }
///
/// fn main() {
///     let _mpi = dist::init();
///     let dp = DataParallel::new(Comm::world());
///     let x = Array::linspace(-1.0, 1.0, 12, DType::F64).reshape(&[12, 1]);
///     let y = &x * 3.0;
///     let (xs, ys) = (dp.shard(&x), dp.shard(&y)); // this rank's rows
///     let mut w = dp.sync(&Array::zeros(&[1, 1], DType::F64)); // rank 0's values everywhere
///     let opt = Sgd::new(0.5);
///     let mut state = opt.init(&w);
///     for _ in 0..50 {
///         let g = dp.mean(&grad(loss)(&w, &xs, &ys));
///         opt.update(&mut w, &g, &mut state);
///     }
///     assert!((w.item() - 3.0).abs() < 1e-6);
/// }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct DataParallel {
    comm: Comm,
    bucket: usize,
    overlap: bool,
}

impl DataParallel {
    /// Over `comm`, with buckets of 25 MiB (PyTorch's default).
    ///
    /// ```standalone_crate
    /// let _mpi = nabla::dist::init();
    /// let dp = nabla::dist::DataParallel::new(nabla::dist::Comm::world());
    /// assert_eq!(dp.comm(), nabla::dist::Comm::world());
    /// ```
    pub fn new(comm: Comm) -> DataParallel {
        DataParallel {
            comm,
            bucket: 25 << 20,
            overlap: false,
        }
    }

    /// The same with buckets of at most `bytes` (a leaf larger than that
    /// travels alone).
    ///
    /// ```standalone_crate
    /// let _mpi = nabla::dist::init();
    /// let dp = nabla::dist::DataParallel::new(nabla::dist::Comm::world()).bucket_bytes(1 << 20);
    /// # let _ = dp;
    /// ```
    pub fn bucket_bytes(self, bytes: usize) -> DataParallel {
        DataParallel {
            bucket: bytes.max(1),
            ..self
        }
    }

    /// Whether [`DataParallel::backward`] starts each bucket's all-reduce
    /// while the backward pass still runs (off by default: on one machine
    /// with a rank per core it measured 4–14% slower than reducing after
    /// the pass, since shared-memory MPI moves the bytes with the same
    /// cores; turn it on where a network card or spare cores carry the
    /// transfers).
    ///
    /// ```standalone_crate
    /// let _mpi = nabla::dist::init();
    /// let dp = nabla::dist::DataParallel::new(nabla::dist::Comm::world()).overlap(true);
    /// # let _ = dp;
    /// ```
    pub fn overlap(self, on: bool) -> DataParallel {
        DataParallel {
            overlap: on,
            ..self
        }
    }

    /// The bucket size limit in bytes.
    pub(crate) fn bucket_limit(&self) -> usize {
        self.bucket
    }

    /// Whether `backward` overlaps.
    pub(crate) fn overlaps(&self) -> bool {
        self.overlap
    }

    /// The communicator.
    ///
    /// ```standalone_crate
    /// let _mpi = nabla::dist::init();
    /// let dp = nabla::dist::DataParallel::new(nabla::dist::Comm::world());
    /// assert_eq!(dp.comm().size(), nabla::dist::world_size());
    /// ```
    pub fn comm(&self) -> Comm {
        self.comm
    }

    /// This rank's contiguous block of `x`'s first axis: rank `r` of `n`
    /// gets rows `r·m/n .. (r+1)·m/n` (the blocks differ by at most a row;
    /// with equal blocks, the mean of the ranks' mean losses is the
    /// full batch's mean loss).
    ///
    /// ```standalone_crate
    /// let _mpi = nabla::dist::init();
    /// let dp = nabla::dist::DataParallel::new(nabla::dist::Comm::world());
    /// let x = nabla::Array::zeros(&[6, 2], nabla::DType::F32);
    /// assert_eq!(dp.shard(&x).shape()[0], 6 / nabla::dist::world_size());
    /// ```
    #[track_caller]
    pub fn shard(&self, x: &Array) -> Array {
        let Some(&m) = x.shape().first() else {
            panic!("DataParallel::shard: needs an array with a batch axis, got a scalar")
        };
        let (r, n) = (self.comm.rank(), self.comm.size());
        x.slice_axis(0, r * m / n..(r + 1) * m / n)
    }

    /// Every leaf of `params` as rank 0 holds it (call once before
    /// training, so every rank starts from the same parameters).
    ///
    /// ```standalone_crate
    /// let _mpi = nabla::dist::init();
    /// let dp = nabla::dist::DataParallel::new(nabla::dist::Comm::world());
    /// let w = nabla::Array::full(&[2], nabla::dist::rank() as f64, nabla::DType::F64);
    /// assert_eq!(dp.sync(&w).to_vec::<f64>(), vec![0.0, 0.0]);
    /// ```
    #[track_caller]
    pub fn sync<T: Tree<Grad = T>>(&self, params: &T) -> T {
        self.buckets(params, Collective::Broadcast)
    }

    /// The mean over the ranks of every leaf of `grads`, the same on every
    /// rank: consecutive leaves of one dtype travel together, one
    /// `MPI_Allreduce` per bucket.
    ///
    /// ```standalone_crate
    /// let _mpi = nabla::dist::init();
    /// let dp = nabla::dist::DataParallel::new(nabla::dist::Comm::world());
    /// let g = nabla::Array::full(&[2], 1.0, nabla::DType::F32);
    /// assert_eq!(dp.mean(&g).to_vec::<f32>(), vec![1.0, 1.0]);
    /// ```
    #[track_caller]
    pub fn mean<T: Tree<Grad = T>>(&self, grads: &T) -> T {
        self.buckets(grads, Collective::Mean)
    }

    fn buckets<T: Tree<Grad = T>>(&self, tree: &T, op: Collective) -> T {
        let mut leaves = Vec::new();
        tree.flatten_into(&mut leaves);
        let mut out: Vec<Option<Array>> = vec![None; leaves.len()];
        let mut start = 0;
        while start < leaves.len() {
            let (dtype, device) = (leaves[start].dtype(), leaves[start].device());
            let mut end = start + 1;
            let mut bytes = leaves[start].numel() * width(dtype);
            while end < leaves.len()
                && leaves[end].dtype() == dtype
                && leaves[end].device() == device
                && bytes + leaves[end].numel() * width(dtype) <= self.bucket
            {
                bytes += leaves[end].numel() * width(dtype);
                end += 1;
            }
            let done = match dtype {
                DType::F32 => self.bucket_of::<f32>(&leaves[start..end], op),
                DType::F64 => self.bucket_of::<f64>(&leaves[start..end], op),
                d => panic!("DataParallel: leaves must be f32 or f64 arrays, got {d:?}"),
            };
            for (k, a) in done.into_iter().enumerate() {
                out[start + k] = Some(a);
            }
            start = end;
        }
        tree.rebuild(&mut out.into_iter().map(|a| a.expect("every leaf in a bucket")))
    }

    /// One bucket: the leaves packed into one host buffer (scaled by
    /// `1/n` on the way for a mean, so the sum over the ranks is the mean),
    /// one collective, and the result cut back into leaves of the original
    /// shapes and devices (views of the received buffer on the host).
    fn bucket_of<E: Wire>(&self, leaves: &[Array], op: Collective) -> Vec<Array> {
        #[cfg(feature = "cuda")]
        if leaves[0].device() != crate::Device::Cpu && super::nccl::enabled() {
            return self.bucket_on_gpu(leaves, op);
        }
        let n = self.comm.size();
        let scale = (op == Collective::Mean && n > 1).then(|| 1.0 / n as f64);
        let mut flat = pack::<E>(leaves, scale);
        with(self.comm, |c| match op {
            Collective::Mean => {
                let mut sum = vec![E::default(); flat.len()];
                c.all_reduce_into(&flat[..], &mut sum[..], SystemOperation::sum());
                flat = sum;
            }
            Collective::Broadcast => c.process_at_rank(0).broadcast_into(&mut flat[..]),
        });
        unpack(flat, leaves)
    }

    /// A bucket of GPU leaves (one device): concatenated on the device and
    /// moved by NCCL, cut back into views.
    #[cfg(feature = "cuda")]
    fn bucket_on_gpu(&self, leaves: &[Array], op: Collective) -> Vec<Array> {
        use super::collectives::{Reduce, all_reduce, broadcast};
        crate::no_grad(|| {
            let flat: Vec<Array> = leaves.iter().map(|a| a.reshape(&[a.numel()])).collect();
            let flat = crate::concat(&flat, 0);
            let out = match op {
                Collective::Mean => all_reduce(&flat, Reduce::Mean, self.comm),
                Collective::Broadcast => broadcast(&flat, 0, self.comm),
            };
            let mut at = 0;
            leaves
                .iter()
                .map(|a| {
                    let k = a.numel();
                    at += k;
                    out.slice_axis(0, at - k..at).reshape(a.shape())
                })
                .collect()
        })
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Collective {
    Mean,
    Broadcast,
}
