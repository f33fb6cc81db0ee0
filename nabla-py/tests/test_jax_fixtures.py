"""The per-op JAX reference cases (tests/fixtures/jax_reference.json and
jax_reference_more.json, JAX 0.10.2 in float64; see the README there)
through the Python API: forward, `nabla.vjp`, `nabla.jvp`, the HVP (jvp of
grad of `sum(op(*xs) * cotangent)`), `nabla.vmap` with every input batched
and with the second one unbatched, in float64 (1e-9, second order 1e-7)
and float32 forward/VJP (1e-4). Each case is a subTest.

Ops with a Python function (or indexing) run directly (`DIRECT`); an op
the module has no function for would run as a composition of the API
(`COMPOSED`, as a NumPy user would write it) or be skipped with the
reason in `MISSING`; both are empty now."""

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


F = N.nn.functional


def _indices(p):
    return _int_array(p["indices"], p.get("indices_shape"))


def _conv(p):
    conv = {1: F.conv1d, 2: F.conv2d}[len(p["stride"])]
    args = tuple(p["stride"]), tuple(p["padding"]), tuple(p["dilation"]), p["groups"]
    return lambda x, w: conv(x, w, None, *args)


def _eye(x):
    return N.eye(x.shape[-1], x.dtype)


def _shifted(x):
    """The fixtures' `input0 + 3 I` (well-conditioned)."""
    return x + 3.0 * _eye(x)


def _spd(x):
    """The fixtures' `input0 input0^T + n I` (symmetric positive definite)."""
    return N.matmul(x, N.swapaxes(x, -1, -2)) + x.shape[-1] * _eye(x)


DIRECT.update(
    {
        "pad": lambda p: lambda x: N.pad(x, p["pad"], constant_values=p["value"]),
        "einsum": lambda p: lambda a, b: N.einsum(p["spec"], a, b),
        "take_along_axis": lambda p: lambda x: N.take_along_axis(x, _indices(p), p["axis"]),
        "scatter_add": lambda p: lambda x: N.scatter_add(x, p["axis"], _int_array(p["indices"]), p["out_size"]),
        "tril": lambda p: lambda x: N.tril(x, p["k"]),
        "triu": lambda p: lambda x: N.triu(x, p["k"]),
        "cumprod": lambda p: lambda x: N.cumprod(x, p["axis"]),
        "sort": lambda p: lambda x: N.sort(x, p["axis"]),
        "diagonal": lambda p: N.diagonal,
        "trace": lambda p: N.linalg.trace,
        "norm": lambda p: lambda x: N.linalg.norm(x, p["ord"], tuple(p["axes"])),
        "embedding": lambda p: lambda w: F.embedding(_indices(p), w),
        "conv": _conv,
        "max_pool2d": lambda p: lambda x: F.max_pool2d(x, p["kernel"], p["stride"]),
        "avg_pool2d": lambda p: lambda x: F.avg_pool2d(x, p["kernel"], p["stride"]),
        "layer_norm": lambda p: lambda x, w, b: F.layer_norm(x, w.shape, w, b, p["eps"]),
        "rms_norm": lambda p: lambda x, w: F.rms_norm(x, w.shape, w, p["eps"]),
        # The linear-algebra cases make their matrices well-conditioned
        # first (`params.a`), as the file's functions do.
        "solve": lambda p: lambda x, b: N.linalg.solve(_shifted(x), b),
        "inv": lambda p: lambda x: N.linalg.inv(_shifted(x)),
        "det": lambda p: lambda x: N.linalg.det(_shifted(x)),
        "slogdet": lambda p: lambda x: N.linalg.slogdet(_shifted(x))[1],  # output: log|det|
        "cholesky": lambda p: lambda x: N.linalg.cholesky(_spd(x)),
        "triangular_solve": lambda p: lambda x, b: N.linalg.solve_triangular(
            N.tril(x) + 3.0 * _eye(x), b, lower=p["lower"]
        ),
        "eigvalsh": lambda p: lambda x: N.linalg.eigvalsh(_spd(x)),
    }
)

# Ops without a Python function run as compositions of the API, as a NumPy
# user would write them (none at present: every op of the files has one).
COMPOSED = {}

# Ops the Python API has neither a function for nor a faithful composition.
MISSING = {}


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
