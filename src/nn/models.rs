//! Models built from [`crate::nn`]'s layers: [`Gpt`], a nanoGPT-style
//! decoder whose parameter names are PyTorch's (`wte.weight`,
//! `blocks.0.attn.qkv.weight`, ..), so a checkpoint written by the same
//! model in PyTorch loads into it with [`crate::io::load`].

use super::{Conv2d, Embedding, LayerNorm, Linear, TransformerBlock, normal_linear};
use crate::{Array, DType, Tree, differentiable, random::Key};

/// The shape of a [`Gpt`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GptConfig {
    /// Tokens in the vocabulary.
    pub vocab: usize,
    /// The longest sequence (positions embedded).
    pub context: usize,
    /// Transformer blocks.
    pub layers: usize,
    /// Attention heads per block (divides `embd`).
    pub heads: usize,
    /// The embedding width `C`.
    pub embd: usize,
}

/// A GPT: token and position embeddings, pre-LayerNorm transformer blocks
/// with causal attention and GELU MLPs, a final LayerNorm and an output
/// projection without bias (nanoGPT's architecture, without dropout or
/// weight tying).
///
/// ```
/// use nabla::nn::models::{Gpt, GptConfig};
/// use nabla::prelude::*;
///
/// let cfg = GptConfig { vocab: 11, context: 8, layers: 2, heads: 2, embd: 16 };
/// let gpt = Gpt::new(&cfg, Key::new(0));
/// let idx = Array::from_vec(vec![1i64, 5, 2, 7, 0, 3], &[2, 3]);
/// assert_eq!(gpt.forward(&idx).shape(), &[2, 3, 11]); // [B, T, vocab]
/// let names: Vec<String> = nabla::tree::named_leaves(&gpt).into_iter().map(|(n, _)| n).collect();
/// assert_eq!(names[..3], ["wte.weight", "wpe.weight", "blocks.0.ln1.weight"]);
/// ```
#[derive(Clone, Debug, Tree)]
pub struct Gpt {
    /// Token embeddings `[vocab, C]`.
    pub wte: Embedding,
    /// Position embeddings `[context, C]`.
    pub wpe: Embedding,
    /// The transformer blocks.
    pub blocks: Vec<TransformerBlock>,
    /// The final LayerNorm.
    pub ln_f: LayerNorm,
    /// `C → vocab`, no bias.
    pub lm_head: Linear,
}

impl Gpt {
    /// A model of shape `cfg` initialised as nanoGPT does: embeddings and
    /// linear weights normal with standard deviation 0.02, biases zero,
    /// LayerNorms the identity.
    #[track_caller]
    pub fn new(cfg: &GptConfig, key: Key) -> Gpt {
        if cfg.heads == 0 || !cfg.embd.is_multiple_of(cfg.heads) {
            panic!(
                "Gpt::new: {} heads do not divide the embedding width {}; use a head count that divides it",
                cfg.heads, cfg.embd
            );
        }
        let std = 0.02;
        let k = key.split(cfg.layers + 3);
        let table = |n: usize, k: Key| Embedding {
            weight: k.normal(&[n, cfg.embd], DType::F32) * std,
        };
        Gpt {
            wte: table(cfg.vocab, k[0]),
            wpe: table(cfg.context, k[1]),
            blocks: (0..cfg.layers)
                .map(|i| TransformerBlock::new(cfg.embd, cfg.heads, std, k[3 + i]))
                .collect(),
            ln_f: LayerNorm::new(cfg.embd),
            lm_head: normal_linear(cfg.embd, cfg.vocab, false, std, k[2]),
        }
    }

