"""Type stubs for `nabla._nabla`, the compiled extension module (the crate
nabla-py, src/*.rs): arrays, dtypes, the op functions, creation, random
draws, and the transform machinery in `_trace`.

The package `nabla` re-exports every public name here (`from nabla._nabla
import *`). The submodules `random` and `_trace` are modules at run time,
which a single stub file cannot declare; these stubs describe each as a
class of static methods assigned to the submodule's name (`random =
_RandomModule`; the private class itself does not exist at run time), so
calls such as `nabla.random.key(0)` and annotations such as
`nabla.random.Key` type-check.

Keep in step with the `#[pyfunction]`s, `#[pyclass]`es and `register`
functions of nabla-py/src/*.rs and the op registry of nabla-ops;
nabla-py/tests/test_stubs.py checks the names and parameters against the
built module.
"""

from typing import (
    Any,
    Callable,
    Dict,
    ClassVar,
    List,
    Literal,
    Optional,
    Sequence,
    Tuple,
    Union,
    final,
    overload,
)

import numpy as _np

# --- Argument types ---------------------------------------------------------

# Anything `nabla.array` takes: an array, a Python number (weakly typed: it
# takes the dtype of the array it meets), a nested list or tuple of numbers,
# or a NumPy array. (A `str`, though a Sequence, is not accepted.)
_ArrayLike = Union[Array, float, int, bool, Sequence[Any], _np.ndarray[Any, Any]]

# A dtype: `nabla.float32`, a NumPy-style name ("float32", "f32", "float",
# "int64", "bool", ...), a Python or NumPy scalar type (`float`, `np.int64`),
# or a NumPy dtype.
_DTypeLike = Union[DType, str, type, _np.dtype[Any]]

# An axis argument of the reductions: None (every axis), an int or a tuple
# of ints; negative axes count from the end.
_Axis = Union[None, int, Tuple[int, ...]]

# A shape: an int or a sequence of non-negative ints.
_Shape = Union[int, Sequence[int]]

# One item of an index: an int, a slice, None (a new axis), `...`, or one
# advanced index per call (an int64 array or nested list of ints along one
# axis, or a bool mask).
_IndexItem = Union[None, int, slice, ellipsis, Array, Sequence[Any], _np.ndarray[Any, Any]]
_Index = Union[_IndexItem, Tuple[_IndexItem, ...]]

_Scalar = Union[float, int, bool]

# --- Module attributes ------------------------------------------------------

__version__: str

float32: DType
float64: DType
int64: DType
bool_: DType

# --- Classes ----------------------------------------------------------------

@final
class DType:
    """A dtype, as Python sees it (`nabla.float32`, `nabla.DType.float32`).
    Not constructible: use the four module/class attributes."""

    float32: ClassVar[DType]
    float64: ClassVar[DType]
    int64: ClassVar[DType]
    bool_: ClassVar[DType]
    @property
    def name(self) -> Literal["float32", "float64", "int64", "bool"]:
        """The NumPy name of the dtype (`"float32"`)."""
    def __eq__(self, other: object, /) -> bool: ...
    def __ne__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __repr__(self) -> str: ...
    def __str__(self) -> Literal["float32", "float64", "int64", "bool"]: ...

