"""Nabla from Python: arrays, autodiff transforms and `nabla.jit`.

The arrays and their operations run in Nabla's Rust runtime (the
extension module `nabla._nabla`).
"""

from nabla._nabla import Array, __version__, float32, float64

__all__ = ["Array", "__version__", "float32", "float64"]
