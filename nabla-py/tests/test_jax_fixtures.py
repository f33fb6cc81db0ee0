"""The per-op JAX reference cases (tests/fixtures/jax_reference.json and
jax_reference_more.json, JAX 0.10.2 in float64; see the README there)
through the Python API: forward, `nabla.vjp`, `nabla.jvp`, the HVP (jvp of
grad of `sum(op(*xs) * cotangent)`), `nabla.vmap` with every input batched
and with the second one unbatched, in float64 (1e-9, second order 1e-7)
and float32 forward/VJP (1e-4). Each case is a subTest.

Ops with a Python function (or indexing) run directly (`DIRECT`); a few
the module has no function for run as compositions of the API
(`COMPOSED`, as a NumPy user would write them); the rest are skipped with
the reason in `MISSING`."""

import json
import os
import unittest

import numpy as np

import nabla as N

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "fixtures")


def load(name):
    with open(os.path.join(FIXTURES, name)) as fh:
        return json.load(fh)


def npa(j):
    return np.asarray(j["data"], dtype=np.float64).reshape(j["shape"])


def arr(j, dtype=N.float64):
    return N.array(npa(j), dtype)


def assert_close(test, got, want, tol, what):
    """`|got - want| <= tol * max(1, |want|)` elementwise (the Rust tests'
    `assert_close`), NaN matching NaN."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    test.assertEqual(got.shape, want.shape, f"{what}: shape")
    ok = (np.abs(got - want) <= tol * np.maximum(1.0, np.abs(want))) | (np.isnan(got) & np.isnan(want))
    if not ok.all():
        i = tuple(int(k) for k in np.argwhere(~ok)[0])
        test.fail(
            f"{what}: {int((~ok).sum())} of {ok.size} elements off (tol {tol}); "
            f"at {i}: got {got[i]!r}, want {want[i]!r}\n got  {got.ravel().tolist()}\n want {want.ravel().tolist()}"
        )


# --- the ops ---------------------------------------------------------------
# Each entry maps a case's params to a function of its array inputs.

SAME_NAME = (
    "exp log sin cos tan tanh sigmoid relu sqrt rsqrt abs square reciprocal log1p expm1 erf gelu gelu_tanh "
    "silu softplus add pow maximum minimum atan2 arcsin arccos arctan sinh cosh arcsinh arctanh log2 log10 "
    "exp2 erfc lgamma digamma log_sigmoid mish elu hard_tanh cbrt sinc logaddexp hypot remainder copysign "
    "matmul outer"
).split()
RENAMED = {"neg": "negative", "sub": "subtract", "mul": "multiply", "div": "divide"}


def _fn(name):
    f = getattr(N, name, None)
    return None if f is None else (lambda p: f)


def _axes(p):
    return None if "axes" not in p else tuple(p["axes"])


def _reduce(name):
    return lambda p: lambda x: getattr(N, name)(x, axis=_axes(p), keepdims=p.get("keepdim", False))


def _int_array(values, shape=None):
    a = np.asarray(values, dtype=np.int64)
    return N.array(a if shape is None else a.reshape(shape), N.int64)


DIRECT = {name: _fn(name) for name in SAME_NAME}
DIRECT.update({op: _fn(name) for op, name in RENAMED.items()})
DIRECT.update(
    {
        "powi": lambda p: lambda x: N.powi(x, p["n"]),
        "powf": lambda p: lambda x: N.powf(x, p["p"]),
        "clip": lambda p: lambda x: N.clip(x, p["min"], p["max"]),
        "leaky_relu": lambda p: lambda x: N.leaky_relu(x, p["negative_slope"]),
        "arccosh": lambda p: lambda x: N.arccosh(x + 1.0),  # the file evaluates it at input + 1
        **{r: _reduce(r) for r in ("sum", "mean", "max", "min", "prod", "logsumexp")},
        "var": lambda p: lambda x: N.var(x, axis=_axes(p), keepdims=p["keepdim"], ddof=p["ddof"]),
        "cumsum": lambda p: lambda x: N.cumsum(x, p["axis"]),
        "softmax": lambda p: lambda x: N.softmax(x, p["axis"]),
        "log_softmax": lambda p: lambda x: N.log_softmax(x, p["axis"]),
        "reshape": lambda p: lambda x: N.reshape(x, tuple(p["shape"])),
        "permute": lambda p: lambda x: N.transpose(x, p["perm"]),
        "transpose": lambda p: lambda x: N.transpose(x),
        "broadcast_to": lambda p: lambda x: N.broadcast_to(x, tuple(p["shape"])),
        "expand_dims": lambda p: lambda x: N.expand_dims(x, p["axis"]),
        "squeeze": lambda p: lambda x: N.squeeze(x, p["axis"]),
        "concat": lambda p: lambda *xs: N.concatenate(list(xs), p["axis"]),
        "stack": lambda p: lambda *xs: N.stack(list(xs), p["axis"]),
        "slice": lambda p: lambda x: x[tuple(slice(a, b) for a, b in p["ranges"])],
        "index_select": lambda p: lambda x: x[(slice(None),) * p["axis"] + (_int_array(p["indices"]),)],
        "where": lambda p: lambda x, y: N.where(
            N.array(np.asarray(p["mask"], dtype=bool).reshape(p["mask_shape"])), x, y
        ),
        # An embedding lookup is integer-array indexing of the table.
        "embedding": lambda p: lambda w: w[_int_array(p["indices"], p["indices_shape"])],
    }
)


def _pad(p):
    def f(x):
        for a, (lo, hi) in enumerate(p["pad"]):
            def fill(n):
                s = list(x.shape)
                s[a] = n
                return [N.full(tuple(s), p["value"], x.dtype)] if n else []

            x = N.concatenate(fill(lo) + [x] + fill(hi), a)
        return x

    return f


def _pool(reduce):
    # Every window offset (i, j) as a strided slice, stacked, then reduced.
    def build(p):
        (kh, kw), (sh, sw) = p["kernel"], p["stride"]

        def f(x):
            oh, ow = (x.shape[-2] - kh) // sh + 1, (x.shape[-1] - kw) // sw + 1
            views = [
                x[..., i : i + sh * (oh - 1) + 1 : sh, j : j + sw * (ow - 1) + 1 : sw]
                for i in range(kh)
                for j in range(kw)
            ]
            return reduce(N.stack(views, 0), axis=0)

        return f

    return build


def _einsum(p):
    return {
        "bij,bjk->bik": N.matmul,
        "ij,ij->i": lambda a, b: N.sum(a * b, axis=-1),
        "bhqd,bhkd->bhqk": lambda a, b: N.matmul(a, N.swapaxes(b, -1, -2)),
    }[p["spec"]]


def _layer_norm(p):
    def f(x, w, b):
        m = N.mean(x, axis=-1, keepdims=True)
        return (x - m) / N.sqrt(N.var(x, axis=-1, keepdims=True) + p["eps"]) * w + b

    return f


def _take_along_axis(p):
    # Axis 1 of a matrix: row i's picks as flat indices i * n + idx.
    idx = np.asarray(p["indices"], dtype=np.int64).reshape(p["indices_shape"])
    assert p["axis"] == 1 and idx.ndim == 2, "this composition handles axis 1 of a matrix"

    def f(x):
        flat = idx + x.shape[1] * np.arange(idx.shape[0])[:, None]
        return N.reshape(x, (-1,))[_int_array(flat)]

    return f


def _scatter_add(p):
    # out[idx[i]] += x[i]: a constant one-hot matrix times x.
    assert p["axis"] == 0
    onehot = np.eye(p["out_size"])[np.asarray(p["indices"])].T
    return lambda x: N.matmul(N.array(onehot, x.dtype), x)


def _tri(lower):
    def build(p):
        def f(x):
            m = (np.tril if lower else np.triu)(np.ones(x.shape[-2:], dtype=bool), p["k"])
            # An explicit zeros branch: `where(m, x, 0.0)` hits the bug
            # WhereBroadcasting pins below.
            return N.where(N.array(m), x, N.zeros(x.shape, x.dtype))

        return f

    return build


def _diagonal(x):
    n = x.shape[-1]
    return N.reshape(x, (n * n,))[:: n + 1]


COMPOSED = {
    "pad": _pad,
    "max_pool2d": _pool(N.max),
    "avg_pool2d": _pool(N.mean),
    "einsum": _einsum,
    "layer_norm": _layer_norm,
    "rms_norm": lambda p: lambda x, w: x * N.rsqrt(N.mean(N.square(x), axis=-1, keepdims=True) + p["eps"]) * w,
    "norm": lambda p: lambda x: N.sqrt(N.sum(N.square(x), axis=tuple(p["axes"]))),
    "take_along_axis": _take_along_axis,
    "scatter_add": _scatter_add,
    "tril": _tri(True),
    "triu": _tri(False),
    "diagonal": lambda p: _diagonal,
    "trace": lambda p: lambda x: N.sum(_diagonal(x)),
}

# Ops the Python API has neither a function for nor a faithful composition.
MISSING = {
    "conv": "no nabla.conv / conv_general_dilated (stride, padding, dilation, groups)",
    "sort": "no nabla.sort (nor argsort)",
    "cumprod": "no nabla.cumprod",
    "solve": "no nabla.linalg.solve",
    "inv": "no nabla.linalg.inv",
    "det": "no nabla.linalg.det",
    "slogdet": "no nabla.linalg.slogdet",
    "cholesky": "no nabla.linalg.cholesky",
    "triangular_solve": "no nabla.linalg.triangular_solve",
    "eigvalsh": "no nabla.linalg.eigvalsh",
}


def op_of(case):
    """The case's function of its inputs, or the reason it is skipped."""
    op, p = case["op"], case["params"]
    build = DIRECT.get(op) or COMPOSED.get(op)
    if build is None:
        return None, MISSING.get(op, f"no Python function for {op}")
    return build(p), None


