"""The first slice of the Python package: it installs, imports, and runs
arrays through Nabla's runtime with the values NumPy-free Python expects."""

import math
import unittest

import nabla


class Scaffold(unittest.TestCase):
    def test_version_is_the_crate_version(self):
        self.assertEqual(nabla.__version__, "0.1.0")

    def test_ops_run_in_the_runtime(self):
        a = nabla.Array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0], [2, 3], nabla.float64)
        self.assertEqual(a.shape, [2, 3])
        got = (a.sin() * a + a).sum().tolist()
        want = sum(math.sin(v) * v + v for v in range(6))
        self.assertEqual(len(got), 1)
        self.assertAlmostEqual(got[0], want, places=12)

    def test_float32_rounds_like_float32(self):
        a = nabla.Array([0.1], [1], nabla.float32)
        self.assertNotEqual(a.tolist()[0], 0.1)
        self.assertAlmostEqual(a.tolist()[0], 0.1, places=7)

    def test_a_bad_shape_is_a_value_error(self):
        with self.assertRaisesRegex(ValueError, r"3 values for shape \[2, 2\]"):
            nabla.Array([1.0, 2.0, 3.0], [2, 2])


if __name__ == "__main__":
    unittest.main()