@final
class Array:
    """An n-dimensional array of Nabla's runtime (`float32`, `float64`,
    `int64` or `bool`). Inside `grad`, `vmap` and the other transforms, a
    function's arguments are arrays that trace the transform."""

    def __new__(
        cls,
        data: _ArrayLike,
        dtype: Optional[_DTypeLike] = None,
        requires_grad: bool = False,
    ) -> Array:
        """`nabla.Array(data, dtype=None, requires_grad=False)`: the same as
        `nabla.array`."""

    # Attributes.
    @property
    def shape(self) -> Tuple[int, ...]:
        """The shape, a tuple of ints (per example inside `vmap`)."""
    @property
    def dtype(self) -> DType:
        """The element type."""
    @property
    def ndim(self) -> int:
        """The number of axes."""
    @property
    def size(self) -> int:
        """The number of elements."""
    @property
    def T(self) -> Array:
        """The axes reversed (`x.T`)."""

    # Conversion.
    def item(self) -> _Scalar:
        """The one element as a Python number (`float`, `int` or `bool` by
        dtype)."""
    def tolist(self) -> Any:
        """The elements as nested Python lists (a number for a 0-d array)."""
    def astype(self, dtype: _DTypeLike) -> Array:
        """A copy converted to `dtype`."""
    def __array__(self, dtype: Any = None, copy: Optional[bool] = None) -> _np.ndarray[Any, Any]:
        """The array as a NumPy array: `np.asarray(x)` is a read-only view
        of the host memory (no copy); `copy=True` (`np.array(x)`) or another
        `dtype` gives a writable copy."""
    def __dlpack__(
        self,
        *,
        stream: Any = None,
        max_version: Optional[Tuple[int, int]] = None,
        dl_device: Optional[Tuple[int, int]] = None,
        copy: Optional[bool] = None,
    ) -> Any:
        """A DLPack capsule sharing the array's memory (no copy), for
        `torch.from_dlpack(x)`, `jax.dlpack.from_dlpack(x)` or
        `np.from_dlpack(x)`; versioned and flagged read-only when
        `max_version >= (1, 0)`. Host arrays only."""
    def __dlpack_device__(self) -> Tuple[int, int]:
        """`(1, 0)` (kDLCPU) for a host array."""
    def __len__(self) -> int: ...
    def __float__(self) -> float: ...
    def __int__(self) -> int: ...
    def __bool__(self) -> bool: ...
    def __repr__(self) -> str: ...
    def __str__(self) -> str: ...

    # Imperative autograd (PyTorch's names).
    @property
    def requires_grad(self) -> bool:
        """True for an array whose gradient `backward()` computes."""
    def requires_grad_(self, flag: bool = True) -> Array:
        """Makes this array a leaf that accumulates `.grad()` (in place, like
        `torch.Tensor.requires_grad_`); returns it."""
    @property
    def is_leaf(self) -> bool:
        """True for a user-created array (not the result of a recorded op)."""
    def backward(self) -> None:
        """Back-propagates from this one-element array to every leaf that
        requires grad, accumulating into their `.grad()`."""
    def grad(self) -> Optional[Array]:
        """The gradient accumulated by `backward()`, or `None`."""
    def zero_grad(self) -> None:
        """Clears the accumulated gradient."""
    def detach(self) -> Array:
        """The same values, cut from the tape (and from every transform)."""

    # Methods: the module functions of the same name.
    def sum(self, axis: _Axis = None, keepdims: bool = False) -> Array: ...
    def mean(self, axis: _Axis = None, keepdims: bool = False) -> Array: ...
    def max(self, axis: _Axis = None, keepdims: bool = False) -> Array: ...
    def min(self, axis: _Axis = None, keepdims: bool = False) -> Array: ...
    def prod(self, axis: _Axis = None, keepdims: bool = False) -> Array: ...
    def var(self, axis: _Axis = None, keepdims: bool = False, ddof: int = 0) -> Array: ...
    def std(self, axis: _Axis = None, keepdims: bool = False, ddof: int = 0) -> Array: ...
    def argmax(self, axis: Optional[int] = None) -> Array: ...
    def argmin(self, axis: Optional[int] = None) -> Array: ...
    def cumsum(self, axis: Optional[int] = None) -> Array: ...
    @overload
    def reshape(self, shape: Sequence[int], /) -> Array: ...
    @overload
    def reshape(self, *shape: int) -> Array: ...
    def flatten(self) -> Array: ...
    def transpose(self, *axes: int) -> Array: ...
    def squeeze(self, axis: _Axis = None) -> Array: ...
    def exp(self) -> Array: ...
    def log(self) -> Array: ...
    def sin(self) -> Array: ...
    def cos(self) -> Array: ...
    def tanh(self) -> Array: ...
    def sqrt(self) -> Array: ...
    def abs(self) -> Array: ...
    def sigmoid(self) -> Array: ...
    def relu(self) -> Array: ...
    def square(self) -> Array: ...
    def matmul(self, other: _ArrayLike) -> Array: ...
    def dot(self, other: _ArrayLike) -> Array: ...
    def numpy(self) -> Any: ...

    # Indexing: NumPy's basic indexing plus one advanced index per call.
    def __getitem__(self, key: _Index, /) -> Array: ...

    # Arithmetic; Python numbers take the array's dtype.
    def __add__(self, other: _ArrayLike, /) -> Array: ...
    def __radd__(self, other: _ArrayLike, /) -> Array: ...
    def __sub__(self, other: _ArrayLike, /) -> Array: ...
    def __rsub__(self, other: _ArrayLike, /) -> Array: ...
    def __mul__(self, other: _ArrayLike, /) -> Array: ...
    def __rmul__(self, other: _ArrayLike, /) -> Array: ...
    def __truediv__(self, other: _ArrayLike, /) -> Array: ...
    def __rtruediv__(self, other: _ArrayLike, /) -> Array: ...
    def __matmul__(self, other: _ArrayLike, /) -> Array: ...
    def __rmatmul__(self, other: _ArrayLike, /) -> Array: ...
    def __pow__(self, other: _ArrayLike, mod: None = None, /) -> Array: ...
    def __rpow__(self, other: _ArrayLike, mod: None = None, /) -> Array: ...
    def __neg__(self) -> Array: ...
    def __pos__(self) -> Array: ...
    def __abs__(self) -> Array: ...

    # Comparisons: elementwise, giving bool arrays.
    def __lt__(self, other: _ArrayLike, /) -> Array: ...
    def __le__(self, other: _ArrayLike, /) -> Array: ...
    def __gt__(self, other: _ArrayLike, /) -> Array: ...
    def __ge__(self, other: _ArrayLike, /) -> Array: ...
    def __eq__(self, other: _ArrayLike, /) -> Array: ...  # type: ignore[override]
    def __ne__(self, other: _ArrayLike, /) -> Array: ...  # type: ignore[override]
    __hash__: ClassVar[None]  # type: ignore[assignment]

    # In place: a leaf that requires grad keeps its identity and `.grad()`.
    def __iadd__(self, other: _ArrayLike, /) -> Array: ...
    def __isub__(self, other: _ArrayLike, /) -> Array: ...
    def __imul__(self, other: _ArrayLike, /) -> Array: ...
    def __itruediv__(self, other: _ArrayLike, /) -> Array: ...

# --- Autograd switch --------------------------------------------------------

def _set_grad_enabled(enabled: bool) -> bool:
    """Turns recording on the imperative tape on or off for this thread,
    returning the previous setting (`with nabla.no_grad():` uses it)."""

def is_grad_enabled() -> bool:
    """True unless inside `nabla.no_grad()`."""

def debug_nans(on: bool) -> None:
    """Turns NaN hunting on or off for the process (`NABLA_DEBUG_NANS=1`
    turns it on at start): the first op that turns finite inputs into NaN
    or infinity raises, naming the op, the shapes, the dtype and, in a
    backward pass, the op whose derivative rule produced it
    (`jax.config.update("jax_debug_nans", True)`)."""

def debug_nans_enabled() -> bool:
    """Whether `nabla.debug_nans` is on."""

def set_deterministic(on: bool) -> None:
    """Makes results independent of the number of threads and of GPU
    scheduling, for the process (`NABLA_DETERMINISTIC=1` turns it on at
    start; `torch.use_deterministic_algorithms(True)`). Without it, results
    are already the same run to run for a fixed thread count."""

def deterministic_enabled() -> bool:
    """Whether `nabla.set_deterministic` is on."""

