"""The GPT of tests/fixtures/torch/README.md in PyTorch (pre-LayerNorm
blocks, causal attention, exact GELU, untied lm_head without bias), for the
PyTorch twins of Nabla's GPT benchmarks (torch_nn_twin.py on the CPU,
torch_gpu_twin.py on a GPU)."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Attn(nn.Module):
    def __init__(self, context, heads, embd):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(embd, 3 * embd)
        self.proj = nn.Linear(embd, embd)
        mask = torch.tril(torch.ones(context, context, dtype=torch.bool))
        self.register_buffer("mask", mask)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        shape = (b, t, self.heads, c // self.heads)
        q, k, v = (z.view(shape).transpose(1, 2) for z in (q, k, v))
        att = q @ k.transpose(-2, -1) / math.sqrt(c // self.heads)
        att = att.masked_fill(~self.mask[:t, :t], float("-inf")).softmax(-1)
        return self.proj((att @ v).transpose(1, 2).reshape(b, t, c))


class Block(nn.Module):
    def __init__(self, context, heads, embd):
        super().__init__()
        self.ln1 = nn.LayerNorm(embd)
        self.attn = Attn(context, heads, embd)
        self.ln2 = nn.LayerNorm(embd)
        self.fc = nn.Linear(embd, 4 * embd)
        self.proj = nn.Linear(4 * embd, embd)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.proj(F.gelu(self.fc(self.ln2(x))))


class Gpt(nn.Module):
    def __init__(self, vocab, context, layers, heads, embd):
        super().__init__()
        self.wte = nn.Embedding(vocab, embd)
        self.wpe = nn.Embedding(context, embd)
        self.blocks = nn.ModuleList(Block(context, heads, embd) for _ in range(layers))
        self.ln_f = nn.LayerNorm(embd)
        self.lm_head = nn.Linear(embd, vocab, bias=False)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(t, device=idx.device))
        for b in self.blocks:
            x = b(x)
        return self.lm_head(self.ln_f(x))
