//! `DataParallel::backward`: the tape's backward pass with each gradient
//! bucket's all-reduce started (`MPI_Iallreduce`) as soon as the pass has
//! finished the bucket's leaves, while it goes on with the layers below
//! (PyTorch DDP's overlap of communication with computation).

use super::comm::with;
use super::data_parallel::DataParallel;
use super::flat::{Wire, pack_into, unpack, width};
use crate::tree::Tree;
use crate::{Array, DType, Device, LeafId};
use mpi::collective::SystemOperation;
use mpi::request::{LocalScope, Request};
use mpi::traits::CommunicatorCollectives;
use std::collections::HashMap;

impl DataParallel {
    /// `loss.backward()` on this rank's shard and the mean over the ranks of
    /// the gradient of every leaf of `params` (which must be leaves made
    /// with `requires_grad()`), returned as a tree like `params` and left in
    /// each leaf's `.grad()`; a leaf the loss does not reach contributes
    /// zeros. With [`DataParallel::overlap`] on, the buckets (leaves taken
    /// last to first, so the last layers' gradients, which the backward
    /// pass finishes first, fill the first bucket) each start their
    /// all-reduce (`MPI_Iallreduce`) the moment the pass has completed all
    /// their leaves, in the same order on every rank, and the pass drives
    /// the transfers on between leaves; otherwise the whole pass runs, then
    /// [`DataParallel::mean`].
    ///
    /// ```standalone_crate
    /// use nabla::dist::{self, Comm, DataParallel};
    /// use nabla::{Array, DType};
    ///
    /// let _mpi = dist::init();
    /// let dp = DataParallel::new(Comm::world());
    /// let w = Array::full(&[2], 3.0, DType::F64).requires_grad();
    /// let x = Array::full(&[2], (dist::rank() + 1) as f64, DType::F64);
    /// let loss = nabla::sum(&(&w * &x));
    /// let g = dp.backward(&loss, &w); // the mean of the ranks' x
    /// let n = dist::world_size() as f64;
    /// assert_eq!(g.to_vec::<f64>(), vec![(n + 1.0) / 2.0; 2]);
    /// assert_eq!(w.grad().to_vec::<f64>(), g.to_vec::<f64>());
    /// ```
    #[track_caller]
    pub fn backward<T: Tree<Grad = T>>(&self, loss: &Array, params: &T) -> T {
        let mut leaves = Vec::new();
        params.flatten_into(&mut leaves);
        // Each leaf's places in the tree (a tied parameter has several).
        let mut ids: HashMap<LeafId, Vec<usize>> = HashMap::new();
        for (k, a) in leaves.iter().enumerate() {
            let id = a.leaf_id().unwrap_or_else(|| {
                panic!(
                    "DataParallel::backward: parameter {k} (shape {:?}) does not require grad; make every parameter with .requires_grad()",
                    a.shape()
                )
            });
            ids.entry(id).or_default().push(k);
        }
        if let Some(a) = leaves
            .iter()
            .find(|a| !matches!(a.dtype(), DType::F32 | DType::F64))
        {
            panic!(
                "DataParallel::backward: parameters must be f32 or f64 arrays, got {:?}",
                a.dtype()
            );
        }
        let mean = if !self.overlaps()
            || self.comm().size() == 1
            || leaves.iter().any(|a| a.device() != Device::Cpu)
        {
            // Not asked for, or nothing to overlap on one rank; GPU leaves
            // take `mean`'s device path after the whole pass.
            loss.backward();
            let local: Vec<Array> = leaves.iter().map(grad_or_zeros).collect();
            let mut out = Vec::new();
            self.mean(&local).flatten_into(&mut out);
            out
        } else {
            self.overlapped(loss, &leaves, &ids)
        };
        for (p, g) in leaves.iter().zip(&mean) {
            p.set_grad(g.clone());
        }
        params.rebuild(&mut mean.into_iter())
    }