def release_buffers() -> None:
    """Hands every freed buffer kept for reuse back to the operating system
    (and GPU pools back to the driver): `torch.cuda.empty_cache()`. Call it
    after a peak, not in a hot loop."""

def set_buffer_cap(bytes: int) -> None:
    """Caps the freed memory kept for reuse, in bytes (2 GiB by default)."""

def buffer_cap() -> int:
    """The cap set by `set_buffer_cap`, in bytes."""

# --- Elementwise unary ops: one per entry of the op registry
# (nabla-ops/src/unary.rs, generated by `py_unary!` in src/ops.rs), each
# `(x, *params)` with the op's parameters in order. ---

def negative(x: _ArrayLike) -> Array:
    """`-x` (`nabla::negative`)."""

def exp(x: _ArrayLike) -> Array:
    """`e^x`."""

def log(x: _ArrayLike) -> Array:
    """Natural logarithm (`nabla::log`)."""

def sin(x: _ArrayLike) -> Array:
    """Sine."""

def cos(x: _ArrayLike) -> Array:
    """Cosine."""

def tan(x: _ArrayLike) -> Array:
    """Tangent."""

def tanh(x: _ArrayLike) -> Array:
    """Hyperbolic tangent."""

def sigmoid(x: _ArrayLike) -> Array:
    """Logistic sigmoid `1 / (1 + e^-x)`."""

def relu(x: _ArrayLike) -> Array:
    """`max(x, 0)`; the derivative at 0 is 0 (as in JAX)."""

def sqrt(x: _ArrayLike) -> Array:
    """Square root."""

def rsqrt(x: _ArrayLike) -> Array:
    """`1 / sqrt(x)`."""

def abs(x: _ArrayLike) -> Array:
    """Absolute value; the derivative at 0 is 0."""

def square(x: _ArrayLike) -> Array:
    """`x²`."""

def reciprocal(x: _ArrayLike) -> Array:
    """`1 / x` (`nabla::reciprocal`)."""

def log1p(x: _ArrayLike) -> Array:
    """`ln(1 + x)` (`nabla::log1p`)."""

def expm1(x: _ArrayLike) -> Array:
    """`e^x - 1` (`nabla::expm1`)."""

def erf(x: _ArrayLike) -> Array:
    """Error function."""

def sign(x: _ArrayLike) -> Array:
    """Sign: -1, 0 or 1 (`nabla::sign`); zero derivative."""

def floor(x: _ArrayLike) -> Array:
    """Round down; zero derivative."""

def ceil(x: _ArrayLike) -> Array:
    """Round up; zero derivative."""

def round(x: _ArrayLike) -> Array:
    """Round half away from zero; zero derivative."""

def powi(x: _ArrayLike, n: int) -> Array:
    """`x^n` for an integer exponent `n`."""

def powf(x: _ArrayLike, p: float) -> Array:
    """`x^p` for a float exponent `p`."""

def clip(x: _ArrayLike, lo: float, hi: float) -> Array:
    """Clamps into `[lo, hi]`; the derivative is 1 strictly inside, 0 outside."""

def arcsin(x: _ArrayLike) -> Array:
    """Inverse sine (`nabla::arcsin`)."""

def arccos(x: _ArrayLike) -> Array:
    """Inverse cosine (`nabla::arccos`)."""

def arctan(x: _ArrayLike) -> Array:
    """Inverse tangent (`nabla::arctan`)."""

def sinh(x: _ArrayLike) -> Array:
    """Hyperbolic sine."""

def cosh(x: _ArrayLike) -> Array:
    """Hyperbolic cosine."""

def arcsinh(x: _ArrayLike) -> Array:
    """Inverse hyperbolic sine (`nabla::arcsinh`)."""

def arccosh(x: _ArrayLike) -> Array:
    """Inverse hyperbolic cosine (`nabla::arccosh`), for `x ≥ 1`."""

def arctanh(x: _ArrayLike) -> Array:
    """Inverse hyperbolic tangent (`nabla::arctanh`)."""

def log2(x: _ArrayLike) -> Array:
    """Base-2 logarithm."""

def log10(x: _ArrayLike) -> Array:
    """Base-10 logarithm."""

def exp2(x: _ArrayLike) -> Array:
    """`2^x`."""

def cbrt(x: _ArrayLike) -> Array:
    """Cube root (defined for negative `x` too)."""

def erfc(x: _ArrayLike) -> Array:
    """Complementary error function `1 - erf(x)`, accurate for large `x`."""

def lgamma(x: _ArrayLike) -> Array:
    """`ln |Γ(x)|`."""

def digamma(x: _ArrayLike) -> Array:
    """The digamma function `ψ(x) = d/dx ln Γ(x)`."""

def polygamma(x: _ArrayLike, n: int) -> Array:
    """The polygamma function `ψ⁽ⁿ⁾(x)`, the `n`-th derivative of digamma, for `n ≥ 1`
    (`nabla::polygamma(&x, n)`; JAX writes `polygamma(n, x)`)."""

def log_sigmoid(x: _ArrayLike) -> Array:
    """`ln(sigmoid(x)) = -softplus(-x)`, stable for large `|x|`."""

def mish(x: _ArrayLike) -> Array:
    """Mish, `x · tanh(softplus(x))`."""

def elu(x: _ArrayLike) -> Array:
    """ELU with `alpha = 1`: `x` for `x > 0`, `e^x - 1` otherwise."""

def leaky_relu(x: _ArrayLike, slope: float) -> Array:
    """`x` for `x ≥ 0`, `slope · x` otherwise (`nabla::leaky_relu(&x, 0.01)`)."""

def hard_tanh(x: _ArrayLike) -> Array:
    """Clamps into `[-1, 1]`; the derivative is 1 strictly inside, 0 outside."""

