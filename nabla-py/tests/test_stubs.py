"""The type stubs (python/nabla/_nabla.pyi) against the built extension
module `nabla._nabla`: every name the module, its submodules `random` and
`_trace`, and its classes have at run time is declared in the stub, and
everything the stub declares exists at run time, with the same kind
(function, class, property, method) and the same parameters.

The stub describes each submodule as a private class of static methods
assigned to the submodule's name (`random = _RandomModule`); those classes
stand for modules and do not exist at run time.
"""

import ast
import inspect
import os
import types
import unittest

import nabla
from nabla import _nabla

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_PACKAGE = os.path.normpath(os.path.join(HERE, "..", "python", "nabla"))
INSTALLED_PACKAGE = os.path.dirname(os.path.abspath(nabla.__file__))

# Attributes every module, or every class, has without declaring them.
MODULE_DUNDERS = {
    "__all__",
    "__builtins__",
    "__cached__",
    "__doc__",
    "__file__",
    "__loader__",
    "__name__",
    "__package__",
    "__path__",
    "__spec__",
}
# Submodules of optional builds, typed by their Python wrappers instead
# (`_dist`: built with MPI, wrapped by nabla/dist.py).
OPTIONAL = {"_dist"}
CLASS_DUNDERS = {"__dict__", "__doc__", "__module__", "__qualname__", "__weakref__"}
ORDERINGS = {"__lt__", "__le__", "__gt__", "__ge__"}


def stub_paths():
    """The stub next to the imported package (where an installed build
    ships it) and the one in the source tree, each once."""
    out = []
    for d in (INSTALLED_PACKAGE, SOURCE_PACKAGE):
        p = os.path.realpath(os.path.join(d, "_nabla.pyi"))
        if os.path.exists(p) and p not in out:
            out.append(p)
    return out


def decorators(node):
    names = set()
    for d in node.decorator_list:
        if isinstance(d, ast.Name):
            names.add(d.id)
        elif isinstance(d, ast.Attribute):
            names.add(d.attr)
    return names


class StubScope:
    """The declarations of a module body or a class body of the stub."""

    def __init__(self, body):
        self.functions = {}  # name -> [FunctionDef, ...] (overloads)
        self.classes = {}  # name -> (ClassDef, StubScope)
        self.variables = {}  # name -> annotation node
        self.aliases = {}  # name -> name of a stub class (X = _Y)
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.setdefault(node.name, []).append(node)
            elif isinstance(node, ast.ClassDef):
                self.classes[node.name] = (node, StubScope(node.body))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                self.variables[node.target.id] = node.annotation
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        self.aliases[t.id] = node.value.id

    def names(self):
        return set(self.functions) | set(self.classes) | set(self.variables) | set(self.aliases)

    def module_stand_ins(self):
        """The submodules: names that are modules at run time, declared as
        aliases of stub classes."""
        return {
            name: self.classes[target][1]
            for name, target in self.aliases.items()
            if target in self.classes and isinstance(getattr(_nabla, name, None), types.ModuleType)
        }

    def stand_in_classes(self):
        return {self.aliases[name] for name in self.module_stand_ins()}


def parse(path):
    with open(path, encoding="utf-8") as f:
        return StubScope(ast.parse(f.read(), filename=path).body)


def params_of(fn, drop_first):
    """(name, kind, has_default) of a stub function's parameters."""
    a = fn.args
    out = []
    positional = list(a.posonlyargs) + list(a.args)
    n_defaults = len(a.defaults)
    for i, p in enumerate(positional):
        kind = "pos" if i >= len(a.posonlyargs) else "posonly"
        out.append((p.arg, kind, i >= len(positional) - n_defaults))
    if a.vararg:
        out.append((a.vararg.arg, "var", False))
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        out.append((p.arg, "kwonly", d is not None))
    if a.kwarg:
        out.append((a.kwarg.arg, "varkw", False))
    return out[1:] if drop_first else out


