"""`nabla.jit`: record a function once per signature, replay it without
running Python.

The first call with a given pytree structure, shapes, dtypes and static
arguments runs the function on recording tracers (`nabla::dynamic::record`):
every operation is computed and appended to a program. Later calls with the
same signature replay the program in Rust: instructions the outputs do
not need are dropped, and each intermediate array is freed right after its
last use, so its buffer is reused. A new signature records again.

Python control flow runs once, at recording: a branch on an array's value
raises (the value is not known while recording); branch on static
arguments (`static_argnums`) or use `nabla.where`. Arrays the function
closes over are recorded as constants.
"""

import functools
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

from nabla import _nabla
from nabla._nabla import Array
from nabla._tree import tree_flatten, tree_unflatten

_t = _nabla._trace


def _as_array(x: Any) -> Array:
    return x if isinstance(x, Array) else _nabla.asarray(x)


class Jitted:
    """A function compiled by `nabla.jit`: call it like the function."""

    def __init__(self, fun: Callable, static_argnums: Tuple[int, ...]):
        self._fun = fun
        self._static = static_argnums
        self._cache: Dict[Any, Tuple[Any, Any]] = {}
        # Without static arguments, lookup and replay run in Rust.
        self._fast = None if static_argnums else _nabla.JitCache()
        functools.update_wrapper(self, fun)

    def _split(self, args: Tuple[Any, ...]):
        n = len(args)
        static = tuple(sorted(a % n for a in self._static if -n <= a < n))
        dynamic = tuple(a for i, a in enumerate(args) if i not in static)
        return static, dynamic

    def _rebuild(self, args: Tuple[Any, ...], static: Tuple[int, ...], dynamic: Sequence[Any]) -> list:
        it = iter(dynamic)
        return [args[i] if i in static else next(it) for i in range(len(args))]

    def _key(self, args: Tuple[Any, ...]):
        if self._static:
            static, dynamic = self._split(args)
            try:
                static_vals = tuple(args[i] for i in static)
                hash(static_vals)
            except TypeError as e:
                raise TypeError(f"jit: static arguments must be hashable ({e})") from None
        else:
            static, dynamic, static_vals = (), args, ()
        flat, tree = tree_flatten(dynamic)
        flat = [x if type(x) is Array else _as_array(x) for x in flat]
        key = (tree._key, _t.signature(flat), static_vals)
        return key, static, tree, flat

    def _record(self, args: Tuple[Any, ...], static, tree, flat):
        out_tree = []

        def body(leaves):
            full = self._rebuild(args, static, tree_unflatten(tree, leaves))
            out = self._fun(*full)
            flat_o, tree_o = tree_flatten(out)
            out_tree.append(tree_o)
            return [_as_array(o) for o in flat_o]

        outs, program = _t.record(body, flat)
        return outs, program, out_tree[0]

    def __call__(self, *args: Any) -> Any:
        fast = self._fast
        if fast is not None:
            out = fast.call(args)
            if out is not None:
                return out
        key, static, tree, flat = self._key(args)
        entry = self._cache.get(key)
        if entry is None:
            outs, program, tree_o = self._record(args, static, tree, flat)
            self._cache[key] = (program, tree_o)
            result = tree_unflatten(tree_o, outs)
            if fast is not None:
                fast.insert(args, program, result)
            return result
        program, tree_o = entry
        return tree_unflatten(tree_o, program.run(flat))

    def lower(self, *args: Any):
        """The program recorded for these arguments (recording it if this
        signature is new); `print` lists its instructions."""
        key, static, tree, flat = self._key(args)
        if key not in self._cache:
            _, program, tree_o = self._record(args, static, tree, flat)
            self._cache[key] = (program, tree_o)
        return self._cache[key][0]


def jit(fun: Optional[Callable] = None, *, static_argnums: Union[int, Sequence[int]] = ()) -> Any:
    """`fun` recorded on its first call per signature and replayed after,
    as `jax.jit`. Usable as `@nabla.jit` or `nabla.jit(f, static_argnums=1)`;
    composes with every transform (`jit(grad(f))`, `grad(jit(f))`)."""
    nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    if fun is None:
        return lambda f: Jitted(f, nums)
    return Jitted(fun, nums)


def trace(fun: Callable, static_argnums: Union[int, Sequence[int]] = ()) -> Callable:
    """`trace(f)(*args)`: the program `jit` records for these arguments
    (as `jax.make_jaxpr`); `print` it to see what runs."""
    j = jit(fun, static_argnums=static_argnums)
    return j.lower


make_jaxpr = trace