def sinc(x: _ArrayLike) -> Array:
    """Normalised sinc, `sin(πx) / (πx)`, 1 at 0. Its derivative is 0 at exactly 0; so
    is the second derivative there (a masked formula), where the true value is
    `-π²/3`."""

def soft_sign(x: _ArrayLike) -> Array:
    """Softsign, `x / (1 + |x|)` (`jax.nn.soft_sign`)."""

# --- Elementwise binary ops: one per entry of the op registry
# (nabla-ops/src/binary.rs, generated by `py_binary!`), each `(a, b)` with
# Python numbers taking the other operand's dtype. ---

def add(a: _ArrayLike, b: _ArrayLike) -> Array:
    """`a + b` (the `+` operator)."""

def subtract(a: _ArrayLike, b: _ArrayLike) -> Array:
    """`a - b` (the `-` operator; `nabla::subtract`)."""

def multiply(a: _ArrayLike, b: _ArrayLike) -> Array:
    """`a * b` (the `*` operator; `nabla::multiply`)."""

def divide(a: _ArrayLike, b: _ArrayLike) -> Array:
    """`a / b` (the `/` operator; `nabla::divide`)."""

def pow(a: _ArrayLike, b: _ArrayLike) -> Array:
    """`a ^ b`; the `b` partial is `y · ln a`, so it needs `a > 0`."""

def maximum(a: _ArrayLike, b: _ArrayLike) -> Array:
    """Elementwise maximum (NaN propagates); ties split the derivative evenly between
    the operands, as in JAX."""

def minimum(a: _ArrayLike, b: _ArrayLike) -> Array:
    """Elementwise minimum (NaN propagates); ties split the derivative evenly."""

def atan2(a: _ArrayLike, b: _ArrayLike) -> Array:
    """Four-quadrant arctangent of `a / b`."""

def logaddexp(a: _ArrayLike, b: _ArrayLike) -> Array:
    """`ln(e^a + e^b)`, without overflow."""

def hypot(a: _ArrayLike, b: _ArrayLike) -> Array:
    """`sqrt(a² + b²)`, without overflow."""

def remainder(a: _ArrayLike, b: _ArrayLike) -> Array:
    """`a - b · floor(a / b)`: the remainder with the sign of `b`, as NumPy's
    `remainder` and Python's `%`."""

def copysign(a: _ArrayLike, b: _ArrayLike) -> Array:
    """`|a|` with the sign of `b`; no derivative with respect to `b`."""

# --- Reductions (src/ops.rs) ------------------------------------------------

def sum(x: _ArrayLike, axis: _Axis = None, keepdims: bool = False) -> Array:
    """Sum over `axis` (all axes when None)."""

def mean(x: _ArrayLike, axis: _Axis = None, keepdims: bool = False) -> Array:
    """Mean over `axis`."""

def max(x: _ArrayLike, axis: _Axis = None, keepdims: bool = False) -> Array:
    """Maximum over `axis`."""

def min(x: _ArrayLike, axis: _Axis = None, keepdims: bool = False) -> Array:
    """Minimum over `axis`."""

def prod(x: _ArrayLike, axis: _Axis = None, keepdims: bool = False) -> Array:
    """Product over `axis`."""

def var(x: _ArrayLike, axis: _Axis = None, keepdims: bool = False, ddof: int = 0) -> Array:
    """Variance over `axis` (`ddof` subtracted from the count)."""

def std(x: _ArrayLike, axis: _Axis = None, keepdims: bool = False, ddof: int = 0) -> Array:
    """Standard deviation over `axis`."""

def logsumexp(x: _ArrayLike, axis: _Axis = None, keepdims: bool = False) -> Array:
    """`log(sum(exp(x)))` over `axis`, computed stably."""

def cumsum(x: _ArrayLike, axis: Optional[int] = None) -> Array:
    """Cumulative sum along `axis` (of the flattened array when None, as
    NumPy)."""

def argmax(x: _ArrayLike, axis: Optional[int] = None) -> Array:
    """Index of the largest element along `axis` (flattened when None)."""

def argmin(x: _ArrayLike, axis: Optional[int] = None) -> Array:
    """Index of the smallest element along `axis` (flattened when None)."""

# --- Products ---------------------------------------------------------------

def matmul(a: _ArrayLike, b: _ArrayLike) -> Array:
    """Matrix product (NumPy's `matmul` broadcasting)."""

def dot(a: _ArrayLike, b: _ArrayLike) -> Array:
    """Inner product of vectors, or matmul for higher ranks."""

def outer(a: _ArrayLike, b: _ArrayLike) -> Array:
    """Outer product of two vectors."""

# --- Shapes -----------------------------------------------------------------

@overload
def reshape(x: _ArrayLike, shape: Sequence[int], /) -> Array:
    """The same elements in a new shape (one entry may be -1):
    `reshape(x, (2, 3))`."""

@overload
def reshape(x: _ArrayLike, /, *shape: int) -> Array:
    """The same elements in a new shape (one entry may be -1):
    `reshape(x, 2, 3)`."""

def transpose(x: _ArrayLike, axes: Optional[Sequence[int]] = None) -> Array:
    """Permutes the axes (reversed when `axes` is None)."""

def swapaxes(x: _ArrayLike, axis1: int, axis2: int) -> Array:
    """Swaps two axes."""

def moveaxis(x: _ArrayLike, source: int, destination: int) -> Array:
    """Moves axis `source` to position `destination`."""

def expand_dims(x: _ArrayLike, axis: int) -> Array:
    """Inserts a length-1 axis at `axis`."""

def squeeze(x: _ArrayLike, axis: _Axis = None) -> Array:
    """Removes length-1 axes (all of them when `axis` is None)."""

def broadcast_to(x: _ArrayLike, shape: _Shape) -> Array:
    """The array broadcast to `shape`."""

def concatenate(arrays: Sequence[_ArrayLike], axis: int = 0) -> Array:
    """Joins arrays along an existing axis."""

