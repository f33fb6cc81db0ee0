//! Neural-network layers as values: each layer is a `#[derive(Tree)]`
//! struct of its parameters (so its gradient is a value of the same type,
//! an optimizer updates it, and [`crate::io`] saves and loads it under
//! PyTorch's state-dict names), with a `forward` method on arrays that the
//! tape records (`requires_grad` parameters, `backward()`).
//!
//! Layouts and defaults are PyTorch's: a [`Linear`] weight is `[out, in]`
//! and `y = x Wᵀ + b`; [`LayerNorm`] normalises the last axis with the
//! biased variance and `eps = 1e-5`. The models are in [`models`].
//!
//! ```
//! use nabla::nn::Linear;
//! use nabla::prelude::*;
//!
//! let lin = Linear::new(3, 2, true, Key::new(0));
//! let y = lin.forward(&Array::ones(&[4, 3], DType::F32));
//! assert_eq!(y.shape(), &[4, 2]);
//! assert_eq!(lin.weight.shape(), &[2, 3]); // [out, in]
//! ```

mod conv;
pub mod init;
pub mod models;

pub use conv::{AvgPool2d, Conv1d, Conv2d, MaxPool2d};

use crate::tree::Setting;
use crate::{Array, DType, Tree, differentiable, random::Key};

/// A fully connected layer, `y = x Wᵀ + b`, as `torch.nn.Linear`: `weight`
/// is `[out, in]`, `bias` `[out]` (or none). `x` is `[.., in]`.
#[derive(Clone, Debug, Tree)]
pub struct Linear {
    /// `[out, in]`.
    pub weight: Array,
    /// `[out]`, when the layer has one.
    pub bias: Option<Array>,
}

impl Linear {
    /// A layer initialised as PyTorch's default: weight and bias uniform
    /// in `±1/√in`.
    ///
    /// ```
    /// use nabla::{nn::Linear, random::Key};
    /// let lin = Linear::new(4, 3, false, Key::new(1));
    /// assert!(lin.bias.is_none());
    /// assert!(lin.weight.to_vec::<f32>().iter().all(|w| w.abs() <= 0.5));
    /// ```
    pub fn new(inputs: usize, outputs: usize, bias: bool, key: Key) -> Linear {
        let [kw, kb] = key.split2();
        let bound = 1.0 / (inputs as f64).sqrt();
        let uniform = |k: Key, shape: &[usize]| init::uniform(shape, -bound, bound, DType::F32, k);
        Linear {
            weight: uniform(kw, &[outputs, inputs]),
            bias: bias.then(|| uniform(kb, &[outputs])),
        }
    }

    /// `x Wᵀ + b` over the last axis of `x`.
    ///
    /// ```
    /// use nabla::{nn::Linear, Array};
    /// let lin = Linear {
    ///     weight: Array::from_vec(vec![1.0f32, 2.0], &[1, 2]),
    ///     bias: Some(Array::from_vec(vec![0.5f32], &[1])),
    /// };
    /// assert_eq!(lin.forward(&Array::from_vec(vec![3.0f32, 4.0], &[1, 2])).to_vec::<f32>(), vec![11.5]);
    /// ```
    #[track_caller]
    #[differentiable]
    pub fn forward(&self, x: &Array) -> Array {
        let y = x.matmul(&self.weight.transpose());
        if let Some(b) = &self.bias { y + b } else { y }
    }
}

/// A lookup table, as `torch.nn.Embedding`: row `i` of `weight`
/// (`[num, dim]`) for each index `i`.
#[derive(Clone, Debug, Tree)]
pub struct Embedding {
    /// `[num, dim]`.
    pub weight: Array,
}

impl Embedding {
    /// A table of `num` rows of `dim`, standard normal as PyTorch's default.
    ///
    /// ```
    /// use nabla::{nn::Embedding, random::Key};
    /// assert_eq!(Embedding::new(10, 4, Key::new(0)).weight.shape(), &[10, 4]);
    /// ```
    pub fn new(num: usize, dim: usize, key: Key) -> Embedding {
        Embedding {
            weight: key.normal(&[num, dim], DType::F32),
        }
    }

