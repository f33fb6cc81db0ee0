//! Tensor parallelism (Megatron-LM's layout): a layer's weight split over
//! the ranks, each rank computing its part, with the two operators that
//! keep a replicated loss's gradients exact.
//!
//! A column-parallel layer splits the output features: every rank holds
//! the whole input and produces its block of features. A row-parallel
//! layer splits the input features: each rank's partial product is summed
//! over the ranks. Chained (column then row), as in
//! [`ParallelMlp`], the features between them never travel: one all-reduce
//! forward, one backward.

use super::collectives::{Reduce, all_reduce};
use super::comm::Comm;
use crate::nn::{Linear, Mlp};
use crate::{Array, ArrayValue};

/// The identity forward, the sum of the ranks' cotangents backward
/// (Megatron's `f`): where a replicated input enters rank-local work, its
/// gradient collects every rank's contribution.
///
/// ```standalone_crate
/// use nabla::{Array, dist::{self, Comm}};
/// let _mpi = dist::init();
/// let x = Array::from_vec(vec![1.0f64, 2.0], &[2]);
/// assert_eq!(dist::copy_to_ranks(&x, Comm::world()).to_vec::<f64>(), vec![1.0, 2.0]);
/// ```
#[crate::custom_op(jvp = copy_jvp, vjp = copy_vjp)]
pub fn copy_to_ranks(x: &Array, comm: Comm) -> Array {
    let _ = comm;
    x.clone()
}

fn copy_jvp<V: ArrayValue>(_x: &V, y: &V, dx: Option<&V>, _comm: Comm) -> V {
    dx.map_or_else(|| y.zeros_like(), |d| d.clone())
}

fn copy_vjp<V: ArrayValue>(_x: &V, _y: &V, ct: &V, comm: Comm) -> V {
    all_reduce::forward::<V>(ct, Reduce::Sum, comm)
}

/// The sum over the ranks forward, the identity backward (Megatron's
/// `g`): partial results become the replicated whole, and a replicated
/// cotangent goes back to each rank's partial unchanged.
///
/// ```standalone_crate
/// use nabla::{Array, dist::{self, Comm}};
/// let _mpi = dist::init();
/// let x = Array::from_vec(vec![1.0f64], &[1]);
/// let n = dist::world_size() as f64;
/// assert_eq!(dist::sum_partials(&x, Comm::world()).to_vec::<f64>(), vec![n]);
/// ```
#[crate::custom_op(jvp = partials_jvp, vjp = partials_vjp)]
pub fn sum_partials(x: &Array, comm: Comm) -> Array {
    all_reduce(x, Reduce::Sum, comm)
}

fn partials_jvp<V: ArrayValue>(_x: &V, y: &V, dx: Option<&V>, comm: Comm) -> V {
    dx.map_or_else(
        || y.zeros_like(),
        |d| all_reduce::forward::<V>(d, Reduce::Sum, comm),
    )
}

fn partials_vjp<V: ArrayValue>(_x: &V, _y: &V, ct: &V, _comm: Comm) -> V {
    ct.clone()
}

/// Rank `r`'s block of `parts` equal blocks of `x`'s axis `axis`.
#[track_caller]
fn block(x: &Array, axis: usize, r: usize, parts: usize, what: &str) -> Array {
    let d = x.shape()[axis];
    if !d.is_multiple_of(parts) {
        panic!(
            "nabla::dist::{what}: {d} features (shape {:?}) do not split over {parts} ranks; pick sizes divisible by {parts}",
            x.shape()
        );
    }
    x.slice_axis(axis as isize, r * d / parts..(r + 1) * d / parts)
}

/// A `Linear` whose output features are split over the ranks: this rank
/// holds rows `r·out/n ..` of the weight (and of the bias) and maps the
/// whole (replicated) input to its block of outputs.
#[derive(Clone, Debug, crate::Tree)]
pub struct ColumnParallelLinear {
    /// This rank's rows of the layer.
    pub local: Linear,
}

impl ColumnParallelLinear {
    /// This rank's part of `full`.
    ///
    /// ```standalone_crate
    /// use nabla::{dist::{self, Comm, ColumnParallelLinear}, nn::Linear, random::Key};
    /// let _mpi = dist::init();
    /// let n = dist::world_size();
    /// let col = ColumnParallelLinear::shard(&Linear::new(3, 4 * n, true, Key::new(0)), Comm::world());
    /// assert_eq!(col.local.weight.shape(), &[4, 3]);
    /// ```
    #[track_caller]
    pub fn shard(full: &Linear, comm: Comm) -> ColumnParallelLinear {
        let (r, n) = (comm.rank(), comm.size());
        ColumnParallelLinear {
            local: Linear {
                weight: block(&full.weight, 0, r, n, "ColumnParallelLinear"),
                bias: full
                    .bias
                    .as_ref()
                    .map(|b| block(b, 0, r, n, "ColumnParallelLinear")),
            },
        }
    }