    fn overlapped(
        &self,
        loss: &Array,
        leaves: &[Array],
        ids: &HashMap<LeafId, Vec<usize>>,
    ) -> Vec<Array> {
        let plan = Plan::new(leaves, self.bucket_limit());
        let mut bufs: Vec<Buffers> = plan
            .buckets
            .iter()
            .map(|b| {
                Buffers::new(
                    leaves[b[0]].dtype(),
                    b.iter().map(|&k| leaves[k].numel()).sum(),
                )
            })
            .collect();
        mpi::request::scope(|scope| {
            let mut run = Run {
                dp: *self,
                scope,
                plan: &plan,
                grads: vec![None; leaves.len()],
                missing: plan.buckets.iter().map(Vec::len).collect(),
                free: bufs.iter_mut().map(Some).collect(),
                next: 0,
                pending: Vec::new(),
            };
            loss.backward_with(|id, g| {
                for &k in ids.get(&id).into_iter().flatten() {
                    run.arrive(k, g.detach());
                }
            });
            for (k, leaf) in leaves.iter().enumerate() {
                if run.grads[k].is_none() {
                    run.arrive(k, grad_or_zeros(leaf));
                }
            }
            for p in run.pending.drain(..) {
                match p {
                    Pending::F32(r) => drop(with(run.dp.comm(), |_| r.wait())),
                    Pending::F64(r) => drop(with(run.dp.comm(), |_| r.wait())),
                }
            }
        });
        let mut out: Vec<Option<Array>> = vec![None; leaves.len()];
        for (b, buf) in plan.buckets.iter().zip(bufs) {
            let like: Vec<Array> = b.iter().map(|&k| leaves[k].clone()).collect();
            let parts = match buf {
                Buffers::F32(_, recv) => unpack(recv, &like),
                Buffers::F64(_, recv) => unpack(recv, &like),
            };
            for (&k, g) in b.iter().zip(parts) {
                out[k] = Some(g);
            }
        }
        out.into_iter()
            .map(|g| g.expect("every leaf in a bucket"))
            .collect()
    }
}

/// A leaf's accumulated gradient, or zeros where the loss did not reach it.
fn grad_or_zeros(a: &Array) -> Array {
    a.try_grad().unwrap_or_else(|| a.detach().zeros_like())
}

/// The buckets: leaves last to first, consecutive ones of a dtype together
/// up to the byte limit.
struct Plan {
    buckets: Vec<Vec<usize>>,
    bucket_of: Vec<usize>,
}

impl Plan {
    fn new(leaves: &[Array], limit: usize) -> Plan {
        let mut buckets: Vec<Vec<usize>> = Vec::new();
        let mut bytes = 0;
        for k in (0..leaves.len()).rev() {
            let (d, size) = (
                leaves[k].dtype(),
                leaves[k].numel() * width(leaves[k].dtype()),
            );
            match buckets.last_mut() {
                Some(b) if leaves[b[0]].dtype() == d && bytes + size <= limit => {
                    b.push(k);
                    bytes += size;
                }
                _ => {
                    buckets.push(vec![k]);
                    bytes = size;
                }
            }
        }
        let mut bucket_of = vec![0; leaves.len()];
        for (b, ks) in buckets.iter().enumerate() {
            for &k in ks {
                bucket_of[k] = b;
            }
        }
        Plan { buckets, bucket_of }
    }
}

/// A bucket's send and receive buffers.
enum Buffers {
    F32(Vec<f32>, Vec<f32>),
    F64(Vec<f64>, Vec<f64>),
}

impl Buffers {
    fn new(dtype: DType, n: usize) -> Buffers {
        if dtype == DType::F32 {
            Buffers::F32(vec![0.0; n], vec![0.0; n])
        } else {
            Buffers::F64(vec![0.0; n], vec![0.0; n])
        }
    }
}

type Scope<'s, 'a> = &'s LocalScope<'a>;

