//! ZeRO stage 1: the optimizer's state sharded over the ranks.

use super::comm::with;
use super::data_parallel::DataParallel;
use crate::optim::{Optimizer, State};
use crate::tree::Tree;
use crate::{Array, DType, Device};
use mpi::collective::SystemOperation;
use mpi::traits::{Communicator, Root};

/// Data-parallel updates with the optimizer's state split over the ranks
/// (ZeRO stage 1): each parameter belongs to one rank (whole leaves,
/// balanced by size), which alone keeps its moments. Each step sums every
/// gradient onto its owner (`MPI_Reduce`, the leaf-wise reduce-scatter),
/// the owner updates the parameter, and broadcasts it (`MPI_Bcast`, the
/// leaf-wise all-gather): every rank ends the step with the same
/// parameters, having kept about `1/n` of the state.
///
/// ```standalone_crate
/// use nabla::dist::{self, Comm, DataParallel, Zero1};
/// use nabla::optim::Adam;
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
///     let (xs, ys) = (dp.shard(&x), dp.shard(&y));
///     let mut w = dp.sync(&Array::zeros(&[1, 1], DType::F64));
///     let mut zero = Zero1::new(dp, Adam::new(0.1), &w);
///     for _ in 0..300 {
///         let g = grad(loss)(&w, &xs, &ys);
///         zero.update(&mut w, &g);
///     }
///     assert!((w.item() - 3.0).abs() < 1e-3);
/// }
/// ```
pub struct Zero1<O: Optimizer> {
    dp: DataParallel,
    opt: O,
    /// Each leaf's owning rank.
    owner: Vec<usize>,
    /// The state of this rank's leaves, in leaf order.
    state: State,
}

impl<O: Optimizer> Zero1<O> {
    /// Owners for the leaves of `params` (each to the rank holding the
    /// fewest bytes so far) and the state of this rank's.
    ///
    /// ```standalone_crate
    /// use nabla::{dist::{self, Comm, DataParallel, Zero1}, optim::Sgd, Array, DType};
    /// let _mpi = dist::init();
    /// let params = vec![Array::zeros(&[4], DType::F32), Array::zeros(&[2], DType::F32)];
    /// let zero = Zero1::new(DataParallel::new(Comm::world()), Sgd::new(0.1), &params);
    /// assert_eq!(zero.owners().len(), 2);
    /// ```
    pub fn new<T: Tree + ?Sized>(dp: DataParallel, opt: O, params: &T) -> Zero1<O> {
        let mut leaves = Vec::new();
        params.flatten_into(&mut leaves);
        let n = dp.comm().size();
        let mut load = vec![0usize; n];
        let owner: Vec<usize> = leaves
            .iter()
            .map(|a| {
                let r = (0..n)
                    .min_by_key(|&q| (load[q], q))
                    .expect("one rank at least");
                load[r] += a.numel();
                r
            })
            .collect();
        let me = dp.comm().rank();
        let mine: Vec<Array> = leaves
            .iter()
            .zip(&owner)
            .filter(|(_, o)| **o == me)
            .map(|(a, _)| a.clone())
            .collect();
        let state = opt.init(&mine);
        Zero1 {
            dp,
            opt,
            owner,
            state,
        }
    }

    /// Each leaf's owning rank.
    ///
    /// ```standalone_crate
    /// use nabla::{dist::{self, Comm, DataParallel, Zero1}, optim::Sgd, Array, DType};
    /// let _mpi = dist::init();
    /// let zero = Zero1::new(DataParallel::new(Comm::world()), Sgd::new(0.1), &Array::zeros(&[3], DType::F32));
    /// assert_eq!(zero.owners(), &[0]);
    /// ```
    pub fn owners(&self) -> &[usize] {
        &self.owner
    }

    /// One step: `grads` (this rank's, before any averaging) averaged onto
    /// the owners, each owner's update, the new parameters on every rank.
    ///
    /// ```standalone_crate
    /// use nabla::{dist::{self, Comm, DataParallel, Zero1}, optim::Sgd, Array, DType};
    /// let _mpi = dist::init();
    /// let mut w = Array::ones(&[2], DType::F64);
    /// let mut zero = Zero1::new(DataParallel::new(Comm::world()), Sgd::new(0.5), &w);
    /// zero.update(&mut w, &Array::ones(&[2], DType::F64));
    /// assert_eq!(w.to_vec::<f64>(), vec![0.5, 0.5]);
    /// ```
    #[track_caller]
    pub fn update<T: Tree<Grad = T>>(&mut self, params: &mut T, grads: &T) {
        let (mut ps, mut gs) = (Vec::new(), Vec::new());
        params.flatten_into(&mut ps);
        grads.flatten_into(&mut gs);
        assert!(
            ps.len() == self.owner.len() && gs.len() == ps.len(),
            "Zero1::update: {} parameters and {} gradients for a Zero1 made for {}; make it with the same tree",
            ps.len(),
            gs.len(),
            self.owner.len()
        );
        let comm = self.dp.comm();
        let (me, n) = (comm.rank(), comm.size());
        // The mean gradient of each leaf, on its owner only.
        let mut mine_p = Vec::new();
        let mut mine_g = Vec::new();
        for (k, g) in gs.iter().enumerate() {
            let summed = reduce_to(g, self.owner[k], comm);
            if self.owner[k] == me {
                mine_p.push(ps[k].clone());
                mine_g.push(&summed * (1.0 / n as f64));
            }
        }
        self.opt.update(&mut mine_p, &mine_g, &mut self.state);
        // Every leaf from its owner.
        let mut updated = mine_p.into_iter();
        let out: Vec<Array> = ps
            .iter()
            .enumerate()
            .map(|(k, p)| {
                let mine =
                    (self.owner[k] == me).then(|| updated.next().expect("one per owned leaf"));
                bcast_from(mine.as_ref().unwrap_or(p), self.owner[k], comm)
            })
            .collect();
        *params = params.rebuild(&mut out.into_iter());
    }
}

/// The sum over the ranks of `x`, on rank `root` (elsewhere `x` itself,
/// unused).
fn reduce_to(x: &Array, root: usize, comm: super::Comm) -> Array {
    match x.dtype() {
        DType::F32 => typed::<f32>(x, root, comm, true),
        DType::F64 => typed::<f64>(x, root, comm, true),
        d => panic!("Zero1: parameters must be f32 or f64 arrays, got {d:?}"),
    }
}

/// Rank `root`'s `x` on every rank.
fn bcast_from(x: &Array, root: usize, comm: super::Comm) -> Array {
    match x.dtype() {
        DType::F32 => typed::<f32>(x, root, comm, false),
        DType::F64 => typed::<f64>(x, root, comm, false),
        d => panic!("Zero1: parameters must be f32 or f64 arrays, got {d:?}"),
    }
}

fn typed<E: crate::Element + mpi::datatype::Equivalence>(
    x: &Array,
    root: usize,
    comm: super::Comm,
    reduce: bool,
) -> Array {
    let mut v = x.to_device(Device::Cpu).to_vec::<E>();
    with(comm, |c| {
        let root_proc = c.process_at_rank(root as i32);
        if reduce {
            if c.rank() as usize == root {
                let mut out = v.clone();
                root_proc.reduce_into_root(&v[..], &mut out[..], SystemOperation::sum());
                v = out;
            } else {
                root_proc.reduce_into(&v[..], SystemOperation::sum());
            }
        } else {
            root_proc.broadcast_into(&mut v[..]);
        }
    });
    let out = Array::from_vec(v, x.shape());
    if x.device() == Device::Cpu {
        out
    } else {
        out.to_device(x.device())
    }
}
