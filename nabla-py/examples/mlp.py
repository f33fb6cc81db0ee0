"""An MLP classifier trained with nabla.optim, imperatively (PyTorch
style) and then functionally under nabla.jit (JAX style); prints the loss
falling and the accuracy reached.

Run: python nabla-py/examples/mlp.py
"""

import numpy as np

import nabla

rng = np.random.default_rng(0)
# Two interleaved spirals, 2 classes.
n = 512
t = rng.uniform(0.25, 3.0, n)
cls = rng.integers(0, 2, n)
angle = 2.5 * t + np.pi * cls
x = np.stack([t * np.cos(angle), t * np.sin(angle)], axis=1) + 0.05 * rng.standard_normal((n, 2))
X, Y = nabla.array(x.astype(np.float32)), nabla.array(cls)

# Imperative: requires_grad parameters, backward(), step().
model = nabla.nn.MlpClassifier([2, 64, 64, 2], seed=0).requires_grad_()
opt = nabla.optim.Adam(model.parameters(), lr=0.01)
for step in range(401):
    loss = model.loss(model.params, X, Y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    if step % 100 == 0:
        print(f"imperative step {step:3d}  loss {loss.item():.4f}")
acc = (np.asarray(model(X)).argmax(axis=1) == cls).mean()
print(f"imperative accuracy {acc:.3f}")

# Functional: one jitted step returns the loss and the gradient dict.
model = nabla.nn.MlpClassifier([2, 64, 64, 2], seed=0)
opt = nabla.optim.Adam(model.parameters(), lr=0.01)
step_fn = nabla.jit(nabla.value_and_grad(model.loss))
for step in range(401):
    loss, grads = step_fn(model.params, X, Y)
    opt.step(nabla.optim.grads_list(model.params, grads))
    if step % 100 == 0:
        print(f"jit step {step:3d}  loss {loss.item():.4f}")
acc = (np.asarray(model(X)).argmax(axis=1) == cls).mean()
print(f"jit accuracy {acc:.3f}")
assert acc > 0.9, "the classifier did not learn the spirals"
