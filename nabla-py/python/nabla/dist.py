"""Distributed execution over MPI: the collectives of Rust's `nabla::dist`
on arrays, differentiable (an all-reduce's cotangent is an all-reduce, an
all-gather's a reduce-scatter, a broadcast's a sum at its root), under
`grad`, `jvp` and `jit`.

Available when the package is built with MPI (OpenMPI's `libopenmpi-dev`
and libclang installed)::

    MATURIN_PEP517_ARGS="--features mpi" pip install ./nabla-py
    mpirun -n 2 python train.py

    >>> import nabla, nabla.dist as dist          # doctest: +SKIP
    >>> dist.init()                                # doctest: +SKIP
    >>> total = dist.all_reduce(nabla.ones((3,)))  # [N, N, N] on N ranks

`available` tells whether this build has MPI; without it, every function
raises `RuntimeError` saying how to build it.
"""

import atexit
import sys

from nabla import _nabla

_dist = getattr(_nabla, "_dist", None)
available = _dist is not None
_started = False

_HOW = (
    "nabla.dist: this build of nabla has no MPI; install OpenMPI (libopenmpi-dev, openmpi-bin) "
    'and libclang, then reinstall with MATURIN_PEP517_ARGS="--features mpi" pip install ./nabla-py'
)


def _need():
    if _dist is None:
        raise RuntimeError(_HOW)
    return _dist


def init() -> None:
    """Starts MPI (once; later calls do nothing) and ends it at exit. Run
    plainly, the world is one rank; under `mpirun -n N`, N ranks.

    Errors stay Python exceptions a rank may catch; one that reaches the
    top of a rank prints its traceback and ends every rank (`MPI_Abort`),
    so the others do not wait for it in their next collective."""
    global _started
    _need().init()
    if not _started:
        _started = True
        atexit.register(_dist.finalize)
        previous = sys.excepthook

        def abort_job(kind, value, tb):
            previous(kind, value, tb)
            sys.stderr.flush()
            _dist.abort(1)

        sys.excepthook = abort_job


def finalize() -> None:
    """Ends MPI now (`MPI_Finalize`); otherwise it ends at exit."""
    _need().finalize()


def rank() -> int:
    """This process's rank, 0 to `world_size() - 1`."""
    return _need().rank()


def world_size() -> int:
    """The number of ranks."""
    return _need().world_size()


def barrier() -> None:
    """Waits until every rank reaches it."""
    _need().barrier()


def all_reduce(x, op: str = "sum"):
    """The elementwise `op` ("sum", "mean" or "max") of `x` over every
    rank, on every rank. "max" runs on concrete arrays only (no rule)."""
    return _need().all_reduce(x, op)


def all_gather(x):
    """Every rank's `x` concatenated along axis 0 in rank order."""
    return _need().all_gather(x)


def reduce_scatter(x):
    """The sum over ranks of `x`, split along axis 0: rank r keeps part r."""
    return _need().reduce_scatter(x)


def broadcast(x, root: int = 0):
    """Rank `root`'s `x` on every rank."""
    return _need().broadcast(x, root)


__all__ = [
    "available",
    "init",
    "finalize",
    "rank",
    "world_size",
    "barrier",
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "broadcast",
]
