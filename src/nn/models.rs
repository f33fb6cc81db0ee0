//! Models built from [`crate::nn`]'s layers: [`Gpt`], a nanoGPT-style
//! decoder whose parameter names are PyTorch's (`wte.weight`,
//! `blocks.0.attn.qkv.weight`, ..), so a checkpoint written by the same
//! model in PyTorch loads into it with [`crate::io::load`].

use super::{Embedding, LayerNorm, Linear, TransformerBlock, normal_linear};
use crate::{Array, DType, Tree, random::Key};

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
    pub fn forward(&self, idx: &Array) -> Array {
        let t = match idx.shape() {
            &[_, t] => t,
            s => panic!("Gpt::forward: expected token ids of shape [batch, time], got {s:?}"),
        };
        let context = self.wpe.weight.shape()[0];
        if t > context {
            panic!(
                "Gpt::forward: {t} tokens exceed the context of {context}; pass at most {context} per row"
            );
        }
        let mut x = self.wte.forward(idx) + self.wpe.weight.slice_axis(0, 0..t);
        for block in &self.blocks {
            x = block.forward(&x);
        }
        self.lm_head.forward(&self.ln_f.forward(&x))
    }

    /// The mean cross-entropy of the next-token logits against `targets`
    /// (`[B, T]`, `i64`), over all `B · T` positions.
    #[track_caller]
    pub fn loss(&self, idx: &Array, targets: &Array) -> Array {
        let logits = self.forward(idx);
        let v = logits.shape()[2];
        let n = logits.numel() / v;
        let onehot = super::one_hot(&targets.reshape(&[n]), v, logits.dtype());
        crate::cross_entropy(&logits.reshape(&[n, v]), &onehot)
    }
}
