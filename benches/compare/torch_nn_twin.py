"""PyTorch eager twin of the `gpt_step` and `conv2d` workloads of
BENCHMARKS.md (benches/common/nn.rs builds the same in Nabla).

gpt_step: the GPT of tests/fixtures/torch/README.md (4 layers, 4 heads,
width 128, context 64, vocabulary 96, f32), batch 16; forward, backward(),
torch.optim.AdamW step (lr 3e-4, weight decay 0.01), zero_grad.
conv2d: Conv2d 3 -> 32, 3x3, padding 1 on [32, 3, 32, 32]; forward,
sum().backward() (input, weight and bias gradients).
Environment as twin_protocol.settings().
"""

import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from twin_protocol import measure, report, settings

VOCAB, CONTEXT, LAYERS, HEADS, EMBD, BATCH = 96, 64, 4, 4, 128, 16


class Attn(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(EMBD, 3 * EMBD)
        self.proj = nn.Linear(EMBD, EMBD)
        mask = torch.tril(torch.ones(CONTEXT, CONTEXT, dtype=torch.bool))
        self.register_buffer("mask", mask)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        shape = (b, t, HEADS, c // HEADS)
        q, k, v = (z.view(shape).transpose(1, 2) for z in (q, k, v))
        att = q @ k.transpose(-2, -1) / math.sqrt(c // HEADS)
        att = att.masked_fill(~self.mask[:t, :t], float("-inf")).softmax(-1)
        return self.proj((att @ v).transpose(1, 2).reshape(b, t, c))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(EMBD)
        self.attn = Attn()
        self.ln2 = nn.LayerNorm(EMBD)
        self.fc = nn.Linear(EMBD, 4 * EMBD)
        self.proj = nn.Linear(4 * EMBD, EMBD)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.proj(F.gelu(self.fc(self.ln2(x))))


class Gpt(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, EMBD)
        self.wpe = nn.Embedding(CONTEXT, EMBD)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.ln_f = nn.LayerNorm(EMBD)
        self.lm_head = nn.Linear(EMBD, VOCAB, bias=False)

    def forward(self, idx):
        t = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(t))
        for b in self.blocks:
            x = b(x)
        return self.lm_head(self.ln_f(x))


def main():
    torch.set_num_threads(os.cpu_count())
    warmup, meas, wanted = settings()
    results = {}
    # `gpt_step_fn` is Nabla's functional mode of the same step; PyTorch's
    # twin is its one (eager) step.
    for name in ["gpt_step", "gpt_step_fn"]:
        if not wanted(name):
            continue
        torch.manual_seed(0)
        gpt = Gpt()
        opt = torch.optim.AdamW(gpt.parameters(), lr=3e-4, weight_decay=0.01)
        idx = torch.randint(0, VOCAB, (BATCH, CONTEXT))
        targets = torch.randint(0, VOCAB, (BATCH, CONTEXT))

        def step():
            logits = gpt(idx)
            loss = F.cross_entropy(logits.view(-1, VOCAB), targets.view(-1))
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            return loss.item()

        results[name] = measure(step, warmup, meas)
    if wanted("conv2d"):
        torch.manual_seed(2)
        conv = nn.Conv2d(3, 32, 3, padding=1)
        x = torch.randn(32, 3, 32, 32, requires_grad=True)

        def conv_step():
            conv(x).sum().backward()
            conv.zero_grad(set_to_none=True)
            x.grad = None

        results["conv2d"] = measure(conv_step, warmup, meas)
    report("torch", torch.__version__, torch.get_num_threads(), results)


if __name__ == "__main__":
    main()
