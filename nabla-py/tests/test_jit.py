"""nabla.jit: same values as eager on every fixture op and program it can
express, no Python on a cached call, a new recording per signature,
static arguments, and composition with the transforms."""

import os
import sys
import unittest

import numpy as np

import nabla as N

sys.path.insert(0, os.path.dirname(__file__))
from test_jax_fixtures import arr, load, op_of  # noqa: E402


class JitMatchesEager(unittest.TestCase):
    def test_every_fixture_op_forward_and_vjp(self):
        ran = 0
        for name in ("jax_reference.json", "jax_reference_more.json"):
            for c in load(name)["cases"]:
                f, _ = op_of(c)
                if f is None:
                    continue
                with self.subTest(case=c["name"]):
                    xs = [arr(x) for x in c["inputs"]]
                    jf = N.jit(f)
                    want = np.asarray(f(*xs))
                    for _ in range(2):  # recording, then replay
                        np.testing.assert_array_equal(np.asarray(jf(*xs)), want)
                    ct = arr(c["cotangent"]) if "cotangent" in c else None
                    if ct is not None:
                        def loss(*a):
                            return N.sum(f(*a) * ct)
                        g_eager = N.grad(loss, argnums=tuple(range(len(xs))))(*xs)
                        g_jit = N.jit(N.grad(loss, argnums=tuple(range(len(xs)))))
                        for _ in range(2):
                            for a, b in zip(g_jit(*xs), g_eager):
                                np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)
                    ran += 1
        self.assertGreater(ran, 100)


class Caching(unittest.TestCase):
    def test_the_second_call_runs_no_python_and_a_new_shape_records_again(self):
        calls = []

        def f(x, y):
            calls.append(1)
            return N.sum(N.tanh(x) * y), x * 2.0

        jf = N.jit(f)
        x, y = N.array([0.5, -1.0]), N.array([2.0, 3.0])
        a = jf(x, y)
        b = jf(N.array([1.0, 2.0]), y)
        self.assertEqual(len(calls), 1)
        self.assertAlmostEqual(b[0].item(), float(np.sum(np.tanh([1.0, 2.0]) * [2.0, 3.0])), places=6)
        self.assertEqual(b[1].tolist(), [2.0, 4.0])
        self.assertEqual(a[1].tolist(), [1.0, -2.0])
        jf(N.array([1.0, 2.0, 3.0]), N.array([1.0, 1.0, 1.0]))
        self.assertEqual(len(calls), 2)
        jf(N.array([1.0, 2.0], N.float64), N.array([1.0, 1.0], N.float64))
        self.assertEqual(len(calls), 3)

    def test_static_argnums_record_per_value(self):
        calls = []

        def f(x, n):
            calls.append(n)
            for _ in range(n):
                x = N.sin(x)
            return x

        jf = N.jit(f, static_argnums=1)
        x = N.array([0.3])
        self.assertAlmostEqual(jf(x, 2).item(), float(np.sin(np.sin(np.float32(0.3)))), places=6)
        jf(x, 2)
        jf(x, 3)
        self.assertEqual(calls, [2, 3])

    def test_branching_on_a_value_names_static_argnums(self):
        def f(x):
            return x if x.item() > 0 else -x

        with self.assertRaisesRegex(TypeError, "static_argnums"):
            N.jit(f)(N.array(1.0))


class Composition(unittest.TestCase):
    def setUp(self):
        self.x = N.array([0.3, -0.8, 1.1], N.float64)

    @staticmethod
    def f(x):
        return N.sum(N.sin(x) * x + N.exp(x) ** 2)

    def test_jit_of_grad_and_grad_of_jit(self):
        want = np.asarray(N.grad(self.f)(self.x))
        for g in (N.jit(N.grad(self.f)), N.grad(N.jit(self.f))):
            for _ in range(2):
                np.testing.assert_allclose(np.asarray(g(self.x)), want, rtol=1e-13)

    def test_vmap_and_hessian_of_jit(self):
        xs = N.array(np.arange(6.0).reshape(2, 3) / 5.0, N.float64)
        jf = N.jit(self.f)
        jf(self.x)  # recorded for one example
        got = N.vmap(jf)(xs)
        np.testing.assert_allclose(np.asarray(got), [self.f(xs[0]).item(), self.f(xs[1]).item()], rtol=1e-13)
        np.testing.assert_allclose(
            np.asarray(N.jit(N.hessian(self.f))(self.x)), np.asarray(N.hessian(self.f)(self.x)), rtol=1e-13
        )

    def test_the_seed_hessian_under_jit(self):
        def foo(args):
            return [N.sum(N.sin(args[0]))]

        h = N.jit(N.jacfwd(N.jacrev(N.vmap(foo))))
        x = N.randn((2, 3), N.float32)
        eager = np.asarray(N.jacfwd(N.jacrev(N.vmap(foo)))([x])[0])
        for _ in range(2):
            got = h([x])[0]
            self.assertEqual(got.shape, (2, 2, 3, 2, 3))
            np.testing.assert_array_equal(np.asarray(got), eager)


class Listing(unittest.TestCase):
    def test_trace_lists_the_program_without_dead_code(self):
        def f(x):
            unused = N.exp(x)  # noqa: F841 -- dropped from the program
            return N.sum(N.sin(x))

        p = N.trace(f)(N.array([1.0, 2.0]))
        text = str(p)
        self.assertIn("sin", text)
        self.assertNotIn("exp", text)
        self.assertEqual(len(p), 2)


if __name__ == "__main__":
    unittest.main()
