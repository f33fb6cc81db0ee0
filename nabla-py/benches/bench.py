"""Nabla from Python against PyTorch eager and JAX jit, in the same run,
printing times and ratios (nabla / twin; below 1 is faster).

Workloads (issue 45's targets):
  op_add, op_sin      per-op overhead on 4-element float32 arrays, eager
  mlp_eager           MLP 784-512-512-10, batch 256, f32: forward, backward,
                      SGD update (tape; PyTorch eager)
  mlp_jit             the same step under nabla.jit vs jax.jit
  seed_hessian_eager  jacfwd(jacrev(vmap(foo))) on (2, 3) vs torch.func
  seed_hessian_jit    the same under nabla.jit vs jax.jit
  rosenbrock_jit      gradient of Rosenbrock on 1e6 float64 under jit

Each workload times nabla and its twin in alternating batches and prints
the medians. Run: python nabla-py/benches/bench.py [--quick] [--only NAME,...] [--json FILE]
(needs numpy, torch and jax in the same environment as nabla; not part of
the test suite).
"""

import argparse
import json
import os
import platform
import statistics
import time

import numpy as np

import nabla as nb

try:
    import torch
    import torch.func as tf
except ImportError:  # pragma: no cover
    torch = None
try:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
except ImportError:  # pragma: no cover
    jax = None


def _batch_size(f, seconds):
    """Calls of `f` that take about `seconds`."""
    f()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            f()
        dt = time.perf_counter() - t0
        if dt > seconds / 4:
            break
        n *= 4
    return max(1, int(n * seconds / max(dt, 1e-9)))


def compare(f, g, min_time=0.5, repeat=7):
    """Median seconds per call of `f` and of `g`, timed in alternating
    batches (f, g, f, g, ...) of about `min_time / repeat` seconds each, so
    that a slow spell of a shared machine falls on both sides."""
    per_f, per_g = _batch_size(f, min_time / repeat), _batch_size(g, min_time / repeat)
    tf, tg = [], []
    for _ in range(repeat):
        for fn, per, out in ((f, per_f, tf), (g, per_g, tg)):
            t0 = time.perf_counter()
            for _ in range(per):
                fn()
            out.append((time.perf_counter() - t0) / per)
    return statistics.median(tf), statistics.median(tg)


def op_overhead(quick):
    a, b = nb.ones((4,), nb.float32), nb.ones((4,), nb.float32)
    ta, tb = torch.ones(4), torch.ones(4)
    yield "op_add", lambda: a + b, "torch eager", lambda: ta + tb, 0.5
    yield "op_sin", lambda: nb.sin(a), "torch eager", lambda: torch.sin(ta), 0.5


def _mlp_params(rng):
    sizes = [(784, 512), (512, 512), (512, 10)]
    out = []
    for i, o in sizes:
        out.append((rng.standard_normal((i, o)) / np.sqrt(i)).astype(np.float32))
        out.append(np.zeros(o, np.float32))
    return out


