"""The seed's first example: PyTorch-style imperative autograd."""

import nabla

weight = nabla.randn((3, 4), nabla.float32, requires_grad=True)
bias = nabla.randn((2, 4), nabla.float32, requires_grad=True)
label = nabla.randn((2, 4), nabla.float32)
input = nabla.randn((2, 3), nabla.float32)

logits = nabla.relu(input @ weight + bias)
loss = nabla.sum((logits - label) ** 2)
print(f"Loss: {loss}")
loss.backward()

weight -= 0.01 * weight.grad()
bias -= 0.01 * bias.grad()
print(f"weight: {weight}\nbias: {bias}")
