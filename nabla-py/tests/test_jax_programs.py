"""Whole programs (tests/fixtures/jax_programs.json) and the transform
composition matrix (tests/fixtures/jax_compositions.json, the chains of
tests/it/transforms/matrix.rs, written by scripts/jax_compositions.py)
through the Python transforms, against JAX 0.10.2 in float64: 1e-9 for
first derivatives, 1e-7 for second and higher (the fixtures' README)."""

import unittest

import numpy as np

import nabla as N
from test_jax_fixtures import arr, assert_close, load, npa

# --- jax_programs.json -----------------------------------------------------


def rosenbrock(x):
    return N.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def euler_energy(s):
    x, v, k = s[0:1], s[1:2], s[2:3]
    for _ in range(50):
        a = -k * x - 0.1 * v
        x, v = x + 0.05 * v, v + 0.05 * a
    return N.sum(0.5 * v * v + 0.5 * k * x * x)


def vector_fn(x):
    return N.stack([x[0] * x[1], N.exp(x[2]) * x[0], N.sin(x[1] * x[2]), N.sum(x * x)], 0)


# The programs' matrix-vector products two ways: `@` as a user writes it,
# and as an elementwise product summed (the same maths without matmul).
MATVEC = {"A @ x": lambda a, x: a @ x, "sum(A * x, 1)": lambda a, x: N.sum(a * x, axis=-1)}