    /// The rows of `idx` (an `i64` array of any shape): `idx.shape ++ [dim]`.
    /// Differentiable in `weight` (the gradient adds into the rows read).
    ///
    /// ```
    /// use nabla::{nn::Embedding, Array};
    /// let e = Embedding { weight: Array::arange(6, nabla::DType::F32).reshape(&[3, 2]) };
    /// let y = e.forward(&Array::from_vec(vec![2i64, 0], &[1, 2]));
    /// assert_eq!(y.shape(), &[1, 2, 2]);
    /// assert_eq!(y.to_vec::<f32>(), vec![4.0, 5.0, 0.0, 1.0]);
    /// ```
    #[track_caller]
    #[differentiable]
    pub fn forward(&self, #[nondiff] idx: &Array) -> Array {
        nabla::embedding(&self.weight, idx)
    }
}

/// Layer normalisation over the last axis, as `torch.nn.LayerNorm` with an
/// elementwise affine: `(x − mean) / √(var + eps) · weight + bias`, the
/// variance biased.
#[derive(Clone, Debug, Tree)]
pub struct LayerNorm {
    /// `[dim]`, ones at first.
    pub weight: Array,
    /// `[dim]`, zeros at first.
    pub bias: Array,
    /// Added to the variance (PyTorch's default 1e-5).
    pub eps: Setting<f64>,
}

impl LayerNorm {
    /// Weight ones, bias zeros, `eps` 1e-5.
    ///
    /// ```
    /// use nabla::nn::LayerNorm;
    /// let ln = LayerNorm::new(3);
    /// assert_eq!(ln.weight.to_vec::<f32>(), vec![1.0; 3]);
    /// assert_eq!(ln.eps.0, 1e-5);
    /// ```
    pub fn new(dim: usize) -> LayerNorm {
        LayerNorm {
            weight: Array::ones(&[dim], DType::F32),
            bias: Array::zeros(&[dim], DType::F32),
            eps: Setting(1e-5),
        }
    }

    /// Normalises the last axis of `x`.
    ///
    /// ```
    /// use nabla::{nn::LayerNorm, Array};
    /// let y = LayerNorm::new(2).forward(&Array::from_vec(vec![1.0f32, 3.0], &[1, 2]));
    /// let v = y.to_vec::<f32>();
    /// assert!((v[0] + 1.0).abs() < 1e-4 && (v[1] - 1.0).abs() < 1e-4);
    /// ```
    #[track_caller]
    #[differentiable]
    pub fn forward(&self, x: &Array) -> Array {
        nabla::layer_norm(x, &self.weight, &self.bias, *self.eps)
    }
}

/// Root-mean-square normalisation over the last axis, as
/// `torch.nn.RMSNorm`: `x / √(mean(x²) + eps) · weight`.
#[derive(Clone, Debug, Tree)]
pub struct RmsNorm {
    /// `[dim]`, ones at first.
    pub weight: Array,
    /// Added to the mean square (PyTorch's default: `f32`'s machine
    /// epsilon).
    pub eps: Setting<f64>,
}

impl RmsNorm {
    /// Weight ones, `eps` `f32::EPSILON` (PyTorch's default for `f32`).
    ///
    /// ```
    /// use nabla::{nn::RmsNorm, Array};
    /// let y = RmsNorm::new(2).forward(&Array::from_vec(vec![3.0f32, 4.0], &[1, 2]));
    /// let rms = (12.5f32).sqrt();
    /// assert!((y.to_vec::<f32>()[1] - 4.0 / rms).abs() < 1e-6);
    /// ```
    pub fn new(dim: usize) -> RmsNorm {
        RmsNorm {
            weight: Array::ones(&[dim], DType::F32),
            eps: Setting(f64::from(f32::EPSILON)),
        }
    }

    /// Normalises the last axis of `x`.
    #[track_caller]
    #[differentiable]
    pub fn forward(&self, x: &Array) -> Array {
        nabla::rms_norm(x, &self.weight, *self.eps)
    }
}