    /// `x [.., in]` (the same on every rank) to this rank's `[.., out/n]`.
    ///
    /// ```standalone_crate
    /// use nabla::{dist::{self, Comm, ColumnParallelLinear}, nn::Linear, random::Key, Array, DType};
    /// let _mpi = dist::init();
    /// let col = ColumnParallelLinear::shard(&Linear::new(3, 2 * dist::world_size(), true, Key::new(0)), Comm::world());
    /// assert_eq!(col.forward(&Array::ones(&[5, 3], DType::F32), Comm::world()).shape(), &[5, 2]);
    /// ```
    #[crate::differentiable]
    pub fn forward(&self, x: &Array, #[nondiff] comm: Comm) -> Array {
        self.local.forward(&copy_to_ranks(x, comm))
    }
}

/// A `Linear` whose input features are split over the ranks: this rank
/// holds columns `r·in/n ..` of the weight and the whole bias, takes its
/// block of the input features and sums the partial products over the
/// ranks: every rank gets the whole output.
#[derive(Clone, Debug, crate::Tree)]
pub struct RowParallelLinear {
    /// `[out, in/n]`: this rank's columns.
    pub weight: Array,
    /// `[out]`, replicated.
    pub bias: Option<Array>,
}

impl RowParallelLinear {
    /// This rank's part of `full`.
    ///
    /// ```standalone_crate
    /// use nabla::{dist::{self, Comm, RowParallelLinear}, nn::Linear, random::Key};
    /// let _mpi = dist::init();
    /// let n = dist::world_size();
    /// let row = RowParallelLinear::shard(&Linear::new(4 * n, 3, true, Key::new(0)), Comm::world());
    /// assert_eq!(row.weight.shape(), &[3, 4]);
    /// ```
    #[track_caller]
    pub fn shard(full: &Linear, comm: Comm) -> RowParallelLinear {
        let (r, n) = (comm.rank(), comm.size());
        RowParallelLinear {
            weight: block(&full.weight, 1, r, n, "RowParallelLinear"),
            bias: full.bias.clone(),
        }
    }

    /// This rank's input block `[.., in/n]` to the whole `[.., out]`.
    ///
    /// ```standalone_crate
    /// use nabla::{dist::{self, Comm, RowParallelLinear}, nn::Linear, random::Key, Array, DType};
    /// let _mpi = dist::init();
    /// let row = RowParallelLinear::shard(&Linear::new(2 * dist::world_size(), 3, true, Key::new(0)), Comm::world());
    /// assert_eq!(row.forward(&Array::ones(&[5, 2], DType::F32), Comm::world()).shape(), &[5, 3]);
    /// ```
    #[crate::differentiable]
    pub fn forward(&self, x: &Array, #[nondiff] comm: Comm) -> Array {
        let y = sum_partials(&x.matmul(&self.weight.transpose()), comm);
        if let Some(b) = &self.bias { y + b } else { y }
    }
}

/// [`crate::nn::Mlp`] over the ranks: `fc` column-parallel, `proj`
/// row-parallel, so the hidden features stay on their rank and the block
/// costs one all-reduce each way.
#[derive(Clone, Debug, crate::Tree)]
pub struct ParallelMlp {
    /// `C → 4C`, output features split.
    pub fc: ColumnParallelLinear,
    /// `4C → C`, input features split.
    pub proj: RowParallelLinear,
}

impl ParallelMlp {
    /// This rank's part of `full`.
    ///
    /// ```standalone_crate
    /// use nabla::{dist::{self, Comm, ParallelMlp}, nn::{Linear, Mlp}, random::Key};
    /// let _mpi = dist::init();
    /// let n = dist::world_size();
    /// let mlp = Mlp { fc: Linear::new(2, 4 * n, true, Key::new(0)), proj: Linear::new(4 * n, 2, true, Key::new(1)) };
    /// assert_eq!(ParallelMlp::shard(&mlp, Comm::world()).proj.weight.shape(), &[2, 4]);
    /// ```
    #[track_caller]
    pub fn shard(full: &Mlp, comm: Comm) -> ParallelMlp {
        ParallelMlp {
            fc: ColumnParallelLinear::shard(&full.fc, comm),
            proj: RowParallelLinear::shard(&full.proj, comm),
        }
    }

