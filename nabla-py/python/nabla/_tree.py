"""Pytrees: nested lists, tuples and dicts (and None) of arrays, as JAX
has them. The transforms flatten their arguments and results to lists of
leaves and rebuild the same structure around their outputs."""

from typing import Any, Callable, Iterable, List, Tuple

from nabla._nabla import Array


class TreeDef:
    """The structure of a pytree without its leaves."""

    __slots__ = ("kind", "meta", "children", "_key")

    kind: str
    meta: Any
    children: Tuple["TreeDef", ...]
    _key: Tuple[Any, ...]

    def __init__(self, kind: str, meta: Any, children: Tuple["TreeDef", ...]) -> None:
        self.kind = kind
        self.meta = meta
        self.children = children
        # Nested tuples: hashed and compared at C speed (jit's cache key).
        self._key = (kind, meta, tuple(c._key for c in children))

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.children)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TreeDef) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        inner = ", ".join(repr(c) for c in self.children)
        if self.kind == "list":
            return f"[{inner}]"
        if self.kind == "tuple":
            return f"({inner})"
        keys = self.meta
        return "{" + ", ".join(f"{k!r}: {c!r}" for k, c in zip(keys, self.children)) + "}"


_LEAF = TreeDef("leaf", None, ())
_NONE = TreeDef("none", None, ())


def tree_flatten(tree: Any) -> Tuple[List[Any], TreeDef]:
    """The leaves of `tree` (depth first) and its structure."""
    leaves: List[Any] = []
    return leaves, _flatten(tree, leaves)


def _flatten(t: Any, leaves: List[Any]) -> TreeDef:
    kind = type(t)
    if kind is Array:
        leaves.append(t)
        return _LEAF
    if kind is list or kind is tuple:
        return TreeDef("list" if kind is list else "tuple", None, tuple(_flatten(c, leaves) for c in t))
    if t is None:
        return _NONE
    if isinstance(t, dict):
        keys = tuple(sorted(t.keys()))
        return TreeDef("dict", keys, tuple(_flatten(t[k], leaves) for k in keys))
    if isinstance(t, (list, tuple)):
        kind_name = "list" if isinstance(t, list) else "tuple"
        return TreeDef(kind_name, None, tuple(_flatten(c, leaves) for c in t))
    leaves.append(t)
    return _LEAF


def tree_unflatten(treedef: TreeDef, leaves: Iterable[Any]) -> Any:
    """The pytree of structure `treedef` holding `leaves` in order."""
    it = iter(leaves)

    def go(d: TreeDef) -> Any:
        if d.kind == "leaf":
            return next(it)
        if d.kind == "none":
            return None
        kids = [go(c) for c in d.children]
        if d.kind == "list":
            return kids
        if d.kind == "tuple":
            return tuple(kids)
        return dict(zip(d.meta, kids))

    return go(treedef)


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any) -> Any:
    """`f` applied to the leaves of `tree` (and the matching leaves of
    `rest`), in the same structure."""
    leaves, d = tree_flatten(tree)
    others = [tree_flatten(r)[0] for r in rest]
    return tree_unflatten(d, [f(x, *ys) for x, *ys in zip(leaves, *others)])


def tree_leaves(tree: Any) -> List[Any]:
    """The leaves of `tree`."""
    return tree_flatten(tree)[0]


def is_array(x: Any) -> bool:
    return isinstance(x, Array)