/// Multi-head scaled dot-product self-attention, nanoGPT's layout: `qkv`
/// maps `C → 3C` (the query, key and value blocks in that order), scores
/// are scaled by `1/√(C/heads)`, `proj` maps `C → C`. With `causal`,
/// position `t` attends to positions `≤ t` only (a decoder's mask).
#[derive(Clone, Debug, Tree)]
pub struct MultiHeadAttention {
    /// `C → 3C`.
    pub qkv: Linear,
    /// `C → C`.
    pub proj: Linear,
    /// The number of heads (divides `C`).
    pub heads: Setting<usize>,
    /// Whether a position attends to earlier positions only.
    pub causal: Setting<bool>,
}

/// Causal self-attention (nanoGPT's name): a [`MultiHeadAttention`] with
/// `causal` set.
pub type CausalSelfAttention = MultiHeadAttention;

impl MultiHeadAttention {
    /// Attention of width `c` with `heads` heads, initialised as
    /// `torch.nn.Linear`.
    ///
    /// ```
    /// use nabla::{nn::MultiHeadAttention, random::Key};
    /// let att = MultiHeadAttention::new(8, 2, false, Key::new(0));
    /// assert_eq!(att.qkv.weight.shape(), &[24, 8]);
    /// assert!(!*att.causal);
    /// ```
    #[track_caller]
    pub fn new(c: usize, heads: usize, causal: bool, key: Key) -> MultiHeadAttention {
        attention_dims("MultiHeadAttention::new", [1, 1, c], heads);
        let [kq, kp] = key.split2();
        MultiHeadAttention {
            qkv: Linear::new(c, 3 * c, true, kq),
            proj: Linear::new(c, c, true, kp),
            heads: Setting(heads),
            causal: Setting(causal),
        }
    }

    /// Attention over `x` `[B, T, C]`.
    ///
    /// ```
    /// use nabla::{nn::MultiHeadAttention, Array, DType, random::Key};
    /// let att = MultiHeadAttention::new(4, 2, true, Key::new(0));
    /// let x = Key::new(2).normal(&[1, 3, 4], DType::F32);
    /// let y = att.forward(&x);
    /// assert_eq!(y.shape(), &[1, 3, 4]);
    /// // Causal: the first position's output does not depend on later ones.
    /// let y2 = att.forward(&x.slice_axis(1, 0..1));
    /// let (a, b) = (y.slice_axis(1, 0..1).to_vec::<f32>(), y2.to_vec::<f32>());
    /// assert!(a.iter().zip(&b).all(|(p, q)| (p - q).abs() < 1e-6));
    /// ```
    #[track_caller]
    #[differentiable]
    pub fn forward(&self, x: &Array) -> Array {
        let heads = attention_dims("MultiHeadAttention::forward", x.shape(), *self.heads)[3];
        let y = attend(&self.qkv.forward(x), heads, *self.causal);
        self.proj.forward(&y)
    }
}

/// Scaled dot-product attention from the stacked projections `qkv`
/// `[B, T, 3C]` (query, key and value blocks of width `C`, each `heads`
/// heads of `C / heads`), to `[B, T, C]`: the part of
/// [`MultiHeadAttention`] between its two linear layers, shared with the
/// tensor-parallel block (`dist::ParallelAttention`, a rank's heads).
#[track_caller]
#[differentiable]
pub(crate) fn attend(qkv: &Array, #[nondiff] heads: usize, #[nondiff] causal: bool) -> Array {
    let (b, t, c) = (qkv.shape()[0], qkv.shape()[1], qkv.shape()[2] / 3);
    let (h, d) = (heads, c / heads);
    let q = qkv
        .slice_axis(-1, 0..c)
        .reshape(&[b, t, h, d])
        .permute(&[0, 2, 1, 3]);
    let k = qkv
        .slice_axis(-1, c..2 * c)
        .reshape(&[b, t, h, d])
        .permute(&[0, 2, 1, 3]);
    let v = qkv
        .slice_axis(-1, 2 * c..3 * c)
        .reshape(&[b, t, h, d])
        .permute(&[0, 2, 1, 3]);
    let scores = q.matmul(&k.permute(&[0, 1, 3, 2]));
    let att = nabla::composite::rows::attention_softmax(&scores, 1.0 / (d as f64).sqrt(), causal);
    att.matmul(&v).permute(&[0, 2, 1, 3]).reshape(&[b, t, c])
}