/// A bucket's all-reduce in flight.
enum Pending<'s, 'a> {
    F32(Request<'a, [f32], Scope<'s, 'a>>),
    F64(Request<'a, [f64], Scope<'s, 'a>>),
}

/// One overlapped backward pass in progress.
struct Run<'s, 'a, 'p> {
    dp: DataParallel,
    scope: Scope<'s, 'a>,
    plan: &'p Plan,
    grads: Vec<Option<Array>>,
    /// Per bucket, its leaves still without a gradient.
    missing: Vec<usize>,
    /// Per bucket, its buffers until its all-reduce starts.
    free: Vec<Option<&'a mut Buffers>>,
    /// The next bucket to start (they start in order on every rank).
    next: usize,
    pending: Vec<Pending<'s, 'a>>,
}

impl<'s, 'a> Run<'s, 'a, '_> {
    /// Leaf `k`'s gradient is complete: start every bucket now complete,
    /// in order, and let the transfers in flight progress.
    fn arrive(&mut self, k: usize, g: Array) {
        self.grads[k] = Some(g);
        self.missing[self.plan.bucket_of[k]] -= 1;
        while self.next < self.missing.len() && self.missing[self.next] == 0 {
            self.start(self.next);
            self.next += 1;
        }
        self.progress();
    }

    fn start(&mut self, b: usize) {
        let grads: Vec<Array> = self.plan.buckets[b]
            .iter()
            .map(|&k| self.grads[k].clone().expect("a complete bucket"))
            .collect();
        let scale = Some(1.0 / self.dp.comm().size() as f64);
        let buffers = self.free[b].take().expect("a bucket starts once");
        if b + 1 == self.plan.buckets.len() {
            // The last bucket completes with the last leaf: nothing is left
            // to overlap it with, and the blocking call is the faster one.
            match buffers {
                Buffers::F32(send, recv) => reduce_now(self.dp, &grads, scale, send, recv),
                Buffers::F64(send, recv) => reduce_now(self.dp, &grads, scale, send, recv),
            }
            return;
        }
        let scope = self.scope;
        let p = match buffers {
            Buffers::F32(send, recv) => {
                Pending::F32(launch(self.dp, scope, &grads, scale, send, recv))
            }
            Buffers::F64(send, recv) => {
                Pending::F64(launch(self.dp, scope, &grads, scale, send, recv))
            }
        };
        self.pending.push(p);
    }

    /// One `MPI_Test` per transfer in flight: MPI moves a transfer on only
    /// inside its calls.
    fn progress(&mut self) {
        let comm = self.dp.comm();
        self.pending = std::mem::take(&mut self.pending)
            .into_iter()
            .filter_map(|p| match p {
                Pending::F32(r) => with(comm, |_| r.test()).err().map(Pending::F32),
                Pending::F64(r) => with(comm, |_| r.test()).err().map(Pending::F64),
            })
            .collect();
    }
}

/// Packs a bucket's gradients (scaled) and starts their all-reduce.
fn launch<'s, 'a, E: Wire>(
    dp: DataParallel,
    scope: Scope<'s, 'a>,
    grads: &[Array],
    scale: Option<f64>,
    send: &'a mut [E],
    recv: &'a mut [E],
) -> Request<'a, [E], Scope<'s, 'a>> {
    pack_into(grads, scale, send);
    let send: &'a [E] = send;
    with(dp.comm(), |c| {
        c.immediate_all_reduce_into(scope, send, recv, SystemOperation::sum())
    })
}

/// Packs a bucket's gradients (scaled) and all-reduces them at once.
fn reduce_now<E: Wire>(
    dp: DataParallel,
    grads: &[Array],
    scale: Option<f64>,
    send: &mut [E],
    recv: &mut [E],
) {
    pack_into(grads, scale, send);
    with(dp.comm(), |c| {
        c.all_reduce_into(&send[..], &mut recv[..], SystemOperation::sum())
    });
}