class JaxPrograms(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.programs = {p["name"]: p for p in load("jax_programs.json")["programs"]}

    def io(self, name, dtype=N.float64):
        p = self.programs[name]
        return {k: arr(v, dtype) for k, v in p["inputs"].items()}, {k: npa(v) for k, v in p["outputs"].items()}

    def close(self, got, want, tol, what):
        assert_close(self, got, want, tol, what)

    def test_seed_hessian(self):
        i, o = self.io("seed_hessian")

        def foo(x):
            return N.sum(N.sin(x))

        self.close(N.vmap(foo)(i["x"]), o["vmap"], 1e-9, "vmap(foo)")
        self.close(N.jacrev(N.vmap(foo))(i["x"]), o["jacrev_vmap"], 1e-9, "jacrev(vmap(foo))")
        self.close(N.jacfwd(N.jacrev(N.vmap(foo)))(i["x"]), o["hessian"], 1e-7, "jacfwd(jacrev(vmap(foo)))")

    def test_seed_imperative(self):
        i, o = self.io("seed_imperative")

        def loss(w, b):
            return N.sum((N.relu(i["input"] @ w + b) - i["label"]) ** 2)

        w = N.array(i["weight"], requires_grad=True)
        b = N.array(i["bias"], requires_grad=True)
        value = loss(w, b)
        value.backward()
        self.close(value, o["loss"], 1e-9, "loss")
        self.close(w.grad(), o["weight_grad"], 1e-9, "tape weight grad")
        self.close(b.grad(), o["bias_grad"], 1e-9, "tape bias grad")
        with N.no_grad():
            w -= 0.01 * w.grad()
            b -= 0.01 * b.grad()
        self.close(w, o["weight_new"], 1e-9, "weight after a step")
        self.close(b, o["bias_new"], 1e-9, "bias after a step")
        v, (gw, gb) = N.value_and_grad(loss, argnums=(0, 1))(i["weight"], i["bias"])
        self.close(v, o["loss"], 1e-9, "value_and_grad value")
        self.close(gw, o["weight_grad"], 1e-9, "value_and_grad weight")
        self.close(gb, o["bias_grad"], 1e-9, "value_and_grad bias")

    def test_mlp_grad(self):
        def loss(w1, b1, w2, b2, x, y):
            return N.mean((N.tanh(x @ w1 + b1) @ w2 + b2 - y) ** 2)

        for dtype, tol in ((N.float64, 1e-9), (N.float32, 1e-4)):
            i, o = self.io("mlp_grad", dtype)
            args = [i[k] for k in ("w1", "b1", "w2", "b2", "X", "Y")]
            v, grads = N.value_and_grad(loss, argnums=(0, 1, 2, 3))(*args)
            self.close(v, o["loss"], tol, f"loss {dtype}")
            for g, k in zip(grads, ("g_w1", "g_b1", "g_w2", "g_b2")):
                self.assertEqual(g.dtype, dtype)
                self.close(g, o[k], tol, f"{k} {dtype}")

    def test_rosenbrock(self):
        i, o = self.io("rosenbrock")
        x = i["x"]
        f, g = N.value_and_grad(rosenbrock)(x)
        self.close(f, o["f"], 1e-9, "f")
        self.close(g, o["grad"], 1e-9, "grad")
        self.close(N.jacrev(rosenbrock)(x), o["grad"], 1e-9, "jacrev")
        self.close(N.hessian(rosenbrock)(x), o["hessian"], 1e-7, "hessian")
        self.close(N.jacrev(N.grad(rosenbrock))(x), o["hessian"], 1e-7, "jacrev(grad)")
        # JAX's hvp direction is the all-ones vector.
        _, hvp = N.jvp(N.grad(rosenbrock), (x,), (N.ones((6,), N.float64),))
        self.close(hvp, o["hvp"], 1e-7, "hvp = jvp(grad)")

    def test_per_example_grads(self):
        i, o = self.io("per_example_grads")
        for form, dot in (("x @ w", lambda x, w: x @ w), ("sum(x * w)", lambda x, w: N.sum(x * w))):
            with self.subTest(form=form):

                def single(w, x, y):
                    return (dot(x, w) - y) ** 2 + 0.1 * N.sum(N.sin(w * x))

                got = N.vmap(N.grad(single), in_axes=(None, 0, 0))(i["w"], i["X"], i["y"])
                self.close(got, o["per_example"], 1e-9, f"vmap(grad(single)) with {form}")

    def test_vector_fn(self):
        i, o = self.io("vector_fn")
        x = i["x"]
        self.close(vector_fn(x), o["f"], 1e-9, "f")
        self.close(N.jacfwd(vector_fn)(x), o["jacfwd"], 1e-9, "jacfwd")
        self.close(N.jacrev(vector_fn)(x), o["jacrev"], 1e-9, "jacrev")
        y, pullback = N.vjp(vector_fn, x)
        self.close(y, o["f"], 1e-9, "vjp primal")
        self.close(pullback(i["cotangent"])[0], o["vjp"], 1e-9, "vjp")
        y, t = N.jvp(vector_fn, (x,), (i["tangent"],))
        self.close(y, o["f"], 1e-9, "jvp primal")
        self.close(t, o["jvp"], 1e-9, "jvp")
        self.close(N.hessian(vector_fn)(x), o["hessian"], 1e-7, "hessian")

    def test_vector_fn2(self):
        i, o = self.io("vector_fn2")
        for form, matvec in MATVEC.items():
            with self.subTest(form=form):

                def f(x, a):
                    return N.sin(matvec(a, x)) * N.exp(x) + N.sum(x * x)

                self.close(f(i["x"], i["A"]), o["f"], 1e-9, f"f with {form}")
                self.close(N.jacfwd(f)(i["x"], i["A"]), o["jacfwd"], 1e-9, f"jacfwd with {form}")
                self.close(N.jacrev(f)(i["x"], i["A"]), o["jacrev"], 1e-9, f"jacrev with {form}")
                self.close(N.hessian(f)(i["x"], i["A"]), o["hessian"], 1e-7, f"hessian with {form}")

    def test_scalar_third_order(self):
        i, o = self.io("scalar_third_order")

        def f(x):
            return N.sin(x) * N.exp(x) / (1.0 + x * x)

        x = i["x"]
        self.close(f(x), o["f"], 1e-9, "f")
        self.close(N.grad(f)(x), o["d1"], 1e-9, "grad")
        self.close(N.grad(N.grad(f))(x), o["d2"], 1e-7, "grad(grad)")
        self.close(N.grad(N.grad(N.grad(f)))(x), o["d3"], 1e-7, "grad(grad(grad))")
        self.close(N.jacfwd(N.jacfwd(N.jacfwd(f)))(x), o["d3"], 1e-7, "jacfwd^3")
        _, t = N.jvp(N.grad(N.grad(f)), (x,), (N.ones((), N.float64),))
        self.close(t, o["d3"], 1e-7, "jvp(grad(grad))")

    def test_euler_oscillator(self):
        i, o = self.io("euler_oscillator")
        s = N.stack([i["x0"], i["v0"], i["k"]], 0)
        e, g = N.value_and_grad(euler_energy)(s)
        self.close(e, o["energy"], 1e-9, "energy")
        self.close(g, o["grad"], 1e-9, "gradient through 50 steps")
        self.close(N.hessian(euler_energy)(s), o["hessian"], 1e-7, "hessian through the loop")


# --- jax_compositions.json ---------------------------------------------------
# The functions of scripts/jax_compositions.py. A spec lists each
# argument's leaf count (2: the tuple (w, b)).


def _lin_x(x, p):
    w, b = p
    return N.sum(N.tanh(x * w + b)) + N.sum(x * x * w) * b


def _looped(x):
    h = x
    for _ in range(4):
        h = N.sin(h * 0.9) + x * 0.1
    return N.sum(h * h)


def _with_aux(x):
    return N.sum(x * x * N.sin(x)), N.tanh(x) * x


FUNCTIONS = {
    "bump": (lambda x: N.sin(x) * x * x + N.exp(x * 0.5), [1]),
    "bowl": (lambda x: N.sum(x * x * x + N.sin(x)) * N.sum(N.tanh(x)), [1]),
    "wave": (lambda x: N.sin(x) * N.sum(x * x) + x * x * x, [1]),
    "pair": (lambda x, a: N.sum(N.tanh(x * a)) + N.sum(x * x * a), [1, 1]),
    "looped": (_looped, [1]),
    # The Rust twin calls a custom op; here it is nabla.softplus.
    "soft": (lambda x: N.sum(N.softplus(x * x) * x), [1]),
    "softplus_op": (lambda x: N.softplus(x), [1]),
    "lin_x": (_lin_x, [1, 2]),
    "lin_p": (lambda p, x: _lin_x(x, p), [2, 1]),
    "with_aux": (_with_aux, [1]),
    "value_only": (lambda x: _with_aux(x)[0], [1]),
}

WRAP = {
    "grad": N.grad,
    "vmap": N.vmap,
    "jacfwd": N.jacfwd,
    "jacrev": N.jacrev,
    "hessian": N.hessian,
    "value_and_grad": N.value_and_grad,
    "grad_aux": lambda h: N.grad(h, has_aux=True),
    "value_and_grad_aux": lambda h: N.value_and_grad(h, has_aux=True),
}


def _split(leaves, spec):
    """Arguments of `spec` from the front of `leaves`, and the rest."""
    args, k = [], 0
    for n in spec:
        args.append(leaves[k] if n == 1 else tuple(leaves[k : k + n]))
        k += n
    return args, leaves[k:]


def run_chain(f, spec, chain, inputs):
    """`chain` ("jvp.vmap.grad" = jvp(vmap(grad(f)))) on the fixture's
    inputs (arguments, then tangents or the cotangent), its outputs as a
    flat list of leaves, as the script's `run` gives them."""
    names = chain.split(".")
    outer = names[0] if names[0] in ("jvp", "vjp") else None
    g = f
    for n in reversed(names[1:] if outer else names):
        g = WRAP[n](g)
    args, rest = _split(inputs, spec)
    if outer == "jvp":
        tangents, _ = _split(rest, spec)
        return N.tree_leaves(list(N.jvp(g, tuple(args), tuple(tangents))))
    if outer == "vjp":
        y, pullback = N.vjp(g, *args)
        ct = N.tree_unflatten(N.tree_flatten(y)[1], list(rest))
        return N.tree_leaves([y, *pullback(ct)])
    return N.tree_leaves(g(*args))


class JaxCompositions(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.functions = load("jax_compositions.json")["functions"]

    def test_every_function_is_defined(self):
        self.assertEqual(sorted(self.functions), sorted(FUNCTIONS))

    def test_chains_match_jax(self):
        for name, fx in self.functions.items():
            f, spec = FUNCTIONS[name]
            for chain, case in fx["cases"].items():
                with self.subTest(function=name, chain=chain):
                    got = run_chain(f, spec, chain, [arr(a) for a in case["inputs"]])
                    want = [npa(a) for a in case["outputs"]]
                    self.assertEqual(len(got), len(want), "number of outputs")
                    # Second and higher derivatives: 1e-7; first: 1e-9.
                    order = sum(t != "vmap" for t in chain.split(".")) + ("hessian" in chain)
                    tol = 1e-7 if order >= 2 else 1e-9
                    for k, (g, w) in enumerate(zip(got, want)):
                        assert_close(self, g, w, tol, f"{name}: {chain}: output {k}")

    def test_chains_jax_rejects_raise(self):
        for name, fx in self.functions.items():
            f, spec = FUNCTIONS[name]
            for chain, case in fx["rejected"].items():
                with self.subTest(function=name, chain=chain):
                    # JAX's TypeError: grad of a non-scalar output.
                    with self.assertRaisesRegex((ValueError, TypeError), "grad", msg=f"{name}: {chain} runs"):
                        run_chain(f, spec, chain, [arr(a) for a in case["inputs"]])


if __name__ == "__main__":
    unittest.main()
