"""PyTorch twin of benches/rss.rs: the same imperative MLP and GPT training
loops, RSS (MiB, /proc/self/statm) at steps 10^3, 10^4, ... up to argv[1].
Prints one JSON object {loop: {"rss": [...], "seconds": s}}."""

import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(__file__))
from torch_gpt import Gpt  # noqa: E402


def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20


def marks(n):
    m, s = [], 1000
    while s < n:
        m.append(s)
        s *= 10
    return m + [n]


def run(n, step):
    want, rss = set(marks(n)), []
    t = time.perf_counter()
    for i in range(n):
        step(i)
        if i + 1 in want:
            rss.append(rss_mib())
    return {"rss": rss, "seconds": time.perf_counter() - t}


def main():
    n = int(sys.argv[1])
    torch.manual_seed(0)
    x = torch.randn(64, 16)
    y = x.sum(1, keepdim=True).sin()
    mlp = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.Tanh(), torch.nn.Linear(64, 1))
    opt = torch.optim.SGD(mlp.parameters(), lr=0.01, momentum=0.9)

    def mlp_step(_):
        opt.zero_grad()
        torch.nn.functional.mse_loss(mlp(x), y).backward()
        opt.step()

    out = {"mlp_tape": run(n, mlp_step)}
    gpt = Gpt(65, 32, 2, 4, 48)
    adam = torch.optim.AdamW(gpt.parameters(), lr=1e-3, weight_decay=0.0)
    batches = [(torch.randint(0, 65, (4, 32)), torch.randint(0, 65, (4, 32))) for _ in range(8)]

    def gpt_step(i):
        bx, by = batches[i % len(batches)]
        adam.zero_grad()
        logits = gpt(bx)
        torch.nn.functional.cross_entropy(logits.reshape(-1, 65), by.reshape(-1)).backward()
        adam.step()

    out["gpt_tape"] = run(n, gpt_step)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