def runtime_params(obj, drop_first):
    """The same for a runtime callable, or None where it has no usable
    signature (pyo3 gives some slots `(*args, **kwargs)`)."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    kinds = {
        inspect.Parameter.POSITIONAL_ONLY: "posonly",
        inspect.Parameter.POSITIONAL_OR_KEYWORD: "pos",
        inspect.Parameter.VAR_POSITIONAL: "var",
        inspect.Parameter.KEYWORD_ONLY: "kwonly",
        inspect.Parameter.VAR_KEYWORD: "varkw",
    }
    out = [(p.name, kinds[p.kind], p.default is not p.empty) for p in sig.parameters.values()]
    if [k for _, k, _ in out] == ["var", "varkw"]:
        return None
    return out[1:] if drop_first else out


def loose(params):
    """Parameters compared by name, default and variadic-ness; pyo3 marks
    only `self` positional-only, so that distinction is not compared."""
    return [(n, "pos" if k == "posonly" else k, d) for n, k, d in params]


class StubTestCase(unittest.TestCase):
    def setUp(self):
        self.paths = stub_paths()
        self.assertTrue(self.paths, f"no _nabla.pyi in {INSTALLED_PACKAGE} or {SOURCE_PACKAGE}")
        self.stubs = [(p, parse(p)) for p in self.paths]

    def scopes(self):
        """(stub path, runtime module, its stub scope) for the module and
        each submodule."""
        for path, stub in self.stubs:
            yield path, _nabla, stub
            for name, scope in stub.module_stand_ins().items():
                sub = getattr(_nabla, name)
                assert isinstance(sub, types.ModuleType), f"{path}: {name} stands for a submodule"
                yield path, sub, scope

    def runtime_classes(self, module, scope):
        for name, value in vars(module).items():
            if isinstance(value, type):
                self.assertIn(name, scope.classes, f"class {module.__name__}.{name} is missing from the stub")
                yield name, value, scope.classes[name][1]


class RuntimeNamesAreDeclared(StubTestCase):
    def test_module_and_submodule_names(self):
        for path, module, scope in self.scopes():
            with self.subTest(stub=path, module=module.__name__):
                missing = sorted(
                    n for n in vars(module) if n not in MODULE_DUNDERS | OPTIONAL and n not in scope.names()
                )
                self.assertEqual(missing, [], f"names of {module.__name__} missing from {path}")

    def test_submodules_are_declared_as_submodules(self):
        for path, stub in self.stubs:
            stand_ins = stub.module_stand_ins()
            for name, value in vars(_nabla).items():
                if isinstance(value, types.ModuleType) and name not in OPTIONAL:
                    self.assertIn(name, stand_ins, f"{path}: submodule {name} is not declared as a class alias")

    def test_class_members(self):
        samples = {
            _nabla.Array: _nabla.array([1.0, 2.0]),
            _nabla.DType: _nabla.float32,
            _nabla.random.Key: _nabla.random.key(0),
        }
        for path, module, scope in self.scopes():
            for name, cls, cscope in self.runtime_classes(module, scope):
                with self.subTest(stub=path, cls=name):
                    declared = cscope.names()
                    public = {n for n in dir(cls) if not n.startswith("_")}
                    self.assertEqual(sorted(public - declared), [], f"public members of {name} missing")
                    for n in vars(cls):
                        if n in CLASS_DUNDERS or n in declared or not n.startswith("__"):
                            continue
                        # pyo3 adds these to classes without a constructor or
                        # an ordering; leaving them out of the stub is right
                        # only where they refuse.
                        if n == "__new__":
                            with self.assertRaises(TypeError, msg=f"{name}() constructs; declare __new__"):
                                cls()
                        elif n in ORDERINGS and cls in samples:
                            x = samples[cls]
                            self.assertIs(getattr(cls, n)(x, x), NotImplemented, f"{name}.{n} is an ordering")
                        else:
                            self.fail(f"{name}.{n} is missing from {path}")


class DeclaredNamesExist(StubTestCase):
    def check_scope(self, path, owner, scope, is_class, stand_ins=()):
        where = owner.__name__
        for name, defs in scope.functions.items():
            with self.subTest(stub=path, name=f"{where}.{name}"):
                self.assertTrue(hasattr(owner, name), f"{where}.{name} is declared but does not exist")
                raw = inspect.getattr_static(owner, name)
                is_property = any("property" in decorators(d) for d in defs)
                if is_property:
                    self.assertTrue(
                        inspect.isdatadescriptor(raw), f"{where}.{name} is a property in the stub but not at run time"
                    )
                    continue
                self.assertTrue(callable(getattr(owner, name)), f"{where}.{name} is not callable")
                self.assertFalse(
                    inspect.isdatadescriptor(raw) and not callable(raw),
                    f"{where}.{name} is a method in the stub but an attribute at run time",
                )
        for name, (node, cscope) in scope.classes.items():
            if name in stand_ins:
                continue
            with self.subTest(stub=path, name=f"{where}.{name}"):
                self.assertIsInstance(getattr(owner, name, None), type, f"{where}.{name} is not a class")
                self.check_scope(path, getattr(owner, name), cscope, True)
        for name, ann in scope.variables.items():
            with self.subTest(stub=path, name=f"{where}.{name}"):
                self.assertTrue(hasattr(owner, name), f"{where}.{name} is declared but does not exist")
                # `x: DType`, `x: ClassVar[DType]`, `x: str`: check the type.
                if isinstance(ann, ast.Subscript) and getattr(ann.value, "id", "") == "ClassVar":
                    ann = ann.slice
                if isinstance(ann, ast.Name):
                    want = {"str": str, "int": int, "float": float, "bool": bool}.get(ann.id)
                    want = want or getattr(_nabla, ann.id, None)
                    if isinstance(want, type):
                        self.assertIsInstance(getattr(owner, name), want, f"{where}.{name}")
                elif isinstance(ann, ast.Constant) and ann.value is None:
                    self.assertIsNone(getattr(owner, name), f"{where}.{name}")

    def test_declared_names_exist(self):
        for path, stub in self.stubs:
            self.check_scope(path, _nabla, stub, False, stub.stand_in_classes())
            for name, scope in stub.module_stand_ins().items():
                self.check_scope(path, getattr(_nabla, name), scope, False)

    def test_stand_in_classes_are_private(self):
        for path, stub in self.stubs:
            for name in stub.stand_in_classes():
                self.assertTrue(name.startswith("_"), f"{path}: {name} stands for a module; make it private")


class SignaturesMatch(StubTestCase):
    def compare(self, path, label, stub_fn, runtime, drop_stub, drop_runtime):
        got = runtime_params(runtime, drop_runtime)
        if got is None:
            return
        want = params_of(stub_fn, drop_stub)
        self.assertEqual(loose(want), loose(got), f"{path}: parameters of {label}")

    def test_functions_and_methods(self):
        for path, module, scope in self.scopes():
            for name, defs in scope.functions.items():
                if len(defs) != 1 or not hasattr(module, name):  # overloads; missing (tested above)
                    continue
                with self.subTest(stub=path, name=f"{module.__name__}.{name}"):
                    self.compare(path, f"{module.__name__}.{name}", defs[0], getattr(module, name), False, False)
            for cname, cls, cscope in self.runtime_classes(module, scope):
                for name, defs in cscope.functions.items():
                    if len(defs) != 1 or not hasattr(cls, name) or any("property" in decorators(d) for d in defs):
                        continue
                    label = f"{module.__name__}.{cname}.{name}"
                    with self.subTest(stub=path, name=label):
                        if name == "__new__":
                            self.compare(path, label, defs[0], cls, True, False)
                        elif not name.startswith("__") or name == "__array__":
                            self.compare(path, label, defs[0], getattr(cls, name), True, True)

    def test_reshape_takes_a_shape_or_ints(self):
        self.assertEqual(
            [p.kind for p in inspect.signature(_nabla.reshape).parameters.values()],
            [inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.VAR_POSITIONAL],
        )
        x = _nabla.arange(6)
        self.assertEqual(_nabla.reshape(x, (2, 3)).shape, _nabla.reshape(x, 2, 3).shape)


class Packaging(unittest.TestCase):
    def test_source_tree_has_stub_and_marker(self):
        if not os.path.isdir(SOURCE_PACKAGE):
            self.skipTest("not run from a source checkout")
        self.assertTrue(os.path.exists(os.path.join(SOURCE_PACKAGE, "_nabla.pyi")))
        self.assertTrue(os.path.exists(os.path.join(SOURCE_PACKAGE, "py.typed")))

    def test_installed_package_ships_stub_and_marker(self):
        if os.path.realpath(INSTALLED_PACKAGE) == os.path.realpath(SOURCE_PACKAGE):
            self.skipTest("nabla is imported from the source tree")
        shipped = [f for f in ("_nabla.pyi", "py.typed") if os.path.exists(os.path.join(INSTALLED_PACKAGE, f))]
        if not shipped and os.path.exists(os.path.join(SOURCE_PACKAGE, "_nabla.pyi")):
            self.skipTest(f"the build installed in {INSTALLED_PACKAGE} predates the stubs; reinstall to check")
        self.assertEqual(shipped, ["_nabla.pyi", "py.typed"], f"the wheel installed in {INSTALLED_PACKAGE}")


if __name__ == "__main__":
    unittest.main()
