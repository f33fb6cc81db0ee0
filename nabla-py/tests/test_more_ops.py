"""The NumPy/JAX functions over the runtime's composites (`pad`, `einsum`,
`take_along_axis`, `scatter_add`, `tril`, `triu`, `cumprod`, `sort`,
`diagonal`), `nabla.linalg` and the layers of `nabla.nn.functional`, in the
argument forms the JAX fixtures (test_jax_fixtures.py) do not reach:
against NumPy (float64, 1e-12) or a finite difference, and their errors."""

import itertools
import unittest

import numpy as np

import nabla as N

F = N.nn.functional
RNG = np.random.default_rng(3)


def a64(x):
    return N.array(np.asarray(x, dtype=np.float64), N.float64)


def close(test, got, want, tol=1e-12):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    test.assertEqual(got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def finite_difference(test, f, x, h=1e-6, tol=1e-6):
    """`jvp(f)` along a random direction against a central difference."""
    t = RNG.standard_normal(x.shape)
    _, got = N.jvp(f, (a64(x),), (a64(t),))
    want = (np.asarray(f(a64(x + h * t))) - np.asarray(f(a64(x - h * t)))) / (2 * h)
    close(test, got, want, tol)


class NumpyFunctions(unittest.TestCase):
    def test_pad_width_forms(self):
        x = RNG.standard_normal((2, 3))
        for pw in (1, (2,), (1, 2), ((1, 2),), ((0, 1), (2, 0)), [[1], [2]]):
            with self.subTest(pad_width=pw):
                close(self, N.pad(a64(x), pw, constant_values=1.5), np.pad(x, pw, constant_values=1.5))
        close(self, N.pad(a64(x), 1, "constant"), np.pad(x, 1))
        for bad in (-1, (1, 2, 3), ((1, 2),) * 3, ((1, -1), (0, 0))):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                N.pad(a64(x), bad)
        with self.assertRaisesRegex(ValueError, "mode"):
            N.pad(a64(x), 1, "reflect")

    def test_einsum(self):
        a, b = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 5))
        close(self, N.einsum("ij, jk -> ik", a64(a), a64(b)), a @ b)
        close(self, N.einsum("ij,jk", a64(a), a64(b)), np.einsum("ij,jk", a, b))
        close(self, N.einsum("i,j->ij", a64(a[0]), a64(b[0])), np.outer(a[0], b[0]))
        with self.assertRaisesRegex(ValueError, "two"):
            N.einsum("ij,jk,kl->il", a64(a), a64(b), a64(b.T))

    def test_take_along_axis_and_scatter_add(self):
        x = RNG.standard_normal((3, 4))
        idx = np.array([[0, 3], [1, 1], [2, 0]])
        close(self, N.take_along_axis(a64(x), idx, 1), np.take_along_axis(x, idx, 1))
        idx0 = np.array([[2, 0, 1, 1]])
        close(self, N.take_along_axis(a64(x), idx0, 0), np.take_along_axis(x, idx0, 0))
        flat = np.array([11, 0, 5])
        close(self, N.take_along_axis(a64(x), flat, None), np.take_along_axis(x, flat, None))
        # The VJP of the gather is the scatter-add.
        ct = RNG.standard_normal((3, 2))
        _, pb = N.vjp(lambda v: N.take_along_axis(v, idx, 1), a64(x))
        want = np.zeros_like(x)
        np.add.at(want, (np.arange(3)[:, None], idx), ct)
        close(self, pb(a64(ct))[0], want)
        rows = np.array([2, 0, 2])
        want = np.zeros((4, 4))
        np.add.at(want, rows, x)
        close(self, N.scatter_add(a64(x), 0, rows, 4), want)
        with self.assertRaisesRegex(TypeError, "integers"):
            N.take_along_axis(a64(x), np.array([[0.5]]), 1)

    def test_triangles_cumprod_sort(self):
        x = RNG.standard_normal((2, 3, 4))
        for k in (-1, 0, 2):
            close(self, N.tril(a64(x), k), np.tril(x, k))
            close(self, N.triu(a64(x), k=k), np.triu(x, k))
        close(self, N.cumprod(a64(x)), np.cumprod(x))
        close(self, N.cumprod(a64(x), -1), np.cumprod(x, -1))
        close(self, N.sort(a64(x)), np.sort(x))
        close(self, N.sort(a64(x), 0), np.sort(x, 0))
        close(self, N.sort(a64(x), None), np.sort(x, None))
        finite_difference(self, lambda v: N.cumprod(v, 1), x)

    def test_diagonal_and_trace(self):
        x = RNG.standard_normal((3, 4, 5))
        for off, a1, a2 in itertools.product((-2, 0, 1, 7), (0, 1, -1), (0, 2)):
            if a1 % 3 == a2 % 3:
                continue
            with self.subTest(offset=off, axis1=a1, axis2=a2):
                close(self, N.diagonal(a64(x), off, a1, a2), np.diagonal(x, off, a1, a2))
        for off in (-1, 0, 2):
            close(self, N.linalg.diagonal(a64(x), offset=off), np.diagonal(x, off, -2, -1))
            close(self, N.linalg.trace(a64(x), offset=off), np.trace(x, off, -2, -1))
        with self.assertRaises(ValueError):
            N.diagonal(a64(x), 0, 1, -2)


