"""Neural-network pieces: `nabla.nn.functional` (activations, losses)."""

from nabla.nn import functional  # noqa: F401
