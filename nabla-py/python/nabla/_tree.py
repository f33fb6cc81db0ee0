"""Pytrees: nested lists, tuples and dicts (and None) of arrays, as JAX
has them. The transforms flatten their arguments and results to lists of
leaves and rebuild the same structure around their outputs."""

from typing import Any, Callable, Iterable, List, Tuple

from nabla._nabla import Array


class TreeDef:
    """The structure of a pytree without its leaves."""

    __slots__ = ("kind", "meta", "children")

    kind: str
    meta: Any
    children: Tuple["TreeDef", ...]

    def __init__(self, kind: str, meta: Any, children: Tuple["TreeDef", ...]) -> None:
        self.kind = kind
        self.meta = meta
        self.children = children

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(c.num_leaves for c in self.children)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, TreeDef)
            and self.kind == other.kind
            and self.meta == other.meta
            and self.children == other.children
        )

    def __hash__(self) -> int:
        return hash((self.kind, self.meta, self.children))

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

    def go(t: Any) -> TreeDef:
        if t is None:
            return _NONE
        if isinstance(t, (list, tuple)):
            kind = "list" if isinstance(t, list) else "tuple"
            return TreeDef(kind, None, tuple(go(c) for c in t))
        if isinstance(t, dict):
            keys = tuple(sorted(t.keys()))
            return TreeDef("dict", keys, tuple(go(t[k]) for k in keys))
        leaves.append(t)
        return _LEAF

    return leaves, go(tree)


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