def mlp(quick):
    rng = np.random.default_rng(0)
    ps = _mlp_params(rng)
    x = rng.standard_normal((256, 784)).astype(np.float32)
    y = rng.integers(0, 10, 256)
    lr = 1e-3

    # nabla eager: the tape
    nps = [nb.array(p).requires_grad_() for p in ps]
    nx, ny = nb.array(x), nb.array(y)

    def nb_loss(p, x, y):
        h = nb.relu(x @ p[0] + p[1])
        h = nb.relu(h @ p[2] + p[3])
        return nb.cross_entropy(h @ p[4] + p[5], y)

    opt = nb.optim.SGD(nps, lr=lr)

    def nb_step():
        nb_loss(nps, nx, ny).backward()
        opt.step()
        opt.zero_grad()

    tps = [torch.tensor(p, requires_grad=True) for p in ps]
    tx, ty = torch.tensor(x), torch.tensor(y)
    topt = torch.optim.SGD(tps, lr=lr)

    def t_step():
        h = torch.relu(tx @ tps[0] + tps[1])
        h = torch.relu(h @ tps[2] + tps[3])
        loss = torch.nn.functional.cross_entropy(h @ tps[4] + tps[5], ty)
        loss.backward()
        topt.step()
        topt.zero_grad()

    yield "mlp_eager", nb_step, "torch eager", t_step, 4.0

    # jit: one recorded step returning loss and updated parameters
    def nb_update(p, x, y):
        loss, g = nb.value_and_grad(nb_loss)(p, x, y)
        return loss, [w - lr * gw for w, gw in zip(p, g)]

    nb_jit = nb.jit(nb_update)
    state = {"p": [nb.array(p) for p in ps]}

    def nb_jit_step():
        _, state["p"] = nb_jit(state["p"], nx, ny)

    def j_loss(p, x, y):
        h = jax.nn.relu(x @ p[0] + p[1])
        h = jax.nn.relu(h @ p[2] + p[3])
        logits = h @ p[4] + p[5]
        return -jnp.mean(jax.nn.log_softmax(logits)[jnp.arange(y.shape[0]), y])

    @jax.jit
    def j_update(p, x, y):
        loss, g = jax.value_and_grad(j_loss)(p, x, y)
        return loss, [w - lr * gw for w, gw in zip(p, g)]

    jstate = {"p": [jnp.asarray(p) for p in ps]}
    jx, jy = jnp.asarray(x), jnp.asarray(y)

    def j_step():
        loss, jstate["p"] = j_update(jstate["p"], jx, jy)
        loss.block_until_ready()

    yield "mlp_jit", nb_jit_step, "jax jit", j_step, 4.0


def seed_hessian(quick):
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)

    def foo(args):
        return [nb.sum(nb.sin(args[0]))]

    h = nb.jacfwd(nb.jacrev(nb.vmap(foo)))
    nx = nb.array(x)

    def tfoo(a):
        return torch.sum(torch.sin(a))

    th = tf.jacfwd(tf.jacrev(tf.vmap(tfoo)))
    tx = torch.tensor(x)
    yield "seed_hessian_eager", lambda: h([nx]), "torch.func", lambda: th(tx), 1.0

    hj = nb.jit(h)

    def jfoo(a):
        return jnp.sum(jnp.sin(a))

    jh = jax.jit(jax.jacfwd(jax.jacrev(jax.vmap(jfoo))))
    jx = jnp.asarray(x)
    yield "seed_hessian_jit", lambda: hj([nx]), "jax jit", lambda: jh(jx).block_until_ready(), 1.0


def rosenbrock(quick):
    n = 10**5 if quick else 10**6
    x = np.random.default_rng(0).standard_normal(n)

    def f(x):
        a, b = x[:-1], x[1:]
        return nb.sum(100.0 * (b - a * a) ** 2 + (1.0 - a) ** 2)

    g = nb.jit(nb.grad(f))
    nx = nb.array(x, nb.float64)

    def jf(x):
        a, b = x[:-1], x[1:]
        return jnp.sum(100.0 * (b - a * a) ** 2 + (1.0 - a) ** 2)

    jg = jax.jit(jax.grad(jf))
    jx = jnp.asarray(x)
    np.testing.assert_allclose(np.asarray(g(nx)), np.asarray(jg(jx)), rtol=1e-10)
    yield "rosenbrock_jit", lambda: g(nx), "jax jit", lambda: jg(jx).block_until_ready(), 4.0


GROUPS = [op_overhead, mlp, seed_hessian, rosenbrock]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument("--json", default="")
    args = ap.parse_args()
    only = set(filter(None, args.only.split(",")))
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cpus; python {platform.python_version()}")
    print(f"torch {torch.__version__ if torch else '-'} (threads {torch.get_num_threads() if torch else '-'}), "
          f"jax {jax.__version__ if jax else '-'}, nabla {nb.__version__}")
    print(f"{'workload':20} {'nabla':>12} {'twin':>12} {'twin name':>12} {'ratio':>7}")
    rows = []
    for group in GROUPS:
        for name, f_nb, twin, f_tw, seconds in group(args.quick):
            if only and name not in only:
                continue
            t_nb, t_tw = compare(f_nb, f_tw, seconds / 4 if args.quick else seconds)
            ratio = t_nb / t_tw
            rows.append({"workload": name, "nabla_s": t_nb, "twin": twin, "twin_s": t_tw, "ratio": ratio})
            print(f"{name:20} {t_nb * 1e6:10.2f}us {t_tw * 1e6:10.2f}us {twin:>12} {ratio:7.2f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
