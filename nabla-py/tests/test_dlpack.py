"""NumPy interop without copies and DLPack (issue 45): `np.asarray(x)` is a
read-only view of a Nabla array's memory, `Array.__dlpack__` shares it
with any DLPack consumer (`np.from_dlpack` here; PyTorch and JAX when
installed), and `nabla.from_dlpack` shares a producer's memory. Storage
lives as long as its last user, on either side."""

import gc
import sys
import unittest

import numpy as np

import nabla

try:
    import torch
except ImportError:  # pragma: no cover
    torch = None
try:
    import jax
    import jax.numpy as jnp
except ImportError:  # pragma: no cover
    jax = None


def address(a):
    """The address of element [0, ...] of a NumPy array."""
    return a.__array_interface__["data"][0]


def refs(x):
    """References to `x` beyond the caller's own."""
    gc.collect()
    return sys.getrefcount(x)


DTYPES = [
    (nabla.float32, np.float32, [1.5, -2.0, 3.25]),
    (nabla.float64, np.float64, [1.5, -2.0, 1e300]),
    (nabla.int64, np.int64, [1, -2, (1 << 52) + 1]),
    (nabla.bool_, np.bool_, [True, False, True]),
]


class NumpyViews(unittest.TestCase):
    def test_asarray_is_a_read_only_view_of_each_dtype(self):
        for dt, npdt, values in DTYPES:
            with self.subTest(dtype=str(dt)):
                a = nabla.array(values, dtype=dt)
                v = np.asarray(a)
                self.assertEqual(v.dtype, npdt)
                np.testing.assert_array_equal(v, np.array(values, dtype=npdt))
                self.assertFalse(v.flags.writeable)
                self.assertEqual(address(np.asarray(a)), address(v))
                with self.assertRaises(ValueError):
                    v[0] = v[1]
                with self.assertRaises(ValueError):
                    v.setflags(write=True)

    def test_strided_views_map_to_numpy_strides(self):
        x = np.arange(12.0).reshape(3, 4)
        a = nabla.array(x)
        base = np.asarray(a)
        for name, view, want in [
            ("transpose", a.T, x.T),
            ("slice", a[1:, ::2], x[1:, ::2]),
            ("reversed", a[::-1, 1:], x[::-1, 1:]),
        ]:
            with self.subTest(view=name):
                v = np.asarray(view)
                np.testing.assert_array_equal(v, want)
                self.assertTrue(np.shares_memory(v, base))
                self.assertEqual(v.strides, want.strides)

    def test_copy_true_and_other_dtypes_give_writable_copies(self):
        a = nabla.array([1.0, 2.0], dtype=nabla.float64)
        c = np.array(a)  # copy=True
        self.assertTrue(c.flags.writeable)
        self.assertFalse(np.shares_memory(c, np.asarray(a)))
        c[0] = 5.0
        self.assertEqual(a.tolist(), [1.0, 2.0])
        f = np.asarray(a, dtype=np.float32)
        self.assertEqual(f.dtype, np.float32)
        np.testing.assert_array_equal(f, [1.0, 2.0])
        with self.assertRaises(ValueError):
            a.__array__(dtype=np.float32, copy=False)
        self.assertEqual(address(a.__array__(copy=False)), address(np.asarray(a)))

    def test_the_view_outlives_the_array(self):
        a = nabla.arange(1000, dtype=nabla.float64) * 2.0
        v = np.asarray(a[10:20])
        del a
        gc.collect()
        np.testing.assert_array_equal(v, np.arange(10, 20) * 2.0)

    def test_updates_of_the_array_leave_the_view_alone(self):
        a = nabla.array([1.0, 2.0, 3.0]).requires_grad_()
        v = np.asarray(a)
        nabla.sum(a * a).backward()
        nabla.optim.SGD([a], lr=0.5).step()  # in place where unshared
        a += 1.0
        np.testing.assert_array_equal(v, [1.0, 2.0, 3.0])
        self.assertEqual(a.tolist(), [1.0, 1.0, 1.0])


