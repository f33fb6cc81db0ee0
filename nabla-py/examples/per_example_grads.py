"""Per-example gradients of a linear regression loss with vmap(grad), as
in JAX, checked against the closed form and against a Python loop.

Run: python nabla-py/examples/per_example_grads.py
"""

import numpy as np

import nabla

rng = np.random.default_rng(0)
w = nabla.array(rng.standard_normal(3), nabla.float64)
xs = nabla.array(rng.standard_normal((8, 3)), nabla.float64)
ys = nabla.array(rng.standard_normal(8), nabla.float64)


def loss(w, x, y):
    return (nabla.dot(x, w) - y) ** 2


per_example = nabla.vmap(nabla.grad(loss), in_axes=(None, 0, 0))(w, xs, ys)
print("per-example gradients, shape", per_example.shape)
print(per_example)

# Closed form: 2 (x·w − y) x for each example.
r = np.asarray(xs) @ np.asarray(w) - np.asarray(ys)
closed = 2.0 * r[:, None] * np.asarray(xs)
loop = np.stack([np.asarray(nabla.grad(loss)(w, xs[i], ys[i])) for i in range(8)])
print("max |vmap − closed form|:", np.abs(np.asarray(per_example) - closed).max())
print("max |vmap − loop|:", np.abs(np.asarray(per_example) - loop).max())
assert np.allclose(np.asarray(per_example), closed, rtol=1e-12, atol=1e-12)
