"""Writes tests/fixtures/jax_compositions.json: JAX's values for every
single transform, every pair and a set of triples of transforms applied to
a set of functions (the composition matrix of tests/it/transforms/matrix.rs).

Run outside CI, in a virtual environment with jax installed:

    python3 -m venv /tmp/jaxenv && /tmp/jaxenv/bin/pip install jax jaxlib numpy
    /tmp/jaxenv/bin/python scripts/jax_compositions.py

Each function here has a #[differentiable] twin in matrix.rs with the same
formula. A chain "jacfwd.jacrev" is jacfwd(jacrev(f)). Arguments carry one
extra leading axis of size 2 per vmap in the chain; `jvp` takes one tangent
per argument, `vjp` one cotangent of the output's shape. A chain JAX
rejects (grad of a non-scalar) is under "rejected", with its arguments.
"""

import itertools
import json
import os

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)


def bump(x):  # scalar -> scalar (0-d arrays)
    return jnp.sin(x) * x * x + jnp.exp(x * 0.5)


def bowl(x):  # vector -> scalar
    return jnp.sum(x * x * x + jnp.sin(x)) * jnp.sum(jnp.tanh(x))


def wave(x):  # vector -> vector
    return jnp.sin(x) * jnp.sum(x * x) + x * x * x


def pair(x, a):  # two arguments -> scalar
    return jnp.sum(jnp.tanh(x * a)) + jnp.sum(x * x * a)


def looped(x):  # a loop carrying a value
    h = x
    for _ in range(4):
        h = jnp.sin(h * 0.9) + x * 0.1
    return jnp.sum(h * h)


def soft(x):  # calls a custom op (softplus) in the Rust twin
    return jnp.sum(jax.nn.softplus(x * x) * x)


def softplus_op(x):  # the custom op itself, vector -> vector
    return jax.nn.softplus(x)


FUNCTIONS = {
    "bump": (bump, [()]),
    "bowl": (bowl, [(3,)]),
    "wave": (wave, [(3,)]),
    "pair": (pair, [(3,), (3,)]),
    "looped": (looped, [(3,)]),
    "soft": (soft, [(3,)]),
    "softplus_op": (softplus_op, [(3,)]),
}

INNER = ["grad", "vmap", "jacfwd", "jacrev", "hessian"]
OUTER = INNER + ["jvp", "vjp"]
TRIPLES = [
    "jacfwd.jacrev.vmap",
    "vmap.jacfwd.grad",
    "jvp.vmap.grad",
    "vjp.jacrev.vmap",
    "jacrev.jacrev.jacrev",
    "jacfwd.jacfwd.jacfwd",
    "vmap.vmap.hessian",
    "grad.jacfwd.jacrev",
    "grad.grad.grad",
    "jvp.jacfwd.grad",
    "vjp.hessian.vmap",
    "hessian.vmap.grad",
]


def chains():
    out = list(OUTER)
    out += [f"{o}.{i}" for o, i in itertools.product(OUTER, INNER)]
    return out + TRIPLES


def wrap(name, g):
    return {
        "grad": jax.grad,
        "vmap": jax.vmap,
        "jacfwd": jax.jacfwd,
        "jacrev": jax.jacrev,
        "hessian": jax.hessian,
    }[name](g)


def enc(a):
    a = np.asarray(a, dtype=np.float64)
    return {"shape": list(a.shape), "data": [float(v) for v in a.reshape(-1)]}


def arguments(shapes, chain, rng):
    """The arguments (and tangents or cotangent) of a chain, its rejected
    cases included: one leading axis of size 2 per vmap."""
    names = chain.split(".")
    batch = (2,) * names.count("vmap")
    args = [jnp.asarray(rng.normal(size=batch + s)) for s in shapes]
    if names[0] == "jvp":
        return args, [jnp.asarray(rng.normal(size=a.shape)) for a in args]
    return args, []


def run(f, shapes, chain, rng):
    names = chain.split(".")
    args, ts = arguments(shapes, chain, rng)
    last = names[0]
    g = f
    for n in reversed(names[1:] if last in ("jvp", "vjp") else names):
        g = wrap(n, g)
    if last == "jvp":
        y, t = jax.jvp(g, tuple(args), tuple(ts))
        return args + ts, [y, t]
    if last == "vjp":
        y, pullback = jax.vjp(g, *args)
        ct = jnp.asarray(rng.normal(size=np.shape(y)))
        return args + [ct], [y, *pullback(ct)]
    return args, [g(*args)]


def main():
    rng = np.random.default_rng(7)
    out = {"generator": f"jax {jax.__version__}, float64, numpy seed 7", "functions": {}}
    for fname, (f, shapes) in FUNCTIONS.items():
        cases, rejected = {}, {}
        for chain in chains():
            try:
                ins, outs = run(f, shapes, chain, rng)
            except TypeError:
                # The arguments a caller would pass (a vjp's cotangent: 0-d).
                args, ts = arguments(shapes, chain, rng)
                extra = [jnp.zeros(())] if chain.startswith("vjp") else []
                rejected[chain] = {"inputs": [enc(a) for a in args + ts + extra]}
                continue
            cases[chain] = {"inputs": [enc(a) for a in ins], "outputs": [enc(a) for a in outs]}
        out["functions"][fname] = {"cases": cases, "rejected": rejected}
    path = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "jax_compositions.json")
    with open(path, "w") as fh:
        json.dump(out, fh, separators=(",", ":"))
    n = sum(len(v["cases"]) for v in out["functions"].values())
    print(f"wrote {n} cases to {os.path.normpath(path)}")


if __name__ == "__main__":
    main()
