#!/usr/bin/env python3
"""Writes tests/fixtures/torch_optim.json: parameters after each of three
torch.optim steps (single-tensor CPU path, the default on CPU) for several
optimizer settings, in float32 and float64, from fixed parameters and
gradients. tests/it/optim.rs replays the same steps with nabla::optim.

Regenerate with: benches/compare/.venv/bin/python scripts/torch_optim_reference.py
"""
import json

import torch

CONFIGS = [
    ("sgd", dict(lr=0.1)),
    ("sgd", dict(lr=0.05, weight_decay=0.01)),
    ("sgd", dict(lr=0.1, momentum=0.9)),
    ("sgd", dict(lr=0.1, momentum=0.8, dampening=0.3, weight_decay=0.02)),
    ("sgd", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("adam", dict(lr=1e-2)),
    ("adam", dict(lr=3e-3, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1)),
    ("adamw", dict(lr=1e-2)),
    ("adamw", dict(lr=3e-3, betas=(0.85, 0.99), eps=1e-7, weight_decay=0.2)),
]
STEPS = 3
SHAPE = (5, 7)


def enc(t):
    return {"shape": list(t.shape), "data": t.detach().reshape(-1).tolist()}


def main():
    cases = []
    for dtype in (torch.float32, torch.float64):
        for kind, kw in CONFIGS:
            g = torch.Generator().manual_seed(len(cases))
            p0 = torch.randn(SHAPE, generator=g, dtype=torch.float64).to(dtype)
            grads = [torch.randn(SHAPE, generator=g, dtype=torch.float64).to(dtype) for _ in range(STEPS)]
            p = p0.clone().requires_grad_()
            opt = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW}[kind](
                [p], foreach=False, **kw
            )
            after = []
            for gr in grads:
                p.grad = gr.clone()
                opt.step()
                after.append(enc(p))
            cases.append(
                {
                    "optimizer": kind,
                    "settings": {k: list(v) if isinstance(v, tuple) else v for k, v in kw.items()},
                    "dtype": "f32" if dtype == torch.float32 else "f64",
                    "param": enc(p0),
                    "grads": [enc(x) for x in grads],
                    "after": after,
                }
            )
    out = {"generator": f"torch {torch.__version__}, single-tensor CPU path", "cases": cases}
    with open("tests/fixtures/torch_optim.json", "w") as f:
        json.dump(out, f)
    print(f"wrote {len(cases)} cases to tests/fixtures/torch_optim.json")


main()
