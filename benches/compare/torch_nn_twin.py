"""PyTorch eager twin of the `gpt_step` and `conv2d` workloads of
BENCHMARKS.md (benches/common/nn.rs builds the same in Nabla).

gpt_step: the GPT of tests/fixtures/torch/README.md (4 layers, 4 heads,
width 128, context 64, vocabulary 96, f32), batch 16; forward, backward(),
torch.optim.AdamW step (lr 3e-4, weight decay 0.01), zero_grad.
conv2d: Conv2d 3 -> 32, 3x3, padding 1 on [32, 3, 32, 32]; forward,
sum().backward() (input, weight and bias gradients).
Environment as twin_protocol.settings().
"""

import os

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch_gpt import Gpt
from twin_protocol import measure, report, settings

VOCAB, CONTEXT, LAYERS, HEADS, EMBD, BATCH = 96, 64, 4, 4, 128, 16


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
        gpt = Gpt(VOCAB, CONTEXT, LAYERS, HEADS, EMBD)
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