    /// `proj(gelu(fc(x)))`, the same on every rank as the unsharded `Mlp`.
    ///
    /// ```standalone_crate
    /// use nabla::{dist::{self, Comm, ParallelMlp}, nn::{Linear, Mlp}, random::Key, Array, DType};
    /// let _mpi = dist::init();
    /// let n = dist::world_size();
    /// let mlp = Mlp { fc: Linear::new(2, 4 * n, true, Key::new(0)), proj: Linear::new(4 * n, 2, true, Key::new(1)) };
    /// let x = Array::ones(&[5, 2], DType::F32);
    /// let y = ParallelMlp::shard(&mlp, Comm::world()).forward(&x, Comm::world());
    /// assert!((&y - &mlp.forward(&x)).abs().to_vec::<f32>().iter().all(|d| *d < 1e-5));
    /// ```
    #[crate::differentiable]
    pub fn forward(&self, x: &Array, #[nondiff] comm: Comm) -> Array {
        self.proj.forward(&self.fc.forward(x, comm).gelu(), comm)
    }
}

/// [`crate::nn::MultiHeadAttention`] over the ranks, by heads: rank `r`
/// holds heads `r·h/n ..` (their rows of the query, key and value blocks of
/// `qkv`, column-parallel) and the matching columns of `proj`
/// (row-parallel), so attention runs on the rank's heads alone and the
/// block costs one all-reduce each way.
#[derive(Clone, Debug, crate::Tree)]
pub struct ParallelAttention {
    /// `C → 3C/n`: this rank's heads' query, key and value rows.
    pub qkv: ColumnParallelLinear,
    /// `C/n → C`: this rank's heads' columns.
    pub proj: RowParallelLinear,
    /// The heads on this rank.
    pub heads: crate::tree::Setting<usize>,
    /// Whether a position attends to earlier positions only.
    pub causal: crate::tree::Setting<bool>,
}

impl ParallelAttention {
    /// This rank's heads of `full` (the head count must split evenly).
    ///
    /// ```standalone_crate
    /// use nabla::{dist::{self, Comm, ParallelAttention}, nn::MultiHeadAttention, random::Key};
    /// let _mpi = dist::init();
    /// let n = dist::world_size();
    /// let att = ParallelAttention::shard(&MultiHeadAttention::new(4 * n, 2 * n, true, Key::new(0)), Comm::world());
    /// assert_eq!((*att.heads, att.qkv.local.weight.shape()), (2, &[12, 4 * n][..]));
    /// ```
    #[track_caller]
    pub fn shard(full: &crate::nn::MultiHeadAttention, comm: Comm) -> ParallelAttention {
        let (r, n) = (comm.rank(), comm.size());
        let heads = *full.heads;
        if !heads.is_multiple_of(n) {
            panic!(
                "nabla::dist::ParallelAttention: {heads} heads do not split over {n} ranks; use a head count divisible by {n}"
            );
        }
        let c = full.proj.weight.shape()[0];
        // Rows r·c/n .. of each of the query, key and value blocks.
        let pick = |a: &Array| {
            let parts: Vec<Array> = (0..3)
                .map(|k| {
                    block(
                        &a.slice_axis(0, k * c..(k + 1) * c),
                        0,
                        r,
                        n,
                        "ParallelAttention",
                    )
                })
                .collect();
            crate::concat(&parts, 0)
        };
        ParallelAttention {
            qkv: ColumnParallelLinear {
                local: Linear {
                    weight: pick(&full.qkv.weight),
                    bias: full.qkv.bias.as_ref().map(pick),
                },
            },
            proj: RowParallelLinear::shard(&full.proj, comm),
            heads: crate::tree::Setting(heads / n),
            causal: full.causal,
        }
    }

    /// Attention over `x` `[B, T, C]` (the same on every rank), the same on
    /// every rank as the unsharded block.
    ///
    /// ```standalone_crate
    /// use nabla::{dist::{self, Comm, ParallelAttention}, nn::MultiHeadAttention, random::Key, DType};
    /// let _mpi = dist::init();
    /// let n = dist::world_size();
    /// let full = MultiHeadAttention::new(4 * n, 2 * n, true, Key::new(0));
    /// let x = Key::new(1).normal(&[2, 3, 4 * n], DType::F32);
    /// let y = ParallelAttention::shard(&full, Comm::world()).forward(&x, Comm::world());
    /// assert!((&y - &full.forward(&x)).abs().to_vec::<f32>().iter().all(|d| *d < 1e-5));
    /// ```
    #[crate::differentiable]
    pub fn forward(&self, x: &Array, #[nondiff] comm: Comm) -> Array {
        let y = crate::nn::attend(&self.qkv.forward(x, comm), *self.heads, *self.causal);
        self.proj.forward(&y, comm)
    }
}
