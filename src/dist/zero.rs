//! ZeRO stage 1: the optimizer's state sharded over the ranks.

use super::comm::{Comm, with};
use super::data_parallel::DataParallel;
use super::flat::{Wire, pack, unpack};
use crate::optim::{Optimizer, State};
use crate::tree::Tree;
use crate::{Array, DType};
use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::traits::{Communicator, CommunicatorCollectives, Root};
use std::ops::Range;

/// Data-parallel updates with the optimizer's state split over the ranks
/// (ZeRO stage 1): each parameter belongs to one rank, which alone keeps
/// its moments. The leaves of each dtype, in order, are cut into one
/// contiguous run per rank, balanced by size (whole leaves, so any
/// optimizer sees whole parameters). Each step packs the gradients of a
/// dtype into one buffer, sums each rank's run onto it (the
/// reduce-scatter, as one `MPI_Reduce` per rank), each owner updates its
/// parameters, and one `MPI_Allgatherv` gives every rank all of them: every
/// rank ends the step with the same parameters, having kept about `1/n` of
/// the state.
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
    /// Per dtype present, the leaves of that dtype in order.
    groups: Vec<Vec<usize>>,
    /// The state of this rank's leaves, in leaf order.
    state: State,
}

impl<O: Optimizer> Zero1<O> {
    /// Owners for the leaves of `params` (per dtype, one contiguous run of
    /// leaves per rank, balanced by size) and the state of this rank's.
    ///
    /// ```standalone_crate
    /// use nabla::{dist::{self, Comm, DataParallel, Zero1}, optim::Sgd, Array, DType};
    /// let _mpi = dist::init();
    /// let params = vec![Array::zeros(&[4], DType::F32), Array::zeros(&[2], DType::F32)];
    /// let zero = Zero1::new(DataParallel::new(Comm::world()), Sgd::new(0.1), &params);
    /// assert_eq!(zero.owners().len(), 2);
    /// ```
    #[track_caller]
    pub fn new<T: Tree + ?Sized>(dp: DataParallel, opt: O, params: &T) -> Zero1<O> {
        let mut leaves = Vec::new();
        params.flatten_into(&mut leaves);
        if let Some(a) = leaves
            .iter()
            .find(|a| !matches!(a.dtype(), DType::F32 | DType::F64))
        {
            panic!(
                "Zero1::new: parameters must be f32 or f64 arrays, got {:?}; cast them first",
                a.dtype()
            );
        }
        let n = dp.comm().size();
        let mut owner = vec![0; leaves.len()];
        let mut groups = Vec::new();
        for dtype in [DType::F32, DType::F64] {
            let group: Vec<usize> = (0..leaves.len())
                .filter(|&k| leaves[k].dtype() == dtype)
                .collect();
            let total: usize = group.iter().map(|&k| leaves[k].numel()).sum();
            let mut before = 0;
            for &k in &group {
                // The rank whose equal share of the run holds the leaf's middle.
                let middle = before as f64 + leaves[k].numel() as f64 / 2.0;
                owner[k] = ((middle * n as f64 / total.max(1) as f64) as usize).min(n - 1);
                before += leaves[k].numel();
            }
            if !group.is_empty() {
                groups.push(group);
            }
        }
        let me = dp.comm().rank();
        let mine: Vec<Array> = (0..leaves.len())
            .filter(|&k| owner[k] == me)
            .map(|k| leaves[k].clone())
            .collect();
        let state = opt.init(&mine);
        Zero1 {
            dp,
            opt,
            owner,
            groups,
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
        if let Some(k) = (0..ps.len()).find(|&k| gs[k].dtype() != ps[k].dtype()) {
            panic!(
                "Zero1::update: gradient {k} is {:?} but its parameter is {:?}; pass the gradients of these parameters",
                gs[k].dtype(),
                ps[k].dtype()
            );
        }
        let comm = self.dp.comm();
        // The mean gradient of each of this rank's leaves.
        let mut mean: Vec<Option<Array>> = vec![None; ps.len()];
        for group in &self.groups {
            let shard = Shard::new(group, &self.owner, &gs, comm);
            let got = match gs[group[0]].dtype() {
                DType::F32 => shard.reduce::<f32>(&gs, comm),
                _ => shard.reduce::<f64>(&gs, comm),
            };
            for (&k, g) in shard.mine.iter().zip(got) {
                mean[k] = Some(g);
            }
        }
        let mine: Vec<usize> = (0..ps.len())
            .filter(|&k| self.owner[k] == comm.rank())
            .collect();
        let mut mine_p: Vec<Array> = mine.iter().map(|&k| ps[k].clone()).collect();
        let mine_g: Vec<Array> = mine
            .iter()
            .map(|&k| mean[k].take().expect("a mean for every owned leaf"))
            .collect();
        self.opt.update(&mut mine_p, &mine_g, &mut self.state);
        for (&k, p) in mine.iter().zip(mine_p) {
            ps[k] = p;
        }
        // Every leaf from its owner.
        for group in &self.groups {
            let shard = Shard::new(group, &self.owner, &ps, comm);
            let all = match ps[group[0]].dtype() {
                DType::F32 => shard.gather::<f32>(&ps, comm),
                _ => shard.gather::<f64>(&ps, comm),
            };
            for (&k, p) in group.iter().zip(all) {
                ps[k] = p;
            }
        }
        *params = params.rebuild(&mut ps.into_iter());
    }
}

/// One dtype's leaves laid out in one buffer, and each rank's run of it.
struct Shard<'a> {
    group: &'a [usize],
    /// Each rank's elements of the buffer.
    runs: Vec<Range<usize>>,
    /// This rank's leaves (indices into the whole tree).
    mine: Vec<usize>,
}