class Linalg(unittest.TestCase):
    def setUp(self):
        self.a = RNG.standard_normal((2, 4, 4)) + 4 * np.eye(4)
        self.spd = self.a @ np.swapaxes(self.a, -1, -2)

    def test_norm_matches_numpy(self):
        x = RNG.standard_normal((3, 4, 2))
        m = x[..., 0]
        cases = [
            (x, {}),
            (x, {"axis": 1}),
            (x, {"axis": -1, "ord": 1, "keepdims": True}),
            (x, {"axis": 0, "ord": np.inf}),
            (x, {"axis": 0, "ord": -np.inf}),
            (x, {"axis": 2, "ord": 3}),
            (x, {"axis": (0, 1)}),
            (x, {"axis": (2, 0), "ord": "fro", "keepdims": True}),
            (m, {"ord": 1}),
            (m, {"ord": -1}),
            (m, {"ord": np.inf}),
            (m, {"ord": -np.inf, "keepdims": True}),
            (x, {"axis": (1, 0), "ord": 1}),
            (x, {"axis": (2, 1), "ord": np.inf}),
            (m[0], {"ord": 0.5}),
        ]
        for v, kw in cases:
            with self.subTest(shape=v.shape, **{k: str(w) for k, w in kw.items()}):
                close(self, N.linalg.norm(a64(v), **kw), np.linalg.norm(v, **kw))
        for kw in ({"ord": 2}, {"ord": "nuc"}, {"ord": -2}):
            with self.assertRaisesRegex(ValueError, "singular"):
                N.linalg.norm(a64(m), **kw)
        with self.assertRaisesRegex(ValueError, "ord=0"):
            N.linalg.norm(a64(m[0]), 0)
        with self.assertRaises(ValueError):
            N.linalg.norm(a64(x), 1)  # an ord needs a 1-D or 2-D array or an axis

    def test_solves(self):
        a, b = self.a, RNG.standard_normal((2, 4, 3))
        close(self, N.linalg.solve(a64(a), a64(b)), np.linalg.solve(a, b))
        v = RNG.standard_normal(4)
        close(self, N.linalg.solve(a64(a), a64(v)), np.linalg.solve(a, v[None, :, None])[..., 0])
        close(self, N.linalg.solve(a64(a[0]), a64(b)), np.linalg.solve(a[0], b))  # batch broadcast
        close(self, N.linalg.inv(a64(a)), np.linalg.inv(a))
        close(self, N.linalg.det(a64(a)), np.linalg.det(a))
        flipped = a[:, ::-1]  # a negative determinant
        sign, logdet = N.linalg.slogdet(a64(flipped))
        s_np, l_np = np.linalg.slogdet(flipped)
        close(self, sign, s_np)
        close(self, logdet, l_np)
        finite_difference(self, N.linalg.det, a[0])

    def test_triangular(self):
        a, b = self.a, RNG.standard_normal((2, 4, 3))
        lo, up = np.tril(a), np.triu(a)
        close(self, N.linalg.solve_triangular(a64(a), a64(b), lower=True), np.linalg.solve(lo, b))
        close(self, N.linalg.solve_triangular(a64(a), a64(b)), np.linalg.solve(up, b))
        close(self, N.linalg.solve_triangular(a64(a), a64(b), trans="T", lower=True), np.linalg.solve(np.swapaxes(lo, -1, -2), b))
        close(self, N.linalg.solve_triangular(a64(a), a64(b), 1), np.linalg.solve(np.swapaxes(up, -1, -2), b))
        unit = lo - np.einsum("bii->bi", lo)[..., None] * np.eye(4) + np.eye(4)
        close(self, N.linalg.solve_triangular(a64(a), a64(b), lower=True, unit_diagonal=True), np.linalg.solve(unit, b))
        v = RNG.standard_normal((2, 4))
        close(self, N.linalg.solve_triangular(a64(a), a64(v), lower=True), np.linalg.solve(lo, v[..., None])[..., 0])
        with self.assertRaises(ValueError):
            N.linalg.solve_triangular(a64(a), a64(b), trans=3)
        with self.assertRaises(ValueError):
            N.linalg.solve_triangular(a64(a), a64(RNG.standard_normal((2, 5, 3))))

    def test_factorisations(self):
        s = self.spd
        l_np = np.linalg.cholesky(s)
        close(self, N.linalg.cholesky(a64(s)), l_np, 1e-10)
        close(self, N.linalg.cholesky(a64(s), upper=True), np.swapaxes(l_np, -1, -2), 1e-10)
        w, v = N.linalg.eigh(a64(s))
        close(self, w, np.linalg.eigvalsh(s), 1e-10)
        w, v = np.asarray(w), np.asarray(v)
        close(self, (v * w[:, None, :]) @ np.swapaxes(v, -1, -2), s, 1e-10)
        close(self, N.linalg.eigvalsh(a64(s)), np.linalg.eigvalsh(s), 1e-10)
        tall = RNG.standard_normal((5, 3))
        q, r = N.linalg.qr(a64(tall))
        close(self, np.asarray(q) @ np.asarray(r), tall)
        close(self, np.abs(N.linalg.qr(a64(tall), "r")), np.abs(np.linalg.qr(tall, "r")))
        with self.assertRaisesRegex(ValueError, "mode"):
            N.linalg.qr(a64(tall), "complete")
        with self.assertRaisesRegex(ValueError, "matrices"):
            N.linalg.inv(a64([1.0, 2.0]))

    def test_linalg_under_vmap_and_grad(self):
        a = self.a
        got = N.vmap(N.linalg.inv)(a64(a))
        close(self, got, np.linalg.inv(a))
        g = N.grad(lambda m: N.linalg.slogdet(m)[1])(a64(a[0]))
        close(self, g, np.linalg.inv(a[0]).T, 1e-10)


