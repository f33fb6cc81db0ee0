"""The seed's two examples, verbatim, run as files (nabla-py/examples/)."""

import os
import runpy
import unittest

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")


class SeedExamples(unittest.TestCase):
    def test_seed_imperative(self):
        ns = runpy.run_path(os.path.join(EXAMPLES, "seed_imperative.py"))
        self.assertEqual(ns["weight"].shape, (3, 4))
        self.assertEqual(ns["bias"].shape, (2, 4))
        self.assertEqual(ns["loss"].shape, ())

    def test_seed_hessian(self):
        ns = runpy.run_path(os.path.join(EXAMPLES, "seed_hessian.py"))
        self.assertEqual(ns["h"][0].shape, (2, 2, 3, 2, 3))


if __name__ == "__main__":
    unittest.main()
