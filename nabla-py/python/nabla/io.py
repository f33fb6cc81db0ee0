"""Safetensors files: `save(dict_of_arrays, path)`, `load_file(path)` (a
dict), and `load(module_or_dict, path)` into a model's parameters. Files
written here load with `safetensors.torch.load_file` and vice versa."""

from typing import Any, Dict

from nabla._nabla import Array, _io

load_file = _io.load_file


def save(tree: Any, path: str) -> None:
    """Writes a dict of name to array (or a `nabla.nn` module's
    parameters, by their PyTorch names) to `path`."""
    arrays = tree.state_dict() if hasattr(tree, "state_dict") else tree
    _io.save(dict(arrays), str(path))


def load(target: Any, path: str) -> Dict[str, Array]:
    """Loads `path` into a `nabla.nn` module (checking names and shapes) or
    returns its arrays when `target` is None."""
    arrays = load_file(str(path))
    if target is not None:
        target.load_state_dict(arrays)
    return arrays


__all__ = ["save", "load", "load_file"]