class Export(unittest.TestCase):
    def test_numpy_from_dlpack_shares_memory_for_each_dtype(self):
        for dt, npdt, values in DTYPES:
            with self.subTest(dtype=str(dt)):
                a = nabla.array(values, dtype=dt)
                d = np.from_dlpack(a)
                self.assertEqual(d.dtype, npdt)
                np.testing.assert_array_equal(d, np.array(values, dtype=npdt))
                self.assertEqual(address(d), address(np.asarray(a)))
                self.assertFalse(d.flags.writeable)  # the capsule is flagged read-only

    def test_views_and_scalars_export_their_layout(self):
        x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
        a = nabla.array(x)
        for name, view, want in [
            ("permuted", a.transpose(2, 0, 1), x.transpose(2, 0, 1)),
            ("sliced", a[:, 1:, ::3], x[:, 1:, ::3]),
            ("reversed", a[::-1], x[::-1]),
            ("scalar", a[1, 2, 3], x[1, 2, 3]),
            ("empty", a[:, :0], x[:, :0]),
        ]:
            with self.subTest(view=name):
                d = np.from_dlpack(view)
                np.testing.assert_array_equal(d, want)
                self.assertEqual(d.shape, want.shape)
                if d.size:
                    self.assertTrue(np.shares_memory(d, np.asarray(a)))

    def test_capsules_and_device(self):
        a = nabla.array([1.0, 2.0])
        self.assertEqual(a.__dlpack_device__(), (1, 0))
        self.assertIn('"dltensor"', repr(a.__dlpack__()))
        self.assertIn('"dltensor_versioned"', repr(a.__dlpack__(max_version=(1, 0))))
        self.assertIn('"dltensor"', repr(a.__dlpack__(max_version=(0, 8))))
        self.assertIn('"dltensor"', repr(a.__dlpack__(dl_device=(1, 0), copy=False)))
        copied = np.from_dlpack(a, copy=True)
        np.testing.assert_array_equal(copied, [1.0, 2.0])
        self.assertFalse(np.shares_memory(copied, np.asarray(a)))

    def test_export_errors(self):
        a = nabla.array([1.0, 2.0])
        with self.assertRaises(BufferError):
            a.__dlpack__(dl_device=(2, 0))
        with self.assertRaises(BufferError):
            a.__dlpack__(stream=1)

        def traced(x):
            with self.assertRaisesRegex(TypeError, "__dlpack__"):
                x.__dlpack__()
            return nabla.sum(x)

        nabla.grad(traced)(a)

    def test_storage_lives_until_the_consumer_or_the_capsule_lets_go(self):
        # A NumPy array imported by Nabla is referenced by Nabla's storage
        # for as long as that storage lives: its reference count shows it.
        x = np.arange(6.0)
        before = refs(x)
        a = nabla.from_dlpack(x)
        self.assertEqual(refs(x), before + 1)
        capsule = a.__dlpack__()
        del a
        self.assertEqual(refs(x), before + 1)  # the unconsumed capsule holds it
        del capsule
        self.assertEqual(refs(x), before)  # its destructor freed it
        a = nabla.from_dlpack(x)
        d = np.from_dlpack(a)
        v = np.asarray(a[2:])
        del a
        self.assertEqual(refs(x), before + 1)
        np.testing.assert_array_equal(d, np.arange(6.0))
        np.testing.assert_array_equal(v, np.arange(2.0, 6.0))
        del d
        self.assertEqual(refs(x), before + 1)
        del v
        self.assertEqual(refs(x), before)


