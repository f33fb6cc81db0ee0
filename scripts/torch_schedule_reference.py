#!/usr/bin/env python3
"""Writes tests/fixtures/torch_schedules.json: torch.optim runs under
learning-rate schedulers (the parameters after each step) and
torch.nn.utils.clip_grad_norm_ (total norm and clipped gradients), in
float32 and float64, from fixed parameters and gradients.
tests/it/optim_schedules.rs replays them with nabla::optim.

Schedules, as nabla::optim::Schedule names them:
- linear(init, end, steps): LinearLR(start_factor=init/lr, end_factor=end/lr, total_iters=steps)
- cosine(peak, steps, end): CosineAnnealingLR(T_max=steps, eta_min=end)
- warmup_cosine(init, peak, warmup, total, end): SequentialLR of
  LinearLR(init/peak -> 1 over warmup) then CosineAnnealingLR(T_max=total-warmup, eta_min=end)

Regenerate with: benches/compare/.venv/bin/python scripts/torch_schedule_reference.py
"""
import json

import torch

STEPS = 14
SHAPE = (4, 6)

RUNS = [
    ("sgd", dict(lr=0.1, momentum=0.9), ("linear", [0.02, 0.1, 5])),
    ("adamw", dict(lr=1e-2, betas=(0.9, 0.95), weight_decay=0.1), ("cosine", [1e-2, 14, 1e-3])),
    ("adam", dict(lr=3e-3), ("warmup_cosine", [0.0, 3e-3, 4, 14, 3e-4])),
    ("sgd", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.01), ("warmup_cosine", [0.005, 0.05, 3, 13, 0.0])),
]


def enc(t):
    return {"shape": list(t.shape), "data": t.detach().reshape(-1).tolist()}


def scheduler(opt, kind, a):
    S = torch.optim.lr_scheduler
    if kind == "linear":
        init, end, steps = a
        return S.LinearLR(opt, start_factor=init / opt.defaults["lr"], end_factor=end / opt.defaults["lr"], total_iters=steps)
    if kind == "cosine":
        peak, steps, end = a
        return S.CosineAnnealingLR(opt, T_max=steps, eta_min=end)
    init, peak, warmup, total, end = a
    return S.SequentialLR(
        opt,
        [S.LinearLR(opt, start_factor=max(init / peak, 1e-12), end_factor=1.0, total_iters=warmup),
         S.CosineAnnealingLR(opt, T_max=total - warmup, eta_min=end)],
        milestones=[warmup],
    )


def main():
    runs = []
    for dtype in (torch.float32, torch.float64):
        for kind, kw, (skind, sargs) in RUNS:
            g = torch.Generator().manual_seed(100 + len(runs))
            p0 = torch.randn(SHAPE, generator=g, dtype=torch.float64).to(dtype)
            grads = [torch.randn(SHAPE, generator=g, dtype=torch.float64).to(dtype) for _ in range(STEPS)]
            p = p0.clone().requires_grad_()
            cls = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW}[kind]
            opt = cls([p], foreach=False, **kw)
            sched = scheduler(opt, skind, sargs)
            after, lrs = [], []
            for gr in grads:
                lrs.append(opt.param_groups[0]["lr"])
                p.grad = gr.clone()
                opt.step()
                sched.step()
                after.append(enc(p))
            runs.append({
                "optimizer": kind,
                "settings": {k: list(v) if isinstance(v, tuple) else v for k, v in kw.items()},
                "schedule": {"kind": skind, "args": sargs},
                "dtype": "f32" if dtype == torch.float32 else "f64",
                "param": enc(p0), "grads": [enc(x) for x in grads], "lrs": lrs, "after": after,
            })
    clips = []
    for dtype in (torch.float32, torch.float64):
        for max_norm in (0.5, 1e3):
            g = torch.Generator().manual_seed(7 + len(clips))
            grads = [torch.randn(s, generator=g, dtype=torch.float64).to(dtype) for s in ((3, 4), (5,), ())]
            ps = [torch.zeros_like(x, requires_grad=True) for x in grads]
            for p, x in zip(ps, grads):
                p.grad = x.clone()
            total = torch.nn.utils.clip_grad_norm_(ps, max_norm, foreach=False)
            clips.append({
                "dtype": "f32" if dtype == torch.float32 else "f64", "max_norm": max_norm,
                "grads": [enc(x) for x in grads], "total_norm": float(total),
                "clipped": [enc(p.grad) for p in ps],
            })
    out = {"generator": f"torch {torch.__version__}, single-tensor CPU path", "runs": runs, "clip": clips}
    with open("tests/fixtures/torch_schedules.json", "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
