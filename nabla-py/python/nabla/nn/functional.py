"""Activations and losses under PyTorch's names; each runs on tracers, so
it can be differentiated and vmapped."""

from nabla._nabla import (  # noqa: F401
    cross_entropy,
    elu,
    gelu,
    gelu_tanh,
    hard_tanh,
    leaky_relu,
    log_sigmoid,
    log_softmax,
    mish,
    mse_loss,
    relu,
    sigmoid,
    silu,
    softmax,
    softplus,
    tanh,
)

# The public names (explicit re-exports for type checkers).
__all__ = [
    "cross_entropy",
    "elu",
    "gelu",
    "gelu_tanh",
    "hard_tanh",
    "leaky_relu",
    "log_sigmoid",
    "log_softmax",
    "mish",
    "mse_loss",
    "relu",
    "sigmoid",
    "silu",
    "softmax",
    "softplus",
    "tanh",
]