    /// Logits `[B, T, vocab]` for the token ids `idx` (`[B, T]`, `i64`,
    /// `T` at most the context).
    #[track_caller]
    #[differentiable]
    pub fn forward(&self, #[nondiff] idx: &Array) -> Array {
        let t = time_steps(idx, self.wpe.weight.shape()[0]);
        let mut x = self.wte.forward(idx) + self.wpe.weight.slice_axis(0, 0..t);
        for i in 0..self.blocks.len() {
            x = self.blocks[i].forward(&x);
        }
        self.lm_head.forward(&self.ln_f.forward(&x))
    }

    /// The mean cross-entropy of the next-token logits against `targets`
    /// (`[B, T]`, `i64`), over all `B · T` positions.
    #[track_caller]
    #[differentiable]
    pub fn loss(&self, #[nondiff] idx: &Array, #[nondiff] targets: &Array) -> Array {
        let logits = self.forward(idx);
        let v = logits.shape()[2];
        let n = logits.numel() / v;
        nabla::cross_entropy(&logits.reshape(&[n, v]), &targets.reshape(&[n]))
    }
}

/// The time steps `T` of token ids `idx` (`[B, T]`) for a model of
/// `context` positions, or a panic that says what to pass.
#[track_caller]
fn time_steps(idx: &Array, context: usize) -> usize {
    let &[_, t] = idx.shape() else {
        panic!(
            "Gpt::forward: expected token ids of shape [batch, time], got {:?}",
            idx.shape()
        )
    };
    if t > context {
        panic!(
            "Gpt::forward: {t} tokens exceed the context of {context}; pass at most {context} per row"
        );
    }
    t
}

/// A multilayer perceptron classifier: [`Linear`] layers with ReLU between
/// them (none after the last), giving logits.
///
/// ```
/// use nabla::nn::models::MlpClassifier;
/// use nabla::prelude::*;
/// let mlp = MlpClassifier::new(&[4, 16, 3], Key::new(0));
/// let x = Array::ones(&[5, 4], DType::F32);
/// assert_eq!(mlp.forward(&x).shape(), &[5, 3]);
/// let names: Vec<String> = nabla::tree::named_leaves(&mlp).into_iter().map(|(n, _)| n).collect();
/// assert_eq!(names, ["layers.0.weight", "layers.0.bias", "layers.1.weight", "layers.1.bias"]);
/// ```
#[derive(Clone, Debug, Tree)]
pub struct MlpClassifier {
    /// `widths[i] → widths[i + 1]`.
    pub layers: Vec<Linear>,
}

impl MlpClassifier {
    /// Layers of the given widths (input first, classes last), initialised
    /// as `torch.nn.Linear`.
    #[track_caller]
    pub fn new(widths: &[usize], key: Key) -> MlpClassifier {
        assert!(
            widths.len() >= 2,
            "MlpClassifier::new: give at least the input width and the number of classes, found {widths:?}"
        );
        let keys = key.split(widths.len() - 1);
        MlpClassifier {
            layers: widths
                .windows(2)
                .zip(keys)
                .map(|(w, k)| Linear::new(w[0], w[1], true, k))
                .collect(),
        }
    }

    /// Logits `[N, classes]` of `x` `[N, inputs]`.
    #[track_caller]
    #[differentiable]
    pub fn forward(&self, x: &Array) -> Array {
        let mut h = x.clone();
        for i in 0..self.layers.len() {
            h = self.layers[i].forward(&h);
            if i + 1 < self.layers.len() {
                h = h.relu();
            }
        }
        h
    }

    /// Mean cross-entropy against class indices `[N]` (`i64`).
    #[track_caller]
    #[differentiable]
    pub fn loss(&self, x: &Array, #[nondiff] labels: &Array) -> Array {
        nabla::cross_entropy(&self.forward(x), labels)
    }
}

/// The shape of a [`Cnn`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CnnConfig {
    /// Input channels.
    pub channels: usize,
    /// Input height and width (each divisible by 4).
    pub height: usize,
    pub width: usize,
    /// Channels of the two convolutions.
    pub features: [usize; 2],
    /// Output classes.
    pub classes: usize,
}

