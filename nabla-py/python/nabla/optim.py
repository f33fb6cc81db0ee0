"""Optimizers as `torch.optim`'s, running the Rust update rules:

    opt = nabla.optim.AdamW(model.parameters(), lr=1e-3)
    loss.backward(); opt.step(); opt.zero_grad()

`step(grads)` takes the gradients explicitly (a list like the parameters,
or a dict like `model.params` from `nabla.grad`). `lr` is a number or a
schedule from `nabla.optim.schedules`."""

from types import SimpleNamespace
from typing import Any

from nabla._nabla import _optim

Optimizer = _optim.Optimizer
Schedule = _optim.Schedule
SGD = _optim.SGD
Adam = _optim.Adam
AdamW = _optim.AdamW
clip_grad_norm_ = _optim.clip_grad_norm_

schedules = SimpleNamespace(
    constant=_optim.constant,
    linear=_optim.linear,
    cosine=_optim.cosine,
    warmup_cosine=_optim.warmup_cosine,
)


def grads_list(params: Any, grads: Any) -> list:
    """The gradients in the parameters' order, from a list or from a dict
    keyed like a model's `params`."""
    if isinstance(grads, dict):
        return [grads[k] for k in params]
    return list(grads)


__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "Schedule", "clip_grad_norm_", "schedules", "grads_list"]