/// `[B, T, C, heads, C / heads]` of attention over an input of `shape`, or
/// a panic naming `op`.
#[track_caller]
fn attention_dims(op: &str, shape: impl AsRef<[usize]>, heads: usize) -> [usize; 5] {
    let shape = shape.as_ref();
    let &[b, t, c] = shape else {
        panic!(
            "{op}: expected an input of shape [batch, time, channels], got {shape:?}; reshape it to rank 3"
        )
    };
    if heads == 0 || !c.is_multiple_of(heads) {
        panic!(
            "{op}: {heads} heads do not divide the embedding width {c}; use a head count that divides it"
        );
    }
    [b, t, c, heads, c / heads]
}

/// The transformer's feed-forward part: `fc` (`C → 4C`), exact (erf) GELU,
/// `proj` (`4C → C`).
#[derive(Clone, Debug, Tree)]
pub struct Mlp {
    /// `C → 4C`.
    pub fc: Linear,
    /// `4C → C`.
    pub proj: Linear,
}

impl Mlp {
    /// `proj(gelu(fc(x)))`.
    ///
    /// ```
    /// use nabla::{nn::{Linear, Mlp}, Array, DType, random::Key};
    /// let mlp = Mlp { fc: Linear::new(2, 8, true, Key::new(0)), proj: Linear::new(8, 2, true, Key::new(1)) };
    /// assert_eq!(mlp.forward(&Array::ones(&[5, 2], DType::F32)).shape(), &[5, 2]);
    /// ```
    #[track_caller]
    #[differentiable]
    pub fn forward(&self, x: &Array) -> Array {
        self.proj.forward(&self.fc.forward(x).gelu())
    }
}

/// A pre-LayerNorm transformer block: `x + attn(ln1(x))`, then
/// `x + mlp(ln2(x))`.
#[derive(Clone, Debug, Tree)]
pub struct TransformerBlock {
    /// Before attention.
    pub ln1: LayerNorm,
    /// Causal self-attention.
    pub attn: MultiHeadAttention,
    /// Before the MLP.
    pub ln2: LayerNorm,
    /// The feed-forward part.
    pub mlp: Mlp,
}

impl TransformerBlock {
    /// The block on `x` `[B, T, C]`.
    ///
    /// ```
    /// use nabla::{nn::TransformerBlock, Array, DType, random::Key};
    /// let block = TransformerBlock::new(8, 2, 0.02, Key::new(0));
    /// assert_eq!(block.forward(&Array::ones(&[1, 3, 8], DType::F32)).shape(), &[1, 3, 8]);
    /// ```
    #[track_caller]
    #[differentiable]
    pub fn forward(&self, x: &Array) -> Array {
        let x = x + &self.attn.forward(&self.ln1.forward(x));
        &x + &self.mlp.forward(&self.ln2.forward(&x))
    }

    /// A block of width `c` with `heads` heads; linear weights normal with
    /// standard deviation `std`, biases zero (nanoGPT's initialisation).
    pub fn new(c: usize, heads: usize, std: f64, key: Key) -> TransformerBlock {
        let k = key.split(4);
        let lin = |i: usize, o: usize, k: Key| normal_linear(i, o, true, std, k);
        TransformerBlock {
            ln1: LayerNorm::new(c),
            attn: MultiHeadAttention {
                qkv: lin(c, 3 * c, k[0]),
                proj: lin(c, c, k[1]),
                heads: Setting(heads),
                causal: Setting(true),
            },
            ln2: LayerNorm::new(c),
            mlp: Mlp {
                fc: lin(c, 4 * c, k[2]),
                proj: lin(4 * c, c, k[3]),
            },
        }
    }
}

/// A linear layer with weights normal (mean 0, standard deviation `std`)
/// and a zero bias.
fn normal_linear(inputs: usize, outputs: usize, bias: bool, std: f64, key: Key) -> Linear {
    Linear {
        weight: init::normal(&[outputs, inputs], 0.0, std, DType::F32, key),
        bias: bias.then(|| Array::zeros(&[outputs], DType::F32)),
    }
}