/// A small convolutional classifier: two blocks of 3×3 convolution
/// (padding 1), ReLU and 2×2 max pooling, then a linear layer to the
/// classes.
///
/// ```
/// use nabla::nn::models::{Cnn, CnnConfig};
/// use nabla::prelude::*;
/// let cfg = CnnConfig { channels: 1, height: 8, width: 8, features: [4, 8], classes: 3 };
/// let cnn = Cnn::new(&cfg, Key::new(0));
/// assert_eq!(cnn.forward(&Array::ones(&[2, 1, 8, 8], DType::F32)).shape(), &[2, 3]);
/// ```
#[derive(Clone, Debug, Tree)]
pub struct Cnn {
    /// `channels → features[0]`.
    pub conv1: Conv2d,
    /// `features[0] → features[1]`.
    pub conv2: Conv2d,
    /// `features[1] · (height / 4) · (width / 4) → classes`.
    pub fc: Linear,
}

impl Cnn {
    /// A model of shape `cfg`, initialised as PyTorch's layers.
    #[track_caller]
    pub fn new(cfg: &CnnConfig, key: Key) -> Cnn {
        assert!(
            cfg.height.is_multiple_of(4)
                && cfg.width.is_multiple_of(4)
                && cfg.height > 0
                && cfg.width > 0,
            "Cnn::new: height {} and width {} must be positive multiples of 4 (two 2×2 poolings)",
            cfg.height,
            cfg.width
        );
        let k = key.split(3);
        let [f1, f2] = cfg.features;
        Cnn {
            conv1: Conv2d::new(cfg.channels, f1, [3, 3], k[0]).padding(1),
            conv2: Conv2d::new(f1, f2, [3, 3], k[1]).padding(1),
            fc: Linear::new(
                f2 * (cfg.height / 4) * (cfg.width / 4),
                cfg.classes,
                true,
                k[2],
            ),
        }
    }

    /// Logits `[N, classes]` of images `x` `[N, channels, height, width]`.
    #[track_caller]
    #[differentiable]
    pub fn forward(&self, x: &Array) -> Array {
        let h = nabla::max_pool2d(&self.conv1.forward(x).relu(), &[2, 2], &[2, 2], &[0, 0]);
        let h = nabla::max_pool2d(&self.conv2.forward(&h).relu(), &[2, 2], &[2, 2], &[0, 0]);
        let n = h.shape()[0];
        self.fc.forward(&h.reshape(&[n, h.numel() / n]))
    }

    /// Mean cross-entropy against class indices `[N]` (`i64`).
    #[track_caller]
    #[differentiable]
    pub fn loss(&self, x: &Array, #[nondiff] labels: &Array) -> Array {
        nabla::cross_entropy(&self.forward(x), labels)
    }
}

/// The fraction of rows of `logits` (`[N, classes]`) whose largest entry is
/// at the class in `labels` (`[N]`, `i64`).
///
/// ```
/// use nabla::{nn::models::accuracy, Array};
/// let logits = Array::from_vec(vec![0.1f32, 0.9, 0.8, 0.2], &[2, 2]);
/// assert_eq!(accuracy(&logits, &Array::from_vec(vec![1i64, 1], &[2])), 0.5);
/// ```
#[track_caller]
pub fn accuracy(logits: &Array, labels: &Array) -> f64 {
    let c = logits.shape()[logits.ndim() - 1];
    let (l, y) = (logits.to_vec::<f64>(), labels.to_vec::<i64>());
    assert_eq!(
        l.len(),
        y.len() * c,
        "accuracy: {} labels for logits of shape {:?}",
        y.len(),
        logits.shape()
    );
    let hits = l
        .chunks(c)
        .zip(&y)
        .filter(|&(row, &t)| {
            let best = (0..c).fold(0, |b, j| if row[j] > row[b] { j } else { b });
            best as i64 == t
        })
        .count();
    hits as f64 / y.len().max(1) as f64
}
