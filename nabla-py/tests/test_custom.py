"""nabla.custom_op with Python rules and nabla.checkpoint, under every
transform, against the closed forms."""

import unittest

import numpy as np

import nabla as N


def cube_op(scale=10.0):
    # rules deliberately `scale`× the true derivative, so their use shows
    return N.custom_op(
        lambda x: x**3,
        jvp=lambda xs, ys, ts: ts[0] * 3.0 * scale * xs[0] ** 2,
        vjp=lambda xs, ys, cts: (cts[0] * 3.0 * scale * xs[0] ** 2,),
        name="cube",
    )


class CustomOps(unittest.TestCase):
    def setUp(self):
        self.x = N.array([1.0, 2.0], N.float64)

    def test_rules_are_used_by_grad_jvp_vmap_and_jit(self):
        op = cube_op()
        f = lambda x: N.sum(op(x))  # noqa: E731
        self.assertEqual(N.grad(f)(self.x).tolist(), [30.0, 120.0])
        _, t = N.jvp(f, (self.x,), (N.array([1.0, 0.0], N.float64),))
        self.assertEqual(t.item(), 30.0)
        g = N.vmap(N.grad(f))(N.array([[1.0, 2.0], [3.0, 4.0]], N.float64))
        self.assertEqual(g.tolist(), [[30.0, 120.0], [270.0, 480.0]])
        jg = N.jit(N.grad(f))
        jg(self.x)
        self.assertEqual(jg(N.array([3.0, 4.0], N.float64)).tolist(), [270.0, 480.0])
        self.assertEqual(op(self.x).tolist(), [1.0, 8.0])

    def test_without_rules_it_differentiates_through_forward(self):
        op = N.custom_op(lambda x, y: (x * y, x + y))
        a, b = op(self.x, 3.0 * self.x)
        self.assertEqual(a.tolist(), [3.0, 12.0])
        g = N.grad(lambda x: N.sum(op(x, x)[0]))(self.x)
        self.assertEqual(g.tolist(), [2.0, 4.0])

    def test_an_error_in_a_rule_is_reported(self):
        op = N.custom_op(lambda x: x * 2.0, vjp=lambda xs, ys, cts: 1 / 0)
        with self.assertRaisesRegex(ValueError, "custom op.*VJP rule.*ZeroDivisionError"):
            N.grad(lambda x: N.sum(op(x)))(self.x)


class Checkpoint(unittest.TestCase):
    def test_values_and_derivatives_are_unchanged(self):
        def block(p, x):
            return N.tanh(x @ p["w"]) * p["s"], N.sum(x)

        p = {"w": N.array(np.arange(6.0).reshape(3, 2) / 7.0, N.float64), "s": N.array(1.5, N.float64)}
        x = N.array([[0.2, -0.4, 0.9]], N.float64)

        def loss(p, f):
            y, s = f(p, x)
            return N.sum(y**2) + s

        want = N.grad(loss)(p, block)
        got = N.grad(loss)(p, N.checkpoint(block))
        for k in p:
            np.testing.assert_allclose(np.asarray(got[k]), np.asarray(want[k]), rtol=1e-14)
        h1 = N.hessian(lambda w: loss({"w": w, "s": p["s"]}, block))(p["w"])
        h2 = N.hessian(lambda w: loss({"w": w, "s": p["s"]}, N.checkpoint(block)))(p["w"])
        np.testing.assert_allclose(np.asarray(h2), np.asarray(h1), rtol=1e-13)


if __name__ == "__main__":
    unittest.main()