# --- the checks ------------------------------------------------------------


class _Cases:
    """The checks of one fixture file; subclasses name the file."""

    FILE = None

    @classmethod
    def setUpClass(cls):
        cls.cases = load(cls.FILE)["cases"]

    def each(self, check, body, key=None):
        """`body(case, f)` for every case (that has `key`), one subTest each."""
        for c in self.cases:
            if key is not None and key not in c:
                continue
            with self.subTest(case=c["name"], check=check):
                f, why = op_of(c)
                if f is None:
                    self.skipTest(why)
                body(c, f)

    def test_every_op_is_run_or_listed_missing(self):
        for c in self.cases:
            self.assertTrue(
                c["op"] in DIRECT or c["op"] in COMPOSED or c["op"] in MISSING, f"{c['name']}: op {c['op']} unknown"
            )

    def test_forward(self):
        def body(c, f):
            for dtype, tol in ((N.float64, 1e-9), (N.float32, 1e-4)):
                y = f(*[arr(x, dtype) for x in c["inputs"]])
                self.assertEqual(y.dtype, dtype, f"{c['name']} forward dtype")
                assert_close(self, y, npa(c["output"]), tol, f"{c['name']} forward {dtype}")

        self.each("forward", body)

    def test_vjp(self):
        def body(c, f):
            for dtype, tol in ((N.float64, 1e-9), (N.float32, 1e-4)):
                y, pullback = N.vjp(f, *[arr(x, dtype) for x in c["inputs"]])
                assert_close(self, y, npa(c["output"]), tol, f"{c['name']} vjp output {dtype}")
                grads = pullback(arr(c["cotangent"], dtype))
                self.assertEqual(len(grads), len(c["vjp"]))
                for k, (g, w) in enumerate(zip(grads, c["vjp"])):
                    self.assertEqual(g.dtype, dtype, f"{c['name']} vjp[{k}] dtype")
                    assert_close(self, g, npa(w), tol, f"{c['name']} vjp[{k}] {dtype}")

        self.each("vjp", body)

    def test_jvp(self):
        def body(c, f):
            xs = tuple(arr(x) for x in c["inputs"])
            ts = tuple(arr(t) for t in c["tangents"])
            y, t = N.jvp(f, xs, ts)
            assert_close(self, y, npa(c["output"]), 1e-9, f"{c['name']} jvp primal")
            assert_close(self, t, npa(c["jvp"]), 1e-9, f"{c['name']} jvp")

        self.each("jvp", body)

    def test_hvp(self):
        def body(c, f):
            xs = tuple(arr(x) for x in c["inputs"])
            ts = tuple(arr(t) for t in c["tangents"])
            ct = arr(c["cotangent"])
            g = N.grad(lambda *a: N.sum(f(*a) * ct), argnums=tuple(range(len(xs))))
            grads, hvps = N.jvp(g, xs, ts)
            for k, w in enumerate(c["vjp"]):
                assert_close(self, grads[k], npa(w), 1e-9, f"{c['name']} grad[{k}] under jvp")
            for k, w in enumerate(c["hvp"]):
                assert_close(self, hvps[k], npa(w), 1e-7, f"{c['name']} hvp[{k}]")

        self.each("hvp", body)

    def _vmap(self, key):
        def body(c, f):
            v = c[key]
            y = N.vmap(f, in_axes=tuple(v["in_axes"]))(*[arr(x) for x in v["inputs"]])
            assert_close(self, y, npa(v["output"]), 1e-9, f"{c['name']} {key}")

        self.each(key, body, key)

    def test_vmap(self):
        self._vmap("vmap")

    def test_vmap_in_axes_0_none(self):
        self._vmap("vmap_in_axes_0_none")


class JaxReference(_Cases, unittest.TestCase):
    FILE = "jax_reference.json"

    def test_every_case_runs_directly(self):
        self.assertEqual([c["op"] for c in self.cases if DIRECT.get(c["op"]) is None], [])


class JaxReferenceMore(_Cases, unittest.TestCase):
    FILE = "jax_reference_more.json"

    def test_the_skipped_cases_are_the_missing_ops(self):
        skipped = sorted({c["op"] for c in self.cases if op_of(c)[0] is None})
        self.assertEqual(skipped, sorted(MISSING))


class WhereBroadcasting(unittest.TestCase):
    # The mask and both branches broadcast together, as in NumPy.
    def test_branches_broadcast_with_the_mask(self):
        m = np.array([[True, False, True], [False, True, False]])
        x = np.arange(6.0).reshape(2, 3)
        for a, b in ((x, 0.0), (0.0, x), (x[0], x), (x, x[1])):
            got = N.where(N.array(m), N.array(np.asarray(a), N.float64), N.array(np.asarray(b), N.float64))
            assert_close(self, got, np.where(m, a, b), 0.0, "where")


if __name__ == "__main__":
    unittest.main()
