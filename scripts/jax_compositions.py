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


def lin_x(x, p):  # a tree (w, b) riding along: derivatives w.r.t. x
    w, b = p
    return jnp.sum(jnp.tanh(x * w + b)) + jnp.sum(x * x * w) * b


def lin_p(p, x):  # derivatives w.r.t. the tree (w, b)
    return lin_x(x, p)


def with_aux(x):  # (value, aux) for has_aux, and value_and_grad
    return jnp.sum(x * x * jnp.sin(x)), jnp.tanh(x) * x


def value_only(x):
    return with_aux(x)[0]


FUNCTIONS = {
    "bump": (bump, [()]),
    "bowl": (bowl, [(3,)]),
    "wave": (wave, [(3,)]),
    "pair": (pair, [(3,), (3,)]),
    "looped": (looped, [(3,)]),
    "soft": (soft, [(3,)]),
    "softplus_op": (softplus_op, [(3,)]),
    # A list of shapes is a tree argument: a tuple of arrays.
    "lin_x": (lin_x, [(3,), [(3,), ()]]),
    "lin_p": (lin_p, [[(3,), ()], (3,)]),
    "with_aux": (with_aux, [(3,)]),
    "value_only": (value_only, [(3,)]),
}

# value_and_grad and grad with has_aux composed with other transforms
# ("grad_aux" is grad(f, has_aux=True)).
AUX_CHAINS = {
    "with_aux": [
        "grad_aux", "value_and_grad_aux", "vmap.grad_aux", "vmap.value_and_grad_aux",
        "jvp.grad_aux", "vjp.grad_aux", "jacfwd.grad_aux", "jacrev.grad_aux",
        "jvp.vmap.grad_aux",
    ],
    "value_only": [
        "value_and_grad", "vmap.value_and_grad", "jvp.value_and_grad", "vjp.value_and_grad",
        "jacfwd.value_and_grad", "jacrev.value_and_grad", "vmap.vmap.value_and_grad",
        "vjp.vmap.value_and_grad",
    ],
}

# The chains of a function differentiated w.r.t. a tree: every chain whose
# Jacobians are of array-valued functions (a Jacobian of a tree-valued
# function w.r.t. a tree, a tree of trees, is not supported; trybuild pins
# the error).
TREE_CHAINS = [
    "grad", "vmap", "jacfwd", "jacrev", "jvp", "vjp",
    "grad.vmap", "vmap.grad", "vmap.vmap", "vmap.jacfwd", "vmap.jacrev",
    "jacfwd.vmap", "jacrev.vmap",
    "jvp.grad", "jvp.vmap", "jvp.jacfwd", "jvp.jacrev",
    "vjp.grad", "vjp.vmap", "vjp.jacfwd", "vjp.jacrev",
    "vmap.vmap.grad", "jvp.vmap.grad", "vjp.jacrev.vmap", "vjp.vmap.grad",
]

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
        "value_and_grad": jax.value_and_grad,
        "grad_aux": lambda h: jax.grad(h, has_aux=True),
        "value_and_grad_aux": lambda h: jax.value_and_grad(h, has_aux=True),
    }[name](g)


def leaves(x):
    return jax.tree_util.tree_leaves(x)


def enc(a):
    a = np.asarray(a, dtype=np.float64)
    return {"shape": list(a.shape), "data": [float(v) for v in a.reshape(-1)]}


def arguments(shapes, chain, rng):
    """The arguments (and tangents or cotangent) of a chain, its rejected
    cases included: one leading axis of size 2 per vmap."""
    names = chain.split(".")
    batch = (2,) * names.count("vmap")

    def draw(s):
        if isinstance(s, list):
            return tuple(jnp.asarray(rng.normal(size=batch + t)) for t in s)
        return jnp.asarray(rng.normal(size=batch + s))

    args = [draw(s) for s in shapes]
    if names[0] == "jvp":
        like = lambda a: jnp.asarray(rng.normal(size=a.shape))
        return args, [jax.tree_util.tree_map(like, a) for a in args]
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
        return leaves(args + ts), leaves([y, t])
    if last == "vjp":
        y, pullback = jax.vjp(g, *args)
        ct = jax.tree_util.tree_map(lambda a: jnp.asarray(rng.normal(size=np.shape(a))), y)
        return leaves(args + [ct]), leaves([y, *pullback(ct)])
    return leaves(args), leaves(g(*args))


def main():
    rng = np.random.default_rng(7)
    out = {"generator": f"jax {jax.__version__}, float64, numpy seed 7", "functions": {}}
    for fname, (f, shapes) in FUNCTIONS.items():
        cases, rejected = {}, {}
        todo = TREE_CHAINS if fname == "lin_p" else AUX_CHAINS.get(fname, chains())
        for chain in todo:
            try:
                ins, outs = run(f, shapes, chain, rng)
            except TypeError:
                # The arguments a caller would pass (a vjp's cotangent: 0-d).
                args, ts = arguments(shapes, chain, rng)
                extra = [jnp.zeros(())] if chain.startswith("vjp") else []
                rejected[chain] = {"inputs": [enc(a) for a in leaves(args + ts) + extra]}
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
