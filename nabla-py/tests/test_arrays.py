"""nabla.Array from Python: creation, attributes, operators, indexing,
dtypes, NumPy interop, and the values NumPy gives for the same calls."""

import math
import unittest

import numpy as np

import nabla


def close(test, got, want, tol=1e-6):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    test.assertEqual(got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


class Creation(unittest.TestCase):
    def test_version_is_the_crate_version(self):
        self.assertEqual(nabla.__version__, "0.1.0")

    def test_array_from_nested_lists_keeps_numpy_dtypes(self):
        self.assertEqual(nabla.array([[1.0, 2.0], [3.0, 4.0]]).shape, (2, 2))
        self.assertEqual(nabla.array([1.5]).dtype, nabla.float32)
        self.assertEqual(nabla.array([1, 2]).dtype, nabla.int64)
        self.assertEqual(nabla.array([True]).dtype, nabla.bool_)
        self.assertEqual(nabla.array([1.0], nabla.float64).dtype, nabla.float64)
        self.assertEqual(nabla.array([1.0], dtype="float64").dtype, nabla.float64)
        self.assertEqual(nabla.DType.float32, nabla.float32)

    def test_creation_functions(self):
        self.assertEqual(nabla.zeros((2, 3)).tolist(), [[0.0] * 3] * 2)
        self.assertEqual(nabla.ones(2, nabla.float64).tolist(), [1.0, 1.0])
        self.assertEqual(nabla.full((2,), 7.0).tolist(), [7.0, 7.0])
        self.assertEqual(nabla.arange(4).tolist(), [0, 1, 2, 3])
        close(self, nabla.arange(0.0, 1.0, 0.25), [0.0, 0.25, 0.5, 0.75])
        close(self, nabla.linspace(0.0, 1.0, 5), np.linspace(0.0, 1.0, 5))
        close(self, nabla.eye(3), np.eye(3))

    def test_seeded_draws_repeat_and_keys_are_explicit(self):
        nabla.seed(3)
        a = nabla.randn((4,)).tolist()
        nabla.seed(3)
        self.assertEqual(nabla.randn((4,)).tolist(), a)
        k = nabla.random.key(0)
        k1, k2 = nabla.random.split(k)
        self.assertEqual(nabla.random.normal(k1, (3,)).tolist(), nabla.random.normal(k1, (3,)).tolist())
        self.assertNotEqual(nabla.random.normal(k1, (3,)).tolist(), nabla.random.normal(k2, (3,)).tolist())
        u = nabla.rand((1000,)).tolist()
        self.assertTrue(all(0.0 <= v < 1.0 for v in u))


class Attributes(unittest.TestCase):
    def test_shape_ndim_size_item_T(self):
        a = nabla.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        self.assertEqual((a.shape, a.ndim, a.size), ((2, 3), 2, 6))
        self.assertEqual(a.T.shape, (3, 2))
        self.assertEqual(nabla.sum(a).item(), 21.0)
        self.assertEqual(float(nabla.sum(a)), 21.0)
        self.assertEqual(len(a), 2)

    def test_repr_is_numpy_style(self):
        a = nabla.array([1.0, 2.5])
        self.assertEqual(repr(a), "Array([1.  2.5], dtype=float32)")
        self.assertEqual(str(a), "[1.  2.5]")


class Methods(unittest.TestCase):
    def test_array_methods_are_the_functions(self):
        x = np.arange(6.0).reshape(2, 3) / 4.0
        a = nabla.array(x, nabla.float64)
        close(self, a.sum(axis=0), x.sum(axis=0))
        close(self, a.mean(), x.mean())
        close(self, a.max(axis=1, keepdims=True), x.max(axis=1, keepdims=True))
        close(self, a.reshape(3, 2), x.reshape(3, 2))
        close(self, a.reshape((6,)), x.reshape(6))
        close(self, a.flatten(), x.flatten())
        close(self, a.transpose(1, 0), x.T)
        close(self, a.exp(), np.exp(x))
        close(self, a.cumsum(), x.cumsum())
        close(self, a @ a.T, a.matmul(a.T))
        np.testing.assert_array_equal(a.numpy(), x)

    def test_numpy_scalars_and_bad_data(self):
        self.assertEqual(nabla.array(np.float32(1.5)).dtype, nabla.float32)
        self.assertEqual(nabla.array([np.int64(1), np.int64(2)]).tolist(), [1, 2])
        with self.assertRaisesRegex(TypeError, "string"):
            nabla.array("a")
        self.assertEqual(nabla.arange(3.0).dtype, nabla.float32)
        big = (1 << 62) + 1
        self.assertEqual(nabla.array([big, 1]).tolist(), [big, 1])
        self.assertEqual(int(nabla.array(big)), big)


class Operators(unittest.TestCase):
    def setUp(self):
        self.x = np.array([[0.5, -1.0, 2.0], [3.0, 0.25, -0.75]])
        self.y = np.array([1.5, 2.0, -0.5])
        self.a = nabla.array(self.x, nabla.float64)
        self.b = nabla.array(self.y, nabla.float64)

    def test_arithmetic_broadcasts_like_numpy(self):
        a, b, x, y = self.a, self.b, self.x, self.y
        close(self, a + b, x + y)
        close(self, a - b, x - y)
        close(self, a * b, x * y)
        close(self, a / b, x / y)
        close(self, a**2, x**2)
        close(self, abs(a) ** 0.5, np.abs(x) ** 0.5)
        close(self, -a, -x)
        close(self, 2.0 - a, 2.0 - x)
        close(self, 1.0 / b, 1.0 / y)
        close(self, a @ b, x @ y)
        close(self, a.T @ a, x.T @ x)

    def test_python_numbers_keep_the_array_dtype(self):
        a = nabla.array([1.0, 2.0])
        self.assertEqual((a * 2.5).dtype, nabla.float32)
        self.assertEqual((3 + a).dtype, nabla.float32)

    def test_comparisons_give_bool_arrays(self):
        m = self.a > 0.4
        self.assertEqual(m.dtype, nabla.bool_)
        self.assertEqual(m.tolist(), (self.x > 0.4).tolist())
        self.assertEqual((self.a == self.a).tolist(), [[True] * 3] * 2)

    def test_in_place_updates(self):
        a = nabla.array([1.0, 2.0])
        same = a
        a -= 0.5
        self.assertIs(a, same)
        self.assertEqual(a.tolist(), [0.5, 1.5])
        a *= nabla.array([2.0, 2.0])
        self.assertEqual(same.tolist(), [1.0, 3.0])


class Ops(unittest.TestCase):
    def test_elementwise_ops_match_numpy(self):
        x = np.linspace(0.1, 0.9, 7)
        a = nabla.array(x, nabla.float64)
        for name, ref in [
            ("sin", np.sin), ("cos", np.cos), ("tan", np.tan), ("exp", np.exp), ("log", np.log),
            ("sqrt", np.sqrt), ("tanh", np.tanh), ("arcsin", np.arcsin), ("arctan", np.arctan),
            ("log1p", np.log1p), ("expm1", np.expm1), ("square", np.square), ("reciprocal", np.reciprocal),
            ("negative", np.negative), ("abs", np.abs), ("floor", np.floor), ("sign", np.sign),
        ]:
            with self.subTest(op=name):
                close(self, getattr(nabla, name)(a), ref(x), 1e-12)
        close(self, nabla.maximum(a, 0.5), np.maximum(x, 0.5), 1e-12)
        close(self, nabla.arctan2(a, 0.3), np.arctan2(x, 0.3), 1e-12)
        close(self, nabla.clip(a, 0.2, 0.6), np.clip(x, 0.2, 0.6), 1e-12)

    def test_reductions_take_axis_and_keepdims(self):
        x = np.arange(24.0).reshape(2, 3, 4) / 7.0
        a = nabla.array(x, nabla.float64)
        close(self, nabla.sum(a), x.sum())
        close(self, nabla.sum(a, axis=1), x.sum(axis=1))
        close(self, nabla.sum(a, axis=(0, 2), keepdims=True), x.sum(axis=(0, 2), keepdims=True))
        close(self, nabla.mean(a, axis=-1), x.mean(axis=-1))
        close(self, nabla.max(a, axis=0), x.max(axis=0))
        close(self, nabla.min(a), x.min())
        close(self, nabla.prod(a + 1.0, axis=2), (x + 1.0).prod(axis=2))
        close(self, nabla.var(a, axis=1), x.var(axis=1))
        close(self, nabla.std(a, axis=1, ddof=1), x.std(axis=1, ddof=1))
        close(self, nabla.cumsum(a, axis=2), x.cumsum(axis=2))
        self.assertEqual(nabla.argmax(a, axis=2).tolist(), x.argmax(axis=2).tolist())
        close(self, nabla.logsumexp(a, axis=1), np.log(np.exp(x).sum(axis=1)))
        close(self, nabla.softmax(a, axis=-1), np.exp(x) / np.exp(x).sum(axis=-1, keepdims=True))

    def test_shape_ops(self):
        x = np.arange(6.0).reshape(2, 3)
        a = nabla.array(x, nabla.float64)
        close(self, nabla.reshape(a, (3, 2)), x.reshape(3, 2))
        close(self, nabla.reshape(a, -1), x.reshape(-1))
        close(self, nabla.transpose(a), x.T)
        close(self, nabla.expand_dims(a, 0), x[None])
        close(self, nabla.squeeze(nabla.expand_dims(a, 1)), x)
        close(self, nabla.concatenate([a, a], axis=1), np.concatenate([x, x], axis=1))
        close(self, nabla.stack([a, a]), np.stack([x, x]))
        close(self, nabla.where(a > 2.0, a, -a), np.where(x > 2.0, x, -x))
        close(self, nabla.broadcast_to(a[0], (4, 3)), np.broadcast_to(x[0], (4, 3)))


class Indexing(unittest.TestCase):
    def test_basic_and_advanced_indexing_match_numpy(self):
        x = np.arange(60.0).reshape(3, 4, 5)
        a = nabla.array(x, nabla.float64)
        keys = [
            1, -1, (0, 2), (slice(None), 1), (Ellipsis, 2), (None, 0), slice(1, None),
            (slice(None, None, -1),), (slice(None), slice(3, 0, -2)), (slice(None), slice(None, None, 2), -1),
            (0, slice(-3, None)), (Ellipsis, None), (1, 2, 3),
        ]
        for k in keys:
            with self.subTest(key=k):
                close(self, a[k], x[k])
        close(self, a[[2, 0]], x[[2, 0]])
        close(self, a[:, nabla.array([3, 1, 1])], x[:, [3, 1, 1]])
        m = x > 30.0
        close(self, a[nabla.array(m)], x[m])

    def test_out_of_bounds_is_an_index_error(self):
        with self.assertRaises(IndexError):
            nabla.zeros((2, 3))[2]


class NumPyInterop(unittest.TestCase):
    def test_both_ways(self):
        x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
        a = nabla.asarray(x)
        self.assertEqual(a.dtype, nabla.float32)
        back = np.asarray(a)
        self.assertEqual(back.dtype, np.float32)
        np.testing.assert_array_equal(back, x)
        self.assertEqual(nabla.asarray(np.arange(3, dtype=np.int32)).dtype, nabla.int64)

    def test_asarray_of_an_array_is_the_array(self):
        a = nabla.array([1.0])
        self.assertIs(nabla.asarray(a), a)


class Autograd(unittest.TestCase):
    def test_backward_grad_zero_grad_detach_no_grad(self):
        w = nabla.array([1.0, 2.0, 3.0], nabla.float64, requires_grad=True)
        self.assertTrue(w.requires_grad and w.is_leaf)
        loss = nabla.sum(nabla.sin(w) * w)
        self.assertFalse(loss.is_leaf)
        loss.backward()
        close(self, w.grad(), [math.cos(v) * v + math.sin(v) for v in (1.0, 2.0, 3.0)], 1e-12)
        nabla.sum(w).backward()
        close(self, w.grad(), [math.cos(v) * v + math.sin(v) + 1.0 for v in (1.0, 2.0, 3.0)], 1e-12)
        w.zero_grad()
        self.assertIsNone(w.grad())
        self.assertFalse(w.detach().requires_grad)
        with nabla.no_grad():
            self.assertFalse((w * 2.0).requires_grad)
        self.assertTrue((w * 2.0).requires_grad)

    def test_in_place_update_keeps_the_leaf(self):
        w = nabla.ones((2,), requires_grad=True)
        nabla.sum(w * w).backward()
        w -= 0.5 * w.grad()
        self.assertTrue(w.requires_grad and w.is_leaf)
        self.assertEqual(w.tolist(), [0.0, 0.0])
        self.assertEqual(w.grad().tolist(), [2.0, 2.0])


if __name__ == "__main__":
    unittest.main()
