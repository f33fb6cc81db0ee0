"""Nabla from Python: arrays, PyTorch-style autograd, and JAX-style
transforms (grad, vjp, jvp, vmap, jacfwd, jacrev, hessian) of Python
functions.

The arrays and every derivative rule run in Nabla's Rust runtime (the
extension module `nabla._nabla`); the transforms of Python functions run
the runtime's rules at run time (`nabla::dynamic`).

    >>> import nabla
    >>> x = nabla.array([0.0, 1.0])
    >>> nabla.grad(lambda x: nabla.sum(nabla.sin(x)))(x).tolist()
    [1.0, 0.5403022766113281]
"""

import contextlib as _contextlib
from typing import Iterator as _Iterator

from nabla import _nabla
from nabla._nabla import *  # noqa: F401,F403  (arrays, ops, creation)
from nabla._nabla import Array as Array, DType as DType, __version__ as __version__, random as random
from nabla._transforms import (
    checkpoint as checkpoint,
    remat as remat,
    grad as grad,
    hessian as hessian,
    jacfwd as jacfwd,
    jacrev as jacrev,
    jvp as jvp,
    value_and_grad as value_and_grad,
    vjp as vjp,
    vmap as vmap,
)
from nabla._jit import jit as jit, make_jaxpr as make_jaxpr, trace as trace
from nabla._tree import (
    tree_flatten as tree_flatten,
    tree_leaves as tree_leaves,
    tree_map as tree_map,
    tree_unflatten as tree_unflatten,
)
from nabla import nn as nn
from nabla import optim as optim
from nabla import io as io
from nabla import linalg as linalg
from nabla import dist as dist
from nabla.nn import _layers as _nn_layers  # noqa: F401  (conv2d, ... into nabla.nn.functional)

# NumPy/JAX spellings of the same ops.
absolute = _nabla.abs
power = _nabla.pow
arctan2 = _nabla.atan2
concat = _nabla.concatenate
amax = _nabla.max
amin = _nabla.min


@_contextlib.contextmanager
def no_grad() -> _Iterator[None]:
    """Operations inside record nothing on the imperative tape (as
    `torch.no_grad()`)."""
    prev = _nabla._set_grad_enabled(False)
    try:
        yield
    finally:
        _nabla._set_grad_enabled(prev)
