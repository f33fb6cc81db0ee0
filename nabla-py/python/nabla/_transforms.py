"""Transforms of Python functions: grad, value_and_grad, vjp, jvp, vmap,
jacfwd, jacrev and hessian, nested to any depth and mixed
freely, over pytrees of arrays.

A Python function cannot be transformed at compile time, so these run at
run time on the Rust runtime's tracers (`nabla::dynamic`): each call opens a
new level, wraps its inputs as that level's tracers (forward-mode duals,
batched values, or reverse-mode values recorded on a tape) and calls the
function. Every operation on a tracer runs the primitive's derivative or
batching rule in Rust: the same rules `#[differentiable]` code calls.
"""

import functools
from typing import Any, Callable, List, Optional, Sequence, Tuple, Union

from nabla import _nabla
from nabla._nabla import Array
from nabla._tree import TreeDef, tree_flatten, tree_unflatten

_t = _nabla._trace


def _as_array(x: Any) -> Array:
    return x if isinstance(x, Array) else _nabla.asarray(x)


def _float_dtype(x: Array) -> None:
    if x.dtype not in (_nabla.float32, _nabla.float64):
        raise TypeError(
            f"differentiation needs float inputs, got {x.dtype}; convert with .astype(nabla.float32)"
        )


def _argnums_tuple(argnums: Union[int, Sequence[int]], n: int) -> Tuple[Tuple[int, ...], bool]:
    single = isinstance(argnums, int)
    nums: Tuple[int, ...] = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for a in nums:
        if not -n <= a < n:
            raise ValueError(f"argnums {a} is out of range for a function called with {n} arguments")
    return tuple(a % n for a in nums), single


def _lower(level: int, tree: Any) -> Any:
    """`tree` with the tracers of `level` replaced by their values: an
    auxiliary output is returned, not transformed (as JAX's `has_aux`)."""
    flat, d = tree_flatten(tree)
    return tree_unflatten(d, [_t.lower(level, x) if isinstance(x, Array) else x for x in flat])


# --- forward mode -------------------------------------------------------


def jvp(
    fun: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool = False
) -> Tuple[Any, ...]:
    """`(fun(*primals), J·tangents)`: forward mode, as `jax.jvp`.

    `primals` and `tangents` are tuples (or lists) of pytrees of the same
    structure."""
    flat_p, tree_p = tree_flatten(tuple(primals))
    flat_t, tree_t = tree_flatten(tuple(tangents))
    if tree_p != tree_t:
        raise ValueError(f"jvp: primals have structure {tree_p} but tangents have {tree_t}; pass one tangent per primal")
    level = _t.new_level()
    ins = [_t.dual(level, _as_array(p), _as_array(t)) for p, t in zip(flat_p, flat_t)]
    out = fun(*tree_unflatten(tree_p, ins))
    aux = None
    if has_aux:
        out, aux = out
        aux = _lower(level, aux)
    flat_o, tree_o = tree_flatten(out)
    prim: List[Array] = []
    tan: List[Array] = []
    for o in flat_o:
        p, t = _t.split_dual(level, _as_array(o))
        prim.append(p)
        tan.append(t if t is not None else _nabla.zeros(p.shape, p.dtype))
    res = (tree_unflatten(tree_o, prim), tree_unflatten(tree_o, tan))
    return res + (aux,) if has_aux else res


# --- reverse mode -------------------------------------------------------


class _VjpFn:
    """The pullback of `vjp`: maps output cotangents (same structure as the
    outputs) to input cotangents (same structure as the primals)."""

    def __init__(
        self,
        pb: Callable[[List[Optional[Array]]], List[Array]],
        tree_o: TreeDef,
        tree_p: TreeDef,
        out_leaves: List[Array],
    ) -> None:
        self._pb = pb
        self._tree_o = tree_o
        self._tree_p = tree_p
        self._outs = out_leaves

    def __call__(self, cotangents: Any) -> Any:
        flat, tree = tree_flatten(cotangents)
        if tree != self._tree_o:
            raise ValueError(
                f"vjp: cotangents have structure {tree} but the outputs have {self._tree_o}; pass one per output"
            )
        cts = [None if c is None else _as_array(c) for c in flat]
        grads = self._pb(cts)
        return tree_unflatten(self._tree_p, grads)