def stack(arrays: Sequence[_ArrayLike], axis: int = 0) -> Array:
    """Joins arrays along a new axis."""

# --- Selection and gradients ------------------------------------------------

def where(cond: _ArrayLike, x: _ArrayLike, y: _ArrayLike) -> Array:
    """Elements of `x` where `cond` holds, of `y` elsewhere."""

def stop_gradient(x: _ArrayLike) -> Array:
    """The gradient of nothing: the value with every derivative cut."""

# --- Composites (activations, losses) ---------------------------------------

def softmax(x: _ArrayLike, axis: int = -1) -> Array:
    """Softmax along `axis`."""

def log_softmax(x: _ArrayLike, axis: int = -1) -> Array:
    """Log-softmax along `axis`."""

def gelu(x: _ArrayLike) -> Array:
    """GELU (the erf form)."""

def gelu_tanh(x: _ArrayLike) -> Array:
    """GELU, tanh approximation."""

def silu(x: _ArrayLike) -> Array:
    """`x · sigmoid(x)`."""

def softplus(x: _ArrayLike) -> Array:
    """`log(1 + e^x)`, computed stably."""

def mse_loss(pred: _ArrayLike, target: _ArrayLike) -> Array:
    """Mean squared error."""

def cross_entropy(logits: _ArrayLike, labels: _ArrayLike) -> Array:
    """Mean cross-entropy of `logits` `[n, classes]` against integer labels."""

# --- More NumPy/JAX functions (src/ops_more.rs) -----------------------------

def pad(
    x: _ArrayLike,
    pad_width: Union[int, Sequence[int], Sequence[Sequence[int]]],
    mode: str = "constant",
    constant_values: float = 0.0,
) -> Array:
    """`x` padded with `constant_values` (`numpy.pad` in mode `"constant"`):
    `pad_width` is an int, `(before, after)` for every axis, or one
    `(before, after)` pair per axis."""

def einsum(subscripts: str, *operands: _ArrayLike) -> Array:
    """Einstein summation of two operands (`numpy.einsum`), e.g.
    `einsum("bij,bjk->bik", a, b)`: letters index axes; an index absent
    from the output is summed. Without `->` the output holds the indices
    that occur once, in alphabetical order."""

def take_along_axis(x: _ArrayLike, indices: _ArrayLike, axis: Optional[int]) -> Array:
    """`out[.., i, ..] = x[.., indices[.., i, ..], ..]` along `axis`
    (`numpy.take_along_axis`); `indices` are integers with `x`'s rank
    (1-D, over the flattened `x`, when `axis` is None)."""

def scatter_add(x: _ArrayLike, axis: int, indices: _ArrayLike, out_size: int) -> Array:
    """Slabs of `x` along `axis` summed into zeros with `out_size` slabs, slab
    `k` going to position `indices[k]`; repeated indices accumulate (JAX's
    `zeros.at[indices].add(x)`, PyTorch's `index_add` into zeros)."""

def tril(x: _ArrayLike, k: int = 0) -> Array:
    """The lower triangle of the last two axes (`numpy.tril`): entries with
    `j - i <= k` kept, the rest zero."""

def triu(x: _ArrayLike, k: int = 0) -> Array:
    """The upper triangle of the last two axes (`numpy.triu`): entries with
    `j - i >= k` kept, the rest zero."""

def cumprod(x: _ArrayLike, axis: Optional[int] = None) -> Array:
    """Cumulative product along `axis` (over the flattened array when None),
    as `numpy.cumprod`; exact at zeros and differentiable to every order."""

def sort(x: _ArrayLike, axis: Optional[int] = -1) -> Array:
    """`x` sorted ascending along `axis` (flattened when None), as
    `numpy.sort`; stable. Derivatives follow each element to its sorted
    position. Costs O(n²) per sorted slice of n elements."""