class Import(unittest.TestCase):
    def test_from_dlpack_shares_numpy_memory(self):
        for npdt in (np.float32, np.float64, np.int64):
            with self.subTest(dtype=npdt.__name__):
                x = np.arange(6, dtype=npdt).reshape(2, 3)
                a = nabla.from_dlpack(x)
                self.assertEqual(a.shape, (2, 3))
                self.assertEqual(a.tolist(), x.tolist())
                self.assertEqual(address(np.asarray(a)), address(x))

    def test_strided_imports(self):
        x = np.arange(24.0).reshape(4, 6)
        for name, view in [
            ("transposed", x.T),
            ("sliced", x[1:, ::2]),
            ("reversed", x[::-1, ::-2]),
            ("broadcast", np.broadcast_to(x[0], (3, 6))),
            ("scalar", x[1, 2][()]),
        ]:
            with self.subTest(view=name):
                v = np.asarray(view)
                a = nabla.from_dlpack(v)
                np.testing.assert_array_equal(np.asarray(a), v)
                self.assertEqual(a.tolist(), v.tolist())
                if name == "broadcast":
                    # A stride of 0 reaches one element from several
                    # indices: such layouts are copied, never shared.
                    self.assertFalse(np.shares_memory(np.asarray(a), x))
                    with self.assertRaises(BufferError):
                        nabla.from_dlpack(v, copy=False)
                elif name != "scalar":
                    self.assertTrue(np.shares_memory(np.asarray(a), x))

    def test_bools_empty_and_misaligned_are_copied(self):
        m = np.array([True, False, True])
        a = nabla.from_dlpack(m)
        self.assertEqual(a.dtype, nabla.bool_)
        self.assertEqual(a.tolist(), [True, False, True])
        self.assertFalse(np.shares_memory(np.asarray(a), m))
        e = nabla.from_dlpack(np.zeros((0, 3), np.float32))
        self.assertEqual((e.shape, e.dtype), ((0, 3), nabla.float32))
        raw = np.zeros(8 * 4 + 1, np.uint8)
        odd = raw[1:].view(np.float64)  # one byte off alignment
        odd[:] = [1.0, 2.0, 3.0, 4.0]
        self.assertFalse(odd.flags.aligned)
        self.assertEqual(nabla.from_dlpack(odd).tolist(), [1.0, 2.0, 3.0, 4.0])
        with self.assertRaises(BufferError):
            nabla.from_dlpack(m, copy=False)

    def test_copy_true_copies(self):
        x = np.arange(3.0)
        a = nabla.from_dlpack(x, copy=True)
        self.assertFalse(np.shares_memory(np.asarray(a), x))
        x[0] = 10.0
        self.assertEqual(a.tolist(), [0.0, 1.0, 2.0])

    def test_the_import_outlives_the_producer(self):
        x = np.arange(5.0)
        a = nabla.from_dlpack(x)
        del x
        gc.collect()
        self.assertEqual(a.tolist(), [0.0, 1.0, 2.0, 3.0, 4.0])

    def test_in_place_updates_copy_instead_of_writing_the_producer(self):
        # An optimizer step updates an unshared parameter in place; on
        # imported memory it copies first.
        x = np.array([1.0, 2.0, 3.0])
        p = nabla.from_dlpack(x).requires_grad_()
        nabla.sum(p * p).backward()
        nabla.optim.SGD([p], lr=0.25).step()
        p += 1.0
        self.assertEqual(p.tolist(), [1.5, 2.0, 2.5])
        np.testing.assert_array_equal(x, [1.0, 2.0, 3.0])

    def test_capsules_round_trips_and_nabla_arrays(self):
        a = nabla.array([1.0, 2.0, 3.0])
        for cap in (a.__dlpack__(), a.__dlpack__(max_version=(1, 0))):
            b = nabla.from_dlpack(cap)
            self.assertEqual(address(np.asarray(b)), address(np.asarray(a)))
            with self.assertRaisesRegex(ValueError, "already consumed"):
                nabla.from_dlpack(cap)
        self.assertEqual(address(np.asarray(nabla.from_dlpack(a))), address(np.asarray(a)))
        c = nabla.from_dlpack(a, copy=True)
        self.assertNotEqual(address(np.asarray(c)), address(np.asarray(a)))
        self.assertEqual(c.tolist(), [1.0, 2.0, 3.0])

    def test_import_errors(self):
        with self.assertRaisesRegex(TypeError, r"int32.*astype"):
            nabla.from_dlpack(np.arange(3, dtype=np.int32))
        with self.assertRaisesRegex(TypeError, "complex128"):
            nabla.from_dlpack(np.ones(2, np.complex128))
        with self.assertRaisesRegex(TypeError, "__dlpack__"):
            nabla.from_dlpack([1.0, 2.0])
        with self.assertRaises(ValueError):
            nabla.from_dlpack(np.ones(2), device="cuda")

        class OnGpu:
            def __dlpack_device__(self):
                return (2, 0)

            def __dlpack__(self, **kwargs):
                raise AssertionError("not called")

        with self.assertRaisesRegex(BufferError, "CPU"):
            nabla.from_dlpack(OnGpu())


@unittest.skipIf(torch is None, "PyTorch is not installed")
class Torch(unittest.TestCase):
    def test_torch_sees_nablas_memory(self):
        a = nabla.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=nabla.float32)
        t = torch.from_dlpack(a)
        self.assertEqual(t.data_ptr(), address(np.asarray(a)))
        self.assertEqual(torch.from_dlpack(a.T).stride(), (1, 3))
        del a
        gc.collect()
        self.assertEqual(t.sum().item(), 21.0)

    def test_nabla_sees_torchs_memory(self):
        for dt in (torch.float32, torch.float64, torch.int64):
            t = torch.arange(6, dtype=dt).reshape(2, 3)
            a = nabla.from_dlpack(t)
            self.assertEqual(address(np.asarray(a)), t.data_ptr())
            self.assertEqual(nabla.from_dlpack(t.t()).tolist(), t.t().tolist())
        self.assertEqual(nabla.from_dlpack(torch.tensor([True, False])).tolist(), [True, False])


@unittest.skipIf(jax is None, "JAX is not installed")
class Jax(unittest.TestCase):
    def test_jax_round_trip(self):
        # JAX shares host memory aligned to 64 bytes and copies otherwise,
        # so only the values are checked here.
        a = nabla.array([[1.0, 2.0], [3.0, 4.0]], dtype=nabla.float32)
        np.testing.assert_array_equal(np.asarray(jax.dlpack.from_dlpack(a)), np.asarray(a))
        j = jnp.arange(6.0).reshape(2, 3)
        b = nabla.from_dlpack(j)
        self.assertEqual(address(np.asarray(b)), j.unsafe_buffer_pointer())
        self.assertEqual(b.tolist(), np.asarray(j).tolist())


if __name__ == "__main__":
    unittest.main()