impl<'a> Shard<'a> {
    fn new(group: &'a [usize], owner: &[usize], leaves: &[Array], comm: Comm) -> Shard<'a> {
        let mut runs = vec![0..0; comm.size()];
        let mut at = 0;
        for &k in group {
            let r = owner[k];
            if runs[r].is_empty() {
                runs[r] = at..at;
            }
            at += leaves[k].numel();
            runs[r].end = at;
        }
        let mine = group
            .iter()
            .copied()
            .filter(|&k| owner[k] == comm.rank())
            .collect();
        Shard { group, runs, mine }
    }

    fn pick(of: &[Array], which: &[usize]) -> Vec<Array> {
        which.iter().map(|&k| of[k].clone()).collect()
    }

    /// The mean over the ranks of this rank's leaves: each rank's run of
    /// the packed gradients (scaled by `1/n`) summed onto it.
    fn reduce<E: Wire>(&self, grads: &[Array], comm: Comm) -> Vec<Array> {
        let n = comm.size();
        let flat = pack::<E>(
            &Self::pick(grads, self.group),
            (n > 1).then(|| 1.0 / n as f64),
        );
        let me = comm.rank();
        let mut sum = vec![E::default(); self.runs[me].len()];
        with(comm, |c| {
            for (r, run) in self.runs.iter().enumerate() {
                if run.is_empty() {
                    continue;
                }
                let root = c.process_at_rank(r as i32);
                if r == me {
                    root.reduce_into_root(&flat[run.clone()], &mut sum[..], SystemOperation::sum());
                } else {
                    root.reduce_into(&flat[run.clone()], SystemOperation::sum());
                }
            }
        });
        unpack(sum, &Self::pick(grads, &self.mine))
    }

    /// Every leaf of the group, each from its owner (`MPI_Allgatherv` of
    /// the runs).
    fn gather<E: Wire>(&self, params: &[Array], comm: Comm) -> Vec<Array> {
        let send = pack::<E>(&Self::pick(params, &self.mine), None);
        let total = self.runs.iter().map(|r| r.end).max().unwrap_or(0);
        let mut all = vec![E::default(); total];
        let count = |v: usize| {
            i32::try_from(v).unwrap_or_else(|_| {
                panic!("Zero1: {v} elements of one dtype exceed MPI's 2^31 count; split the model")
            })
        };
        let counts: Vec<i32> = self.runs.iter().map(|r| count(r.len())).collect();
        let displs: Vec<i32> = self.runs.iter().map(|r| count(r.start)).collect();
        with(comm, |c| {
            let mut into = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            c.all_gather_varcount_into(&send[..], &mut into);
        });
        unpack(all, &Self::pick(params, self.group))
    }
}
