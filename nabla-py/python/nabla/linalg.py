"""Linear algebra under NumPy's names (`numpy.linalg`, `jax.numpy.linalg`;
`solve_triangular` as in `jax.scipy.linalg`), from the Rust runtime's
`nabla::linalg` (the extension's submodule `_linalg`).

Every function takes `[.., m, n]` arrays whose leading axes are a batch, in
float32 or float64, and runs on tracers: `grad`, `jvp`, `vmap`, `hessian`
and `jit` differentiate and batch the factorisations with the runtime's
rules. Failures are values, as in JAX: a singular matrix solves and
inverts to non-finite values, `det` is 0 and `slogdet`'s sign 0; a matrix
that is not positive definite has an all-NaN Cholesky factor.

    >>> import nabla
    >>> a = nabla.array([[4.0, 1.0], [1.0, 3.0]], nabla.float64)
    >>> nabla.linalg.det(a).item()
    11.0
"""

from nabla._nabla import _linalg

cholesky = _linalg.cholesky
det = _linalg.det
diagonal = _linalg.diagonal
eigh = _linalg.eigh
eigvalsh = _linalg.eigvalsh
inv = _linalg.inv
norm = _linalg.norm
qr = _linalg.qr
slogdet = _linalg.slogdet
solve = _linalg.solve
solve_triangular = _linalg.solve_triangular
trace = _linalg.trace

__all__ = [
    "cholesky",
    "det",
    "diagonal",
    "eigh",
    "eigvalsh",
    "inv",
    "norm",
    "qr",
    "slogdet",
    "solve",
    "solve_triangular",
    "trace",
]