def conv_reference(x, w, stride, pad, dilation, groups):
    """A direct NumPy convolution (cross-correlation), zero padding
    `pad[i] = (before, after)`."""
    d = w.ndim - 2
    x = np.pad(x, [(0, 0), (0, 0)] + list(pad))
    n, c = x.shape[:2]
    o, cg = w.shape[:2]
    k = w.shape[2:]
    out = [(x.shape[2 + i] - dilation[i] * (k[i] - 1) - 1) // stride[i] + 1 for i in range(d)]
    y = np.zeros((n, o, *out))
    og = o // groups
    for pos in itertools.product(*[range(s) for s in out]):
        for off in itertools.product(*[range(s) for s in k]):
            at = tuple(pos[i] * stride[i] + off[i] * dilation[i] for i in range(d))
            for g in range(groups):
                xs = x[(slice(None), slice(g * cg, (g + 1) * cg)) + at]  # [n, cg]
                ws = w[(slice(g * og, (g + 1) * og), slice(None)) + off]  # [og, cg]
                y[(slice(None), slice(g * og, (g + 1) * og)) + pos] += xs @ ws.T
    return y


def pool_reference(x, k, s, p, reduce, fill):
    x = np.pad(x, [(0, 0)] * (x.ndim - 2) + [(p[0], p[0]), (p[1], p[1])], constant_values=fill)
    oh, ow = (x.shape[-2] - k[0]) // s[0] + 1, (x.shape[-1] - k[1]) // s[1] + 1
    y = np.zeros(x.shape[:-2] + (oh, ow))
    for i, j in itertools.product(range(oh), range(ow)):
        y[..., i, j] = reduce(x[..., i * s[0] : i * s[0] + k[0], j * s[1] : j * s[1] + k[1]], axis=(-2, -1))
    return y


class Layers(unittest.TestCase):
    def test_functional_has_the_layers(self):
        for name in ("conv1d", "conv2d", "conv3d", "max_pool2d", "avg_pool2d", "layer_norm", "rms_norm", "embedding"):
            self.assertIs(getattr(F, name), getattr(N, name))
            self.assertIn(name, F.__all__)

    def test_conv_arguments(self):
        x, w, b = RNG.standard_normal((2, 4, 6, 5)), RNG.standard_normal((6, 2, 3, 2)), RNG.standard_normal(6)
        want = conv_reference(x, w, (2, 1), [(1, 1), (0, 0)], (1, 2), 2) + b[:, None, None]
        close(self, F.conv2d(a64(x), a64(w), a64(b), stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2), want)
        close(self, F.conv2d(a64(x[0]), a64(w), None, 1, 0, 1, 2), conv_reference(x[:1], w, (1, 1), [(0, 0)] * 2, (1, 1), 2)[0])
        # 'same': an even kernel pads one more at the end, as PyTorch.
        w2 = RNG.standard_normal((3, 4, 2, 3))
        want = conv_reference(x, w2, (1, 1), [(0, 1), (1, 1)], (1, 1), 1)
        close(self, F.conv2d(a64(x), a64(w2), padding="same"), want)
        close(self, F.conv2d(a64(x), a64(w2), padding="valid"), conv_reference(x, w2, (1, 1), [(0, 0)] * 2, (1, 1), 1))
        finite_difference(self, lambda v: F.conv2d(v, a64(w2), padding="same"), x)
        x1, w1 = RNG.standard_normal((2, 3, 9)), RNG.standard_normal((4, 3, 3))
        close(self, F.conv1d(a64(x1), a64(w1), stride=2, padding=1), conv_reference(x1, w1, (2,), [(1, 1)], (1,), 1))
        x3, w3 = RNG.standard_normal((1, 2, 4, 4, 3)), RNG.standard_normal((2, 2, 2, 2, 2))
        close(self, F.conv3d(a64(x3), a64(w3)), conv_reference(x3, w3, (1,) * 3, [(0, 0)] * 3, (1,) * 3, 1))
        with self.assertRaisesRegex(ValueError, "strided"):
            F.conv2d(a64(x), a64(w2), stride=2, padding="same")
        with self.assertRaises(ValueError):
            F.conv2d(a64(x[0, 0]), a64(w2))

    def test_pools(self):
        x = RNG.standard_normal((2, 3, 7, 6))
        close(self, F.max_pool2d(a64(x), 3, 2, 1), pool_reference(x, (3, 3), (2, 2), (1, 1), np.max, -np.inf))
        close(self, F.max_pool2d(a64(x), (2, 3)), pool_reference(x, (2, 3), (2, 3), (0, 0), np.max, 0))
        close(self, F.avg_pool2d(a64(x), 3, 2, 1), pool_reference(x, (3, 3), (2, 2), (1, 1), np.mean, 0.0))
        counts = pool_reference(np.ones_like(x), (3, 3), (2, 2), (1, 1), np.sum, 0.0)
        sums = pool_reference(x, (3, 3), (2, 2), (1, 1), np.sum, 0.0)
        close(self, F.avg_pool2d(a64(x), 3, 2, 1, count_include_pad=False), sums / counts)
        close(self, F.avg_pool2d(a64(x), 3, 2, 1, divisor_override=4), sums / 4)
        finite_difference(self, lambda v: F.avg_pool2d(v, 3, 2, 1, count_include_pad=False), x)
        with self.assertRaisesRegex(ValueError, "ceil_mode"):
            F.max_pool2d(a64(x), 2, ceil_mode=True)
        with self.assertRaisesRegex(ValueError, "dilation"):
            F.max_pool2d(a64(x), 2, dilation=2)

    def test_norms(self):
        x = RNG.standard_normal((2, 3, 4))
        m = x.mean(axis=(1, 2), keepdims=True)
        v = x.var(axis=(1, 2), keepdims=True)
        close(self, F.layer_norm(a64(x), (3, 4)), (x - m) / np.sqrt(v + 1e-5))
        w = RNG.standard_normal(4)
        r = np.sqrt(np.mean(x**2, axis=-1, keepdims=True) + np.finfo(np.float64).eps)
        close(self, F.rms_norm(a64(x), 4, a64(w)), x / r * w)
        with self.assertRaisesRegex(ValueError, "normalized_shape"):
            F.layer_norm(a64(x), (3,))
        with self.assertRaisesRegex(ValueError, "normalized_shape"):
            F.layer_norm(a64(x), 4, a64(np.ones(3)))

    def test_embedding_gathers_concrete_and_traced_indices(self):
        table = RNG.standard_normal((5, 3))
        idx = np.array([[4, 0], [1, -1]])
        close(self, F.embedding(idx, a64(table)), table[idx])
        # Batched indices: one gather per example.
        close(self, N.vmap(lambda i: F.embedding(i, a64(table)))(N.array(idx)), table[idx])
        # Recorded indices: the program gathers each call's.
        calls = []

        def loss(t, i):
            calls.append(1)
            return N.sum(F.embedding(i, t) ** 2)

        g = N.jit(N.grad(loss))
        for rows in (idx, np.array([[2, 2], [0, 3]]), np.array([[1, 4], [4, 4]])):
            want = np.zeros_like(table)
            np.add.at(want, rows, 2 * table[rows])
            close(self, g(a64(table), N.array(rows)), want)
        self.assertEqual(len(calls), 1, "recorded once, replayed with new indices")
        with self.assertRaisesRegex(ValueError, "embedding: index 7 is out of bounds"):
            g(a64(table), N.array(np.array([[7, 0], [0, 0]])))
        with self.assertRaisesRegex(TypeError, "integers"):
            N.jit(lambda t, i: F.embedding(i, t))(a64(table), a64(idx * 1.0))

    def test_take_along_axis_and_scatter_add_with_traced_indices(self):
        x = RNG.standard_normal((3, 4))
        f = N.jit(lambda v, i: N.take_along_axis(v, i, 1))
        for idx in (np.array([[0, 3], [1, 1], [2, -4]]), np.array([[3, 3], [0, 2], [1, 0]])):
            close(self, f(a64(x), N.array(idx)), np.take_along_axis(x, idx, 1))
        # Its gradient under jit is the scatter-add of the cotangent.
        g = N.jit(N.grad(lambda v, i: N.sum(N.take_along_axis(v, i, 0) * 3.0)))
        for rows in (np.array([[0, 2, 1, 1], [2, 2, 0, 1]]), np.array([[1, 1, 1, 0]])):
            want = np.zeros_like(x)
            np.add.at(want, (rows, np.arange(4)[None, :].repeat(len(rows), 0)), 3.0)
            close(self, g(a64(x), N.array(rows)), want)
        idx = np.array([[0, 3], [1, 1], [2, 0]])
        # Per-axis bounds are checked when the recorded program runs.
        with self.assertRaisesRegex(ValueError, "take_along_axis: index 4 is out of range"):
            f(a64(x), N.array(np.array([[4, 0], [0, 0], [0, 0]])))
        # vmap over examples with their own indices.
        per = N.vmap(lambda v, i: N.take_along_axis(v, i, 0))(a64(x), N.array(idx[:, :1]))
        close(self, per, np.take_along_axis(x, idx[:, :1], 1))
        # scatter_add with recorded indices, and its VJP (a gather).
        s = N.jit(lambda v, i: N.scatter_add(v, 0, i, 4))
        for rows in (np.array([2, 0, 2]), np.array([3, 3, 1])):
            want = np.zeros((4, 4))
            np.add.at(want, rows, x)
            close(self, s(a64(x), N.array(rows)), want)
        ct = RNG.standard_normal((4, 4))
        _, pb = N.vjp(lambda v: s(v, N.array(rows)), a64(x))
        close(self, pb(a64(ct))[0], ct[rows])
        with self.assertRaisesRegex(ValueError, "one entry per slab"):
            s(a64(x), N.array(np.array([0, 1])))

if __name__ == "__main__":
    unittest.main()
