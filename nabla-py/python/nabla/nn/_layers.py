"""Convolution, pooling, normalisation and embedding under PyTorch's names
(`conv1d`, `conv2d`, `conv3d`, `max_pool2d`, `avg_pool2d`, `layer_norm`,
`rms_norm`, `embedding`; nabla-py/src/layers.rs), added to
`nabla.nn.functional` when `nabla` is imported. Like the activations, each
runs on tracers, so it can be differentiated, vmapped and jitted."""

from nabla._nabla import (
    avg_pool2d,
    conv1d,
    conv2d,
    conv3d,
    embedding,
    layer_norm,
    max_pool2d,
    rms_norm,
)
from nabla.nn import functional as _functional

__all__ = [
    "avg_pool2d",
    "conv1d",
    "conv2d",
    "conv3d",
    "embedding",
    "layer_norm",
    "max_pool2d",
    "rms_norm",
]

for _name in __all__:
    setattr(_functional, _name, globals()[_name])
    if _name not in _functional.__all__:
        _functional.__all__.append(_name)