def vjp(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> Tuple[Any, ...]:
    """`(fun(*primals), vjp_fn)`: reverse mode, as `jax.vjp`. `vjp_fn(ct)`
    returns a tuple with one cotangent per primal."""
    flat_p, tree_p = tree_flatten(tuple(primals))
    flat_p = [_as_array(p) for p in flat_p]
    level = _t.new_level()
    ins = [_t.rev_leaf(level, p, i) for i, p in enumerate(flat_p)]
    out = fun(*tree_unflatten(tree_p, ins))
    aux = None
    if has_aux:
        out, aux = out
        aux = _lower(level, aux)
    flat_o, tree_o = tree_flatten(out)
    values, pb = _t.pullback(level, [_as_array(o) for o in flat_o], flat_p)
    res: Tuple[Any, ...] = (tree_unflatten(tree_o, values), _VjpFn(pb, tree_o, tree_p, values))
    return res + (aux,) if has_aux else res


def value_and_grad(
    fun: Callable[..., Any], argnums: Union[int, Sequence[int]] = 0, has_aux: bool = False
) -> Callable[..., Tuple[Any, Any]]:
    """A function returning `(fun(*args), gradient)`; the gradient has the
    structure of `args[argnums]` (a tuple of them for a tuple of argnums).
    `fun` must return one element (or `(value, aux)` with `has_aux`)."""

    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Tuple[Any, Any]:
        nums, single = _argnums_tuple(argnums, len(args))

        def inner(*diff: Any) -> Any:
            full = list(args)
            for a, d in zip(nums, diff):
                full[a] = d
            return fun(*full, **kwargs)

        diff_args = tuple(args[a] for a in nums)
        for leaf in tree_flatten(diff_args)[0]:
            _float_dtype(_as_array(leaf))
        res = vjp(inner, *diff_args, has_aux=has_aux)
        aux = None
        if has_aux:
            value, pb, aux = res
        else:
            value, pb = res
        if not isinstance(value, (Array, float, int)):
            raise TypeError(
                f"grad: the function returned a {type(value).__name__}; grad needs one array of one element "
                "(use has_aux=True to return (value, aux), or vjp/jacrev for several outputs)"
            )
        v = _as_array(value)
        if v.size != 1:
            raise ValueError(
                f"grad: the function returned shape {v.shape}; grad needs one element "
                "(reduce it with nabla.sum or nabla.mean, or use vjp/jacrev)"
            )
        g = pb(_nabla.ones(v.shape, v.dtype))
        g = g[0] if single else g
        return ((v, aux), g) if has_aux else (v, g)

    return wrapped


def grad(
    fun: Callable[..., Any], argnums: Union[int, Sequence[int]] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """The gradient of `fun` (one-element output) with respect to
    `args[argnums]`, as `jax.grad`."""
    vg = value_and_grad(fun, argnums=argnums, has_aux=has_aux)

    @functools.wraps(fun)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if has_aux:
            (_, aux), g = vg(*args, **kwargs)
            return g, aux
        return vg(*args, **kwargs)[1]

    return wrapped


# --- batching -------------------------------------------------------------


def _broadcast_prefix(axes: Any, tree: Any, what: str) -> List[Any]:
    """`axes` (an int, None, or a pytree prefix of `tree`) as one entry per
    leaf of `tree`."""
    if axes is None or isinstance(axes, int):
        return [axes] * len(tree_flatten(tree)[0])
    if isinstance(axes, (list, tuple)) and isinstance(tree, (list, tuple)):
        if len(axes) != len(tree):
            raise ValueError(f"vmap: {what} has {len(axes)} entries for {len(tree)} values; give one per value")
        out: List[Any] = []
        for a, t in zip(axes, tree):
            out.extend(_broadcast_prefix(a, t, what))
        return out
    if isinstance(axes, dict) and isinstance(tree, dict):
        out = []
        for k in sorted(tree.keys()):
            out.extend(_broadcast_prefix(axes.get(k), tree[k], what))
        return out
    raise ValueError(f"vmap: {what} {axes!r} does not match the structure of the values")


def vmap(fun: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0) -> Callable[..., Any]:
    """`fun` mapped over an axis of its arguments, as `jax.vmap`.

    `in_axes`: an int, None (not mapped), or a tuple/pytree prefix with one
    entry per argument; `out_axes` likewise for the result."""

    @functools.wraps(fun)
    def wrapped(*args: Any) -> Any:
        axes = in_axes
        if isinstance(axes, list):
            axes = tuple(axes)
        if isinstance(axes, tuple) and len(axes) != len(args):
            raise ValueError(f"vmap: in_axes has {len(axes)} entries but the function got {len(args)} arguments")
        flat_axes = _broadcast_prefix(axes if isinstance(axes, tuple) else axes, args, "in_axes")
        flat, tree = tree_flatten(args)
        flat = [_as_array(x) for x in flat]
        size: Optional[int] = None
        for x, a in zip(flat, flat_axes):
            if a is None:
                continue
            if not -x.ndim <= a < x.ndim:
                raise ValueError(f"vmap: in_axes {a} is out of range for an argument of shape {x.shape}")
            n = x.shape[a % x.ndim]
            if size is not None and n != size:
                raise ValueError(f"vmap: mapped axes have different sizes ({size} and {n}); they must agree")
            size = n
        if size is None:
            raise ValueError("vmap: every in_axes entry is None; map at least one argument")
        level = _t.new_level()
        ins = [_t.batched(level, x, None if a is None else a % x.ndim) for x, a in zip(flat, flat_axes)]
        out = fun(*tree_unflatten(tree, ins))
        flat_o, tree_o = tree_flatten(out)
        oaxes = _broadcast_prefix(out_axes, out, "out_axes")
        res = []
        for o, a in zip(flat_o, oaxes):
            o = _as_array(o)
            if a is None:
                res.append(o)
                continue
            nd = o.ndim + 1
            res.append(_t.unbatch(level, o, size, a % nd))
        return tree_unflatten(tree_o, res)

    return wrapped


# --- Jacobians -----------------------------------------------------------


def _jac_result(blocks: List[List[Array]], tree_o: TreeDef, tree_i: TreeDef) -> Any:
    """Blocks `[j][i]` (output leaf j, input leaf i) in JAX's layout: the
    output structure with each leaf replaced by the input structure. A
    function of a list returning a list (the seed's `List[Array]` style)
    gives the flat list of blocks, output-major."""
    if tree_o.kind == "list" and tree_i.kind == "list" and all(
        c.kind == "leaf" for c in tree_o.children + tree_i.children
    ):
        return [b for row in blocks for b in row]
    return tree_unflatten(tree_o, [tree_unflatten(tree_i, row) for row in blocks])


def _basis(x: Array) -> Array:
    n = x.size
    return _nabla.reshape(_nabla.eye(n, x.dtype), (n,) + tuple(x.shape))


def _leaf_function(
    fun: Callable[..., Any], args: Tuple[Any, ...], argnums: Union[int, Sequence[int]]
) -> Tuple[List[Array], TreeDef, Callable[..., Any]]:
    """The leaves of `args[argnums]`, their structure, and `fun` as a
    function of those leaves (the other arguments fixed)."""
    nums, single = _argnums_tuple(argnums, len(args))
    diff = args[nums[0]] if single else tuple(args[a] for a in nums)
    flat, tree = tree_flatten(diff)

    def call(*leaves: Array) -> Any:
        d = tree_unflatten(tree, list(leaves))
        full = list(args)
        if single:
            full[nums[0]] = d
        else:
            for a, v in zip(nums, d):
                full[a] = v
        return fun(*full)

    return [_as_array(x) for x in flat], tree, call


def jacfwd(
    fun: Callable[..., Any], argnums: Union[int, Sequence[int]] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """The Jacobian of `fun` by forward mode (one batched JVP per input
    leaf), as `jax.jacfwd`: each block has shape `out.shape + in.shape`."""

    @functools.wraps(fun)
    def wrapped(*args: Any) -> Any:
        flat_i, tree_i, call = _leaf_function(fun, args, argnums)

        cols: List[List[Array]] = []
        tree_o: Optional[TreeDef] = None
        aux = None
        flat_o: Optional[List[Any]] = None
        for i, x in enumerate(flat_i):
            level = _t.new_level()
            e = _t.batched(level, _basis(x), 0)
            tangents = [e if k == i else _nabla.zeros(v.shape, v.dtype) for k, v in enumerate(flat_i)]
            out = jvp(call, flat_i, tangents, has_aux=has_aux)
            if has_aux:
                y, t, aux = out
            else:
                y, t = out
            flat_o, tree_o = tree_flatten(y)
            flat_t = tree_flatten(t)[0]
            col: List[Array] = []
            for yo, to in zip(flat_o, flat_t):
                blk = _t.unbatch(level, to, x.size, to.ndim)
                col.append(_nabla.reshape(blk, tuple(yo.shape) + tuple(x.shape)))
            cols.append(col)
        # flat_o and tree_o are None only when `diff` has no leaves.
        blocks = [[cols[i][j] for i in range(len(flat_i))] for j in range(len(flat_o))]  # type: ignore[arg-type]
        res = _jac_result(blocks, tree_o, tree_i)  # type: ignore[arg-type]
        return (res, aux) if has_aux else res

    return wrapped


def jacrev(
    fun: Callable[..., Any], argnums: Union[int, Sequence[int]] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """The Jacobian of `fun` by reverse mode (one batched VJP per output
    leaf), as `jax.jacrev`: each block has shape `out.shape + in.shape`."""

    @functools.wraps(fun)
    def wrapped(*args: Any) -> Any:
        flat_i, tree_i, call = _leaf_function(fun, args, argnums)

        res = vjp(call, *flat_i, has_aux=has_aux)
        if has_aux:
            y, pb, aux = res
        else:
            y, pb = res
            aux = None
        flat_o, tree_o = tree_flatten(y)
        blocks: List[List[Array]] = []
        for j, yo in enumerate(flat_o):
            level = _t.new_level()
            e = _t.batched(level, _basis(yo), 0)
            cts = [e if k == j else None for k in range(len(flat_o))]
            grads = pb._pb(cts)
            row: List[Array] = []
            for g, x in zip(grads, flat_i):
                blk = _t.unbatch(level, g, yo.size, 0)
                row.append(_nabla.reshape(blk, tuple(yo.shape) + tuple(x.shape)))
            blocks.append(row)
        out = _jac_result(blocks, tree_o, tree_i)
        return (out, aux) if has_aux else out

    return wrapped


def hessian(fun: Callable[..., Any], argnums: Union[int, Sequence[int]] = 0) -> Callable[..., Any]:
    """`jacfwd(jacrev(fun))`: the Hessian of a one-element function."""
    return jacfwd(jacrev(fun, argnums=argnums), argnums=argnums)


def checkpoint(fun: Callable) -> Callable:
    """`fun`, recomputed by reverse mode instead of keeping its
    intermediates, as `jax.checkpoint`: under `vjp`/`grad` it runs without
    recording, and its pullback runs `vjp(fun)` again when needed. Values
    and derivatives are unchanged."""

    @functools.wraps(fun)
    def wrapped(*args: Any) -> Any:
        flat, tree = tree_flatten(args)
        out_tree: List[Any] = []

        def flat_fun(*leaves: Array) -> Tuple[Any, ...]:
            out = fun(*tree_unflatten(tree, list(leaves)))
            fo, to = tree_flatten(out)
            out_tree.append(to)
            return tuple(_as_array(o) for o in fo)

        outs = _nabla.checkpoint_op(flat_fun)(*[_as_array(x) for x in flat])
        return tree_unflatten(out_tree[-1], list(outs))

    return wrapped


remat = checkpoint