def diagonal(x: _ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Array:
    """The diagonal `offset` of the plane of `axis1` and `axis2`
    (`numpy.diagonal`): those axes are removed and the diagonal appended
    as the last axis."""

# --- Layers of `nabla.nn.functional` (src/layers.rs) ------------------------

_IntOrInts = Union[int, Sequence[int]]

def conv1d(
    input: _ArrayLike,
    weight: _ArrayLike,
    bias: Optional[_ArrayLike] = None,
    stride: _IntOrInts = 1,
    padding: Union[_IntOrInts, str] = 0,
    dilation: _IntOrInts = 1,
    groups: int = 1,
) -> Array:
    """1-D convolution (`torch.nn.functional.conv1d`): `input` `[N, C, L]`
    (or `[C, L]`), `weight` `[O, C / groups, k]`, optional `bias` `[O]`;
    `padding` is ints, `'valid'` or `'same'`."""

def conv2d(
    input: _ArrayLike,
    weight: _ArrayLike,
    bias: Optional[_ArrayLike] = None,
    stride: _IntOrInts = 1,
    padding: Union[_IntOrInts, str] = 0,
    dilation: _IntOrInts = 1,
    groups: int = 1,
) -> Array:
    """2-D convolution (`torch.nn.functional.conv2d`): `input` `[N, C, H, W]`
    (or `[C, H, W]`), `weight` `[O, C / groups, kh, kw]`, optional `bias`
    `[O]`; `stride`, `padding`, `dilation` an int or a pair; `padding` also
    `'valid'` or `'same'`."""

def conv3d(
    input: _ArrayLike,
    weight: _ArrayLike,
    bias: Optional[_ArrayLike] = None,
    stride: _IntOrInts = 1,
    padding: Union[_IntOrInts, str] = 0,
    dilation: _IntOrInts = 1,
    groups: int = 1,
) -> Array:
    """3-D convolution (`torch.nn.functional.conv3d`), as `conv2d` with three
    spatial axes."""

def max_pool2d(
    input: _ArrayLike,
    kernel_size: _IntOrInts,
    stride: Optional[_IntOrInts] = None,
    padding: _IntOrInts = 0,
    dilation: _IntOrInts = 1,
    ceil_mode: bool = False,
) -> Array:
    """Max pooling over the last two axes (`torch.nn.functional.max_pool2d`;
    input `[N, C, H, W]` or `[C, H, W]`); `stride` defaults to
    `kernel_size`, padding (with -inf) is at most half the window. Ties in
    a window share the gradient evenly."""

def avg_pool2d(
    input: _ArrayLike,
    kernel_size: _IntOrInts,
    stride: Optional[_IntOrInts] = None,
    padding: _IntOrInts = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: Optional[int] = None,
) -> Array:
    """Average pooling over the last two axes
    (`torch.nn.functional.avg_pool2d`): `count_include_pad` counts the zero
    padding in each average, `divisor_override` replaces the count."""

def layer_norm(
    input: _ArrayLike,
    normalized_shape: _Shape,
    weight: Optional[_ArrayLike] = None,
    bias: Optional[_ArrayLike] = None,
    eps: float = 1e-5,
) -> Array:
    """Layer normalisation (`torch.nn.functional.layer_norm`): over the
    trailing `normalized_shape` axes, `(x - mean) / sqrt(var + eps) *
    weight + bias` (biased variance; weight 1 and bias 0 when None)."""

def rms_norm(
    input: _ArrayLike,
    normalized_shape: _Shape,
    weight: Optional[_ArrayLike] = None,
    eps: Optional[float] = None,
) -> Array:
    """Root-mean-square normalisation (`torch.nn.functional.rms_norm`): over
    the trailing `normalized_shape` axes, `x / sqrt(mean(x²) + eps) *
    weight`; `eps` None is the dtype's machine epsilon, as in PyTorch."""

def embedding(input: _ArrayLike, weight: _ArrayLike) -> Array:
    """The rows of `weight` (`[vocab, dim]`) at the integer `input` (any
    shape): `input.shape + (dim,)` (`torch.nn.functional.embedding`)."""

# --- Creation (src/create.rs) -----------------------------------------------

def array(data: _ArrayLike, dtype: Optional[_DTypeLike] = None, requires_grad: bool = False) -> Array:
    """An array from data (numbers, nested lists, NumPy arrays, arrays)."""

def asarray(data: _ArrayLike, dtype: Optional[_DTypeLike] = None) -> Array:
    """Like `array`, but returns a `nabla.Array` argument itself."""

def from_dlpack(x: Any, /, *, device: Any = None, copy: Optional[bool] = None) -> Array:
    """An array of a CPU tensor of any DLPack producer (`torch.Tensor`,
    `np.ndarray`, JAX arrays) or of a DLPack capsule, sharing its memory
    for float32/float64/int64 (bool, misaligned memory and `copy=True`
    copy). Do not write the producer's tensor afterwards."""

def zeros(shape: _Shape, dtype: Optional[_DTypeLike] = None, requires_grad: bool = False) -> Array:
    """Zeros of `shape`."""

def ones(shape: _Shape, dtype: Optional[_DTypeLike] = None, requires_grad: bool = False) -> Array:
    """Ones of `shape`."""

def full(
    shape: _Shape,
    fill_value: float,
    dtype: Optional[_DTypeLike] = None,
    requires_grad: bool = False,
) -> Array:
    """`fill_value` everywhere in `shape`."""

def arange(
    start: float,
    stop: Optional[float] = None,
    step: Optional[float] = None,
    dtype: Optional[_DTypeLike] = None,
) -> Array:
    """`start, start + step, ...` below `stop` (`arange(n)`: `0..n`); int64
    when every argument is an int, float32 when any is a float."""

def linspace(start: float, stop: float, num: int = 50, dtype: Optional[_DTypeLike] = None) -> Array:
    """`num` evenly spaced values from `start` to `stop` (inclusive)."""

def eye(n: int, dtype: Optional[_DTypeLike] = None) -> Array:
    """The `n × n` identity."""

def randn(shape: _Shape, dtype: Optional[_DTypeLike] = None, requires_grad: bool = False) -> Array:
    """Standard normal draws of `shape` from this thread's stream
    (`nabla.seed` resets it)."""

def rand(shape: _Shape, dtype: Optional[_DTypeLike] = None, requires_grad: bool = False) -> Array:
    """Uniform draws in `[0, 1)` of `shape` from this thread's stream."""

def seed(seed: int) -> None:
    """Seeds the calling thread's stream and the seed new threads start from (`torch.manual_seed`)."""

# --- Submodule `random`: explicit keys (`jax.random`) -----------------------

class _RandomModule:
    """The submodule `nabla.random` (`nabla._nabla.random`): explicit random
    keys, as `jax.random`."""

    @final
    class Key:
        """An explicit random key (`jax.random.key`): draws from it depend on
        the key alone. Made by `key` and `split`, not constructible."""

        def __eq__(self, other: object, /) -> bool: ...
        def __ne__(self, other: object, /) -> bool: ...
        def __hash__(self) -> int: ...
        def __repr__(self) -> str: ...

    @staticmethod
    def key(seed: int) -> _RandomModule.Key:
        """A key from a seed."""
    @staticmethod
    def split(key: _RandomModule.Key, num: int = 2) -> List[_RandomModule.Key]:
        """`num` independent keys from one."""
    @staticmethod
    def normal(key: _RandomModule.Key, shape: _Shape, dtype: Optional[_DTypeLike] = None) -> Array:
        """Standard normal draws from `key`."""
    @staticmethod
    def uniform(key: _RandomModule.Key, shape: _Shape, dtype: Optional[_DTypeLike] = None) -> Array:
        """Uniform draws in `[0, 1)` from `key`."""

random = _RandomModule

# --- Submodule `_trace`: the run-time transform machinery (src/trace.rs) ----

class _TraceModule:
    """The submodule `nabla._nabla._trace`: levels, the tracers of each
    transform and pullbacks, for python/nabla/_transforms.py."""

    @final
    class Pullback:
        """The pullback of a traced function."""

        def __call__(self, cts: Sequence[Optional[Array]]) -> List[Array]:
            """One cotangent per output (None: zero) to one per input."""

    @final
    class Program:
        """A recorded function (`nabla.jit`'s cache entry): replays without
        running Python. `str(program)` lists its instructions."""

        def run(self, inputs: Sequence[Array]) -> List[Array]:
            """The outputs on new inputs of the recorded shapes and dtypes."""
        def __len__(self) -> int:
            """The number of instructions (after dead code is dropped)."""
        def __str__(self) -> str: ...
        def __repr__(self) -> str: ...

    @staticmethod
    def new_level() -> int:
        """A fresh transform level (higher than every earlier one)."""
    @staticmethod
    def dual(level: int, primal: Array, tangent: Optional[Array] = None) -> Array:
        """A forward-mode tracer of `level`."""
    @staticmethod
    def split_dual(level: int, x: Array) -> Tuple[Array, Optional[Array]]:
        """The primal and tangent (None: zero) of `x` at forward-mode
        `level`."""
    @staticmethod
    def batched(level: int, x: Array, axis: Optional[int]) -> Array:
        """A batching tracer of `level` with batch axis `axis` (None:
        unbatched)."""
    @staticmethod
    def unbatch(level: int, x: Array, size: int, axis: int) -> Array:
        """`x` at batching `level` with the batch axis at `axis`."""
    @staticmethod
    def rev_leaf(level: int, x: Array, index: int) -> Array:
        """Input `index` of the reverse-mode transform at `level`."""
    @staticmethod
    def pullback(
        level: int, outputs: Sequence[Array], inputs: Sequence[Array]
    ) -> Tuple[List[Array], _TraceModule.Pullback]:
        """The outputs of a function traced at reverse-mode `level` and its
        pullback to the leaves whose values were `inputs`."""
    @staticmethod
    def record(
        fun: Callable[[List[Array]], Sequence[Array]], inputs: Sequence[Array]
    ) -> Tuple[List[Array], _TraceModule.Program]:
        """Runs `fun` (a list of arrays to a list of arrays) once on
        `inputs`, recording it: its outputs and the program that replays
        it."""
    @staticmethod
    def signature(leaves: Sequence[Array]) -> bytes:
        """A hashable summary of the leaves' shapes and dtypes (jit's cache
        key)."""
    @staticmethod
    def lower(level: int, x: Array) -> Array:
        """The tracer of `level` dropped: a forward- or reverse-mode tracer's
        primal, anything else as it is (`has_aux` outputs)."""

_trace = _TraceModule

# --- Submodule `_nn`: initial parameters and attention (src/nn.rs) --------

class _NnModule:
    """The submodule `nabla._nabla._nn`, for python/nabla/nn/."""

    @staticmethod
    def init_params(kind: str, cfg: Dict[str, Any], seed: int) -> Dict[str, Array]:
        """The initial parameters of `kind` with settings `cfg`, drawn from
        `seed` as the Rust constructor draws them: name to array."""
    @staticmethod
    def attention_softmax(scores: Array, scale: float, causal: bool = False) -> Array:
        """Softmax over the last axis of `scores · scale`, the upper triangle
        masked out when `causal`."""

_nn = _NnModule

# --- Submodule `_optim`: the Rust optimizers (src/optim.rs) ---------------

class _OptimModule:
    """The submodule `nabla._nabla._optim`, re-exported by `nabla.optim`."""

    class Optimizer:
        """An optimizer over a list of arrays, updated in place."""

        def step(self, grads: Optional[Sequence[Array]] = None) -> None:
            """One update of every parameter, in place."""
        def zero_grad(self) -> None:
            """Clears every parameter's `.grad()`."""
        @property
        def params(self) -> List[Array]:
            """The parameters, in order."""

    @final
    class Schedule:
        """A learning rate that changes with the step."""

        def __call__(self, t: int) -> float: ...
        def __repr__(self) -> str: ...

    @staticmethod
    def SGD(
        params: Sequence[Array],
        lr: Union[float, _OptimModule.Schedule],
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
    ) -> _OptimModule.Optimizer:
        """SGD (`torch.optim.SGD`)."""
    @staticmethod
    def Adam(
        params: Sequence[Array],
        lr: Optional[Union[float, _OptimModule.Schedule]] = None,
        betas: Tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ) -> _OptimModule.Optimizer:
        """Adam (`torch.optim.Adam`)."""
    @staticmethod
    def AdamW(
        params: Sequence[Array],
        lr: Optional[Union[float, _OptimModule.Schedule]] = None,
        betas: Tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.01,
    ) -> _OptimModule.Optimizer:
        """AdamW (`torch.optim.AdamW`)."""
    @staticmethod
    def clip_grad_norm_(params: Sequence[Array], max_norm: float) -> float:
        """Scales the parameters' `.grad()` to joint norm at most `max_norm`."""
    @staticmethod
    def constant(lr: float) -> _OptimModule.Schedule: ...
    @staticmethod
    def linear(init: float, end: float, steps: int) -> _OptimModule.Schedule: ...
    @staticmethod
    def cosine(peak: float, steps: int, end: float = 0.0) -> _OptimModule.Schedule: ...
    @staticmethod
    def warmup_cosine(init: float, peak: float, warmup: int, total: int, end: float = 0.0) -> _OptimModule.Schedule: ...

_optim = _OptimModule

# --- Submodule `_io`: safetensors files (src/io.rs) -----------------------

class _IoModule:
    """The submodule `nabla._nabla._io`, wrapped by `nabla.io`."""

    @staticmethod
    def save(arrays: Dict[str, Array], path: str) -> None:
        """Writes a dict of name to array to the safetensors file `path`."""
    @staticmethod
    def load_file(path: str) -> Dict[str, Array]:
        """Every tensor of the safetensors file at `path`."""

_io = _IoModule

# --- Submodule `_linalg`: linear algebra (src/linalg.rs) --------------------

class _LinalgModule:
    """The submodule `nabla._nabla._linalg`, re-exported by `nabla.linalg`:
    `[.., m, n]` arrays whose leading axes are a batch."""

    @staticmethod
    def solve(a: _ArrayLike, b: _ArrayLike) -> Array:
        """The solution `x` of `a x = b` (`numpy.linalg.solve`): `a` `[.., n, n]`,
        `b` `[.., n, k]` or `[n]`; batch axes broadcast. A singular `a` gives
        non-finite values."""
    @staticmethod
    def inv(a: _ArrayLike) -> Array:
        """The inverse of `a` `[.., n, n]` (non-finite where `a` is singular)."""
    @staticmethod
    def det(a: _ArrayLike) -> Array:
        """The determinant of `a` `[.., n, n]`, one value per matrix."""
    @staticmethod
    def slogdet(a: _ArrayLike) -> Tuple[Array, Array]:
        """`(sign, logabsdet)` of `a` `[.., n, n]` (`numpy.linalg.slogdet`):
        `det a = sign * exp(logabsdet)` without overflow; sign 0 and logabsdet
        -inf where `a` is singular. The sign's derivative is zero."""
    @staticmethod
    def cholesky(a: _ArrayLike, upper: bool = False) -> Array:
        """The Cholesky factor of the symmetric part of `a` `[.., n, n]`
        (`numpy.linalg.cholesky`): lower (`l lᵀ = a`), or upper (`uᵀ u = a`)
        when `upper`; all NaN where `a` is not positive definite."""
    @staticmethod
    def solve_triangular(
        a: _ArrayLike,
        b: _ArrayLike,
        trans: Union[None, int, str] = None,
        lower: bool = False,
        unit_diagonal: bool = False,
    ) -> Array:
        """The solution of `t x = b` with `t` the lower (`lower`) or upper
        triangle of `a` `[.., n, n]` (the other triangle is not read), as
        `jax.scipy.linalg.solve_triangular`: `trans` solves with `tᵀ`,
        `unit_diagonal` takes the diagonal as ones. `b` is `[.., n, k]`, or
        `[.., n]` (one vector per matrix); batch axes broadcast."""
    @staticmethod
    def eigh(a: _ArrayLike) -> Tuple[Array, Array]:
        """`(eigenvalues, eigenvectors)` of the symmetric part of `a` `[.., n, n]`
        (`numpy.linalg.eigh`): eigenvalues ascending, eigenvectors in the
        columns. Eigenvector derivatives are infinite where eigenvalues repeat;
        for eigenvalues alone use `eigvalsh`."""
    @staticmethod
    def eigvalsh(a: _ArrayLike) -> Array:
        """The eigenvalues (ascending) of the symmetric part of `a` `[.., n, n]`
        (`numpy.linalg.eigvalsh`); their derivatives stay finite where
        eigenvalues repeat."""
    @overload
    @staticmethod
    def qr(a: _ArrayLike, mode: Literal["reduced"] = "reduced") -> Tuple[Array, Array]: ...
    @overload
    @staticmethod
    def qr(a: _ArrayLike, mode: Literal["r"]) -> Array: ...
    @staticmethod
    def diagonal(x: _ArrayLike, offset: int = 0) -> Array:
        """The diagonal `offset` of the last two axes (`numpy.linalg.diagonal`):
        `[.., k]`."""
    @staticmethod
    def trace(x: _ArrayLike, offset: int = 0) -> Array:
        """The sum of the diagonal `offset` of the last two axes, one value per
        matrix (`numpy.linalg.trace`)."""
    @staticmethod
    def norm(
        x: _ArrayLike,
        ord: Union[None, float, str] = None,
        axis: _Axis = None,
        keepdims: bool = False,
    ) -> Array:
        """The vector or matrix norm of `x` (`numpy.linalg.norm`): over `axis`
        (one axis: a vector norm of order `ord`, default 2; two axes: a matrix
        norm, `'fro'` by default, also `1`, `-1`, `inf`, `-inf`); with `axis`
        None, the 2-norm of the flattened `x` when `ord` is None, else the
        vector (1-D) or matrix (2-D) norm. Spectral and nuclear norms (`2`,
        `-2`, `'nuc'` over two axes) and `ord=0` are not supported."""

_linalg = _LinalgModule

# --- Custom ops from Python functions (src/custom.rs) ---------------------

@final
class CustomOp:
    """An op whose forward and rules are Python functions."""

    def __call__(self, *args: _ArrayLike) -> Any: ...
    def __repr__(self) -> str: ...

def custom_op(
    forward: Callable[..., Any],
    jvp: Optional[Callable[[Tuple[Array, ...], Tuple[Array, ...], Tuple[Array, ...]], Any]] = None,
    vjp: Optional[Callable[[Tuple[Array, ...], Tuple[Array, ...], Tuple[Array, ...]], Any]] = None,
    name: Optional[str] = None,
) -> CustomOp:
    """A differentiable op from Python functions: `forward(*xs)`,
    `jvp(xs, ys, tangents)` and `vjp(xs, ys, cotangents)`."""

def checkpoint_op(f: Callable[..., Any]) -> CustomOp:
    """The op of `nabla.checkpoint(f)`."""

@final
class JitCache:
    """`nabla.jit`'s cache of recorded programs, looked up in Rust."""

    def __new__(cls) -> JitCache: ...
    def call(self, args: Tuple[Any, ...]) -> Optional[Any]:
        """The replayed result for `args`, or None on a miss."""
    def insert(self, args: Tuple[Any, ...], program: Any, result: Any) -> bool:
        """Stores `program` for the signature of `args`."""
    def __len__(self) -> int: ...
