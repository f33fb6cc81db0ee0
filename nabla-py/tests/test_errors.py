"""Errors from Python: the right exception class carrying the runtime's
message (op, shapes, fix); no input aborts the interpreter; memory stays
flat over many small ops; threads calling in at once get correct results."""

import gc
import threading
import unittest

import numpy as np

import nabla


class Exceptions(unittest.TestCase):
    def test_shape_errors_are_value_errors_naming_the_op_and_shapes(self):
        with self.assertRaisesRegex(ValueError, r"matmul.*\[2, 3\].*\[4, 5\]"):
            nabla.zeros((2, 3)) @ nabla.zeros((4, 5))
        with self.assertRaisesRegex(ValueError, r"add|broadcast"):
            nabla.zeros((2, 3)) + nabla.zeros((4,))
        with self.assertRaisesRegex(ValueError, r"reshape"):
            nabla.reshape(nabla.zeros((2, 3)), (4,))
        with self.assertRaisesRegex(ValueError, r"axis 3 is out of range"):
            nabla.sum(nabla.zeros((2, 3)), axis=3)

    def test_dtype_and_argument_errors_are_type_errors(self):
        with self.assertRaisesRegex(TypeError, r"dtype"):
            nabla.zeros((2,), dtype="complex64")
        with self.assertRaisesRegex(TypeError, r"float"):
            nabla.grad(lambda x: nabla.sum(x))(nabla.array([1, 2]))
        with self.assertRaises(TypeError):
            nabla.array([object()])
        with self.assertRaisesRegex(TypeError, r"axis"):
            nabla.sum(nabla.zeros((2,)), axis="0")

    def test_transform_misuse_names_the_fix(self):
        with self.assertRaisesRegex(ValueError, r"grad.*one element.*sum"):
            nabla.grad(nabla.sin)(nabla.zeros((3,)))
        with self.assertRaisesRegex(ValueError, r"vmap.*sizes"):
            nabla.vmap(lambda a, b: a + b)(nabla.zeros((2, 3)), nabla.zeros((3, 3)))
        with self.assertRaisesRegex(TypeError, r"item.*batched by `vmap`"):
            nabla.vmap(lambda x: x.item())(nabla.zeros((2,)))

    def test_errors_leave_the_interpreter_usable(self):
        for _ in range(100):
            with self.assertRaises(ValueError):
                nabla.zeros((2, 3)) @ nabla.zeros((4, 5))
        self.assertEqual(nabla.sum(nabla.ones((3,))).item(), 3.0)


class Memory(unittest.TestCase):
    def test_many_small_ops_keep_memory_flat(self):
        def rss_kib():
            with open("/proc/self/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
            raise unittest.SkipTest("no /proc/self/status")

        a = nabla.ones((4,))
        w = nabla.ones((4,), requires_grad=True)

        def work(n):
            for _ in range(n):
                b = nabla.sin(a) * 2.0 + a
                loss = nabla.sum(b * w)
                loss.backward()
                w.zero_grad()

        work(10_000)  # warm-up: pools and caches reach their size
        gc.collect()
        before = rss_kib()
        work(100_000)
        gc.collect()
        grown = rss_kib() - before
        # 10^5 iterations of 6 ops each: a leak of even one small array per
        # iteration would add tens of MiB.
        self.assertLess(grown, 4096, f"resident memory grew by {grown} KiB over 10^5 iterations")


class Threads(unittest.TestCase):
    def test_four_threads_at_once_get_correct_results(self):
        rng = np.random.default_rng(1)
        xs = [rng.standard_normal((64, 64)) for _ in range(4)]
        want = [np.tanh(x @ x.T).sum(axis=1) for x in xs]
        got = [None] * 4
        errors = []

        def run(i):
            try:
                for _ in range(50):
                    a = nabla.array(xs[i], nabla.float64)
                    r = nabla.sum(nabla.tanh(a @ a.T), axis=1)
                    g = nabla.grad(lambda v: nabla.sum(nabla.tanh(v @ v.T)))(a)
                    assert g.shape == (64, 64)
                got[i] = np.asarray(r)
            except Exception as e:  # noqa: BLE001 -- reported below
                errors.append(e)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-12)


if __name__ == "__main__":
    unittest.main()


class DebugNans(unittest.TestCase):
    def test_the_first_op_making_a_nan_raises_floating_point_error(self):
        x = nabla.array(np.array([1.0, -1.0]))
        self.assertFalse(nabla.debug_nans_enabled())
        self.assertTrue(np.isnan(np.asarray(nabla.log(x))[1]))
        nabla.debug_nans(True)
        try:
            with self.assertRaisesRegex(FloatingPointError, "debug_nans: `log` turned finite inputs into NaN"):
                nabla.log(x)
            # In a gradient: the report says it is the backward pass.
            with self.assertRaisesRegex(FloatingPointError, "`reciprocal` .* in the backward pass"):
                nabla.grad(lambda v: nabla.sum(nabla.sqrt(v)))(nabla.array(np.array([0.0, 4.0])))
            # A recorded program replays instruction by instruction, checked.
            f = nabla.jit(lambda v: nabla.log(v * 2.0))
            with self.assertRaisesRegex(FloatingPointError, "`log`"):
                f(x)
            # An input that already holds a NaN is not reported again.
            nabla.sin(nabla.array(np.array([np.nan])))
        finally:
            nabla.debug_nans(False)
