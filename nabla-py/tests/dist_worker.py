"""One rank of the MPI job that tests/test_dist.py starts with mpirun:
checks the collectives, their gradients, their JVPs and jit on N ranks
against values worked out by hand, and prints "rank R ok" when all hold
(an assertion ends the job with a message instead). With the argument
`raise`, rank 1 raises instead while rank 0 waits at a barrier."""

import sys

import numpy as np

import nabla
import nabla.dist as dist

dist.init()
r, n = dist.rank(), dist.world_size()
if "raise" in sys.argv:
    # an uncaught exception on rank 1 ends the job while rank 0 waits
    if r == 1:
        raise RuntimeError("deliberate failure on rank 1")
    dist.barrier()
    print("rank 0 passed a barrier rank 1 never reached", flush=True)
    sys.exit(0)
x = nabla.array(np.arange(4.0) + 10 * r, nabla.float64)
ranks = np.arange(n)

# forward values
total = np.asarray(dist.all_reduce(x))
np.testing.assert_allclose(total, n * np.arange(4.0) + 10 * ranks.sum())
np.testing.assert_allclose(np.asarray(dist.all_reduce(x, "mean")), total / n)
np.testing.assert_allclose(np.asarray(dist.all_reduce(x, "max")), np.arange(4.0) + 10 * (n - 1))
gathered = np.asarray(dist.all_gather(x))
np.testing.assert_allclose(gathered, np.concatenate([np.arange(4.0) + 10 * k for k in ranks]))
big = nabla.array(np.ones(2 * n) * (r + 1), nabla.float64)
np.testing.assert_allclose(np.asarray(dist.reduce_scatter(big)), np.full(2, (ranks + 1).sum()))
np.testing.assert_allclose(np.asarray(dist.broadcast(x, root=n - 1)), np.arange(4.0) + 10 * (n - 1))


# gradients: d/dx of sum(w_r * all_reduce(x)) is all_reduce(w) on every rank
def loss(x):
    return nabla.sum(dist.all_reduce(x) * (r + 1.0))


g = np.asarray(nabla.grad(loss)(x))
np.testing.assert_allclose(g, np.full(4, (ranks + 1).sum()))
# all_gather's transpose: rank r's slice of the summed cotangents
w = nabla.array(np.arange(4.0 * n), nabla.float64)
g = np.asarray(nabla.grad(lambda x: nabla.sum(dist.all_gather(x) * w))(x))
np.testing.assert_allclose(g, n * np.arange(4.0 * r, 4.0 * r + 4))
# broadcast's transpose: the cotangents summed at the root, zero elsewhere
g = np.asarray(nabla.grad(lambda x: nabla.sum(dist.broadcast(x, 0) * (r + 1.0)))(x))
np.testing.assert_allclose(g, np.full(4, (ranks + 1).sum() if r == 0 else 0.0))
# a second derivative goes through too (the rules are collectives again)
h = nabla.grad(lambda x: nabla.sum(nabla.grad(lambda y: nabla.sum(dist.all_reduce(y) ** 3))(x)))(x)
want = 6 * n**2 * (n * np.arange(4.0) + 10 * ranks.sum())  # each rank adds every rank's loss
np.testing.assert_allclose(np.asarray(h), want)
# forward mode
_, t = nabla.jvp(lambda x: dist.all_reduce(x, "mean"), (x,), (nabla.ones((4,), nabla.float64),))
np.testing.assert_allclose(np.asarray(t), np.ones(4))
# jit replays the collective on new values
f = nabla.jit(lambda x: dist.all_reduce(x * 2.0))
f(x)
np.testing.assert_allclose(np.asarray(f(x + 1.0)), 2 * (total + n))
# vmap runs the collective once per example
v = np.asarray(nabla.vmap(dist.all_reduce)(nabla.ones((2, 3), nabla.float64)))
np.testing.assert_allclose(v, np.full((2, 3), float(n)))
# "max" has no rule: a derivative through it names the fix
try:
    nabla.grad(lambda x: nabla.sum(dist.all_reduce(x, "max")))(x)
except ValueError as e:
    assert "max" in str(e) and "sum" in str(e), e
else:
    raise AssertionError("a derivative through all_reduce max should raise")
dist.barrier()
print(f"rank {r} ok", flush=True)