/// Dropout, as `torch.nn.Dropout`: in training each element is zeroed
/// with probability `p` and the others scaled by `1/(1−p)`; in evaluation
/// the identity. The randomness is an explicit [`Key`] (a fresh one per
/// step, e.g. `key.fold_in(step)`); `None` means evaluation.
#[derive(Clone, Debug, Tree)]
pub struct Dropout {
    /// The probability of zeroing an element, in `[0, 1]`.
    pub p: Setting<f64>,
}

impl Dropout {
    /// Dropout with probability `p`.
    ///
    /// ```
    /// use nabla::{nn::Dropout, Array, DType, random::Key};
    /// let drop = Dropout::new(0.5);
    /// let x = Array::ones(&[1000], DType::F32);
    /// assert_eq!(drop.forward(&x, None).to_vec::<f32>(), x.to_vec::<f32>()); // evaluation
    /// let y = drop.forward(&x, Some(Key::new(0))).to_vec::<f32>();
    /// assert!(y.iter().all(|&v| v == 0.0 || v == 2.0));
    /// ```
    #[track_caller]
    pub fn new(p: f64) -> Dropout {
        if !(0.0..=1.0).contains(&p) {
            panic!("Dropout::new: p = {p} is not a probability; pass p in [0, 1]");
        }
        Dropout { p: Setting(p) }
    }

    /// `x` with elements dropped (training, `Some(key)`) or unchanged
    /// (evaluation, `None`). Differentiable: the gradient passes through
    /// the kept elements, scaled like them.
    #[track_caller]
    #[differentiable]
    pub fn forward(&self, x: &Array, key: Option<Key>) -> Array {
        if key.is_some() && *self.p > 0.0 {
            let mask = dropout_mask(*self.p, key, x.shape(), x.dtype(), x.device());
            x * &mask
        } else {
            x.clone()
        }
    }
}

/// Dropout's mask: `1/(1−p)` where a uniform draw from `key` is at least
/// `p`, 0 elsewhere (all 0 for `p = 1`).
fn dropout_mask(
    p: f64,
    key: Option<Key>,
    shape: impl AsRef<[usize]>,
    dtype: DType,
    device: crate::Device,
) -> Array {
    let shape = shape.as_ref();
    let key = key.expect("dropout_mask: called in training only");
    let scale = if p < 1.0 { 1.0 / (1.0 - p) } else { 0.0 };
    let mask: Vec<f64> = key
        .uniform(shape, DType::F64)
        .to_vec::<f64>()
        .into_iter()
        .map(|u| if u >= p { scale } else { 0.0 })
        .collect();
    Array::from_vec(mask, shape).cast(dtype).to_device(device)
}

/// `[n] -> [n, classes]`: 1 at each index, 0 elsewhere, in `dtype` (for
/// cross-entropy against class indices).
///
/// ```
/// use nabla::{nn::one_hot, Array, DType};
/// let y = one_hot(&Array::from_vec(vec![2i64, 0], &[2]), 3, DType::F32);
/// assert_eq!(y.to_vec::<f32>(), vec![0.0, 0.0, 1.0, 1.0, 0.0, 0.0]);
/// ```
#[track_caller]
pub fn one_hot(idx: &Array, classes: usize, dtype: DType) -> Array {
    let rows = indices("one_hot", idx, classes);
    let mut v = vec![0.0f64; rows.len() * classes];
    for (r, &i) in rows.iter().enumerate() {
        v[r * classes + i] = 1.0;
    }
    let mut shape = idx.shape().to_vec();
    shape.push(classes);
    Array::from_vec(v, &shape).cast(dtype)
}

/// `idx` as row numbers below `n`, checked.
#[track_caller]
fn indices(op: &str, idx: &Array, n: usize) -> Vec<usize> {
    if idx.dtype() != DType::I64 {
        panic!(
            "{op}: indices must be an i64 array, got {}; build them with Array::from_vec(vec![..i64], ..)",
            idx.dtype()
        );
    }
    idx.to_vec::<i64>()
        .into_iter()
        .map(|i| {
            if i < 0 || i as usize >= n {
                panic!("{op}: index {i} is out of range for {n} rows; use indices in 0..{n}");
            }
            i as usize
        })
        .collect()
}
